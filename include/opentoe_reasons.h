/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: why a flow or packet left a fast path, one table a concern,
 * shared by bpf/ and user/ (include/opentoe.h), and the counters of each
 * (toe_reasons), as TOE_STAT_TABLE is for toe_stats.
 *
 * TOE_FWD_REASON_TABLE(X): X(ID, name, kind, hooks, pkts, origin, help)
 * for each reason the forward path gives a routed flow back to the stack
 * (kind "returned": the flow stays admitted, the stack forwards it
 * meanwhile) or ends its fast path (kind "ended": the toe_fwd entry goes).
 *   hooks   where it can happen: TOE_FRH_BOTH, or TOE_FRH_XDP (a bit a
 *           hook, 1 << enum toe_fwd_hook); a hook it cannot happen on has
 *           no counter of it
 *   pkts    1: it has a packet counter (TOE_RSN_FWD_PKTS) beside the
 *           flows'; 0: flows only (no packet sees it)
 *   origin  TOE_FRO_DATAPATH (a program counts it), TOE_FRO_TOED (toed
 *           counts it: it deletes the entry, or finds it gone) or
 *           TOE_FRO_BOTH (each counts what it ended)
 *   help    its text (build/toe-tables, the docs' table)
 * enum toe_fwd_reason is TOE_FR_<ID>, from 1 (0: none).  toectl stats,
 * /metrics (label reason), toectl monitor's fwd_returned and fwd_ended
 * events and docs/forwarding.md's table all take the names and the
 * columns from here (toe_fwd_reason_on_hook() and the others below).
 */
#ifndef __OPENTOE_REASONS_H
#define __OPENTOE_REASONS_H

#include "opentoe_common.h"
#include "opentoe_bypass.h"

/* TOE_FWD_REASON_TABLE's hooks column: a bit a hook (enum toe_fwd_hook). */
#define TOE_FRH_XDP 1
#define TOE_FRH_TC 2
#define TOE_FRH_BOTH (TOE_FRH_XDP | TOE_FRH_TC)

/* Its origin column. */
#define TOE_FRO_DATAPATH 0
#define TOE_FRO_TOED 1
#define TOE_FRO_BOTH 2 /* toed, and a program where toed cannot */

/* clang-format off */
#define TOE_FWD_REASON_TABLE(X)						\
	X(RULESET, "ruleset", "returned", TOE_FRH_BOTH, 1, TOE_FRO_DATAPATH, \
	  "the firewall ruleset changed since the admission")		\
	X(LEASE, "lease", "returned", TOE_FRH_BOTH, 1, TOE_FRO_DATAPATH, \
	  "toed's lease on the ruleset ran out (toed stopped)")	\
	X(ROUTE, "route", "returned", TOE_FRH_BOTH, 1, TOE_FRO_DATAPATH, \
	  "no route, or the route leaves by an interface the fast path may not send on") \
	X(NEIGH, "neigh", "returned", TOE_FRH_BOTH, 1, TOE_FRO_DATAPATH, \
	  "no valid neighbour entry for the next hop")			\
	X(MTU, "mtu", "returned", TOE_FRH_BOTH, 1, TOE_FRO_DATAPATH,	\
	  "a packet over the egress MTU")				\
	X(STACK_ONLY, "stack_only", "returned", TOE_FRH_XDP, 1, TOE_FRO_DATAPATH, \
	  "XDP: the egress takes no XDP redirect")			\
	X(SLOW, "slow", "returned", TOE_FRH_BOTH, 1, TOE_FRO_DATAPATH,	\
	  "TTL expiring, IP options or IPv6 extension headers")	\
	X(FIN, "fin", "ended", TOE_FRH_BOTH, 1, TOE_FRO_DATAPATH,	\
	  "a FIN from either end")					\
	X(RST, "rst", "ended", TOE_FRH_BOTH, 1, TOE_FRO_DATAPATH,	\
	  "an RST from either end")					\
	X(CT_GONE, "conntrack_gone", "ended", TOE_FRH_BOTH, 0, TOE_FRO_BOTH, \
	  "conntrack destroyed the flow's entry (toed ended the fast path, or the fast path's refresh found it gone)") \
	X(EVICTED, "evicted", "ended", TOE_FRH_BOTH, 0, TOE_FRO_TOED,	\
	  "the entry went without a FIN or RST: toe_fwd full (toed saw it gone)")
/* clang-format on */

enum toe_fwd_reason {
	TOE_FR_NONE = 0,
#define TOE_FR_ENUM(id, name, kind, hooks, pkts, origin, help) TOE_FR_##id,
	TOE_FWD_REASON_TABLE(TOE_FR_ENUM)
#undef TOE_FR_ENUM
		TOE_FR__MAX
};

/* The hook a routed flow's packets take (toe_event.hook). */
enum toe_fwd_hook { TOE_FH_XDP = 0, TOE_FH_TC = 1, TOE_FH__MAX };

/*
 * toe_reasons: PERCPU_ARRAY of __u64, TOE_RSN_MAX counters:
 *   TOE_RSN_FWD_FLOWS(hook, r): routed flows the forward path gave back
 *     or ended for reason r (enum toe_fwd_reason) on hook (toe_fwd_hook);
 *     one a flow transition, as the fwd_returned/fwd_ended events;
 *   TOE_RSN_FWD_PKTS(hook, r): packets (tc: skbs) it left to the stack
 *     for reason r;
 *   TOE_RSN_BYP(why): bypass sockets switched to TCP, by enum toe_byp_why;
 *   TOE_RSN_REFUSED(r): connections sock_ops refused, by enum toe_reason
 *     (the flow_refused events, counted even when the ring drops one).
 * A reason of origin TOE_FRO_TOED or TOE_FRO_BOTH (it deletes the entry;
 * it finds it gone) is toed's to count too: toectl stats and /metrics add
 * its counts to the map's (each end counted once: by whichever deleted
 * the entry).  Only the counters the table's columns give are shown: no
 * packets of a reason without pkts, nothing of a reason on a hook it
 * cannot happen on.
 */
#define TOE_RSN_STRIDE 16
#define TOE_RSN_FWD_FLOWS(hook, r) ((hook)*TOE_RSN_STRIDE + (r))
#define TOE_RSN_FWD_PKTS(hook, r) (32 + (hook)*TOE_RSN_STRIDE + (r))
#define TOE_RSN_BYP(why) (64 + (why))
#define TOE_RSN_REFUSED(r) (80 + (r))
#define TOE_RSN_MAX 96

_Static_assert(TOE_FR__MAX <= TOE_RSN_STRIDE, "toe_reasons: fwd reasons");
_Static_assert(TOE_BYP_WHY_N < TOE_RSN_STRIDE, "toe_reasons: bypass reasons");
_Static_assert(TOE_R__MAX <= TOE_RSN_STRIDE, "toe_reasons: refusal reasons");

/*
 * The table's columns of reason r, in one switch (eBPF too: a constant
 * reason folds to constants); all 0 for none or out of range (origin 0
 * is TOE_FRO_DATAPATH).
 */
struct toe_fwd_reason_cols {
	__u8 hooks;
	__u8 pkts;
	__u8 origin;
};

static inline struct toe_fwd_reason_cols toe_fwd_reason_cols(__u32 r)
{
	struct toe_fwd_reason_cols c = { 0, 0, TOE_FRO_DATAPATH };

	switch (r) {
#define TOE_FR_COLS(id, name, kind, hooks_, pkts_, origin_, help) \
	case TOE_FR_##id:                                         \
		c.hooks = hooks_;                                 \
		c.pkts = pkts_;                                   \
		c.origin = origin_;                               \
		break;
		TOE_FWD_REASON_TABLE(TOE_FR_COLS)
#undef TOE_FR_COLS
	}
	return c;
}

/* Its hooks (TOE_FRH_*), packet counter (0, 1), origin (TOE_FRO_*). */
static inline __u32 toe_fwd_reason_hooks(__u32 r)
{
	return toe_fwd_reason_cols(r).hooks;
}

static inline int toe_fwd_reason_has_pkts(__u32 r)
{
	return toe_fwd_reason_cols(r).pkts;
}

static inline int toe_fwd_reason_origin(__u32 r)
{
	return toe_fwd_reason_cols(r).origin;
}

/* Whether reason r can happen on hook h (enum toe_fwd_hook). */
static inline int toe_fwd_reason_on_hook(__u32 r, __u32 h)
{
	return h < TOE_FH__MAX && (toe_fwd_reason_hooks(r) & (1U << h));
}

#ifndef __bpf__
/* Its name and kind ("returned", "ended"); "-" for none or out of range. */
static inline const char *toe_fwd_reason_str(__u32 r, int kind)
{
	static const char *const n[TOE_FR__MAX][2] = {
		[TOE_FR_NONE] = { "-", "-" },
#define TOE_FR_STR(id, name, kind, hooks, pkts, origin, help) \
	[TOE_FR_##id] = { name, kind },
		TOE_FWD_REASON_TABLE(TOE_FR_STR)
#undef TOE_FR_STR
	};

	return r < TOE_FR__MAX ? n[r][!!kind] : "-";
}

static inline const char *toe_fwd_reason_name(__u32 r)
{
	return toe_fwd_reason_str(r, 0);
}

static inline const char *toe_fwd_reason_kind(__u32 r)
{
	return toe_fwd_reason_str(r, 1);
}

/* Whether reason r ends the fast path (kind "ended"). */
static inline int toe_fwd_reason_ended(__u32 r)
{
	return toe_fwd_reason_kind(r)[0] == 'e';
}

static inline const char *toe_fwd_hook_name(__u32 h)
{
	return h == TOE_FH_TC ? "tc" : "xdp";
}
#endif

#endif /* __OPENTOE_REASONS_H */
