// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed: who takes each of the datapath's event types (events.c reads the
 * ring and hands each event on by this table; datapath.c gives it the
 * table with the ring).  Adding an event type: its row here.
 */
#include "opentoe_events.h"
#include "fwdev.h"
#include "kmod.h"
#include "listen.h"
#include "events.h"
#include "state.h"

/*
 * The forward path's events are fwdev.c's whole; a listener's and a
 * flow's are counted, logged and streamed by events.c, with the part of
 * the concern that owns them: the module's server TIDs (listen.c), the
 * TID a flow took there (kmod.c: its bind, which the module may refuse,
 * turning the offload into a refusal; its close).
 */
const struct ev_table toed_ev_table = {
	.type = {
	[TOE_EV_LISTEN_START] = { .flow = true, .after = listen_event },
	[TOE_EV_LISTEN_STOP] = { .flow = true, .after = listen_event },
	[TOE_EV_FLOW_OFFLOADED] = { .flow = true, .before = kmod_on_offloaded },
	[TOE_EV_FLOW_REFUSED] = { .flow = true },
	[TOE_EV_FLOW_CLOSED] = { .flow = true, .after = kmod_on_closed },
	[TOE_EV_FWD_ADMITTED] = { .fwd = fwd_on_admitted },
	[TOE_EV_FWD_RETURNED] = { .fwd = fwd_on_returned },
	[TOE_EV_FWD_ENDED] = { .fwd = fwd_on_returned },
	},
	.tid = tid_of,
};
