// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed and the kernel module (user/toed/genl.c): the module's devices merged
 * into the configuration, the TIDs toed takes for flows the datapath
 * offloads on them (tid_*: a table by flow key) and gives back when they
 * close, reconciled with the module after a restart or a lost event, and
 * the module's generic netlink events (on_genl).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "lib/clock.h"
#include "opentoe_common.h"
#include "opentoe_policy.h"
#include "opentoe_flows.h"
#include "opentoe_events.h"
#include "opentoe_tid.h"
#include "devices.h"
#include "kmod.h"
#include "tidpool.h"
#include "events.h"
#include "genl.h"
#include "log.h"
#include "show_maps.h"
#include "state.h"

/*
 * The TIDs toed holds in the kernel module for its offloaded flows, by
 * flow key: a chained hash table that doubles as it fills.  The hash is of
 * the tuple alone, the match of the whole key (netns too): the module
 * knows no namespaces, so its TID_GET dump gives tuples only, and the
 * entries of one tuple in several namespaces share a chain where
 * tid_of_tuple() finds them (by TID).
 */
struct tident {
	struct toe_flow_key k;
	__u32 mdev; /* the module's device index */
	__u32 tid, l2t;
	bool refused; /* the module refused it: no TID, do not ask again */
	bool seen; /* in the last TID_GET dump */
	struct tident *next;
};

static __u64 key_hash(const struct toe_flow_key *k)
{
	__u64 h = 1469598103934665603ULL;
	const unsigned char *p;
	size_t i;

#define MIX(field)                                        \
	for (p = (const unsigned char *)&k->field, i = 0; \
	     i < sizeof(k->field); i++)                   \
	h = (h ^ p[i]) * 1099511628211ULL
	MIX(laddr);
	MIX(raddr);
	MIX(lport);
	MIX(rport);
	MIX(family);
#undef MIX
	return h;
}

/* The same addresses and ports, in any namespace. */
static bool tuple_eq(const struct toe_flow_key *a, const struct toe_flow_key *b)
{
	return a->family == b->family && a->lport == b->lport &&
	       a->rport == b->rport &&
	       !memcmp(a->laddr, b->laddr, sizeof(a->laddr)) &&
	       !memcmp(a->raddr, b->raddr, sizeof(a->raddr));
}

static bool key_eq(const struct toe_flow_key *a, const struct toe_flow_key *b)
{
	return a->netns == b->netns && tuple_eq(a, b);
}

static struct tident **tid_slot(struct kmod *km, const struct toe_flow_key *k)
{
	struct tident **p;

	if (!km->tid_nb)
		return NULL;
	for (p = &km->tids[key_hash(k) & (km->tid_nb - 1)]; *p; p = &(*p)->next)
		if (key_eq(&(*p)->k, k))
			break;
	return p;
}

static struct tident *tid_find(struct kmod *km, const struct toe_flow_key *k)
{
	struct tident **p = tid_slot(km, k);

	return p ? *p : NULL;
}

/* The entry of a module TID (its dump's tuple, netns 0), in any namespace. */
static struct tident *tid_of_tuple(struct kmod *km,
				   const struct toe_flow_key *k, __u32 mdev,
				   __u32 tid)
{
	struct tident *t;

	if (!km->tid_nb)
		return NULL;
	for (t = km->tids[key_hash(k) & (km->tid_nb - 1)]; t; t = t->next)
		if (tuple_eq(&t->k, k) && !t->refused && t->mdev == mdev &&
		    t->tid == tid)
			return t;
	return NULL;
}

long long tid_of(const struct toe_flow_key *k, void *ctx)
{
	struct tident *t = tid_find(ctx, k); /* ctx: the struct kmod */

	return t && !t->refused ? (long long)t->tid : -1;
}

