/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, maps of XDP itself: the programs chained after it
 * (toe_xdp_next), the CPUs "steer cpu" devices redirect to (toe_cpumap),
 * and which steering modes are in use (toe_xdp_conf).
 */
#ifndef __TOE_MAPS_XDP_H
#define __TOE_MAPS_XDP_H

#include "common.h"

/* clang-format off */
/*
 * Chained XDP programs: an XDP program that was attached to an interface
 * before opentoe is kept in slot [ifindex] and runs after opentoe's own
 * work on every packet opentoe passes (libxdp's dispatcher needs freplace,
 * which not every kernel allows).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, TOE_XDP_CHAIN_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} toe_xdp_next SEC(".maps");

/*
 * The network namespace (cookie) whose interface owns each chain slot of
 * toe_xdp_next, written by toe-loader before it puts a program in the
 * slot: ifindexes are per namespace, so the slot is taken only for frames
 * that arrived on a device of that namespace.  0: no owner.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TOE_XDP_CHAIN_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} toe_xdp_next_ns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, 64);	/* toe-loader: the possible CPUs */
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} toe_cpumap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct toe_xdp_conf);
} toe_xdp_conf SEC(".maps");
/* clang-format on */

#endif /* __TOE_MAPS_XDP_H */
