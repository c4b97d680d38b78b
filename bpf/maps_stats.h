/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, maps of the counters and events: the per-CPU counters
 * (toe_stats, indexed by TOE_S_*; toe_reasons, by TOE_RSN_*) and the ring buffer of flow events
 * user space reads (toe_events).  Layouts: include/opentoe.h.
 */
#ifndef __TOE_MAPS_STATS_H
#define __TOE_MAPS_STATS_H

#include "common.h"

/* clang-format off */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TOE_STATS_MAX);
	__type(key, __u32);
	__type(value, __u64);
} toe_stats SEC(".maps");

/* Why flows and packets left a fast path (include/opentoe_reasons.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TOE_RSN_MAX);
	__type(key, __u32);
	__type(value, __u64);
} toe_reasons SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} toe_events SEC(".maps");
/* clang-format on */

#endif /* __TOE_MAPS_STATS_H */