static int tid_add(struct kmod *km, const struct toe_flow_key *k, __u32 mdev,
		   __u32 tid, __u32 l2t, bool refused)
{
	struct tident *t, **p;
	size_t i;

	if (km->tid_n + 1 > km->tid_nb * 2) {
		size_t nb = km->tid_nb ? km->tid_nb * 2 : 1024;
		struct tident **b = calloc(nb, sizeof(*b));

		if (!b)
			return -1;
		for (i = 0; i < km->tid_nb; i++) {
			while ((t = km->tids[i])) {
				km->tids[i] = t->next;
				t->next = b[key_hash(&t->k) & (nb - 1)];
				b[key_hash(&t->k) & (nb - 1)] = t;
			}
		}
		free(km->tids);
		km->tids = b;
		km->tid_nb = nb;
	}
	p = tid_slot(km, k);
	t = *p;
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return -1;
		t->k = *k;
		*p = t;
		km->tid_n++;
	}
	t->mdev = mdev;
	t->tid = tid;
	t->l2t = l2t;
	t->refused = refused;
	t->seen = true;
	return 0;
}

static void tid_del(struct kmod *km, const struct toe_flow_key *k)
{
	struct tident **p = tid_slot(km, k), *t;

	km->tid_settled_ns = toe_now_ns(); /* bound: one fewer */
	if (!p || !(t = *p))
		return;
	*p = t->next;
	free(t);
	km->tid_n--;
}

/*
 * TIDs connections took and closed before toed could bind them (the module
 * refused the bind, or the device went, and the demote found the
 * connection gone): its flow_closed gives the TID back.  toed gives a TID
 * back at a close only when it holds a record of it, here or bound in its
 * table; each record goes once, at that close or at a reconcile.  A close
 * toed holds no record of is a TID a reconcile gave back already (it saw
 * the connection's toe_tid_held entry gone, which the datapath deletes
 * before it emits the close) or will (the module has it, no connection
 * holds it): never freed twice.  Unbounded, but one per close in flight.
 * A record (a tidrec; in km->ub) is the one kind the last reconcile's
 * TIDs (disposed_add, km->disp) are kept in too, without the flow.
 */
struct tidrec {
	struct toe_flow_key k; /* the flow's, or zero */
	__u32 dev, tid; /* toe_devs index, the module's TID */
};

/* (k, dev, tid) added to r (k NULL: no flow); false if out of memory. */
static bool tidrec_add(struct tidrecs *r, const struct toe_flow_key *k,
		       __u32 dev, __u32 tid)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		void *p = realloc(r->v, cap * sizeof(*r->v));

		if (!p)
			return false;
		r->v = p;
		r->cap = cap;
	}
	memset(&r->v[r->n], 0, sizeof(r->v[r->n]));
	if (k)
		r->v[r->n].k = *k;
	r->v[r->n].dev = dev;
	r->v[r->n].tid = tid;
	r->n++;
	return true;
}

/*
 * The place in r of TID tid of toe_devs index dev (and of flow k, unless
 * k is NULL); r->n if it has none.
 */
static size_t tidrec_find(const struct tidrecs *r, const struct toe_flow_key *k,
			  __u32 dev, __u32 tid)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->v[i].dev == dev && r->v[i].tid == tid &&
		    (!k || key_eq(&r->v[i].k, k)))
			break;
	return i;
}

static void unbound_add(struct kmod *km, const struct toe_flow_key *k,
			__u32 dev, __u32 tid)
{
	/* if not, its close finds no record: the next reconcile frees it */
	if (!tidrec_add(&km->ub, k, dev, tid))
		logm(LOG_ERR, "out of memory for a closed flow's TID");
}

/* Whether toed holds such a record of TID tid of toe_devs index dev. */
static bool unbound_has(struct kmod *km, __u32 dev, __u32 tid)
{
	return tidrec_find(&km->ub, NULL, dev, tid) < km->ub.n;
}

/* The record of a closed flow's unbound TID, taken (true) if there is one. */
static bool unbound_take(struct kmod *km, const struct toe_flow_key *k,
			 __u32 dev, __u32 tid)
{
	size_t i = tidrec_find(&km->ub, k, dev, tid);

	if (i == km->ub.n)
		return false;
	km->ub.v[i] = km->ub.v[--km->ub.n];
	return true;
}

/*
 * The TIDs the last reconcile gave back or demoted (toe_devs index, TID),
 * and when it was done with them (disp_ns, before it reserved any anew).
 * An offload event of one of them emitted before then is of a connection
 * that reconcile found closed or demoted: its TID was dealt with, and
 * binding it now would bind a TID freed, or back in the pool.  Emitted
 * after, it is of a new connection (the TID reserved again since).
 */

