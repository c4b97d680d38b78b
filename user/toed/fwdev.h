/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: the forward path's events and reasons (fwdev.c, issue 35). */
#ifndef __TOE_FWDEV_H
#define __TOE_FWDEV_H

struct toed;

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "opentoe.h"
#include "show_state.h"

void fwd_event_show(struct toed *d, const struct toe_event *e, bool ct);
void fwd_reasons_read(struct toed *d, __u64 *out);
size_t reason_counters(struct toed *d, struct counter *out);
const char *toe_byp_why_name(__u32 why);
bool toe_reason_refusal(__u32 r);
/* the open flows' states, as /metrics names them (fast, readmit, ct_wait) */
enum {
	TOE_FWD_OPEN_FAST,
	TOE_FWD_OPEN_READMIT,
	TOE_FWD_OPEN_CT_WAIT,
	TOE_FWD_OPEN__N
};
void fwd_open_count(struct toed *d, __u32 (*n)[TOE_FH__MAX][TOE_FWD_OPEN__N]);
void fwd_track(const struct toe_event *e);
/* the event table's (evtypes.c): admitted; returned or ended */
void fwd_on_admitted(struct toed *d, const struct toe_event *e);
void fwd_on_returned(struct toed *d, const struct toe_event *e);
void fwd_evict_check(struct toed *d);

#endif /* __TOE_FWDEV_H */
