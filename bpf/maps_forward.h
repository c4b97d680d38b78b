/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, maps of the XDP forward path ("steer forward"): the
 * neighbours and local addresses toed mirrors from rtnetlink (toe_neigh,
 * toe_local_addr), the routed flows admitted to the fast path (toe_fwd),
 * the handshakes the stack is forwarding (toe_fwd_half), the firewall's
 * generation (toe_fwd_gen), and the interfaces frames may be redirected to
 * (toe_devmap, toe_ifaces).
 * Layouts: include/opentoe.h.
 */
#ifndef __TOE_MAPS_FORWARD_H
#define __TOE_MAPS_FORWARD_H

#include "common.h"

/* clang-format off */
/*
 * Written by toed from rtnetlink, read by no program here: toed's mirror
 * (include/opentoe_forward.h); the forward paths ask the kernel's table.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TOE_NEIGH_MAX);
	__type(key, struct toe_neigh_key);
	__type(value, struct toe_neigh);
} toe_neigh SEC(".maps");

/* Written by toed from rtnetlink: this host's addresses (include/opentoe.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TOE_LOCAL_MAX);
	__type(key, struct toe_local_key);
	__type(value, struct toe_local);
} toe_local_addr SEC(".maps");

/*
 * Admitted routed flows (include/opentoe.h, "XDP steering").  Written by
 * toe_egress (admission, re-admission), by XDP (READMIT, counters, delete
 * at FIN/RST); read by XDP, toed and toectl (views).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TOE_FWD_DEFAULT);	/* toe-loader --flows N */
	__type(key, struct toe_flow_key);
	__type(value, struct toe_fwd);
} toe_fwd SEC(".maps");

/*
 * NATed flows: the reply tuple's key names the toe_fwd key (bpf/nat.h).
 * Written by the admission, read by XDP, deleted by toed.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TOE_FWD_DEFAULT);	/* toe-loader --flows N */
	__type(key, struct toe_flow_key);
	__type(value, struct toe_flow_key);
} toe_fwd_nat SEC(".maps");

/*
 * Flows admitted TOE_FWD_CT_WAIT whose conntrack entry toed has made true:
 * written by toed, read and deleted by the fast path (fwd_ct_ready).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TOE_FWD_CTOK_MAX);
	__type(key, struct toe_flow_key);
	__type(value, __u32);
} toe_fwd_ctok SEC(".maps");

/*
 * Half-open handshakes: written (SYN) and read and deleted (SYN-ACK) by
 * toe_egress only.  Apart from toe_fwd, so that SYNs evict only each other.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TOE_FWD_HALF_DEFAULT);
	__type(key, struct toe_flow_key);
	__type(value, struct toe_fwd_half);
} toe_fwd_half SEC(".maps");

/*
 * The firewall generation and toed's lease on it: written by toed (user/
 * toed/nft.c, through mmap); read by XDP and toe_egress.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct toe_fwd_gen);
} toe_fwd_gen SEC(".maps");

/* Written by toe-loader (add_egress); read by XDP forward (redirects). */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, TOE_IFACES_MAX);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} toe_devmap SEC(".maps");

/* Written by toe-loader (add_egress); read by XDP forward and toe_egress. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TOE_IFACES_MAX);
	__type(key, __u32);
	__type(value, struct toe_iface);
} toe_ifaces SEC(".maps");

/* clang-format on */

#endif /* __TOE_MAPS_FORWARD_H */
