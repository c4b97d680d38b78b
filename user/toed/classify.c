// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The policy's rules into the tuple-space classifier of include/opentoe.h:
 * port classes, tuples (rule shapes) and cells, written into one
 * generation of the maps (the one not in force), and that generation's
 * header.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/err.h"
#include "opentoe_common.h"
#include "opentoe_policy.h"
#include "opentoe_events.h"
#include "classify.h"

#define errf toe_errf

/*
 * Port classes: the boundaries of every non-wildcard range cut 0-65535 into
 * intervals; cls[p] is the number of p's interval.  Every range is then a
 * contiguous run of whole classes.
 */
static bool is_wild(__u16 lo, __u16 hi)
{
	return lo == 0 && hi == 65535;
}

static void port_classes(const struct toe_cfg *c, bool local, __u32 *cls)
{
	static __u8 cut[TOE_POL_PORTS + 1];
	__u32 p, k = 0;
	int i;

	memset(cut, 0, sizeof(cut));
	for (i = 0; i < c->nrules; i++) {
		const struct toe_cfg_rule *r = &c->rules[i];
		__u16 lo = local ? r->lport_lo : r->rport_lo;
		__u16 hi = local ? r->lport_hi : r->rport_hi;

		if (is_wild(lo, hi))
			continue;
		cut[lo] = 1;
		cut[hi + 1] = 1;
	}
	for (p = 0; p < TOE_POL_PORTS; p++) {
		if (p && cut[p])
			k++;
		cls[p] = k;
	}
}

static int write_classes(int fd, __u32 gen, const __u32 *cls, char *err,
			 size_t len)
{
	static __u32 keys[TOE_POL_PORTS];
	__u32 p, n = TOE_POL_PORTS;

	for (p = 0; p < TOE_POL_PORTS; p++)
		keys[p] = gen * TOE_POL_PORTS + p;
	if (bpf_map_update_batch(fd, keys, (void *)cls, &n, NULL)) {
		/* Older kernels: one by one. */
		for (p = 0; p < TOE_POL_PORTS; p++)
			if (bpf_map_update_elem(fd, &keys[p], &cls[p], BPF_ANY))
				return errf(err, len,
					    "cannot write port classes: %s",
					    strerror(errno));
	}
	return 0;
}

static int find_tuple(struct compiled *cp, const struct toe_pol_tuple *want)
{
	__u32 i;

	for (i = 0; i < cp->nt; i++) {
		struct toe_pol_tuple *t = &cp->t[i];

		if (t->family == want->family && t->proto == want->proto &&
		    t->use_cgroup == want->use_cgroup &&
		    t->use_lport == want->use_lport &&
		    t->use_rport == want->use_rport &&
		    t->use_netns == want->use_netns &&
		    !memcmp(t->lmask, want->lmask, 16) &&
		    !memcmp(t->rmask, want->rmask, 16))
			return i;
	}
	if (cp->nt == TOE_POL_MAX_TUPLES)
		return -1;
	cp->t[cp->nt] = *want;
	return cp->nt++;
}

/* The cells of one rule's key k over its port classes and namespaces. */
static int rule_cells(const struct pol_maps *m, struct compiled *cp,
		      const struct toe_cfg_rule *r, __u32 ri,
		      struct toe_pol_key *k, const __u32 *cls, char *err,
		      size_t len)
{
	int nn = r->netns_any ? 1 : r->nnetns, n;
	__u32 a, b;

	for (n = 0; n < nn; n++) {
		k->netns = r->netns_any ? 0 : r->netns[n];
		for (a = cls[0]; a <= cls[1]; a++) {
			for (b = cls[2]; b <= cls[3]; b++) {
				k->lclass = a;
				k->rclass = b;
				if (bpf_map_update_elem(m->cells, k, &ri,
							BPF_NOEXIST) == 0)
					cp->cells++;
				else if (errno != EEXIST)
					return errf(
						err, len,
						"policy too large: toe_pol_cells is full after %u cells (%s)",
						cp->cells, strerror(errno));
			}
		}
	}
	return 0;
}

/*
 * Rules are taken in order, so the first rule to claim a cell is the one
 * that wins it (BPF_NOEXIST keeps it), and tuples are created in the order
 * of their lowest rule: sorted as the lookup needs them.  A rule's
 * namespaces are one more field of its key (one cell per namespace it
 * names), or none with "netns any".
 */
