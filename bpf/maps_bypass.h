/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, maps of the local bypass (policy action bypass): the
 * sockets whose sends go straight to their peer (toe_bypass), each one's
 * state (toe_byp_sk), its counters (toe_byp_flows), and the unload switch
 * (toe_byp_conf).  Layouts and flow control: include/opentoe.h.
 */
#ifndef __TOE_MAPS_BYPASS_H
#define __TOE_MAPS_BYPASS_H

#include "common.h"

/* clang-format off */
/*
 * Local bypass (include/opentoe.h).  Locks: sock_ops runs with the
 * socket's lock held (or in softirq with the socket owned), the sk_msg
 * program under the sending socket's lock (tcp_bpf_sendmsg: lock_sock), so
 * a socket's toe_byp_sk is only ever written by one program at a time; the
 * sockhash has its own per-bucket locks inside the kernel.
 */
struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, TOE_BYPASS_DEFAULT);	/* toe-loader --flows N */
	__type(key, struct toe_bypass_key);
	__type(value, __u64);
} toe_bypass SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct toe_byp_sk);
} toe_byp_sk SEC(".maps");

/*
 * Per-socket counters of bypassed data.  Each field has one writer at a
 * time: bytes/msgs_out and tcp_* the socket's own sk_msg program, bytes/
 * msgs_in its peer's sk_msg program, each under its own socket's lock.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, TOE_BYPASS_DEFAULT);
	__type(key, struct toe_bypass_key);
	__type(value, struct toe_byp_flow);
} toe_byp_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct toe_byp_conf);
} toe_byp_conf SEC(".maps");
/* clang-format on */

#endif /* __TOE_MAPS_BYPASS_H */
