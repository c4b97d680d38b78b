/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, maps of the XDP forward path ("steer forward"): the
 * neighbours and local addresses toed mirrors from rtnetlink (toe_neigh,
 * toe_local_addr), the routed flows and their handshakes (toe_fwd), and
 * the interfaces frames may be redirected to (toe_devmap, toe_ifaces).
 * Layouts: include/opentoe.h.
 */
#ifndef __TOE_MAPS_FORWARD_H
#define __TOE_MAPS_FORWARD_H

#include "common.h"

/* clang-format off */
/* Written by toed from rtnetlink; read by XDP forward (include/opentoe.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TOE_NEIGH_MAX);
	__type(key, struct toe_neigh_key);
	__type(value, struct toe_neigh);
} toe_neigh SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TOE_LOCAL_MAX);
	__type(key, struct toe_local_key);
	__type(value, struct toe_local);
} toe_local_addr SEC(".maps");

/* Steering and forwarding (include/opentoe.h, "XDP steering"). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TOE_FWD_DEFAULT);	/* toe-loader --flows N */
	__type(key, struct toe_flow_key);
	__type(value, struct toe_fwd);
} toe_fwd SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, TOE_IFACES_MAX);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} toe_devmap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TOE_IFACES_MAX);
	__type(key, __u32);
	__type(value, struct toe_iface);
} toe_ifaces SEC(".maps");

/* clang-format on */

#endif /* __TOE_MAPS_FORWARD_H */