static int compile_rule(const struct pol_maps *m, struct compiled *cp, __u8 gen,
			__u32 ri, const struct toe_cfg_rule *r, char *err,
			size_t len)
{
	bool ul = !is_wild(r->lport_lo, r->lport_hi);
	bool ur = !is_wild(r->rport_lo, r->rport_hi);
	__u32 cls[4] = { ul ? cp->lcls[r->lport_lo] : 0,
			 ul ? cp->lcls[r->lport_hi] : 0,
			 ur ? cp->rcls[r->rport_lo] : 0,
			 ur ? cp->rcls[r->rport_hi] : 0 };
	__u8 fams[2] = { TOE_AF_INET, TOE_AF_INET6 };
	int nf = 2, f, i, ti;

	if (r->family) {
		fams[0] = r->family;
		nf = 1;
	}
	/* one shape per family and per protocol (toe_flow_key.proto's) */
	for (f = 0; f < 2 * nf; f++) {
		struct toe_pol_tuple t = {};
		struct toe_pol_key k = {};

		if (!(r->protos & (f < nf ? TOE_CFG_P_TCP : TOE_CFG_P_UDP)))
			continue;
		t.proto = f < nf ? 0 : IPPROTO_UDP;
		t.family = fams[f % nf];
		toe_prefix_mask(t.family, r->lplen, t.lmask);
		toe_prefix_mask(t.family, r->rplen, t.rmask);
		t.use_lport = ul;
		t.use_rport = ur;
		t.use_cgroup = r->cgroup != 0;
		t.use_netns = !r->netns_any;
		t.min_rule = ri;
		ti = find_tuple(cp, &t);
		if (ti < 0)
			return errf(
				err, len,
				"rule on line %d needs more than %d distinct rule shapes (family x protocol x prefix lengths x which of ports, cgroup and netns it matches); merge or simplify rules",
				r->line, TOE_POL_MAX_TUPLES);
		for (i = 0; i < 4; i++) {
			k.laddr[i] = r->laddr[i] & t.lmask[i];
			k.raddr[i] = r->raddr[i] & t.rmask[i];
		}
		k.cgroup = r->cgroup;
		k.tuple = ti;
		k.gen = gen;
		if (rule_cells(m, cp, r, ri, &k, cls, err, len))
			return -1;
	}
	return 0;
}

/* Remove every cell of generation gen (left from two applies ago). */
int clear_gen(const struct pol_maps *m, __u8 gen, char *err, size_t len)
{
	struct toe_pol_key k, next, *prev = NULL;
	struct toe_pol_key *dead = NULL;
	size_t n = 0, cap = 0, i;
	int ret = 0;

	while (bpf_map_get_next_key(m->cells, prev, &next) == 0) {
		if (next.gen == gen) {
			if (n == cap) {
				void *p = realloc(dead,
						  (cap = cap ? 2 * cap : 1024) *
							  sizeof(*dead));

				if (!p) {
					free(dead);
					return errf(err, len, "out of memory");
				}
				dead = p;
			}
			dead[n++] = next;
		}
		k = next;
		prev = &k;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(m->cells, &dead[i]);
	free(dead);
	return ret;
}

/* The rules of c into generation gen: port classes, rules, cells, tuples. */
int fill_gen(const struct pol_maps *m, const struct toe_cfg *c, __u32 gen,
	     const __u32 *devidx, struct compiled *cp, char *err, size_t len)
{
	__u32 i;

	memset(cp, 0, sizeof(*cp));
	port_classes(c, true, cp->lcls);
	port_classes(c, false, cp->rcls);
	if (write_classes(m->lclass, gen, cp->lcls, err, len) ||
	    write_classes(m->rclass, gen, cp->rcls, err, len))
		return -1;
	for (i = 0; i < (__u32)c->nrules; i++) {
		const struct toe_cfg_rule *r = &c->rules[i];
		struct toe_pol_rule pr = {
			.action = r->action,
			.dev = r->dev >= 0 ? devidx[r->dev] : TOE_DEV_NONE,
			.ka_idle = r->ka_idle,
			.ka_intvl = r->ka_intvl,
			.ka_cnt = r->ka_cnt,
		};
		__u32 idx = gen * TOE_POL_MAX_RULES + i;

		if (bpf_map_update_elem(m->rules, &idx, &pr, BPF_ANY))
			return errf(err, len, "cannot write toe_pol_rules: %s",
				    strerror(errno));
		if (compile_rule(m, cp, gen, i, r, err, len))
			return -1;
	}
	for (i = 0; i < cp->nt; i++) {
		__u32 idx = gen * TOE_POL_MAX_TUPLES + i;

		if (bpf_map_update_elem(m->tuples, &idx, &cp->t[i], BPF_ANY))
			return errf(err, len, "cannot write toe_pol_tuples: %s",
				    strerror(errno));
	}
	return 0;
}

/* A tenant's share of toe_flows: pct of its size, at least 1 (0: unknown). */
static __u32 tenant_flows(const struct pol_maps *m, __u32 pct)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), n;

	if (m->flows < 0 || bpf_obj_get_info_by_fd(m->flows, &info, &len))
		return 0;
	n = (__u32)((__u64)info.max_entries * pct / 100);
	return n ? n : 1;
}

/*
 * The events one tenant may have on the toe_events ring: pct of what it
 * holds, at least one (0: the ring unknown, no budget).
 */
static __u32 tenant_events(const struct pol_maps *m, __u32 pct)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), n;

	if (m->events < 0 || bpf_obj_get_info_by_fd(m->events, &info, &len))
		return 0;
	n = (__u32)((__u64)info.max_entries * pct / 100 / TOE_EVENT_RING_BYTES);
	return n ? n : 1;
}

