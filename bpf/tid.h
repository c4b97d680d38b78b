/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, the kernel module's TIDs: a connection offloaded on a
 * module device takes a TID from the device's pool at the decision
 * (take_tid), or stays on the host with the reason; it gives the TID and
 * its device slot back at close (drop_tid), unless toed demoted it first
 * (tid_demote: the module refused the flow, or the device went).  Whoever
 * deletes the connection's toe_tid_held entry releases the slot: once.
 */
#ifndef __TOE_TID_H
#define __TOE_TID_H

#include "common.h"
#include "maps_tid.h"
#include "maps_flows.h"
#include "policy.h"
#include "stats.h"

/* The interface the socket's cached route leaves through; 0: unknown. */
static __always_inline __u32 sk_route_ifindex(struct bpf_sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
	struct dst_entry *dst;
	struct net_device *nd;

	if (!tp)
		return 0;
	dst = tp->inet_conn.icsk_inet.sk.sk_dst_cache;
	if (!dst)
		return 0;
	nd = dst->dev;
	if (!nd)
		return 0;
	return nd->ifindex;
}

/*
 * A connection policy offloads on device d->dev, which holds a slot
 * there: if the device is the module's, the socket must be of toed's
 * namespace and its route must leave through the device's interface (what the module checks at TID_ALLOC, checked here where the
 * socket's route is at hand) and a TID must be in its pool.  The TID goes
 * into toe_tid_held under the socket's cookie.  False, with d->reason
 * set, if the connection must stay on the host.
 */
static __always_inline bool take_tid(struct decision *d, struct bpf_sock *sk,
				     const struct toe_flow_key *k, __u64 cookie)
{
	struct toe_tid_held h = {};
	__u32 idx = d->dev, ifindex;
	struct toe_dev *dev = bpf_map_lookup_elem(&toe_devs, &idx);
	struct toe_dev_live *live;
	void *pool;

	d->tid = TOE_TID_NONE;
	if (!dev || !(dev->flags & TOE_DEVF_KMOD))
		return true;
	ifindex = sk_route_ifindex(sk);
	/*
	 * The module's interface is in toed's namespace: a socket of another
	 * one (a tenant's) cannot leave through it, whatever ifindex its own
	 * route has (ifindexes are per namespace, and may be the same).
	 */
	if (d->tenant || (dev->ifindex && ifindex && ifindex != dev->ifindex)) {
		stat_inc(TOE_S_TID_ROUTE);
		d->reason = TOE_R_ROUTE;
		return false;
	}
	live = bpf_map_lookup_elem(&toe_dev_live, &idx);
	if (!live) {
		stat_inc(TOE_S_TID_EMPTY);
		d->reason = TOE_R_NO_TID;
		return false;
	}
	/*
	 * A take in progress, from before the pop until toe_tid_held has the
	 * TID: a reconcile that empties the pool and finds no entry holding
	 * a TID waits for tid_taking to be 0 before it frees it as orphaned
	 */
	__sync_fetch_and_add(&live->tid_taking, 1);
	pool = bpf_map_lookup_elem(&toe_tid_pool, &idx);
	if (!pool || bpf_map_pop_elem(pool, &h.tid)) {
		__sync_fetch_and_add(&live->tid_taking, -1);
		stat_inc(TOE_S_TID_EMPTY);
		d->reason = TOE_R_NO_TID;
		return false;
	}
	h.key = *k;
	h.dev = idx;
	if (bpf_map_update_elem(&toe_tid_held, &cookie, &h, BPF_NOEXIST)) {
		/* toe_tid_held full: the TID goes back, the flow stays home */
		bpf_map_push_elem(pool, &h.tid, 0);
		__sync_fetch_and_add(&live->tid_taking, -1);
		stat_inc(TOE_S_TID_EMPTY);
		d->reason = TOE_R_NO_TID;
		return false;
	}
	/* the TID is in flight until toed settles it (binds or gives back) */
	__sync_fetch_and_add(&live->tid_taken, 1);
	__sync_fetch_and_add(&live->tid_taking, -1);
	stat_inc(TOE_S_TID_TAKEN);
	d->tid = h.tid;
	return true;
}

/*
 * A listener policy offloads on device d->dev: if the device is the
 * module's, the listener must be of toed's namespace and take a server
 * TID from the device's server pool (TOE_STID_POOL), into *stid.  False,
 * with d->reason set, if it must stay on the host.
 */
static __always_inline bool take_stid(struct decision *d, __u32 *stid)
{
	__u32 idx = d->dev, sidx;
	struct toe_dev *dev = bpf_map_lookup_elem(&toe_devs, &idx);
	struct toe_dev_live *live;
	void *pool;

	*stid = TOE_TID_NONE;
	if (!dev || !(dev->flags & TOE_DEVF_KMOD))
		return true;
	if (d->tenant) {
		/* counted and kept home as a tenant's connection is */
		stat_inc(TOE_S_TID_ROUTE);
		d->reason = TOE_R_ROUTE;
		return false;
	}
	live = bpf_map_lookup_elem(&toe_dev_live, &idx);
	if (!live) {
		d->reason = TOE_R_NO_STID;
		return false;
	}
	/* a take in progress until toe_listeners has it (stid_taken) */
	__sync_fetch_and_add(&live->stid_taking, 1);
	sidx = TOE_STID_POOL(idx);
	pool = bpf_map_lookup_elem(&toe_tid_pool, &sidx);
	if (!pool || bpf_map_pop_elem(pool, stid)) {
		__sync_fetch_and_add(&live->stid_taking, -1);
		*stid = TOE_TID_NONE;
		d->reason = TOE_R_NO_STID;
		return false;
	}
	return true;
}

