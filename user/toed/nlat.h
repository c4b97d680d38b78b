/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: the neighbour propagation latency histogram, a neighbour event's
 * message read -> its map write (events.c observes, metrics.c renders
 * opentoe_neigh_propagation_seconds).
 */
#ifndef __TOE_NLAT_H
#define __TOE_NLAT_H

#include <linux/types.h>

#define NLAT_BUCKETS 12

/* The buckets' upper bounds (le), ns. */
extern const __u64 nlat_le_ns[NLAT_BUCKETS];

struct nlat {
	__u64 bucket[NLAT_BUCKETS]; /* not cumulative; over the last: count */
	__u64 count, sum_ns;
};

void nlat_observe(struct nlat *h, __u64 ns);

#endif /* __TOE_NLAT_H */