static void disposed_add(struct kmod *km, __u32 dev, __u32 tid)
{
	if (!tidrec_add(&km->disp, NULL, dev, tid))
		logm(LOG_ERR, "out of memory for a reconciled TID");
}

/* An event with a TID emitted before the last reconcile dealt with that TID. */
static bool disposed(struct kmod *km, const struct toe_event *e)
{
	return e->ts_ns < km->disp_ns &&
	       tidrec_find(&km->disp, NULL, e->dev, e->tid) < km->disp.n;
}

/* The module went away (its TIDs with it), or toed stops: forget them all. */
void tid_clear(struct kmod *km)
{
	struct tident *t;
	size_t i;

	km->ub.n = 0;

	for (i = 0; i < km->tid_nb; i++) {
		while ((t = km->tids[i])) {
			km->tids[i] = t->next;
			free(t);
		}
	}
	free(km->tids);
	km->tids = NULL;
	km->tid_nb = km->tid_n = 0;
}

__u32 tids_held(struct kmod *km, __u32 mdev)
{
	struct tident *t;
	__u32 n = 0;
	size_t i;

	for (i = 0; i < km->tid_nb; i++)
		for (t = km->tids[i]; t; t = t->next)
			n += t->mdev == mdev && !t->refused;
	return n;
}

size_t tids_held_all(struct kmod *km)
{
	struct tident *t;
	size_t i, n = 0;

	for (i = 0; i < km->tid_nb; i++)
		for (t = km->tids[i]; t; t = t->next)
			n += !t->refused;
	return n;
}

/* Read the module's devices again; false (and none) if it cannot be asked. */
bool kmod_read_devs(struct kmod *km)
{
	char err[512];
	int ret;

	km->nkdevs = 0;
	if (!toe_genl_up(km->gl))
		return false;
	ret = toe_genl_devs(km->gl, km->kdevs, TOE_MAX_DEVS, &km->nkdevs, err,
			    sizeof(err));
	if (ret) {
		/* ENOENT: the family is being unregistered; its event follows. */
		logm(ret == -ENOENT ? LOG_DEBUG : LOG_ERR, "%s", err);
		km->nkdevs = 0;
		return false;
	}
	return true;
}

/* After an apply: which toe_devs index is which device of the module. */
void kmod_map_refresh(struct kmod *km)
{
	const struct toe_genl_dev *k;
	struct toe_dev v;
	__u32 i;

	for (i = 0; i < TOE_MAX_DEVS; i++) {
		km->kmod_idx[i] = 0;
		if (bpf_map_lookup_elem(km->m->devs, &i, &v) ||
		    (v.flags & (TOE_DEVF_KMOD | TOE_DEVF_PRESENT)) !=
			    (TOE_DEVF_KMOD | TOE_DEVF_PRESENT))
			continue;
		k = kdev_by_name(km->kdevs, km->nkdevs, v.name);
		if (k && k->tom[0])
			km->kmod_idx[i] = k->index;
	}
}

/* The toe_devs index of a module device, or TOE_DEV_NONE. */
__u32 kmod_toe_index(struct kmod *km, __u32 mdev)
{
	__u32 i;

	for (i = 0; i < TOE_MAX_DEVS; i++)
		if (km->kmod_idx[i] == mdev)
			return i;
	return TOE_DEV_NONE;
}

/* Why the module would not take a flow, for the log. */
static const char *refusal_hint(int ret)
{
	return ret == -ENOSPC ?
		       "; no TID or L2T entry free" :
	       ret == -ENETUNREACH ?
		       "; its route does not leave through the device's interface" :
	       ret == -ENOENT ?
		       "; the TID is no longer reserved (device gone?)" :
		       "";
}

static void count_refusal(struct kmod *km, int ret)
{
	if (ret == -ENOSPC)
		km->kst.alloc_nospc++;
	else if (ret == -ENETUNREACH)
		km->kst.alloc_unreach++;
	else
		km->kst.alloc_failed++;
}

/*
 * Bind the TID a connection took from toe_devs index dev's pool to its
 * flow in the module.  Refused, the connection is demoted to the host
 * (its slot released, its record says why) and the TID, still reserved,
 * goes back in the pool; unless the connection closed first, whose
 * flow_closed then gives the TID back.  0, or the module's -errno.
 */
