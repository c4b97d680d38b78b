// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * opentoe datapath: the cgroup sock_ops program that decides, at
 * connection time, which flows are offloaded (the 2005 patch's
 * tcp_connect_offload / tcp_listen_offload hooks, without touching TCP),
 * and the XDP program that accounts and steers offloaded flows on the
 * lower device (its toe_receive_skb path), with the host stack still in
 * charge of everything policy does not name.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "opentoe.h"
#include "toe_parse.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define AF_INET		2
#define AF_INET6	10
#define TOE_XDP_CHAIN_SLOTS 1024	/* ifindexes below this may chain */

/* ---------------------------------------------------------------- maps */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TOE_MAX_DEVS);
	__type(key, __u32);
	__type(value, struct toe_dev);
} toe_devs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TOE_MAX_DEVS);
	__type(key, __u32);
	__type(value, struct toe_dev_live);
} toe_dev_live SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TOE_FLOWS_DEFAULT);	/* toe-loader --flows N */
	__type(key, struct toe_flow_key);
	__type(value, struct toe_flow);
} toe_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, TOE_FLOWS_DEFAULT);
	__type(key, struct toe_flow_key);
	__type(value, struct toe_flow_pkts);
} toe_flow_pkts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TOE_STATS_MAX);
	__type(key, __u32);
	__type(value, __u64);
} toe_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} toe_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct toe_config);
} toe_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct toe_sk_state);
} toe_sk_state SEC(".maps");

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

/* ------------------------------------------------------------- helpers */

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&toe_stats, &idx);

	if (c)
		*c += 1;
}

static __always_inline struct toe_config *toe_cfg(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&toe_config, &zero);
}

/* An IPv4-mapped IPv6 address (::ffff:a.b.c.d). */
static __always_inline bool v4mapped(const __u32 *a)
{
	return a[0] == 0 && a[1] == 0 && a[2] == bpf_htonl(0x0000ffff);
}

/*
 * The flow key of a socket, from this host's side.  IPv4 traffic on a
 * dual-stack IPv6 socket is keyed as IPv4, as XDP sees it.
 */
static __always_inline void skops_key(struct bpf_sock_ops *skops,
				      struct toe_flow_key *k)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->lport = skops->local_port;
	k->rport = bpf_ntohl(skops->remote_port) & 0xffff;
	if (skops->family == AF_INET) {
		k->family = TOE_AF_INET;
		k->laddr[0] = skops->local_ip4;
		k->raddr[0] = skops->remote_ip4;
		return;
	}
	k->laddr[0] = skops->local_ip6[0];
	k->laddr[1] = skops->local_ip6[1];
	k->laddr[2] = skops->local_ip6[2];
	k->laddr[3] = skops->local_ip6[3];
	k->raddr[0] = skops->remote_ip6[0];
	k->raddr[1] = skops->remote_ip6[1];
	k->raddr[2] = skops->remote_ip6[2];
	k->raddr[3] = skops->remote_ip6[3];
	if (v4mapped(k->laddr) && v4mapped(k->raddr)) {
		k->family = TOE_AF_INET;
		k->laddr[0] = k->laddr[3];
		k->raddr[0] = k->raddr[3];
		k->laddr[1] = k->laddr[2] = k->laddr[3] = 0;
		k->raddr[1] = k->raddr[2] = k->raddr[3] = 0;
	} else {
		k->family = TOE_AF_INET6;
	}
}

