// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed and the listeners the datapath offloads on a device of the kernel
 * module: a server TID there for each (the patch's OFFLOAD_LISTEN_START and
 * STOP joined up).
 *
 * Two tables.  One entry per listener the datapath keeps in toe_listeners
 * (its flow key: namespace cookie, local address and port), with the
 * module device it is on; and one per module listener, (family, address,
 * port, device), with how many of the first share it: the module knows no
 * namespaces, so listeners of one address and port in several namespaces
 * share one server TID, asked for by the first and given back by the last.
 *
 * Events keep them (listen_event); toe_listeners is the truth they are
 * reconciled against (listen_reconcile, after every apply: toed's start,
 * a lost-event resync, the module loaded or unloaded, a device changed),
 * and the module's LISTEN_GET dump is what it holds: module listeners no
 * entry backs are stopped, entries the module lacks are started.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "opentoe_common.h"
#include "opentoe_flows.h"
#include "opentoe_events.h"
#include "opentoe_tid.h"
#include "tidpool.h"
#include "listen.h"
#include "genl.h"
#include "log.h"
#include "show_maps.h"
#include "state.h"

/* A listener of toe_listeners on a module device. */
struct lsn {
	struct toe_flow_key k;
	__u32 mdev; /* the module's device index */
	bool seen; /* in toe_listeners at the last reconcile */
	/*
	 * the server TID a reconcile found its entry with, and settled then:
	 * not at its event (TOE_TID_NONE: none)
	 */
	__u32 rec_stid;
};

/* A listener of the module: one tuple on one device. */
struct lsnmod {
	struct toe_flow_key t; /* family, laddr, lport; the rest 0 */
	__u32 mdev;
	__u32 refs; /* struct lsn entries on it */
	__u32 stid; /* the server TID the first took from the datapath's pool */
	bool held; /* the module has it for toed */
};

static void tuple_of(const struct toe_flow_key *k, struct toe_flow_key *t)
{
	memset(t, 0, sizeof(*t));
	t->family = k->family;
	memcpy(t->laddr, k->laddr, sizeof(t->laddr));
	t->lport = k->lport;
}

static bool tuple_eq(const struct toe_flow_key *a, const struct toe_flow_key *b)
{
	return a->family == b->family && a->lport == b->lport &&
	       !memcmp(a->laddr, b->laddr, sizeof(a->laddr));
}

static bool key_eq(const struct toe_flow_key *a, const struct toe_flow_key *b)
{
	return a->netns == b->netns && tuple_eq(a, b);
}

static struct lsn *lsn_find(struct listeners *ls, const struct toe_flow_key *k)
{
	size_t i;

	for (i = 0; i < ls->lsn_n; i++)
		if (key_eq(&ls->lsn[i].k, k))
			return &ls->lsn[i];
	return NULL;
}

static struct lsnmod *mod_find(struct listeners *ls,
			       const struct toe_flow_key *k, __u32 mdev)
{
	size_t i;

	for (i = 0; i < ls->mods_n; i++)
		if (ls->mods[i].mdev == mdev && tuple_eq(&ls->mods[i].t, k))
			return &ls->mods[i];
	return NULL;
}

static void *grow(void *v, size_t *cap, size_t n, size_t sz)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return v;
	ncap = *cap ? *cap * 2 : 64;
	p = realloc(v, ncap * sz);
	if (p)
		*cap = ncap;
	return p;
}

static void lsn_name(const struct toe_flow_key *k, char *buf, size_t len)
{
	toe_endpoint_str(k->family, k->laddr, k->lport, buf, len);
}

/*
 * m on its module device, on the server TID its first listener took from
 * the datapath's pool (m->stid; one the module does not hold reserved any
 * more, ENOENT, or none: the module picks one).
 */