static int bind_or_demote(struct kmod *km, const struct toe_flow_key *k,
			  __u64 cookie, __u32 dev, __u32 tid)
{
	char err[512], l[64], r[64];
	__u32 mdev = km->kmod_idx[dev], l2t;
	bool demoted;
	int ret;

	ret = mdev ? toe_genl_tid_bind(km->gl, mdev, k, tid, &l2t, err,
				       sizeof(err)) :
		     -ENODEV;
	if (!ret) {
		if (tid_add(km, k, mdev, tid, l2t, false)) {
			logm(LOG_ERR, "out of memory for the TID table");
			ret = -ENOMEM;
		} else {
			km->kst.alloc++;
			acct_settle(km, dev); /* in flight no more: bound */
			logm(LOG_DEBUG, "TID %u (L2T %u) on module device %u",
			     tid, l2t, mdev);
			return 0;
		}
	}
	if (ret == -ENODEV)
		snprintf(err, sizeof(err),
			 "device %u is no longer the module's", dev);
	count_refusal(km, ret);
	km->kst.bind_refused++;
	toe_endpoint_str(k->family, k->laddr, k->lport, l, sizeof(l));
	toe_endpoint_str(k->family, k->raddr, k->rport, r, sizeof(r));
	logm_rl(LOG_WARN,
		"flow %s -> %s: the kernel module refused TID %u (%s%s): demoted to the host",
		l, r, tid, err, refusal_hint(ret));
	/*
	 * Demoted: the TID is toed's again.  Not demoted: the connection has
	 * closed meanwhile and its flow_closed, which carries the TID, gives
	 * it back to the module (kmod_close, by the record unbound_add
	 * leaves; a reconcile if that event is lost): put in the pool as
	 * well, it would be booked twice.
	 */
	demoted = pool_demote(km, cookie, dev, tid,
			      ret == -ENOENT || ret == -ENODEV ? TOE_R_NODEV :
								 TOE_R_MODULE);
	if (demoted)
		acct_settle(km, dev); /* in flight no more: toed's again */
	else
		unbound_add(km, k, dev, tid);
	if (ret == -ENOMEM && demoted) {
		if (toe_genl_tid_free(km->gl, mdev, tid, err, sizeof(err)))
			km->kst.free_failed++;
	} else if (ret != -ENOENT && ret != -ENODEV && ret != -ENOMEM &&
		   demoted) {
		pool_put(km, dev, tid); /* still reserved: for the next flow */
	}
	return ret;
}

/*
 * A flow the datapath offloaded on a device of the module, with the TID it
 * took from the pool: bound in the module, or demoted (e becomes the
 * flow_refused event the monitors see instead).  The pool is topped up.
 */
static bool kmod_offload(struct kmod *km, struct toe_event *e)
{
	int ret;

	if (tid_find(km, &e->key) || e->tid == TOE_TID_NONE)
		return true; /* held already (a replayed event), or no pool */
	if (disposed(km, e)) {
		/* the flow's record says what the reconcile made of it */
		km->kst.stale++;
		logm(LOG_DEBUG,
		     "TID %u: offloaded before a reconcile that dealt with it: not bound",
		     e->tid);
		return true;
	}
	km->tid_event_ns = e->ts_ns;
	ret = bind_or_demote(km, &e->key, e->cookie, e->dev, e->tid);
	pool_fill(km, e->dev);
	if (!ret)
		return true;
	e->type = TOE_EV_FLOW_REFUSED;
	e->decision = TOE_ACT_HOST;
	e->reason = ret == -ENOENT || ret == -ENODEV ? TOE_R_NODEV :
						       TOE_R_MODULE;
	e->tid = TOE_TID_NONE;
	return false;
}

