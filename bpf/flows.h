/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, the flow records: the flow key of a socket or of a
 * received packet, sock_ops' handling of a connection's events (on_*:
 * established, listening, closed, RTT/retransmit updates) which applies
 * policy's decision and keeps the connection's record in toe_flows, the
 * toe_flow_filter count of offloaded flows, and XDP's and tc's lookup of a
 * record through that filter (flow_maybe).
 */
#ifndef __TOE_FLOWS_H
#define __TOE_FLOWS_H

#include "common.h"
#include "toe_parse.h"
#include "maps_flows.h"
#include "maps_bypass.h"
#include "policy.h"
#include "bypass.h"
#include "stats.h"
#include "tid.h"

/* An IPv4-mapped IPv6 address (::ffff:a.b.c.d). */
static __always_inline bool v4mapped(const __u32 *a)
{
	return a[0] == 0 && a[1] == 0 && a[2] == bpf_htonl(0x0000ffff);
}

/*
 * The flow key of a socket, from this host's side, in its own network
 * namespace.  IPv4 traffic on a dual-stack IPv6 socket is keyed as IPv4,
 * as XDP sees it.
 */
static __always_inline void skops_key(struct bpf_sock_ops *skops,
				      struct toe_flow_key *k)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->netns = bpf_get_netns_cookie(skops);
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

/* The socket's TCP counters, as its record holds them. */
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