static __always_inline void emit(__u32 type, const struct toe_flow_key *k,
				 const struct toe_flow *f,
				 struct bpf_sock_ops *skops)
{
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
	if (f) {
		e->dev = f->dev;
		e->rule = f->rule;
		e->decision = f->decision;
		e->reason = f->reason;
		e->direction = f->direction;
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

/* -------------------------------------------------------- the decision */

struct decision {
	__u32 action;
	__u32 reason;
	__u32 dev;
	__u32 rule;
};

/*
 * Policy lookup.  This first version applies the configured default
 * action; the rule classifier (issue 3) slots in here.
 */
static __always_inline void decide(struct bpf_sock_ops *skops,
				   const struct toe_flow_key *k,
				   struct decision *d)
{
	struct toe_config *cfg = toe_cfg();

	d->action = cfg ? cfg->default_action : TOE_ACT_HOST;
	d->reason = TOE_R_DEFAULT;
	d->dev = TOE_DEV_NONE;
	d->rule = TOE_RULE_NONE;
	if (d->action == TOE_ACT_OFFLOAD) {
		/* A default "offload" needs a device; none is named here. */
		d->action = TOE_ACT_HOST;
		d->reason = TOE_R_NODEV;
	}
}

/*
 * Take a slot on device d->dev, or fall back to the host with reason
 * capacity.  The count is an atomic add that is undone when it overshoots,
 * so concurrent connections never take more than nconn slots.
 */
static __always_inline void take_slot(struct decision *d)
{
	__u32 idx = d->dev;
	struct toe_dev *dev = bpf_map_lookup_elem(&toe_devs, &idx);
	struct toe_dev_live *live = bpf_map_lookup_elem(&toe_dev_live, &idx);

	if (!dev || !live || !(dev->flags & TOE_DEVF_PRESENT)) {
		d->action = TOE_ACT_HOST;
		d->reason = TOE_R_NODEV;
		d->dev = TOE_DEV_NONE;
		return;
	}
	if (__sync_fetch_and_add(&live->live, 1) >= dev->nconn) {
		__sync_fetch_and_add(&live->live, -1);
		__sync_fetch_and_add(&live->refused, 1);
		d->action = TOE_ACT_HOST;
		d->reason = TOE_R_CAPACITY;
		return;
	}
	__sync_fetch_and_add(&live->offloaded, 1);
}

static __always_inline void release_slot(__u32 idx)
{
	struct toe_dev_live *live = bpf_map_lookup_elem(&toe_dev_live, &idx);

	if (live) {
		__sync_fetch_and_add(&live->live, -1);
		__sync_fetch_and_add(&live->released, 1);
	}
}

static __always_inline void fill_counters(struct toe_flow *f,
					  struct bpf_sock_ops *skops)
{
	f->bytes_acked = skops->bytes_acked;
	f->bytes_received = skops->bytes_received;
	f->segs_in = skops->segs_in;
	f->segs_out = skops->segs_out;
	f->total_retrans = skops->total_retrans;
	f->srtt_us = skops->srtt_us >> 3;
}

static __always_inline void on_established(struct bpf_sock_ops *skops,
					   __u8 dir)
{
	struct toe_flow_key k;
	struct toe_flow f = {};
	struct decision d;
	struct toe_sk_state *st;
	int cb = BPF_SOCK_OPS_STATE_CB_FLAG;
	struct bpf_sock *sk = skops->sk;

	if (!sk)
		return;
	skops_key(skops, &k);
	decide(skops, &k, &d);
	if (d.action == TOE_ACT_OFFLOAD) {
		st = bpf_sk_storage_get(&toe_sk_state, sk, 0,
					BPF_SK_STORAGE_GET_F_CREATE);
		if (!st) {
			d.action = TOE_ACT_HOST;
			d.reason = TOE_R_NODEV;
		} else {
			take_slot(&d);
			st->dev = d.action == TOE_ACT_OFFLOAD ? d.dev :
								TOE_DEV_NONE;
			st->decision = d.action;
		}
		cb |= BPF_SOCK_OPS_RTT_CB_FLAG | BPF_SOCK_OPS_RETRANS_CB_FLAG;
	}
	stat_inc(TOE_S_ESTABLISHED);

	f.start_ns = bpf_ktime_get_ns();
	f.cookie = bpf_get_socket_cookie(skops);
	f.dev = d.dev;
	f.rule = d.rule;
	f.decision = d.action;
	f.reason = d.reason;
	f.direction = dir;
	f.state = BPF_TCP_ESTABLISHED;
	fill_counters(&f, skops);
	bpf_map_update_elem(&toe_flows, &k, &f, BPF_ANY);
	if (d.action == TOE_ACT_OFFLOAD)
		emit(TOE_EV_FLOW_OFFLOADED, &k, &f, NULL);
	else if (d.reason == TOE_R_CAPACITY || d.reason == TOE_R_NODEV)
		emit(TOE_EV_FLOW_REFUSED, &k, &f, NULL);
	bpf_sock_ops_cb_flags_set(skops, cb);
}

static __always_inline void on_close(struct bpf_sock_ops *skops)
{
	struct toe_flow_key k;
	struct toe_flow *f;
	struct toe_sk_state *st;

	struct bpf_sock *sk = skops->sk;

	if (!sk)
		return;
	skops_key(skops, &k);
	st = bpf_sk_storage_get(&toe_sk_state, sk, 0, 0);
	if (st && st->dev != TOE_DEV_NONE) {
		release_slot(st->dev);
		st->dev = TOE_DEV_NONE;
	}
	f = bpf_map_lookup_elem(&toe_flows, &k);
	if (!f) {
		stat_inc(TOE_S_FLOW_EVICTED);
		emit(TOE_EV_FLOW_CLOSED, &k, NULL, skops);
		return;
	}
	stat_inc(TOE_S_CLOSED);
	emit(TOE_EV_FLOW_CLOSED, &k, f, skops);
	bpf_map_delete_elem(&toe_flows, &k);
	bpf_map_delete_elem(&toe_flow_pkts, &k);
}

static __always_inline void on_update(struct bpf_sock_ops *skops)
{
	struct toe_flow_key k;
	struct toe_flow *f;

	skops_key(skops, &k);
	f = bpf_map_lookup_elem(&toe_flows, &k);
	if (f)
		fill_counters(f, skops);
}

SEC("sockops")
int toe_sockops(struct bpf_sock_ops *skops)
{
	struct toe_flow_key k;

	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
		on_established(skops, TOE_DIR_ACTIVE);
		break;
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		on_established(skops, TOE_DIR_PASSIVE);
		break;
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
		/* The patch's OFFLOAD_LISTEN_START; STOP comes as a state change. */
		skops_key(skops, &k);
		stat_inc(TOE_S_LISTEN);
		emit(TOE_EV_LISTEN_START, &k, NULL, NULL);
		bpf_sock_ops_cb_flags_set(skops, BPF_SOCK_OPS_STATE_CB_FLAG);
		break;
	case BPF_SOCK_OPS_STATE_CB:
		if (skops->args[1] != BPF_TCP_CLOSE)
			break;
		if (skops->args[0] == BPF_TCP_LISTEN) {
			skops_key(skops, &k);
			emit(TOE_EV_LISTEN_STOP, &k, NULL, NULL);
		} else {
			on_close(skops);
		}
		break;
	case BPF_SOCK_OPS_RTT_CB:
	case BPF_SOCK_OPS_RETRANS_CB:
		on_update(skops);
		break;
	}
	return 1;
}

/* ----------------------------------------------------------------- XDP */

static __always_inline int xdp_next(struct xdp_md *ctx)
{
	__u32 slot = ctx->ingress_ifindex;

	if (slot < TOE_XDP_CHAIN_SLOTS) {
		bpf_tail_call(ctx, &toe_xdp_next, slot);
		/* Empty slot: nothing chained on this interface. */
	}
	return XDP_PASS;
}

SEC("xdp")
int toe_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct toe_flow_key k = {};
	struct toe_flow_pkts *pc, zero = {};
	struct toe_flow *f;
	struct toe_pkt p;
	int res;

