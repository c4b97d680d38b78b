/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath: the packet capture of toectl dump.  Each fast path
 * calls capture() on a packet it has taken (redirected,
 * or of an offloaded local flow): one load of toe_cap_conf.on (an array
 * slot, whose lookup the verifier inlines) and a branch is all it costs
 * while no dump runs.  With one running, a frame the filter takes is
 * copied (at most the snap length, from its Ethernet header, as the fast
 * path sends it) into this CPU's scratch record, and from there onto the
 * toe_cap_ring ring buffer; a full ring loses it, counted.  Built with
 * -DTOE_NO_CAPTURE (make CAPTURE=0) the calls are empty.
 * Layouts and the protocol with toectl: include/opentoe_capture.h.
 */
#ifndef __TOE_CAPTURE_H
#define __TOE_CAPTURE_H

#include "common.h"
#include "toe_parse.h"
#include "maps_capture.h"
#include "ctx.h"

#ifdef TOE_NO_CAPTURE
static __always_inline void capture(void *ctx, int hook,
				    const struct toe_pkt *p, __u8 cap_hook)
{
}
#else

/* An address of the packet (16 bytes, IPv4 zero-padded) is the end's. */
static __always_inline bool cap_addr_eq(const __u8 *a, const __u8 *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3];
}

/* The packet goes from end s to end d (a port of 0 is any port). */
static __always_inline bool cap_dir(const struct toe_pkt *p,
				    const struct toe_cap_end *s,
				    const struct toe_cap_end *d)
{
	return cap_addr_eq(p->saddr, s->addr) &&
	       cap_addr_eq(p->daddr, d->addr) &&
	       (!s->port || p->sport == s->port) &&
	       (!d->port || p->dport == d->port);
}

/*
 * Whether the filter of c takes the packet p (parsed as it came in) that
 * arrived on ifindex in the namespace netns (0: not read, the filter
 * names none), at hook.
 */
static __always_inline bool cap_match(const struct toe_cap_conf *c,
				      const struct toe_pkt *p, __u32 ifindex,
				      __u64 netns, __u8 hook)
{
	__u32 m = c->match;

	if ((m & TOE_CAP_M_HOOK) && !(c->hooks & (1U << (hook & 7))))
		return false;
	if ((m & TOE_CAP_M_NETNS) && c->netns != netns)
		return false;
	if ((m & TOE_CAP_M_IFINDEX) && c->ifindex != ifindex)
		return false;
	if ((m & TOE_CAP_M_PORT) && p->sport != c->port && p->dport != c->port)
		return false;
	if ((m & TOE_CAP_M_FLOW) &&
	    (p->family != c->family ||
	     !(cap_dir(p, &c->a, &c->b) || cap_dir(p, &c->b, &c->a))))
		return false;
	return true;
}

/*
 * This CPU's scratch record for a frame of len bytes the filter took,
 * with its header filled; NULL if there is none.  *cap: the bytes to
 * copy, min(len, snap length), which the caller bounds for the verifier.
 */
static __always_inline struct toe_cap_cpu *
cap_begin(const struct toe_cap_conf *c, __u32 len, __u32 ifindex, __u8 hook,
	  __u64 *cap)
{
	__u32 cpu = bpf_get_smp_processor_id(), n;
	struct toe_cap_cpu *s = bpf_map_lookup_elem(&toe_cap_cpu, &cpu);

	if (!s)
		return NULL;
	s->matched++; /* this CPU's slot: one writer */
	n = len < c->snaplen ? len : c->snaplen;
	*cap = n;
	s->rec.ts_ns = bpf_ktime_get_ns();
	s->rec.session = c->session;
	s->rec.len = len;
	s->rec.caplen = n;
	s->rec.ifindex = ifindex;
	s->rec.hook = hook;
	return s;
}

/*
 * cap (1 .. TOE_CAP_SNAP_MAX: min(length, snap length)) as the verifier
 * must see it on the very register the helpers get: no branch, whose
 * bound a verifier before Linux 6.8 or so does not carry over to a copy
 * of the register the compiler compares instead.  1 .. 65536 whatever
 * cap was (0 becomes a copy longer than any frame, which fails).
 */
static __always_inline __u64 cap_bound(__u64 cap)
{
	barrier_var(cap); /* nothing the compiler knew of it is used */
	return ((cap - 1) & TOE_CAP_SNAP_MAX) + 1;
}

/*
 * The record onto the ring, or counted lost (the ring is full); 0, or 1
 * when lost.
 */
static __always_inline int cap_commit(struct toe_cap_cpu *s, __u64 cap)
{
	if (!bpf_ringbuf_output(&toe_cap_ring, &s->rec, sizeof(s->rec) + cap,
				0))
		return 0;
	s->lost++;
	return 1;
}

/*
 * A packet the forward path or the local path took, while a dump runs
 * (capture()), on hook (enum toe_fwd_hook) as cap_hook (enum
 * toe_cap_hook).  One body for both hooks (ctx.h); the subprograms are
 * its two instances (cap_xdp, cap_tc).  They return a scalar the caller
 * uses, never void: what the compiler leaves in r0 of a void one (or of
 * one whose value no caller reads, made void by the compiler) may be a
 * pointer to the caller's stack, which the verifier refuses.  0: captured
 * or not taken; 1: lost; -1: not copied.
 */
static __always_inline int cap_one(void *ctx, int hook, const struct toe_pkt *p,
				   const struct toe_cap_conf *c, __u8 cap_hook)
{
	__u32 ifin = ctx_ifin(ctx, hook);
	__u64 cap = 0;
	struct toe_cap_cpu *s;
	__u64 netns = 0;

	if (c->match & TOE_CAP_M_NETNS)
		netns = ctx_netns(ctx, hook);
	if (!cap_match(c, p, ifin, netns, cap_hook))
		return 0;
	s = cap_begin(c, ctx_wire_len(ctx, hook), ifin, cap_hook, &cap);
	if (!s)
		return -1;
	cap = cap_bound(cap);
	if (ctx_load(ctx, hook, 0, s->data, cap))
		return -1;
	return cap_commit(s, cap);
}

static __noinline int cap_xdp(struct xdp_md *ctx, const struct toe_pkt *p,
			      const struct toe_cap_conf *c, __u8 cap_hook)
{
	return cap_one(ctx, TOE_FH_XDP, p, c, cap_hook);
}

static __noinline int cap_tc(struct __sk_buff *skb, const struct toe_pkt *p,
			     const struct toe_cap_conf *c, __u8 cap_hook)
{
	return cap_one(skb, TOE_FH_TC, p, c, cap_hook);
}

/*
 * A packet hook (enum toe_fwd_hook) has taken, as cap_hook (enum
 * toe_cap_hook): captured if a dump runs and its filter takes it.  The
 * check of on comes first, alone.
 */
static __always_inline void capture(void *ctx, int hook,
				    const struct toe_pkt *p, __u8 cap_hook)
{
	__u32 zero = 0;
	struct toe_cap_conf *c = bpf_map_lookup_elem(&toe_cap_conf, &zero);
	int rc;

	if (!c || !c->on)
		return;
	if (hook == TOE_FH_XDP)
		rc = cap_xdp(ctx, p, c, cap_hook);
	else
		rc = cap_tc(ctx, p, c, cap_hook);
	barrier_var(rc); /* used: the compiler keeps it in r0 */
}
#endif /* TOE_NO_CAPTURE */

#endif /* __TOE_CAPTURE_H */
