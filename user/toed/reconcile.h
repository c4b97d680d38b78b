/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: lost events made good (reconcile.c): TIDs and listeners reconciled. */
#ifndef __TOE_RECONCILE_H
#define __TOE_RECONCILE_H

#include <stdbool.h>
#include <linux/types.h>

struct toed;

/* When the next look is, and what the last one saw. */
struct reconcile {
	__u64 dropped_seen; /* event_dropped when last looked at */
	bool primed; /* dropped_seen read once (at start: no reconcile) */
	__u64 next_check_ns;
	__u64 ct_wait_seen; /* fwd_ct_wait at the last retry look */
	__u64 next_retry_ns;
};

void reconcile_now(struct toed *d, const char *why);
void reconcile_tick(struct toed *d);
void reconcile_soon(struct reconcile *rc);
int reconcile_timeout_ms(int ms);

#endif /* __TOE_RECONCILE_H */