	res = toe_parse(data, data_end, &p);
	if (res != TOE_P_TCP) {
		/* Malformed packets are counted, never dropped: the stack decides. */
		if (res != TOE_P_NOT_TCP)
			stat_inc(res);
		return xdp_next(ctx);
	}
	/* Ingress: the packet's destination is the local end. */
	k.family = p.family;
	__builtin_memcpy(k.laddr, p.daddr, 16);
	__builtin_memcpy(k.raddr, p.saddr, 16);
	k.lport = bpf_ntohs(p.dport);
	k.rport = bpf_ntohs(p.sport);
	f = bpf_map_lookup_elem(&toe_flows, &k);
	if (!f || f->decision != TOE_ACT_OFFLOAD)
		return xdp_next(ctx);	/* host flow: no map write */

	pc = bpf_map_lookup_elem(&toe_flow_pkts, &k);
	if (!pc) {
		bpf_map_update_elem(&toe_flow_pkts, &k, &zero, BPF_NOEXIST);
		pc = bpf_map_lookup_elem(&toe_flow_pkts, &k);
		if (!pc)
			return xdp_next(ctx);
	}
	pc->packets++;
	pc->bytes += data_end - data;
	stat_inc(TOE_S_XDP_FLOW_HIT);
	return xdp_next(ctx);
}
