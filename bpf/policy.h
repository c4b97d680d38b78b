/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, the policy: what a flow's decision is (struct
 * decision), the tuple space search that makes it from the classifier's
 * current generation (decide), and the device capacity slots an offloaded
 * flow takes and gives back (take_slot, release_slot).  Used by sock_ops
 * for connections of this host and by XDP forward for flows it routes.
 */
#ifndef __TOE_POLICY_H
#define __TOE_POLICY_H

#include "common.h"
#include "maps_policy.h"
#include "stats.h"

/*
 * What policy says of one flow: its action (TOE_ACT_*) and why (TOE_R_*),
 * the device and rule, the rule's keepalive, and the generation and
 * serial of the policy that said it.
 */
struct decision {
	__u32 action;
	__u32 reason;
	__u32 dev;
	__u32 rule;
	__u32 gen;
	__u32 ka_idle;
	__u32 ka_intvl;
	__u32 ka_cnt;
	__u32 track; /* enum toe_track of the generation decided under */
	__u32 tid; /* a module device's TID (tid.h), or TOE_TID_NONE */
	__u64 serial;
	__u64 tenant; /* namespace held to the quotas, 0: toed's own */
	__u32 tenant_flows; /* its share of toe_flows (toe_pol_hdr) */
};

/* The cgroup v2 id of the cgroup the socket was created in. */
static __always_inline __u64 sk_cgroup_id(struct bpf_sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
	struct cgroup *cg;

	if (!tp)
		return 0;
	cg = tp->inet_conn.icsk_inet.sk.sk_cgrp_data.cgroup;
	if (!cg)
		return 0;
	return cg->kn->id;
}

struct tss_ctx {
	struct toe_flow_key k;
	struct toe_pol_key pk;
	__u64 cgid;
	__u64 netns;
	__u32 lclass;
	__u32 rclass;
	__u32 gen;
	__u32 ntuples;
	__u32 best;
};

/* One tuple of the search; bpf_loop() has the verifier check it once. */
static long tss_step(__u32 i, void *data)
{
	struct tss_ctx *c = data;
	struct toe_pol_tuple *t;
	__u32 idx, *cell;

	if (i >= c->ntuples)
		return 1;
	idx = c->gen * TOE_POL_MAX_TUPLES + i;
	t = bpf_map_lookup_elem(&toe_pol_tuples, &idx);
	if (!t || t->min_rule >= c->best)
		return 1; /* sorted: no later tuple can win */
	if (t->family != c->k.family || t->proto != c->k.proto)
		return 0;
	c->pk.laddr[0] = c->k.laddr[0] & t->lmask[0];
	c->pk.laddr[1] = c->k.laddr[1] & t->lmask[1];
	c->pk.laddr[2] = c->k.laddr[2] & t->lmask[2];
	c->pk.laddr[3] = c->k.laddr[3] & t->lmask[3];
	c->pk.raddr[0] = c->k.raddr[0] & t->rmask[0];
	c->pk.raddr[1] = c->k.raddr[1] & t->rmask[1];
	c->pk.raddr[2] = c->k.raddr[2] & t->rmask[2];
	c->pk.raddr[3] = c->k.raddr[3] & t->rmask[3];
	c->pk.lclass = t->use_lport ? c->lclass : 0;
	c->pk.rclass = t->use_rport ? c->rclass : 0;
	c->pk.cgroup = t->use_cgroup ? c->cgid : 0;
	c->pk.netns = t->use_netns ? c->netns : 0;
	c->pk.tuple = i;
	cell = bpf_map_lookup_elem(&toe_pol_cells, &c->pk);
	if (cell && *cell < c->best)
		c->best = *cell;
	return 0;
}

/*
 * Policy lookup (tuple space search, include/opentoe.h): one generation,
 * read once; one hash lookup per rule shape, stopping at the first shape
 * whose lowest rule cannot beat the best match.  Shared by sock_ops (a
 * connection of this host, cgid = its socket's cgroup) and XDP (a flow
 * this host routes, seen from its client: cgid 0, so cgroup rules never
 * match it).
 *
 * netns is the cookie of the flow's network namespace: a rule matches only
 * in the namespaces it names (netns clause; no clause: toed's own), so a
 * tenant that made itself a namespace (unshare -rn) and gave itself the
 * operator's addresses matches no rule the operator did not scope to it.
 * A flow with no namespace of its own (0: a routed flow) is decided as one
 * of toed's namespace (toe_pol_hdr.host_netns).
 */
