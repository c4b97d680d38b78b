/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, the forward path seen from outside (issue 35): the
 * flow events conntrack -E would give (fwd_admitted, fwd_returned with
 * its reason, fwd_ended), the per-reason counters (toe_reasons,
 * include/opentoe_reasons.h) and the flows' per-direction counters.  Each
 * exit of the forward path (forward.h, tc_fwd.h, egress.h) is one call
 * here:
 *
 *   fwd_count      a packet (tc: skb of segs) forwarded: flow counters by
 *                  direction, their sums, the total forwarded bytes;
 *   fwd_returned   a packet of an admitted flow left to the stack for a
 *                  reason: counted (packets), and an event when the flow
 *                  changes reason (flows), never a packet's;
 *   fwd_ended      FIN or RST: the entry is about to go; counted, an event;
 *   fwd_ev_admit   the admission (egress.h): the event with the hook and
 *                  both interfaces.
 *
 * Once a transition: a flow's fwd_returned is sent when its reason differs
 * from the last one sent (toe_fwd.ret_reason); ret_reason is cleared when
 * the flow is back on the fast path TOE_FWD_EV_HOLD_NS after that event,
 * or re-admitted (egress.h), so a flow whose packets alternate between the
 * fast path and the stack sends at most one a second.  Events go through
 * event_take (the tenants' share of the ring, bpf/stats.h) and count
 * event_dropped when the ring is full; the counters move regardless.
 * The hook (enum toe_fwd_hook) of fwd_returned and fwd_ended is the
 * program's that saw the packet; the admission's is the client side's
 * interface's (fwd_hook_of: toe_ifaces, TOE_IFACE_TC).
 */
#ifndef __TOE_FWD_EVENTS_H
#define __TOE_FWD_EVENTS_H

#include "common.h"
#include "maps_forward.h"
#include "maps_stats.h"
#include "stats.h"

#define TOE_FWD_EV_HOLD_NS 1000000000ULL

/* The hook of interface ifindex (toe-loader's toe_ifaces flags). */
static __always_inline __u32 fwd_hook_of(__u32 ifindex)
{
	struct toe_iface *i = bpf_map_lookup_elem(&toe_ifaces, &ifindex);

	return i && (i->flags & TOE_IFACE_TC) ? TOE_FH_TC : TOE_FH_XDP;
}

/*
 * A packet of flow fs, sent by end from, forwarded: pkts packets, len
 * bytes, at now (the packet's coarse clock, fwd_hit).  Two atomic adds: the
 * flow's totals are the two directions' sum (toectl flows adds them).
 */
static __always_inline void fwd_count(struct toe_fwd *fs, int from, __u64 pkts,
				      __u64 len, __u64 now)
{
	int d = (from != fs->client) & 1;

	count_pkts(&fs->dir_packets[d], &fs->dir_bytes[d], pkts, len);
	stat_add(TOE_S_FWD_BYTES, len);
	/* (signed: another CPU may have set a later ret_ns) */
	if (fs->ret_reason &&
	    (__s64)(now - fs->ret_ns) >= (__s64)TOE_FWD_EV_HOLD_NS)
		fs->ret_reason = 0; /* back on the fast path: a new episode */
}

/*
 * One TOE_EV_FWD_* event of flow fs (key ck) to user space, within its
 * namespace's share of the ring (event_take, on the event's own key: the
 * toe_fwd key with the router's namespace).  Not inlined, and nothing on
 * its stack but scalars: the admission's programs are tight on 6.1.
 */
static __noinline __attribute__((unused)) int
fwd_event(const struct toe_fwd *fs, const struct toe_flow_key *ck, __u32 type,
	  __u32 reason, __u32 hook)
{
	struct toe_event *e;

	e = bpf_ringbuf_reserve(&toe_events, sizeof(*e), 0);
	if (!e) {
		stat_inc(TOE_S_EVENT_DROPPED);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->key = *ck;
	e->key.netns = fs->netns;
	if (!event_take(&e->key, &e->tenant)) {
		bpf_ringbuf_discard(e, 0);
		return 0;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->type = type;
	e->dev = fs->dev;
	e->rule = fs->rule;
	e->policy = fs->policy;
	e->reason = reason;
	e->direction = fs->client;
	e->hook = hook;
	e->ct_zone = fs->ct_zone;
	e->fwd_packets[0] = fs->dir_packets[0];
	e->fwd_packets[1] = fs->dir_packets[1];
	e->fwd_bytes[0] = fs->dir_bytes[0];
	e->fwd_bytes[1] = fs->dir_bytes[1];
	e->fwd_if[0] = fs->client_if;
	e->fwd_if[1] = fs->server_if;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/*
 * A packet of admitted flow fs (key ck) that came in on hook leaves the
 * fast path for reason (enum toe_fwd_reason): type TOE_EV_FWD_RETURNED,
 * to the stack while the flow stays admitted (kind "returned": counted,
 * an event if the flow's reason changes), or TOE_EV_FWD_ENDED, its fast
 * path over (kind "ended": FIN, RST, its conntrack entry gone; counted,
 * an event).  fwd_returned and fwd_ended name the two.
 */
static __noinline __attribute__((unused)) int
fwd_left(struct toe_fwd *fs, const struct toe_flow_key *ck, __u32 hook,
	 __u32 reason, __u32 type)
{
	hook &= 1;
	reason &= TOE_RSN_STRIDE - 1;
	rsn_inc(TOE_RSN_FWD_PKTS(hook, reason));
	if (type == TOE_EV_FWD_RETURNED) {
		if (fs->ret_reason == reason)
			return 0;
		fs->ret_reason = reason;
		fs->ret_ns = bpf_ktime_get_coarse_ns();
	}
	rsn_inc(TOE_RSN_FWD_FLOWS(hook, reason));
	return fwd_event(fs, ck, type, reason, hook);
}

#define fwd_returned(fs, ck, hook, reason) \
	fwd_left(fs, ck, hook, reason, TOE_EV_FWD_RETURNED)
#define fwd_ended(fs, ck, hook, reason) \
	fwd_left(fs, ck, hook, reason, TOE_EV_FWD_ENDED)

/*
 * The admission wrote flow ck into toe_fwd: fwd_admitted, on the client's
 * hook (called by the admission's caller, not from its frame: stack).
 */
static __always_inline void fwd_ev_admit(const struct toe_flow_key *ck)
{
	struct toe_fwd *fs = bpf_map_lookup_elem(&toe_fwd, ck);

	if (fs)
		fwd_event(fs, ck, TOE_EV_FWD_ADMITTED, 0,
			  fwd_hook_of(fs->client_if));
}

#endif /* __TOE_FWD_EVENTS_H */