/* A flow closed: its TID back to the module, and the pool topped up. */
static void kmod_close(struct kmod *km, const struct toe_event *e)
{
	struct tident *t = tid_find(km, &e->key);
	char err[512];
	__u32 mdev;

	if (e->tid != TOE_TID_NONE)
		km->tid_event_ns = e->ts_ns;
	if (!t && e->tid != TOE_TID_NONE && e->dev < TOE_MAX_DEVS) {
		/*
		 * Never bound.  Without toed's record (unbound_add) a reconcile
		 * gave it back already, or will: not freed here.  With it:
		 * reserved still, unless its device went (and took it along);
		 * settled either way.
		 */
		if (!unbound_take(km, &e->key, e->dev, e->tid)) {
			km->kst.stale++;
			logm(LOG_DEBUG,
			     "TID %u of a closed flow: a reconcile settles it, not its close",
			     e->tid);
			return;
		}
		acct_settle(km, e->dev);
		mdev = km->kmod_idx[e->dev];
		if (!mdev)
			return;
		if (!toe_genl_tid_free(km->gl, mdev, e->tid, err, sizeof(err)))
			km->kst.unreserved++;
		pool_fill(km, e->dev);
		return;
	}
	if (!t)
		return;
	if (t->refused) {
		tid_del(km, &e->key);
		return;
	}
	mdev = t->mdev;
	if (toe_genl_tid_free(km->gl, t->mdev, t->tid, err, sizeof(err))) {
		km->kst.free_failed++;
		logm(LOG_WARN, "%s", err);
	} else {
		km->kst.freed++;
		logm(LOG_DEBUG, "TID %u on module device %u freed", t->tid,
		     t->mdev);
	}
	tid_del(km, &e->key);
	pool_fill(km, kmod_toe_index(km, mdev));
	pool_refill_soon(km); /* when the device has released it */
}

/* The TIDs live connections took (toe_tid_held), read once. */
struct held {
	__u64 cookie;
	struct toe_tid_held h;
	bool known; /* in the module: reserved or bound */
	bool bound; /* toed held it bound when read (settled: not in flight) */
};

