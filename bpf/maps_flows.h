/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, maps of the flow records: one record per connection of
 * this host (toe_flows, written by sock_ops, counted by XDP and tc), the
 * prefilter XDP reads before it (toe_flow_filter), each socket's own
 * state (toe_sk_state) and the listening sockets offloaded on a device
 * (toe_listeners).  Layouts: include/opentoe.h.
 */
#ifndef __TOE_MAPS_FLOWS_H
#define __TOE_MAPS_FLOWS_H

#include "common.h"

/* clang-format off */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TOE_FLOWS_DEFAULT);	/* toe-loader --flows N */
	__type(key, struct toe_flow_key);
	__type(value, struct toe_flow);
} toe_flows SEC(".maps");

/* XDP's prefilter of toe_flows: see include/opentoe.h for what it guarantees. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);	/* toe-loader writes loaded */
	__uint(max_entries, TOE_FILTER_SLOTS);
	__type(key, __u32);
	__type(value, struct toe_filter);
} toe_flow_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	/* clone: a listener's (listen_full) is its accepted sockets' too */
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_CLONE);
	__type(key, int);
	__type(value, struct toe_sk_state);
} toe_sk_state SEC(".maps");

/* Listening sockets offloaded on a device (include/opentoe.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TOE_LISTENERS_MAX);
	__type(key, struct toe_flow_key);
	__type(value, struct toe_listen);
} toe_listeners SEC(".maps");
/* clang-format on */

#endif /* __TOE_MAPS_FLOWS_H */