static void mod_start(struct listeners *ls, struct lsnmod *m)
{
	char err[512], l[64];
	int ret;

	ret = toe_genl_listen(ls->gl, true, m->mdev, &m->t, m->stid, err,
			      sizeof(err));
	if (ret == -ENOENT && m->stid != TOE_TID_NONE) {
		ret = toe_genl_listen(ls->gl, true, m->mdev, &m->t,
				      TOE_TID_NONE, err, sizeof(err));
		m->stid = TOE_TID_NONE; /* the module's own pick: unknown */
	} else if (ret && m->stid != TOE_TID_NONE) {
		stid_put(ls->kmod, m->mdev,
			 m->stid); /* still reserved (EEXIST too) */
	}
	lsn_name(&m->t, l, sizeof(l));
	if (!ret || ret == -EEXIST) {
		/* EEXIST: the module has it already (from a toed before) */
		m->held = true;
		if (ret)
			return;
		ls->lst.starts++;
		ls->lst.reconciled += ls->reconciling;
		logm(LOG_DEBUG, "listener %s: a server TID on module device %u",
		     l, m->mdev);
		return;
	}
	m->held = false;
	ls->lst.failed++;
	logm_rl(LOG_WARN,
		"listener %s: offloaded by the datapath, refused by the kernel module (%s)",
		l, err);
}

/* Its server TID back. */
static void mod_stop(struct listeners *ls, struct lsnmod *m)
{
	char err[512];
	int ret;

	if (!m->held)
		return;
	m->held = false;
	ret = toe_genl_listen(ls->gl, false, m->mdev, &m->t, TOE_TID_NONE, err,
			      sizeof(err));
	if (!ret) {
		ls->lst.stops++;
		ls->lst.reconciled += ls->reconciling;
		logm(LOG_DEBUG,
		     "listener port %u: server TID on module device %u given back",
		     m->t.lport, m->mdev);
	} else if (ret != -ENOENT) { /* ENOENT: the device took it along */
		ls->lst.failed++;
		logm(LOG_WARN, "%s", err);
	}
}

/* One entry fewer on m: the last one gives the module listener back. */
static void mod_unref(struct listeners *ls, struct lsnmod *m)
{
	if (m->refs && --m->refs)
		return;
	mod_stop(ls, m);
	*m = ls->mods[--ls->mods_n];
}

static void lsn_drop(struct listeners *ls, struct lsn *e)
{
	struct lsnmod *m = mod_find(ls, &e->k, e->mdev);

	*e = ls->lsn[--ls->lsn_n];
	if (m)
		mod_unref(ls, m);
}

/*
 * A listener on module device mdev, holding server TID stid from the
 * datapath's pool; ask: the module listener now if it is the first (one
 * sharing an existing module listener gives its server TID back).
 */
static struct lsn *lsn_add(struct listeners *ls, const struct toe_flow_key *k,
			   __u32 mdev, bool ask, __u32 stid)
{
	struct toe_flow_key t;
	struct lsnmod *m;
	struct lsn *e = lsn_find(ls, k);
	void *p;

	if (e && e->mdev == mdev)
		return e; /* already known: a replayed event, or reconciled */
	if (e)
		lsn_drop(ls, e); /* policy moved it to another device */
	tuple_of(k, &t);
	m = mod_find(ls, &t, mdev);
	if (!m) {
		p = grow(ls->mods, &ls->mods_cap, ls->mods_n,
			 sizeof(*ls->mods));
		if (!p)
			goto nomem;
		ls->mods = p;
		m = &ls->mods[ls->mods_n++];
		memset(m, 0, sizeof(*m));
		m->t = t;
		m->mdev = mdev;
		m->stid = stid;
	} else if (ask && stid != TOE_TID_NONE) {
		stid_put(ls->kmod, mdev, stid); /* m's is shared */
	}
	p = grow(ls->lsn, &ls->lsn_cap, ls->lsn_n, sizeof(*ls->lsn));
	if (!p) {
		if (!m->refs)
			*m = ls->mods[--ls->mods_n];
		goto nomem;
	}
	ls->lsn = p;
	e = &ls->lsn[ls->lsn_n++];
	e->k = *k;
	e->mdev = mdev;
	e->seen = true;
	e->rec_stid = TOE_TID_NONE;
	if (m->refs++ == 0 && ask && toe_genl_up(ls->gl))
		mod_start(ls, m);
	return e;
nomem:
	ls->lst.failed++;
	logm(LOG_ERR, "out of memory for the listener table");
	return NULL;
}

