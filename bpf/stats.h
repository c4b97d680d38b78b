/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, counters and events: the global per-CPU counters
 * (stat_inc, stat_add, stat_parse), the per-flow packet counters XDP and
 * tc keep in a flow's record (count_pkts), and the flow events sock_ops
 * sends to user space through the ring buffer (emit).
 */
#ifndef __TOE_STATS_H
#define __TOE_STATS_H

#include "common.h"
#include "toe_parse.h"
#include "maps_stats.h"

static __always_inline void stat_add(__u32 idx, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&toe_stats, &idx);

	if (c)
		*c += n;
}

static __always_inline void stat_inc(__u32 idx)
{
	stat_add(idx, 1);
}

/*
 * A packet the parser did not take as TCP: a malformed one is counted
 * (each TOE_P_* error is its own counter), never dropped: the stack
 * decides.
 */
static __always_inline void stat_parse(int res)
{
	if (res != TOE_P_NOT_TCP)
		stat_inc(res);
}

/* The inode of a socket's network namespace (ip netns, /proc/PID/ns/net). */
static __always_inline __u64 sk_netns_ino(struct bpf_sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	if (!tp)
		return 0;
	return BPF_CORE_READ(tp, inet_conn.icsk_inet.sk.__sk_common.skc_net.net,
			     ns.inum);
}

/* One flow event to user space; one that finds the ring full is counted. */
static __always_inline void emit(__u32 type, const struct toe_flow_key *k,
				 const struct toe_flow *f,
				 struct bpf_sock_ops *skops, __u32 tid)
{
	struct bpf_sock *sk;
	struct toe_event *e;

	e = bpf_ringbuf_reserve(&toe_events, sizeof(*e), 0);
	if (!e) {
		stat_inc(TOE_S_EVENT_DROPPED);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->ts_ns = bpf_ktime_get_ns();
	e->type = type;
	e->key = *k;
	e->dev = TOE_DEV_NONE;
	e->rule = TOE_RULE_NONE;
	e->tid = tid;
	sk = skops ? skops->sk : NULL;
	if (f)
		e->netns_ino = f->netns_ino;
	else if (sk)
		e->netns_ino = sk_netns_ino(sk);
	if (f)
		e->cookie = f->cookie;
	else if (skops)
		e->cookie = bpf_get_socket_cookie(skops);
	if (f) {
		e->dev = f->dev;
		e->rule = f->rule;
		e->decision = f->decision;
		e->reason = f->reason;
		e->direction = f->direction;
		e->policy = f->policy;
	}
	if (type == TOE_EV_FLOW_CLOSED && skops) {
		e->bytes_acked = skops->bytes_acked;
		e->bytes_received = skops->bytes_received;
		e->segs_in = skops->segs_in;
		e->segs_out = skops->segs_out;
		e->total_retrans = skops->total_retrans;
		e->srtt_us = skops->srtt_us >> 3;
	}
	bpf_ringbuf_submit(e, 0);
}

/*
 * XDP's packet and byte counters live in the record XDP already found:
 * atomic adds, since one flow's packets may arrive on several CPUs.
 */
static __always_inline void count_pkts(__u64 *packets, __u64 *bytes, __u64 pkts,
				       __u64 len)
{
	__sync_fetch_and_add(packets, pkts);
	__sync_fetch_and_add(bytes, len);
}

#endif /* __TOE_STATS_H */
