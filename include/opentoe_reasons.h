/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: why a flow or packet left a fast path, one table a concern,
 * shared by bpf/ and user/ (include/opentoe.h), and the counters of each
 * (toe_reasons), as TOE_STAT_TABLE is for toe_stats.
 *
 * TOE_FWD_REASON_TABLE(X): X(ID, name, kind, help) for each reason the
 * forward path gives a routed flow back to the stack (kind "returned": the
 * flow stays admitted, the stack forwards it meanwhile) or ends its fast
 * path (kind "ended": the toe_fwd entry goes).  enum toe_fwd_reason is
 * TOE_FR_<ID>, from 1 (0: none).  toectl stats, /metrics (label reason),
 * toectl monitor's fwd_returned and fwd_ended events and
 * docs/forwarding.md's table all take the names from here.
 */
#ifndef __OPENTOE_REASONS_H
#define __OPENTOE_REASONS_H

#include "opentoe_common.h"
#include "opentoe_bypass.h"

/* clang-format off */
#define TOE_FWD_REASON_TABLE(X)						\
	X(RULESET, "ruleset", "returned",				\
	  "the firewall ruleset changed since the admission")		\
	X(LEASE, "lease", "returned",					\
	  "toed's lease on the ruleset ran out (toed stopped)")	\
	X(ROUTE, "route", "returned",					\
	  "no route, or the route leaves by an interface the fast path may not send on") \
	X(NEIGH, "neigh", "returned",					\
	  "no valid neighbour entry for the next hop")			\
	X(MTU, "mtu", "returned",					\
	  "a packet over the egress MTU")				\
	X(STACK_ONLY, "stack_only", "returned",			\
	  "XDP: the egress takes no XDP redirect")			\
	X(SLOW, "slow", "returned",					\
	  "TTL expiring, IP options or IPv6 extension headers")	\
	X(FIN, "fin", "ended", "a FIN from either end")		\
	X(RST, "rst", "ended", "an RST from either end")		\
	X(CT_GONE, "conntrack_gone", "ended",				\
	  "conntrack destroyed the flow's entry (toed ended the fast path)") \
	X(EVICTED, "evicted", "ended",					\
	  "the entry went without a FIN or RST: toe_fwd full (toed saw it gone)")
/* clang-format on */

enum toe_fwd_reason {
	TOE_FR_NONE = 0,
#define TOE_FR_ENUM(id, name, kind, help) TOE_FR_##id,
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
 * conntrack_gone and evicted are toed's (it deletes the entry; it finds
 * it gone): toed counts them, and toectl stats and /metrics add its counts
 * to the map's.
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

#ifndef __bpf__
/* A forward-path reason's name ("-" for none or out of range). */
static inline const char *toe_fwd_reason_name(__u32 r)
{
	static const char *const n[TOE_FR__MAX] = {
		[TOE_FR_NONE] = "-",
#define TOE_FR_NAME(id, name, kind, help) [TOE_FR_##id] = name,
		TOE_FWD_REASON_TABLE(TOE_FR_NAME)
#undef TOE_FR_NAME
	};

	return r < TOE_FR__MAX ? n[r] : "-";
}

static inline const char *toe_fwd_hook_name(__u32 h)
{
	return h == TOE_FH_TC ? "tc" : "xdp";
}
#endif

#endif /* __OPENTOE_REASONS_H */
