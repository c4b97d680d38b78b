// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* toed: the neighbour propagation latency histogram (nlat.h). */
#include "nlat.h"

const __u64 nlat_le_ns[NLAT_BUCKETS] = {
	10000,	 25000,	  50000,   100000,   250000,	500000,
	1000000, 2500000, 5000000, 10000000, 100000000, 1000000000,
};

/* A neighbour event's map write, ns after its message was read. */
void nlat_observe(struct nlat *h, __u64 ns)
{
	int i;

	for (i = 0; i < NLAT_BUCKETS && ns > nlat_le_ns[i]; i++)
		;
	if (i < NLAT_BUCKETS)
		h->bucket[i]++;
	h->count++;
	h->sum_ns += ns;
}