/* Whether toe_listeners still has k (a sibling SO_REUSEPORT socket). */
static bool still_listening(struct listeners *ls, const struct toe_flow_key *k)
{
	struct toe_listen v;

	return ls->m->listeners >= 0 &&
	       bpf_map_lookup_elem(ls->m->listeners, k, &v) == 0;
}

/*
 * The module did not take the listener of e (its device refused it): out
 * of toe_listeners, so that its accepted connections take no TID either.
 */
static void lsn_refused(struct listeners *ls, const struct toe_event *e,
			__u32 mdev)
{
	struct lsn *l = lsn_find(ls, &e->key);
	struct toe_flow_key t;
	struct toe_listen v;
	struct lsnmod *m;

	tuple_of(&e->key, &t);
	m = mod_find(ls, &t, mdev);
	if (!l || !m || m->held || !toe_genl_up(ls->gl))
		return;
	if (ls->m->listeners >= 0 &&
	    bpf_map_lookup_elem(ls->m->listeners, &e->key, &v) == 0 &&
	    v.stid == e->tid)
		bpf_map_delete_elem(ls->m->listeners, &e->key);
	lsn_drop(ls, l);
}

/*
 * A listening socket whose key toed knows already on module device mdev:
 * a SO_REUSEPORT sibling (the datapath keeps one toe_listeners entry a
 * key, the last one's, and the module one listener a key), or its own
 * event replayed.  A sibling took a server TID of its own at listen time:
 * reserved still, it goes back to the server pool, and the entry gets
 * the module listener's server TID again; toed holds one listener.
 */
static void lsn_sibling(struct listeners *ls, const struct toe_event *e,
			__u32 mdev)
{
	struct lsnmod *m = mod_find(ls, &e->key, mdev);
	struct toe_listen v;

	if (!m || e->tid == TOE_TID_NONE || e->tid == m->stid)
		return; /* none of its own, or the one the module has */
	stid_put(ls->kmod, mdev, e->tid);
	ls->lst.siblings++;
	if (m->stid != TOE_TID_NONE && ls->m->listeners >= 0 &&
	    bpf_map_lookup_elem(ls->m->listeners, &e->key, &v) == 0 &&
	    v.stid == e->tid) {
		v.stid = m->stid;
		bpf_map_update_elem(ls->m->listeners, &e->key, &v, BPF_EXIST);
	}
	logm(LOG_DEBUG,
	     "listener port %u: a sibling's server TID %u back in the server pool",
	     e->key.lport, e->tid);
}

static void lsn_event(struct listeners *ls, const struct toe_event *e)
{
	struct lsn *l;
	__u32 mdev;

	if (e->type == TOE_EV_LISTEN_START) {
		/* its server TID settled: bound, given back, or gone */
		l = lsn_find(ls, &e->key);
		if (e->decision == TOE_ACT_OFFLOAD && e->dev < TOE_MAX_DEVS &&
		    e->tid != TOE_TID_NONE && !(l && l->rec_stid == e->tid))
			acct_ssettle(ls->kmod, e->dev);
		if (l && l->rec_stid == e->tid)
			l->rec_stid = TOE_TID_NONE;
		if (e->decision == TOE_ACT_OFFLOAD && e->dev < TOE_MAX_DEVS &&
		    ls->kmod->kmod_idx[e->dev]) {
			mdev = ls->kmod->kmod_idx[e->dev];
			if (l && l->mdev == mdev)
				lsn_sibling(ls, e, mdev);
			else if (lsn_add(ls, &e->key, mdev, true, e->tid))
				lsn_refused(ls, e, mdev);
			pool_fill(ls->kmod,
				  e->dev); /* its server pool topped up */
		}
		return;
	}
	l = lsn_find(ls, &e->key);
	if (l && !still_listening(ls, &e->key)) {
		lsn_drop(ls, l);
		if (e->dev < TOE_MAX_DEVS && ls->kmod->kmod_idx[e->dev])
			pool_fill(ls->kmod,
				  e->dev); /* the module freed its server TID */
	}
}

/* The event table's (evtypes.c): a listener's start or stop. */
void listen_event(struct toed *d, const struct toe_event *e)
{
	lsn_event(&d->lis, e);
}

