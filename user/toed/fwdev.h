/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: the forward path's events and reasons (fwdev.c, issue 35). */
#ifndef __TOE_FWDEV_H
#define __TOE_FWDEV_H

struct toed;

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "opentoe_events.h"
#include "opentoe_reasons.h"
#include "log.h"
#include "show_maps.h"
#include "show_state.h"

struct trk; /* a flow tracked for its eviction (fwdev.c) */
struct toed_dp;
struct mon_set;

/*
 * The forward path's part of toed (fwdev.c): the flows it heard admitted,
 * tracked to tell an eviction, and what it counts that the datapath does
 * not.  fwd_init gives it the datapath's maps, whether the datapath is
 * loaded, the monitor clients.
 */
struct fwdev {
	struct toe_maps *m;
	const struct toed_dp *dp;
	struct mon_set *mon;

	/* fast paths conntrack ended (ct.c), by enum toe_fwd_hook */
	__u64 fwd_ct_gone[TOE_FH__MAX];
	__u64 fwd_evicted[TOE_FH__MAX]; /* ... found gone */
	struct trk *trk; /* FWD_TRACK_MAX of them, once a flow was admitted */
	__u32 trk_used, trk_gone;
	__u64 trk_reloads; /* the datapath's reloads + unloads it tracked */
	struct log_rl fwd_rl; /* the events' log lines, rate-limited */
};

void fwd_exit(struct fwdev *fw);
void fwd_init(struct fwdev *fw, struct toe_maps *m, const struct toed_dp *dp,
	      struct mon_set *mon);

void fwd_event_show(struct fwdev *fw, const struct toe_event *e, bool ct);
void fwd_reasons_read(struct fwdev *fw, __u64 *out);
size_t reason_counters(struct fwdev *fw, struct counter *out);
const char *toe_byp_why_name(__u32 why);
bool toe_reason_refusal(__u32 r);
/* the open flows' states, as /metrics names them (fast, readmit, ct_wait) */
enum {
	TOE_FWD_OPEN_FAST,
	TOE_FWD_OPEN_READMIT,
	TOE_FWD_OPEN_CT_WAIT,
	TOE_FWD_OPEN__N
};
/* and their protocols (the flow key's): tcp, udp */
enum { TOE_FWD_OPEN_TCP, TOE_FWD_OPEN_UDP, TOE_FWD_OPEN_PROTO__N };
/* n[device][hook][protocol][state] */
typedef __u32 toe_fwd_open_t[TOE_FH__MAX][TOE_FWD_OPEN_PROTO__N]
			    [TOE_FWD_OPEN__N];
void fwd_open_count(struct fwdev *fw, toe_fwd_open_t *n);
void fwd_track(struct fwdev *fw, const struct toe_event *e);
/* the event table's (evtypes.c): admitted; returned or ended */
void fwd_on_admitted(struct toed *d, const struct toe_event *e);
void fwd_on_returned(struct toed *d, const struct toe_event *e);
void fwd_evict_check(struct toed *d);

#endif /* __TOE_FWDEV_H */
