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
#include "maps_policy.h"

/*
 * TOE_BENCH_*: a step compiled out (NO_STATS, NO_ACCOUNT here, NO_CT in
 * fwd_ct.h, NO_FRAME_CHECK in forward.h, NO_NETNS in ctx.h, NO_MTU_CHECK
 * in fwd_xmit.h,
 * NO_FLOW_RECORD and NO_CLOSE_EVENT in flows.h) or the TTL not written
 * (KEEP_TTL, fwd_xmit.h), for the per-step cost of
 * bench/bench_xdp_steps.sh, bench/bench_sockops_steps.sh and
 * bench-forward STEPS=... only (make
 * BPF_EXTRA=..., docs/benchmarks.md); no shipped build has one, and
 * without them the object is the same.
 * TOE_BENCH_NO_STATS: no toe_stats counter but the two the benchmark's
 * proof reads (xdp_forward, tc_forward).
 */
static __always_inline void stat_add(__u32 idx, __u64 n)
{
#ifdef TOE_BENCH_NO_STATS
	if (idx != TOE_S_XDP_FORWARD && idx != TOE_S_TC_FORWARD)
		return;
#endif
	__u64 *c = bpf_map_lookup_elem(&toe_stats, &idx);

	if (c)
		*c += n;
}

static __always_inline void stat_inc(__u32 idx)
{
	stat_add(idx, 1);
}

/* One more in toe_reasons (TOE_RSN_*, include/opentoe_reasons.h). */
static __always_inline void rsn_inc(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&toe_reasons, &idx);

	if (c)
		*c += 1;
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

/*
 * The inode of a socket's network namespace (ip netns, /proc/PID/ns/net).
 * tp is a BTF pointer: plain loads (the verifier's probe-memory loads),
 * not bpf_probe_read_kernel calls, on every kernel opentoe loads on.
 */
static __always_inline __u64 sk_netns_ino(struct bpf_sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	if (!tp)
		return 0;
	return tp->inet_conn.icsk_inet.sk.__sk_common.skc_net.net->ns.inum;
}

/*
 * The event budget (include/opentoe_policy.h, TOE_TQ_EVENTS): an event of
 * a namespace other than toed's takes one of its share of the ring, or is
 * dropped (false; counted for it and in TOE_S_EVENT_QUOTA) when it has
 * toe_pol_hdr.tenant_events on the ring, not yet read by toed.  A count,
 * not a token bucket: what frees the budget is toed reading the ring, not
 * time, so a tenant never holds more than its share however slow toed is,
 * and a check is two lookups and an atomic add (no loop).  The add is
 * undone when it overshoots, as tenant_take's.  *tenant: the tenant
 * charged (0: toed's own namespace, or a routed flow: no budget).
 */
/*
 * A tenant's entry in toe_tenants for what, made (zero) on first use; NULL
 * when the table is full (a new tenant is refused, never a held one).
 */
static __always_inline struct toe_tenant *tenant_entry(__u64 netns, __u32 what)
{
	struct toe_tenant_key tk = { .netns = netns, .what = what };
	struct toe_tenant zero = {}, *t;

	t = bpf_map_lookup_elem(&toe_tenants, &tk);
	if (t)
		return t;
	bpf_map_update_elem(&toe_tenants, &tk, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&toe_tenants, &tk);
}

static __always_inline bool event_take(const struct toe_flow_key *k,
				       __u64 *tenant)
{
	struct toe_tenant_key tk = { .netns = k->netns,
				     .what = TOE_TQ_EVENTS_READ };
	struct toe_tenant *t, *rd;
	struct toe_pol_hdr *hdr;
	__u32 z = 0, gen, *genp;
	__s64 queued;

	*tenant = 0;
	genp = bpf_map_lookup_elem(&toe_pol_gen, &z);
	if (!k->netns || !genp)
		return true;
	gen = *genp & 1;
	hdr = bpf_map_lookup_elem(&toe_pol_hdr, &gen);
	if (!hdr || !hdr->tenant_events || k->netns == hdr->host_netns)
		return true;
	t = tenant_entry(k->netns, TOE_TQ_EVENTS);
	if (!t)
		goto drop; /* table full: no new tenant */
	rd = bpf_map_lookup_elem(&toe_tenants, &tk);
	queued = __sync_fetch_and_add(&t->held, 1) - (rd ? rd->held : 0);
	if (queued >= (__s64)hdr->tenant_events) {
		__sync_fetch_and_add(&t->held, -1);
		__sync_fetch_and_add(&t->refused, 1);
		goto drop;
	}
	*tenant = k->netns;
	return true;
drop:
	stat_inc(TOE_S_EVENT_QUOTA);
	return false;
}

/*
 * What tenant_take() (policy.h) or event_take() took, given back (netns 0:
 * nothing was).
 */
static __always_inline void tenant_give(__u64 netns, __u32 what)
{
	struct toe_tenant_key tk = { .netns = netns, .what = what };
	struct toe_tenant *t;

	if (!netns)
		return;
	t = bpf_map_lookup_elem(&toe_tenants, &tk);
	if (t)
		__sync_fetch_and_add(&t->held, -1);
}

/*
 * One flow event to user space, within its namespace's event budget
 * (event_take); one that finds the ring full is counted.
 */
static __always_inline void emit(__u32 type, const struct toe_flow_key *k,
				 const struct toe_flow *f,
				 struct bpf_sock_ops *skops, __u32 tid)
{
	struct bpf_sock *sk;
	struct toe_event *e;
	__u64 tenant;

	if (!event_take(k, &tenant))
		return;
	e = bpf_ringbuf_reserve(&toe_events, sizeof(*e), 0);
	if (!e) {
		tenant_give(tenant, TOE_TQ_EVENTS); /* never got on the ring */
		stat_inc(TOE_S_EVENT_DROPPED);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->tenant = tenant;
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
#ifdef TOE_BENCH_NO_ACCOUNT /* (benchmark only: see stat_add) */
	return;
#endif
	__sync_fetch_and_add(packets, pkts);
	__sync_fetch_and_add(bytes, len);
}

#endif /* __TOE_STATS_H */