static int held_read(struct kmod *km, struct held **out)
{
	struct held *v = NULL;
	__u64 k, next, *prev = NULL;
	int n = 0, cap = 0;

	*out = NULL;
	if (km->m->tid_held < 0)
		return 0;
	while (bpf_map_get_next_key(km->m->tid_held, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (n == cap) {
			void *p = realloc(v, (cap = cap ? 2 * cap : 256) *
						     sizeof(*v));

			if (!p)
				break;
			v = p;
		}
		memset(&v[n], 0, sizeof(v[n]));
		v[n].cookie = k;
		if (bpf_map_lookup_elem(km->m->tid_held, &k, &v[n].h))
			continue;
		v[n].bound = tid_of(&v[n].h.key, km) >= 0;
		n++;
	}
	*out = v;
	return n;
}

static struct held *held_of(struct kmod *km, struct held *hv, int nh,
			    __u32 mdev, __u32 tid)
{
	int i;

	for (i = 0; i < nh; i++)
		if (hv[i].h.dev < TOE_MAX_DEVS &&
		    km->kmod_idx[hv[i].h.dev] == mdev && hv[i].h.tid == tid)
			return &hv[i];
	return NULL;
}

/*
 * The TIDs the module says the host holds: bound ones kept when toed holds
 * them, adopted when a live connection took them (toe_tid_held), given
 * back when none did; reserved ones put back in their pool when they were
 * there, left to the connection that took them, given back otherwise;
 * but not on a device busy with a take (take_in_progress: the TID may be
 * the one it popped, its toe_tid_held entry not yet written), unless a
 * closed connection's record says whose it was (unbound_add).
 */
static void reconcile_held(struct kmod *km, const struct toe_genl_tid *tl,
			   int n, struct held *hv, int nh, __u32 (*pv)[2],
			   int np, const bool *busy)
{
	struct tident *t;
	struct held *h;
	char err[512];
	int i, j;

	for (i = 0; i < n; i++) {
		if (!(tl[i].state & OPENTOE_TID_F_HOST))
			continue; /* the host let go; the device has yet to */
		h = held_of(km, hv, nh, tl[i].dev, tl[i].tid);
		if (h)
			h->known = true;
		if (tl[i].state & OPENTOE_TID_F_RESERVED) {
			__u32 dev = kmod_toe_index(km, tl[i].dev);

			for (j = 0; j < np; j++)
				if (pv[j][0] == dev && pv[j][1] == tl[i].tid)
					break;
			if (j < np) {
				pool_put(km, dev, tl[i].tid);
				pv[j][0] = TOE_DEV_NONE; /* put back */
				continue;
			}
			if (h)
				continue; /* bound below */
			if (dev < TOE_MAX_DEVS && busy[dev] &&
			    !unbound_has(km, dev, tl[i].tid)) {
				kmod_retry_soon(km); /* looked at again then */
				continue;
			}
		} else {
			t = tid_of_tuple(km, &tl[i].key, tl[i].dev, tl[i].tid);
			/*
			 * Held by toed, its connection gone (no toe_tid_held:
			 * the datapath deletes it at close) and its flow_closed
			 * lost: given back below, forgotten by forget_unseen.
			 */
			if (t && (h || t->refused)) {
				t->seen = true;
				continue;
			}
			if (!t && h &&
			    !tid_add(km, &h->h.key, tl[i].dev, tl[i].tid,
				     tl[i].l2t, false)) {
				km->kst.adopted++;
				continue;
			}
		}
		/* no connection holds it: give it back */
		if (tl[i].state & OPENTOE_TID_F_RESERVED) /* taken, closed */
			acct_settle(km, kmod_toe_index(km, tl[i].dev));
		disposed_add(km, kmod_toe_index(km, tl[i].dev), tl[i].tid);
		if (toe_genl_tid_free(km->gl, tl[i].dev, tl[i].tid, err,
				      sizeof(err))) {
			km->kst.free_failed++;
			logm(LOG_WARN, "%s", err);
		} else {
			km->kst.orphans++;
			logm(LOG_INFO,
			     "freed TID %u on module device %u: no offloaded flow holds it",
			     tl[i].tid, tl[i].dev);
		}
	}
}

/*
 * The reconcile took over the unbound records (their connections are
 * closed): reconcile_held gave back and settled those the module still
 * has reserved; the rest went with their device, settled here.
 */
static void unbound_settle(struct kmod *km, const struct toe_genl_tid *tl,
			   int n)
{
	size_t i;
	int j;

	for (i = 0; i < km->ub.n; i++) {
		for (j = 0; j < n; j++)
			if ((tl[j].state & OPENTOE_TID_F_HOST) &&
			    (tl[j].state & OPENTOE_TID_F_RESERVED) &&
			    kmod_toe_index(km, tl[j].dev) == km->ub.v[i].dev &&
			    tl[j].tid == km->ub.v[i].tid)
				break;
		if (j == n)
			acct_settle(km, km->ub.v[i].dev);
	}
	km->ub.n = 0;
}

/* In the last TID_GET dump; a refusal: its flow still in toe_flows. */
static bool tid_current(struct kmod *km, const struct tident *t)
{
	struct toe_flow f;

	if (t->refused)
		return bpf_map_lookup_elem(km->m->flows, &t->k, &f) == 0;
	return t->seen;
}

/* Forget held TIDs the module dropped (its device went), closed refusals. */
static void forget_unseen(struct kmod *km)
{
	struct tident *t, **pp;
	size_t b;

	for (b = 0; b < km->tid_nb; b++) {
		pp = &km->tids[b];
		while ((t = *pp)) {
			if (tid_current(km, t)) {
				pp = &t->next;
				continue;
			}
			*pp = t->next;
			km->kst.lost += !t->refused;
			km->tid_settled_ns = toe_now_ns();
			free(t);
			km->tid_n--;
		}
	}
}

/*
 * Connections that took a TID toed has not bound (offloaded while toed was
 * away, or their event lost): bound now, or demoted; those whose TID the
 * module no longer has (its device went) are demoted.
 */
static void bind_missing(struct kmod *km, struct held *hv, int nh)
{
	int i;

	for (i = 0; i < nh; i++) {
		struct toe_tid_held *h = &hv[i].h;

		if (tid_find(km, &h->key))
			continue;
		if (!hv[i].known || h->dev >= TOE_MAX_DEVS ||
		    !km->kmod_idx[h->dev]) {
			char l[64], r[64];

			toe_endpoint_str(h->key.family, h->key.laddr,
					 h->key.lport, l, sizeof(l));
			toe_endpoint_str(h->key.family, h->key.raddr,
					 h->key.rport, r, sizeof(r));
			disposed_add(km, h->dev, h->tid);
			if (!pool_demote(km, hv[i].cookie, h->dev, h->tid,
					 TOE_R_NODEV))
				continue;
			if (!hv[i].bound) /* in flight until now */
				acct_settle(km, h->dev);
			logm(LOG_INFO,
			     "flow %s -> %s: its TID %u went with its module device: demoted to the host",
			     l, r, h->tid);
			continue;
		}
		if (bind_or_demote(km, &h->key, hv[i].cookie, h->dev, h->tid))
			disposed_add(km, h->dev, h->tid);
	}
}

/*
 * A reconcile that found a take in progress kept the device's unheld TIDs
 * (take_in_progress): it runs again RETRY_MS later, then later and later
 * (doubling, up to RETRY_MAX_MS) while one still is.
 */
#define RETRY_MS 20
#define RETRY_MAX_MS 100

void kmod_retry_soon(struct kmod *km)
{
	km->retry_wanted = true;
}

/* At the end of a reconcile: again later, or not. */
static void retry_plan(struct kmod *km)
{
	if (!km->retry_wanted) {
		km->retry_ms = 0;
		km->retry_at_ns = 0;
		return;
	}
	km->retry_wanted = false;
	km->retry_ms = !km->retry_ms		       ? RETRY_MS :
		       2 * km->retry_ms > RETRY_MAX_MS ? RETRY_MAX_MS :
							 2 * km->retry_ms;
	km->retry_at_ns = toe_now_ns() + km->retry_ms * 1000000ULL;
}

/* After every wake-up of the loop: the reconcile again if it is time. */
void kmod_retry_tick(struct toed *d)
{
	struct kmod *km = &d->kmod;

	if (!km->retry_at_ns || toe_now_ns() < km->retry_at_ns)
		return;
	km->retry_at_ns = 0;
	if (!d->dp.loaded || !toe_genl_up(&d->gl))
		return;
	events_consume(&d->evs); /* every reconcile reads the ring first */
	kmod_reconcile(km);
}

/*
 * epoll_wait's timeout (ms, -1: none) bounded by a deadline at_ns on
 * CLOCK_MONOTONIC (0: none), rounded up: the module's retry, the TID
 * pools' refill (tidpool.c).
 */
int kmod_ms_until(__u64 at_ns, int ms)
{
	__u64 now = toe_now_ns();
	int left;

	if (!at_ns)
		return ms;
	left = at_ns > now ? (int)((at_ns - now + 999999) / 1000000) : 0;
	return ms < 0 || ms > left ? left : ms;
}

/* epoll_wait's timeout (ms, -1: none) bounded by the next retry. */
int kmod_retry_timeout_ms(struct kmod *km, int ms)
{
	return kmod_ms_until(km->retry_at_ns, ms);
}

#define US(b, a) (unsigned long long)((ph[b] - ph[a]) / 1000)

/*
 * Make toed's TID table, the datapath's pools and held TIDs, and the
 * module agree (after a restart, a lost event, the module or a device
 * coming or going): see reconcile_held and bind_missing; with no module,
 * every module flow goes to the host and the pools are emptied.
 */
void kmod_reconcile(struct kmod *km)
{
	struct toe_genl_tid *tl = NULL;
	bool busy[TOE_MAX_DEVS];
	__u32(*pv)[2] = NULL, i;
	struct held *hv = NULL;
	struct tident *t;
	char err[512];
	int n = 0, nh, np, ret;
	size_t b;
	__u64 ph[7]; /* when each part began, for the log */
	__u64 looked;

	if (!km->dp->loaded)
		return;
	ph[0] = toe_now_ns();
	looked = km->pool_lookups;
	np = pool_take(km, &pv, !km->acct_based); /* server pools: at a start */
	looked = km->pool_lookups - looked; /* the pools part's, for the log */
	if (np < 0) {
		km->kmod_dirty = true; /* tried again from the loop */
		return;
	}
	if (!km->acct_based)
		acct_base(km); /* the pools empty: the counts start here */
	for (i = 0; i < TOE_MAX_DEVS; i++) /* before toe_tid_held is read */
		busy[i] = km->kmod_idx[i] && take_in_progress(km, i, false);
	ph[1] = toe_now_ns();
	nh = held_read(km, &hv);
	ph[2] = toe_now_ns();
	if (!toe_genl_up(km->gl)) {
		bind_missing(km, hv, nh); /* none known: all demoted */
		goto out;
	}
	ret = toe_genl_tids(km->gl, 0, &tl, &n, err, sizeof(err));
	if (ret) {
		logm(ret == -ENOENT ? LOG_DEBUG : LOG_ERR, "%s", err);
		while (np--) /* as they were: next time */
			pool_put(km, pv[np][0], pv[np][1]);
		goto out;
	}
	ph[3] = toe_now_ns();
	for (b = 0; b < km->tid_nb; b++)
		for (t = km->tids[b]; t; t = t->next)
			t->seen = t->refused;
	km->disp.n = 0;
	km->disp_ns = ~0ULL; /* while it runs: none of its own events is read */
	reconcile_held(km, tl, n, hv, nh, pv, np, busy);
	unbound_settle(km, tl, n);
	free(tl);
	ph[4] = toe_now_ns();
	forget_unseen(km);
	bind_missing(km, hv, nh);
	ph[5] = km->disp_ns =
		toe_now_ns(); /* before any TID is reserved again */
	stid_reconcile(km);
	pool_fill_all(km);
	pool_refill_soon(km); /* what it freed, once the devices release it */
	ph[6] = toe_now_ns();
	logm(LOG_DEBUG,
	     "TID reconcile, in us: pools %llu (%d TIDs, %llu indexes looked up), toe_tid_held %llu (%d), TID_GET %llu (%d), put right %llu + %llu, pools filled %llu",
	     US(1, 0), np, (unsigned long long)looked, US(2, 1), nh, US(3, 2),
	     n, US(4, 3), US(5, 4), US(6, 5));
out:
	km->acct_quiet = false;
	retry_plan(km);
	free(hv);
	free(pv);
}

void on_genl(struct toe_genl *g, enum toe_genl_ev ev, __u32 dev, void *ctx)
{
	struct kmod *km = ctx;

	(void)g;
	switch (ev) {
	case TOE_GENL_EV_UP:
		logm(LOG_INFO,
		     "kernel module loaded: its devices join the configuration's");
		km->kmod_dirty = true;
		break;
	case TOE_GENL_EV_DOWN:
		logm(LOG_INFO,
		     "kernel module unloaded: configuration devices only");
		tid_clear(km);
		km->acct_based = false; /* bound and in flight: unknown now */
		km->kmod_dirty = true;
		break;
	case TOE_GENL_EV_DEV:
		logm(LOG_DEBUG, "kernel module: device %u changed", dev);
		km->kmod_dirty = true;
		break;
	case TOE_GENL_EV_LOST:
		logm(LOG_WARN,
		     "kernel module events lost (receive queue overrun): reading its devices and TIDs again");
		km->kmod_dirty = true;
		break;
	case TOE_GENL_EV_L2T:
		/* The module keeps its L2T from the kernel's neighbours itself: counted only. */
		break;
	}
}

/*
 * events.c's table: a flow offloaded, on a device of the module (its TID
 * bound, or the flow demoted: the event becomes its flow_refused).
 */
void kmod_on_offloaded(struct toed *d, struct toe_event *e)
{
	if (e->dev < TOE_MAX_DEVS && d->kmod.kmod_idx[e->dev])
		kmod_offload(&d->kmod, e);
}

/* events.c's table: a flow closed, its TID read (events.c shows it) first. */
void kmod_on_closed(struct toed *d, const struct toe_event *e)
{
	if (d->kmod.tid_n || e->tid != TOE_TID_NONE)
		kmod_close(&d->kmod, e);
}

void kmod_init(struct kmod *km, struct toe_genl *gl, struct toe_maps *m,
	       const struct toed_dp *dp, struct listen_stats *lst)
{
	memset(km, 0, sizeof(*km));
	km->gl = gl;
	km->m = m;
	km->dp = dp;
	km->lst = lst;
}

/* toed stops: its copy of the module's TIDs forgotten (the module keeps them). */
void kmod_exit(struct kmod *km)
{
	tid_clear(km);
	free(km->ub.v);
	free(km->disp.v);
	memset(&km->ub, 0, sizeof(km->ub));
	memset(&km->disp, 0, sizeof(km->disp));
}