/*
 * A listener of device idx took a server TID (take_stid) and its
 * toe_listeners entry has it: counted, in flight until toed settles it
 * (binds it, or gives it back); the take is over.
 */
static __always_inline void stid_taken(__u32 idx)
{
	struct toe_dev_live *live = bpf_map_lookup_elem(&toe_dev_live, &idx);

	if (live) {
		__sync_fetch_and_add(&live->stid_taken, 1);
		__sync_fetch_and_add(&live->stid_taking, -1);
	}
}

/*
 * A listener of device idx took server TID stid (take_stid) but
 * toe_listeners had no room for it: the server TID goes back to the
 * device's server pool at once, and the take is over (nothing in flight:
 * toed binds nothing).  A pool that cannot take it back (full, gone)
 * leaves it to toed's reconcile, which frees it as orphaned.
 */
static __always_inline void stid_giveback(__u32 idx, __u32 stid)
{
	struct toe_dev_live *live = bpf_map_lookup_elem(&toe_dev_live, &idx);
	__u32 sidx = TOE_STID_POOL(idx);
	void *pool = bpf_map_lookup_elem(&toe_tid_pool, &sidx);

	if (pool)
		bpf_map_push_elem(pool, &stid, 0);
	if (live)
		__sync_fetch_and_add(&live->stid_taking, -1);
}

/*
 * An accepted connection offloaded on module device d->dev: its listener
 * must be offloaded there with a server TID (toe_listeners: its address,
 * or the wildcard of its family, or ::, a dual-stack one).  False, with
 * d->reason no_stid, if it is not: the child stays on the host, no TID.
 */
static __always_inline bool child_listener_ok(struct decision *d,
					      const struct toe_flow_key *k)
{
	__u32 idx = d->dev;
	struct toe_dev *dev = bpf_map_lookup_elem(&toe_devs, &idx);
	struct toe_flow_key lk = {};
	struct toe_listen *l;

	/* a tenant's: take_tid keeps it home, reason route */
	if (!dev || !(dev->flags & TOE_DEVF_KMOD) || d->tenant)
		return true;
	lk.netns = k->netns;
	lk.family = k->family;
	lk.lport = k->lport;
	__builtin_memcpy(lk.laddr, k->laddr, sizeof(lk.laddr));
	l = bpf_map_lookup_elem(&toe_listeners, &lk);
	if (!l) {
		__builtin_memset(lk.laddr, 0, sizeof(lk.laddr));
		l = bpf_map_lookup_elem(&toe_listeners, &lk);
	}
	if (!l && k->family == TOE_AF_INET) {
		lk.family = TOE_AF_INET6;
		l = bpf_map_lookup_elem(&toe_listeners, &lk);
	}
	if (l && l->dev == idx && l->stid != TOE_TID_NONE)
		return true;
	d->reason = TOE_R_NO_STID;
	return false;
}

/*
 * A closing connection of a module device: its TID (for the close event,
 * toed gives it back to the module) and its slot, if toed has not demoted
 * it meanwhile.  TOE_TID_NONE if it held none.
 */
static __always_inline __u32 drop_tid(__u64 cookie)
{
	struct toe_tid_held *h = bpf_map_lookup_elem(&toe_tid_held, &cookie);
	__u32 dev, tid;

	if (!h)
		return TOE_TID_NONE;
	dev = h->dev;
	tid = h->tid;
	if (bpf_map_delete_elem(&toe_tid_held, &cookie))
		return TOE_TID_NONE; /* toe_tid_demote won: it released */
	release_slot(dev);
	return tid;
}

/*
 * toed demotes an offloaded flow of a module device to the host: the
 * module refused to bind its TID (L2T full, route, device), or the device
 * went.  Its slot is released and its record says host, with the reason.
 */
static __always_inline int tid_demote(struct toe_tid_demote *a)
{
	struct toe_tid_held *h;
	struct toe_flow_key k;
	struct toe_flow *f;
	__u64 cookie = a->cookie;
	__u32 dev;

	a->done = 0;
	h = bpf_map_lookup_elem(&toe_tid_held, &cookie);
	if (!h || h->dev != a->dev || h->tid != a->tid)
		return 0;
	k = h->key;
	dev = h->dev;
	if (bpf_map_delete_elem(&toe_tid_held, &cookie))
		return 0; /* the connection closed first: it released */
	release_slot(dev);
	f = bpf_map_lookup_elem(&toe_flows, &k);
	if (f && f->cookie == cookie) {
		f->decision = TOE_ACT_HOST;
		f->reason = a->reason < TOE_R__MAX ? a->reason : TOE_R_MODULE;
		f->dev = TOE_DEV_NONE;
	}
	stat_inc(TOE_S_TID_DEMOTED);
	a->done = 1;
	return 0;
}

#endif /* __TOE_TID_H */