static __always_inline void decide_ns(const struct toe_flow_key *k, __u64 cgid,
				      __u64 netns, struct decision *d)
{
	struct tss_ctx c = {};
	struct toe_pol_rule *r;
	struct toe_pol_hdr *hdr;
	__u32 zero = 0, gen, idx;
	__u32 *genp, *lc, *rc;

	d->action = TOE_ACT_HOST;
	d->reason = TOE_R_DEFAULT;
	d->dev = TOE_DEV_NONE;
	d->rule = TOE_RULE_NONE;
	d->ka_idle = 0;
	d->track = TOE_TRACK_ALL;
	d->tid = TOE_TID_NONE;
	d->serial = 0;
	d->tenant = 0;
	d->tenant_flows = 0;
	genp = bpf_map_lookup_elem(&toe_pol_gen, &zero);
	if (!genp)
		return;
	gen = *genp & 1;
	d->gen = gen;
	hdr = bpf_map_lookup_elem(&toe_pol_hdr, &gen);
	if (!hdr)
		return;
	d->serial = hdr->serial;
	d->track = hdr->track;
	/* toed's own namespace (and a routed flow) is the operator's: no quota */
	d->tenant = netns && netns != hdr->host_netns ? netns : 0;
	d->tenant_flows = hdr->tenant_flows;
	idx = gen * TOE_POL_PORTS + k->lport;
	lc = bpf_map_lookup_elem(&toe_pol_lclass, &idx);
	idx = gen * TOE_POL_PORTS + k->rport;
	rc = bpf_map_lookup_elem(&toe_pol_rclass, &idx);
	if (!lc || !rc)
		return;
	c.k = *k;
	c.lclass = *lc;
	c.rclass = *rc;
	c.cgid = cgid;
	c.netns = netns ? netns : hdr->host_netns;
	c.gen = gen;
	c.ntuples = hdr->ntuples;
	c.best = TOE_RULE_NONE;
	c.pk.gen = gen;
	bpf_loop(TOE_POL_MAX_TUPLES, tss_step, &c, 0);
	if (c.best == TOE_RULE_NONE) {
		/*
		 * "default" is TCP's: a UDP flow only a rule names (proto
		 * udp|any) is offloaded, as before UDP was carried at all
		 */
		if (k->proto)
			return;
		d->action = hdr->default_action;
		d->dev = hdr->default_dev;
		return;
	}
	idx = gen * TOE_POL_MAX_RULES + (c.best & (TOE_POL_MAX_RULES - 1));
	r = bpf_map_lookup_elem(&toe_pol_rules, &idx);
	if (!r)
		return;
	d->action = r->action;
	d->dev = r->dev;
	d->reason = TOE_R_RULE;
	d->rule = c.best;
	d->ka_idle = r->ka_idle;
	d->ka_intvl = r->ka_intvl;
	d->ka_cnt = r->ka_cnt;
}

/* decide_ns() in the namespace of the key (k->netns; 0: routed, toed's). */
static __always_inline void decide(const struct toe_flow_key *k, __u64 cgid,
				   struct decision *d)
{
	decide_ns(k, cgid, k->netns, d);
}

/*
 * One more of what (toe_tenants) for tenant d->tenant, at most max: true if
 * taken.  The add is undone when it overshoots, as take_slot's; the first
 * offload of a namespace makes its entry.
 */
static __always_inline bool tenant_take(const struct decision *d, __u32 what,
					__u32 max)
{
	struct toe_tenant *t;

	if (!d->tenant || !max)
		return true;
	t = tenant_entry(d->tenant, what);
	if (!t)
		return false; /* table full: no new tenant */
	if (__sync_fetch_and_add(&t->held, 1) >= max) {
		__sync_fetch_and_add(&t->held, -1);
		__sync_fetch_and_add(&t->refused, 1);
		return false;
	}
	return true;
}

/*
 * Take a slot on device d->dev, or fall back to the host with reason
 * quota (d->tenant holds its share of the device: dev->tenant_max) or
 * capacity.  The count is an atomic add that is undone when it overshoots,
 * so concurrent connections never take more than nconn slots.  The
 * tenant's share is taken first, so that a tenant at its quota is told so
 * (and counts nothing against the device) whatever the others hold.
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
	if (!tenant_take(d, idx & (TOE_MAX_DEVS - 1), dev->tenant_max)) {
		__sync_fetch_and_add(&live->refused, 1);
		stat_inc(TOE_S_QUOTA);
		d->action = TOE_ACT_HOST;
		d->reason = TOE_R_QUOTA;
		d->tenant = 0; /* holds nothing */
		return;
	}
	if (__sync_fetch_and_add(&live->live, 1) >= dev->nconn) {
		__sync_fetch_and_add(&live->live, -1);
		__sync_fetch_and_add(&live->refused, 1);
		tenant_give(d->tenant, idx & (TOE_MAX_DEVS - 1));
		d->tenant = 0;
		d->action = TOE_ACT_HOST;
		d->reason = TOE_R_CAPACITY;
		return;
	}
}

/* The slot take_slot() took is the flow's: count it offloaded. */
static __always_inline void slot_offloaded(__u32 idx)
{
	struct toe_dev_live *live = bpf_map_lookup_elem(&toe_dev_live, &idx);

	if (live)
		__sync_fetch_and_add(&live->offloaded, 1);
}

/* Or not (tid.h: no TID, another route): back, counted as refused. */
static __always_inline void slot_refused(struct decision *d)
{
	__u32 idx = d->dev;
	struct toe_dev_live *live = bpf_map_lookup_elem(&toe_dev_live, &idx);

	if (live) {
		__sync_fetch_and_add(&live->live, -1);
		__sync_fetch_and_add(&live->refused, 1);
	}
	tenant_give(d->tenant, idx & (TOE_MAX_DEVS - 1));
	d->tenant = 0;
	d->action = TOE_ACT_HOST;
	d->dev = TOE_DEV_NONE;
}

static __always_inline void release_slot(__u32 idx)
{
	struct toe_dev_live *live = bpf_map_lookup_elem(&toe_dev_live, &idx);

	if (live) {
		__sync_fetch_and_add(&live->live, -1);
		__sync_fetch_and_add(&live->released, 1);
	}
}

#endif /* __TOE_POLICY_H */