/* Generation gen's header, the serial one past the one in force (old). */
int write_hdr(const struct pol_maps *m, const struct toe_cfg *c, __u32 gen,
	      const __u32 *devidx, const struct compiled *cp,
	      const struct toe_pol_hdr *old, struct toe_pol_hdr *hdr, char *err,
	      size_t len)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	memset(hdr, 0, sizeof(*hdr));
	hdr->ntuples = cp->nt;
	hdr->nrules = c->nrules;
	hdr->default_action = c->default_action;
	hdr->track = c->track;
	hdr->host_netns = c->host_netns;
	hdr->tenant_flows = tenant_flows(
		m, c->quota_flows ? c->quota_flows : TOE_QUOTA_FLOWS_DEFAULT);
	hdr->tenant_events = tenant_events(m, c->quota_events ?
						      c->quota_events :
						      TOE_QUOTA_EVENTS_DEFAULT);
	hdr->default_dev = c->default_dev >= 0 ? devidx[c->default_dev] :
						 TOE_DEV_NONE;
	hdr->applied_ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	hdr->serial = old->serial + 1;
	if (bpf_map_update_elem(m->hdr, &gen, hdr, BPF_ANY))
		return errf(err, len, "cannot write toe_pol_hdr: %s",
			    strerror(errno));
	return 0;
}

/*
 * The datapath's decide_ns (bpf/policy.h), in user space on the maps in
 * force, for toectl explain: the same tuple space search, the same order,
 * the same early stop, so that its answer is the one sock_ops would give
 * a connection of k (not a second reading of the configuration).  Reads
 * the generation once; an apply that switches meanwhile is seen as the
 * datapath sees one (a lookup racing it takes either generation).
 */
int classify_lookup(const struct pol_maps *m, const struct toe_flow_key *k,
		    __u64 cgid, struct toe_pol_answer *a, char *err, size_t len)
{
	struct toe_pol_tuple t;
	struct toe_pol_key pk;
	__u32 zero = 0, idx, lc, rc, cell, i, j;
	__u64 netns;

	memset(a, 0, sizeof(*a));
	a->action = TOE_ACT_HOST;
	a->reason = TOE_R_DEFAULT;
	a->dev = TOE_DEV_NONE;
	a->rule = TOE_RULE_NONE;
	if (bpf_map_lookup_elem(m->gen, &zero, &a->gen))
		return errf(err, len, "cannot read toe_pol_gen: %s",
			    strerror(errno));
	a->gen &= 1;
	if (bpf_map_lookup_elem(m->hdr, &a->gen, &a->hdr))
		return errf(err, len, "cannot read toe_pol_hdr: %s",
			    strerror(errno));
	idx = a->gen * TOE_POL_PORTS + k->lport;
	if (bpf_map_lookup_elem(m->lclass, &idx, &lc))
		return errf(err, len, "cannot read toe_pol_lclass: %s",
			    strerror(errno));
	idx = a->gen * TOE_POL_PORTS + k->rport;
	if (bpf_map_lookup_elem(m->rclass, &idx, &rc))
		return errf(err, len, "cannot read toe_pol_rclass: %s",
			    strerror(errno));
	netns = k->netns ? k->netns : a->hdr.host_netns;
	for (i = 0; i < a->hdr.ntuples && i < TOE_POL_MAX_TUPLES; i++) {
		idx = a->gen * TOE_POL_MAX_TUPLES + i;
		if (bpf_map_lookup_elem(m->tuples, &idx, &t))
			return errf(err, len, "cannot read toe_pol_tuples: %s",
				    strerror(errno));
		if (t.min_rule >= a->rule)
			break; /* sorted: no later tuple can win */
		if (t.family != k->family || t.proto != k->proto)
			continue;
		memset(&pk, 0, sizeof(pk));
		for (j = 0; j < 4; j++) {
			pk.laddr[j] = k->laddr[j] & t.lmask[j];
			pk.raddr[j] = k->raddr[j] & t.rmask[j];
		}
		pk.lclass = t.use_lport ? lc : 0;
		pk.rclass = t.use_rport ? rc : 0;
		pk.cgroup = t.use_cgroup ? cgid : 0;
		pk.netns = t.use_netns ? netns : 0;
		pk.tuple = i;
		pk.gen = a->gen;
		a->probes++;
		if (!bpf_map_lookup_elem(m->cells, &pk, &cell) &&
		    cell < a->rule)
			a->rule = cell;
	}
	if (a->rule == TOE_RULE_NONE) {
		/* "default" is TCP's, as in decide_ns */
		if (!k->proto) {
			a->action = a->hdr.default_action;
			a->dev = a->hdr.default_dev;
		}
		return 0;
	}
	idx = a->gen * TOE_POL_MAX_RULES + (a->rule & (TOE_POL_MAX_RULES - 1));
	if (bpf_map_lookup_elem(m->rules, &idx, &a->r))
		return errf(err, len, "cannot read toe_pol_rules: %s",
			    strerror(errno));
	a->action = a->r.action;
	a->dev = a->r.dev;
	a->reason = TOE_R_RULE;
	return 0;
}