/* The patch's set_keepalive override, for the flows a rule offloads. */
static __always_inline void set_keepalive(struct bpf_sock_ops *skops,
					  const struct decision *d)
{
	int one = 1, v;

	if (!d->ka_idle)
		return;
	bpf_setsockopt(skops, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	v = d->ka_idle;
	bpf_setsockopt(skops, SOL_TCP, TCP_KEEPIDLE, &v, sizeof(v));
	v = d->ka_intvl;
	bpf_setsockopt(skops, SOL_TCP, TCP_KEEPINTVL, &v, sizeof(v));
	v = d->ka_cnt;
	bpf_setsockopt(skops, SOL_TCP, TCP_KEEPCNT, &v, sizeof(v));
}

/*
 * Count an offloaded socket in toe_flow_filter, before its record is
 * written, and once (include/opentoe.h: the filter may err high, never low).
 */
static __always_inline void filter_add(struct toe_sk_state *st,
				       const struct toe_flow_key *k)
{
	__u32 slot = toe_filter_slot(k->laddr, k->raddr, k->lport, k->rport);
	struct toe_filter *c;

	if (st->filter)
		return;
	c = bpf_map_lookup_elem(&toe_flow_filter, &slot);
	if (!c)
		return;
	__sync_fetch_and_add(&c->live, 1);
	st->filter = 1;
	st->filter_slot = slot;
}

/* Its count back, after its record is deleted; once. */
static __always_inline void filter_del(struct toe_sk_state *st)
{
	__u32 slot = st->filter_slot;
	struct toe_filter *c;

	if (!st->filter)
		return;
	st->filter = 0;
	c = bpf_map_lookup_elem(&toe_flow_filter, &slot);
	if (c)
		__sync_fetch_and_add(&c->live, -1);
}

/*
 * With "track policy", a connection no rule named and the default leaves
 * to the host is only counted: no record, no callbacks, no events (what
 * most of sock_ops' cost per connection is).
 */
static __always_inline bool untracked(const struct decision *d)
{
	return d->track == TOE_TRACK_POLICY && d->reason == TOE_R_DEFAULT &&
	       d->action == TOE_ACT_HOST;
}

/*
 * A tenant's connection (a namespace other than toed's) takes one of its
 * share of toe_flows records before anything else, so that a tenant's
 * flood never evicts the others' records from the LRU: at its quota, no
 * record, no slot, no event (host, reason quota; counted).  The socket's
 * storage remembers the record was counted, so on_close gives it back
 * once, whether or not the LRU evicted the record meanwhile.
 */
static __always_inline bool flows_quota(struct bpf_sock *sk, struct decision *d)
{
	struct toe_sk_state *st;

	if (!d->tenant || !d->tenant_flows)
		return true;
	st = bpf_sk_storage_get(&toe_sk_state, sk, 0,
				BPF_SK_STORAGE_GET_F_CREATE);
	if (st && tenant_take(d, TOE_TQ_FLOWS, d->tenant_flows)) {
		st->dev = TOE_DEV_NONE;
		st->decision = TOE_ACT_HOST;
		st->flows_tenant = d->tenant;
		return true;
	}
	stat_inc(TOE_S_QUOTA);
	return false;
}

/* A flow record's decision fields from d, with its direction and TCP state. */
static __always_inline void
flow_decided(struct toe_flow *f, const struct decision *d, __u8 dir, __u8 state)
{
	f->dev = d->dev;
	f->rule = d->rule;
	f->decision = d->action;
	f->reason = d->reason;
	f->direction = dir;
	f->state = state;
	f->policy = (__u32)d->serial;
}

/*
 * A connection established (dir: which end this socket is): the decision,
 * a device slot or the bypass, the keepalive, its record and its event.
 */
static __always_inline void on_established(struct bpf_sock_ops *skops, __u8 dir)
{
	struct toe_flow_key k;
	struct toe_flow f = {};
	struct decision d;
	struct toe_sk_state *st;
	int cb = BPF_SOCK_OPS_STATE_CB_FLAG;
	struct bpf_sock *sk = skops->sk;
	__u64 cookie;

	if (!sk)
		return;
	skops_key(skops, &k);
	cookie = bpf_get_socket_cookie(skops);
	decide(&k, sk_cgroup_id(sk), &d);
	if (untracked(&d)) {
		stat_inc(TOE_S_ESTABLISHED);
		stat_inc(TOE_S_UNTRACKED);
		/* none inherited from a listener: no close callback either */
		bpf_sock_ops_cb_flags_set(skops, 0);
		return;
	}
	if (!flows_quota(sk, &d)) {
		stat_inc(TOE_S_ESTABLISHED);
		bpf_sock_ops_cb_flags_set(skops, 0); /* nothing to close */
		return;
	}
	if (d.action == TOE_ACT_OFFLOAD) {
		st = bpf_sk_storage_get(&toe_sk_state, sk, 0,
					BPF_SK_STORAGE_GET_F_CREATE);
		if (!st) {
			d.action = TOE_ACT_HOST;
			d.reason = TOE_R_NODEV;
		} else if (dir == TOE_DIR_PASSIVE && st->listen_full) {
			/* its listener is on the host: toe_listeners was full */
			d.action = TOE_ACT_HOST;
			d.reason = TOE_R_LISTENERS_FULL;
			d.dev = TOE_DEV_NONE;
		} else {
			take_slot(&d);
			if (d.action == TOE_ACT_OFFLOAD) {
				/* a child of a listener without a server TID takes none */
				if ((dir != TOE_DIR_PASSIVE ||
				     child_listener_ok(&d, &k)) &&
				    take_tid(&d, sk, &k, cookie))
					slot_offloaded(d.dev);
				else
					slot_refused(&d);
			}
			/* a module device's slot is toe_tid_held's (tid.h) */
			st->dev = d.action == TOE_ACT_OFFLOAD &&
						  d.tid == TOE_TID_NONE ?
					  d.dev :
					  TOE_DEV_NONE;
			st->decision = d.action;
			/* the tenant's share, given back once at close */
			st->tenant = d.action == TOE_ACT_OFFLOAD ? d.tenant : 0;
			st->tenant_what = d.dev & (TOE_MAX_DEVS - 1);
			if (d.action == TOE_ACT_OFFLOAD)
				filter_add(st, &k);
		}
	}
	if (d.action == TOE_ACT_BYPASS)
		bypass_start(skops, sk, &k, dir, &d);
	if (d.action == TOE_ACT_OFFLOAD) {
		/* Live counters for offloaded flows; host flows get them at close. */
		cb |= BPF_SOCK_OPS_RTT_CB_FLAG | BPF_SOCK_OPS_RETRANS_CB_FLAG;
		set_keepalive(skops, &d);
	}
	stat_inc(TOE_S_ESTABLISHED);

	f.start_ns = bpf_ktime_get_ns();
	f.cookie = cookie;
	flow_decided(&f, &d, dir, BPF_TCP_ESTABLISHED);
	f.netns_ino = sk_netns_ino(sk);
	fill_counters(&f, skops);
#ifndef TOE_BENCH_NO_FLOW_RECORD
	bpf_map_update_elem(&toe_flows, &k, &f, BPF_ANY);
#else
	asm volatile("" : : "r"(&f), "r"(&k) : "memory"); /* f still built */
#endif
	if (d.action == TOE_ACT_OFFLOAD)
		emit(TOE_EV_FLOW_OFFLOADED, &k, &f, NULL, d.tid);
	else if (d.reason == TOE_R_CAPACITY || d.reason == TOE_R_NODEV ||
		 d.reason == TOE_R_NO_TID || d.reason == TOE_R_ROUTE ||
		 d.reason == TOE_R_QUOTA || d.reason == TOE_R_NO_STID ||
		 d.reason == TOE_R_LISTENERS_FULL) {
		rsn_inc(TOE_RSN_REFUSED(d.reason & (TOE_RSN_STRIDE - 1)));
		emit(TOE_EV_FLOW_REFUSED, &k, &f, NULL, TOE_TID_NONE);
	}
	bpf_sock_ops_cb_flags_set(skops, cb);
}

/*
 * TOE_BENCH_NO_FLOW_RECORD (bench/bench_sockops_steps.sh only, see stats.h):
 * no toe_flows record written at establishment, so none found at close;
 * TOE_BENCH_NO_CLOSE_EVENT: no flow_closed event.
 */
static __always_inline void close_event(const struct toe_flow_key *k,
					const struct toe_flow *f,
					struct bpf_sock_ops *skops, __u32 tid)
{
#ifndef TOE_BENCH_NO_CLOSE_EVENT
	emit(TOE_EV_FLOW_CLOSED, k, f, skops, tid);
#endif
}

/* A connection closed: its slot, bypass counters and record go; its event. */
static __always_inline void on_close(struct bpf_sock_ops *skops)
{
	struct toe_flow_key k;
	struct toe_flow *f;
	struct toe_sk_state *st;
	struct toe_byp_sk *bst;
	struct bpf_sock *sk = skops->sk;
	__u32 tid = TOE_TID_NONE;

	if (!sk)
		return;
	skops_key(skops, &k);
	st = bpf_sk_storage_get(&toe_sk_state, sk, 0, 0);
	if (st && st->tenant) {
		tenant_give(st->tenant, st->tenant_what);
		st->tenant = 0;
	}
	if (st && st->flows_tenant) {
		tenant_give(st->flows_tenant, TOE_TQ_FLOWS);
		st->flows_tenant = 0;
	}
	if (st && st->dev != TOE_DEV_NONE) {
		release_slot(st->dev);
		st->dev = TOE_DEV_NONE;
	} else if (st && st->decision == TOE_ACT_OFFLOAD) {
		/* a module device's: its slot goes with its TID, if held */
		st->decision = TOE_ACT_HOST;
		tid = drop_tid(bpf_get_socket_cookie(skops));
	}
	bst = bpf_sk_storage_get(&toe_byp_sk, sk, 0, 0);
	if (bst)
		bpf_map_delete_elem(&toe_byp_flows, &bst->self);
#ifdef TOE_BENCH_NO_FLOW_RECORD
	f = NULL;
#else
	f = bpf_map_lookup_elem(&toe_flows, &k);
#endif
	if (!f) {
		stat_inc(TOE_S_FLOW_EVICTED);
		close_event(&k, NULL, skops, tid);
	} else {
		stat_inc(TOE_S_CLOSED);
		close_event(&k, f, skops, tid);
		bpf_map_delete_elem(&toe_flows, &k);
	}
	if (st)
		filter_del(st); /* the record is gone: the count may go */
}

/* RTT or retransmission of an offloaded flow: its record's counters. */
static __always_inline void on_update(struct bpf_sock_ops *skops)
{
	struct toe_flow_key k;
	struct toe_flow *f;

	skops_key(skops, &k);
	f = bpf_map_lookup_elem(&toe_flows, &k);
	if (f)
		fill_counters(f, skops);
}

/*
 * A listener policy offloads on d->dev that toe_listeners has no room for
 * (TOE_LISTENERS_MAX): never offloaded without its entry.  Its server TID,
 * if it took one, goes back to the pool at once (toed binds nothing); it
 * stays on the host, reason listeners_full, and its socket's storage says
 * so, which its accepted sockets inherit (BPF_F_CLONE): they stay on the
 * host too (on_established).
 */
static __always_inline void listen_full(struct bpf_sock *sk, struct decision *d,
					__u32 *stid)
{
	struct toe_sk_state *st;

	if (*stid != TOE_TID_NONE)
		stid_giveback(d->dev, *stid);
	*stid = TOE_TID_NONE;
	d->action = TOE_ACT_HOST;
	d->reason = TOE_R_LISTENERS_FULL;
	d->dev = TOE_DEV_NONE;
	stat_inc(TOE_S_LISTENERS_FULL);
	if (!sk)
		return;
	st = bpf_sk_storage_get(&toe_sk_state, sk, 0,
				BPF_SK_STORAGE_GET_F_CREATE);
	if (!st)
		return;
	st->dev = TOE_DEV_NONE;
	st->decision = TOE_ACT_HOST;
	st->listen_full = 1;
}

/* A listener toe_listeners has: no longer full, if it was before. */
static __always_inline void listen_room(struct bpf_sock *sk)
{
	struct toe_sk_state *st;

	if (!sk)
		return;
	st = bpf_sk_storage_get(&toe_sk_state, sk, 0, 0);
	if (st)
		st->listen_full = 0;
}

/*
 * A listener: the patch's OFFLOAD_LISTEN_START.  Policy decides it as a
 * flow of its local address and port, remote 0, of its socket's cgroup;
 * offloaded on a present device, it goes into toe_listeners; on a module
 * device only with a server TID from the device's server pool (take_stid:
 * none, it stays on the host, reason no_stid), which toed binds to it
 * (LISTEN_START + TID).  No room in toe_listeners: host, reason
 * listeners_full (listen_full).  Its event carries the decision and the
 * server TID.  Devices take no capacity slot for a listener: its
 * connections take theirs when they are established.
 */
static __always_inline void on_listen(struct bpf_sock_ops *skops)
{
	struct toe_flow_key k;
	struct toe_flow f = {};
	struct toe_listen l = {};
	struct bpf_sock *sk = skops->sk;
	struct decision d;
	struct toe_dev *dev;
	__u32 stid = TOE_TID_NONE;

	skops_key(skops, &k);
	stat_inc(TOE_S_LISTEN);
	decide(&k, sk ? sk_cgroup_id(sk) : 0, &d);
	if (d.action == TOE_ACT_OFFLOAD) {
		dev = bpf_map_lookup_elem(&toe_devs, &d.dev);
		if (!dev || !(dev->flags & TOE_DEVF_PRESENT)) {
			d.action = TOE_ACT_HOST;
			d.reason = TOE_R_NODEV;
			d.dev = TOE_DEV_NONE;
		} else if (!take_stid(&d, &stid)) {
			/* a module device: no server TID, no listener there */
			d.action = TOE_ACT_HOST;
			d.dev = TOE_DEV_NONE;
		}
	} else if (d.action != TOE_ACT_BYPASS) {
		d.dev = TOE_DEV_NONE;
	}
	f.netns_ino = sk ? sk_netns_ino(sk) : 0;
	if (d.action == TOE_ACT_OFFLOAD) {
		l.dev = d.dev;
		l.rule = d.rule;
		l.policy = (__u32)d.serial;
		l.cookie = bpf_get_socket_cookie(skops);
		l.netns_ino = f.netns_ino;
		l.stid = stid;
		if (!bpf_map_update_elem(&toe_listeners, &k, &l, BPF_ANY)) {
			/* the take is over: in flight */
			if (stid != TOE_TID_NONE)
				stid_taken(d.dev);
			listen_room(sk);
		} else {
			listen_full(sk, &d, &stid);
		}
	}
	flow_decided(&f, &d, TOE_DIR_PASSIVE, BPF_TCP_LISTEN);
	emit(TOE_EV_LISTEN_START, &k, &f, NULL, stid);
	bpf_sock_ops_cb_flags_set(skops, BPF_SOCK_OPS_STATE_CB_FLAG);
}

/*
 * A listener closed (LISTEN -> CLOSE): the patch's OFFLOAD_LISTEN_STOP.
 * Its toe_listeners entry goes; the event carries the device it had.
 */
static __always_inline void on_listen_stop(struct bpf_sock_ops *skops)
{
	struct toe_flow_key k;
	struct toe_flow f = {};
	struct toe_listen *l;
	__u32 stid;

	skops_key(skops, &k);
	l = bpf_map_lookup_elem(&toe_listeners, &k);
	if (!l || l->cookie != bpf_get_socket_cookie(skops)) {
		emit(TOE_EV_LISTEN_STOP, &k, NULL, skops, TOE_TID_NONE);
		return;
	}
	f.dev = l->dev;
	f.rule = l->rule;
	f.decision = TOE_ACT_OFFLOAD;
	f.reason = l->rule == TOE_RULE_NONE ? TOE_R_DEFAULT : TOE_R_RULE;
	f.direction = TOE_DIR_PASSIVE;
	f.policy = l->policy;
	f.netns_ino = l->netns_ino;
	stid = l->stid;
	bpf_map_delete_elem(&toe_listeners, &k);
	emit(TOE_EV_LISTEN_STOP, &k, &f, NULL, stid);
}

/* A state change: only closes count, a listener's (LISTEN_STOP) or a flow's. */
static __always_inline void on_state(struct bpf_sock_ops *skops)
{
	if (skops->args[1] != BPF_TCP_CLOSE)
		return;
	if (skops->args[0] == BPF_TCP_LISTEN)
		on_listen_stop(skops);
	else
		on_close(skops);
}

/*
 * Whether an offloaded flow may have k's tuple (in some namespace): its
 * toe_flow_filter slot is not all zero.  If not, the packet is taken as a
 * miss (host flows) without reading its namespace or looking it up.
 */
static __always_inline bool flow_maybe(const struct toe_flow_key *k)
{
	__u32 slot = toe_filter_slot(k->laddr, k->raddr, k->lport, k->rport);
	struct toe_filter *fc = bpf_map_lookup_elem(&toe_flow_filter, &slot);

	return !fc || fc->live || fc->loaded;
}

/*
 * The flow of a received packet: its destination is the local end.  Its
 * namespace (k->netns) is the caller's to fill, once flow_maybe() says a
 * lookup is worth it.
 */
static __always_inline void ingress_key(const struct toe_pkt *p,
					struct toe_flow_key *k)
{
	k->family = p->family;
	__builtin_memcpy(k->laddr, p->daddr, 16);
	__builtin_memcpy(k->raddr, p->saddr, 16);
	k->lport = bpf_ntohs(p->dport);
	k->rport = bpf_ntohs(p->sport);
}

#endif /* __TOE_FLOWS_H */
