/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, maps of the packet capture (toectl dump): its switch
 * and filter (toe_cap_conf), the ring of captured frames (toe_cap_ring)
 * and each CPU's counters and scratch record (toe_cap_cpu).  Layouts:
 * include/opentoe_capture.h.
 */
#ifndef __TOE_MAPS_CAPTURE_H
#define __TOE_MAPS_CAPTURE_H

#include "common.h"

/* clang-format off */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct toe_cap_conf);
} toe_cap_conf SEC(".maps");

/* toe-loader --capture-ring BYTES (a power of 2), kept across reloads */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TOE_CAP_RING_DEFAULT);
} toe_cap_ring SEC(".maps");

/*
 * Indexed by CPU (bpf_get_smp_processor_id; toe-loader: one entry per
 * possible CPU): a per-CPU array's value may not exceed 32 KiB, a record
 * of TOE_CAP_SNAP_MAX bytes does.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct toe_cap_cpu);
} toe_cap_cpu SEC(".maps");
/* clang-format on */

#endif /* __TOE_MAPS_CAPTURE_H */
