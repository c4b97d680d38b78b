// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* toed's one state (state.h): its defaults, before the options. */
#include "lib/dplock.h"
#include "opentoe_common.h"
#include "state.h"

static struct toed state = {
	.config = DEFAULT_CONFIG,
	.pin_dir = TOE_PIN_DIR_DEFAULT,
	.run_dir = TOE_RUN_DIR,
	.rcvbuf = 4 << 20,
	.epfd = -1,
	.sigfd = -1,
	.lsock = -1,
	.tfd = -1,
	.lockfd = -1,
	.runlockfd = -1,
	.m = { .devs = -1,
	       .live = -1,
	       .flows = -1,
	       .stats = -1,
	       .hdr = -1,
	       .gen = -1,
	       .neigh = -1,
	       .local = -1,
	       .events = -1,
	       .fwd = -1,
	       .byp = -1,
	       .tenants = -1 },
	.nl = { .ev_fd = -1, .dump_fd = -1 },
	.gl = { .fd = -1, .ev_fd = -1 },
};

struct toed *toed_state_init(void)
{
	mon_init(&state.mon, -1);
	kmod_init(&state.kmod, &state.gl, &state.m, &state.dp, &state.lis.lst);
	listen_init(&state.lis, &state.gl, &state.m, &state.dp, &state.kmod);
	fwd_init(&state.fwd, &state.m, &state.dp, &state.mon);
	events_init(&state.evs, &state.m);
	metrics_init(&state.met);
	ctl_init(&state.ctl, &state.epfd, &state.lsock, &state.mon);
	apply_init(&state.ap, &state.config, &state.pin_dir);
	return &state;
}