/* toe_listeners' entries on a module device into the table (seen). */
static int read_map(struct listeners *ls)
{
	struct toe_flow_key k, next, *prev = NULL;
	struct toe_listen v;
	struct lsn *e;
	bool known;
	size_t i;

	for (i = 0; i < ls->lsn_n; i++)
		ls->lsn[i].seen = false;
	if (ls->m->listeners < 0)
		return 0; /* a datapath without it: no listener is offloaded */
	while (bpf_map_get_next_key(ls->m->listeners, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(ls->m->listeners, &k, &v) ||
		    v.dev >= TOE_MAX_DEVS || !ls->kmod->kmod_idx[v.dev])
			continue;
		e = lsn_find(ls, &k);
		known = e && e->mdev == ls->kmod->kmod_idx[v.dev];
		e = lsn_add(ls, &k, ls->kmod->kmod_idx[v.dev], false, v.stid);
		if (!e)
			return -1;
		e->seen = true;
		if (!known && v.stid != TOE_TID_NONE) {
			/* its event unread or lost: settled here, once */
			e->rec_stid = v.stid;
			acct_ssettle(ls->kmod, v.dev);
		}
	}
	return 0;
}

void listen_reconcile(struct listeners *ls)
{
	struct toe_genl_listener *ml = NULL;
	char err[512];
	int n = 0, i, ret;
	size_t j;

	if (!ls->dp->loaded)
		return;
	if (!toe_genl_up(ls->gl)) {
		/* the module went, its listeners with it */
		for (j = 0; j < ls->mods_n; j++)
			ls->mods[j].held = false;
	} else {
		ret = toe_genl_listeners(ls->gl, 0, false, &ml, &n, err,
					 sizeof(err));
		if (ret) {
			logm(ret == -ENOENT ? LOG_DEBUG : LOG_ERR, "%s", err);
			return;
		}
	}
	ls->reconciling = true;
	if (read_map(ls) == 0) {
		/* listeners gone while toed was away (or no longer on the module) */
		for (j = 0; j < ls->lsn_n;) {
			if (ls->lsn[j].seen) {
				j++;
				continue;
			}
			lsn_drop(ls, &ls->lsn[j]);
		}
	}
	/* the module has them (adopted), or they are started */
	for (j = 0; j < ls->mods_n; j++) {
		struct lsnmod *m = &ls->mods[j];

		for (i = 0; i < n; i++)
			if (ml[i].dev == m->mdev && tuple_eq(&ml[i].key, &m->t))
				break;
		m->held = i < n;
		if (!m->held && toe_genl_up(ls->gl))
			mod_start(ls, m);
	}
	/* module listeners no entry backs: stopped */
	for (i = 0; i < n; i++) {
		struct lsnmod tmp = { .t = ml[i].key,
				      .mdev = ml[i].dev,
				      .held = true };

		if (!mod_find(ls, &ml[i].key, ml[i].dev))
			mod_stop(ls, &tmp);
	}
	ls->reconciling = false;
	free(ml);
}

/* toed stops: its tables go; the module keeps the listeners for the next. */
void listen_exit(struct listeners *ls)
{
	free(ls->lsn);
	free(ls->mods);
	ls->lsn = NULL;
	ls->mods = NULL;
	ls->lsn_n = ls->lsn_cap = ls->mods_n = ls->mods_cap = 0;
}

__u32 listeners_held(struct listeners *ls, __u32 mdev)
{
	__u32 n = 0;
	size_t i;

	for (i = 0; i < ls->mods_n; i++)
		n += ls->mods[i].mdev == mdev && ls->mods[i].held;
	return n;
}

size_t listeners_held_all(struct listeners *ls)
{
	size_t i, n = 0;

	for (i = 0; i < ls->mods_n; i++)
		n += ls->mods[i].held;
	return n;
}

void listen_init(struct listeners *ls, struct toe_genl *gl, struct toe_maps *m,
		 const struct toed_dp *dp, struct kmod *kmod)
{
	memset(ls, 0, sizeof(*ls));
	ls->gl = gl;
	ls->m = m;
	ls->dp = dp;
	ls->kmod = kmod;
}
