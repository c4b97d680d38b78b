/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, the forward path's sending, one pipeline for both
 * hooks (ctx.h): for a packet of an admitted flow the fast path may take
 * (forward.h), the route and the next hop's MAC from the kernel's own
 * tables (fib), the checks the stack would make (TTL, options, the
 * egress's MTU, the egress being opentoe's and in the flow's namespace),
 * then the writes (TTL, NAT, MACs) and the redirect.  Whatever it cannot
 * do the way the stack would goes to the stack untouched, and fwd_xmit
 * says why with one vocabulary for both hooks: -reason (enum
 * toe_fwd_reason), counted per hook by fwd_slow().
 *
 * Where the hooks differ, by what the packet is:
 *   - both take a cached route (route_cache_on, the flow's toe_fwd_route)
 *     when toed keeps one current, else look it up;
 *   - XDP sends one frame: the MTU from the lookup (tot_len; a cached
 *     route holds the longest frame it passed), a devmap redirect, never to
 *     an egress that takes no XDP redirect (a veth, unless its peer can:
 *     TOE_IFACE_NO_XDP_TX) nor without a neighbour;
 *   - tc sends an skb, up to 64 KiB of GSO segments with their checksum
 *     state: the MTU per segment (bpf_check_mtu, BPF_MTU_CHK_SEGS; a
 *     cached route holds the longest segment it passed), the writes
 *     through the kernel's helpers where a checksum the skb carries must
 *     follow, and bpf_redirect_peer() into a
 *     veth peer's namespace, bpf_redirect(), or bpf_redirect_neigh() when
 *     the kernel must resolve the next hop (never cached: no MAC).
 * Every check comes before the first write, and that write (the TTL)
 * writes nothing when it fails: what goes to the stack is the packet as
 * it came.  A step failing after it (which the checks rule out) drops the
 * packet rather than hand the stack a half-forwarded one.
 */
#ifndef __TOE_FWD_XMIT_H
#define __TOE_FWD_XMIT_H

#include "common.h"
#include "toe_parse.h"
#include "ctx.h"
#include "maps_forward.h"
#include "maps_xdp.h"
#include "stats.h"
#include "nat.h"
#include "fwd_events.h"

/* What fib() returns besides the kernel's BPF_FIB_LKUP_RET_* codes. */
enum fib_rc {
	FIB_NO_HDR = -1, /* the IP header is not all in the frame: no lookup */
};

/*
 * Route lookup as the stack would do it for this packet on this ingress
 * interface (policy routing included; refused when forwarding is off on
 * it).  ctx: the XDP or tc program's context, as bpf_fib_lookup() takes
 * either.  flags: 0 for both hooks: the next hop's MAC (dmac, smac) from
 * the kernel's neighbour table, BPF_FIB_LKUP_RET_NO_NEIGH without a valid
 * entry (never toed's toe_neigh mirror: no datapath program reads it, so
 * a stale copy cannot outlive the kernel's entry).  tot_len != 0 also
 * checks the egress MTU (BPF_FIB_LKUP_RET_FRAG_NEEDED).  Returns the
 * kernel's BPF_FIB_LKUP_RET_* code, or FIB_NO_HDR.
 */
static __always_inline long fib(void *ctx, __u32 ifin, const struct toe_pkt *p,
				const void *ip, const void *data_end,
				__u16 tot_len, __u32 flags,
				const struct toe_fwd_tuple *nt,
				struct bpf_fib_lookup *fp)
{
	__builtin_memset(fp, 0, sizeof(*fp));
	fp->ifindex = ifin;
	fp->l4_protocol = p->l4proto;
	fp->sport = p->sport;
	fp->dport = p->dport;
	fp->tot_len = tot_len;
	if (p->family == TOE_AF_INET) {
		const struct iphdr *iph = ip;

		if ((void *)(iph + 1) > data_end)
			return FIB_NO_HDR;
		fp->family = AF_INET;
		fp->tos = iph->tos;
		fp->ipv4_src = p->saddr32[0];
		fp->ipv4_dst = p->daddr32[0];
	} else {
		const struct ipv6hdr *ip6 = ip;

		if ((void *)(ip6 + 1) > data_end)
			return FIB_NO_HDR;
		fp->family = AF_INET6;
		fp->flowinfo = *(const __be32 *)ip6 & bpf_htonl(0x0fffffff);
		__builtin_memcpy(fp->ipv6_src, p->saddr, 16);
		__builtin_memcpy(fp->ipv6_dst, p->daddr, 16);
	}
	if (nt) /* routed as it leaves (bpf/nat.h) */
		nat_fib(fp, nt, p->family);
	return bpf_fib_lookup(ctx, fp, sizeof(*fp), flags);
}

/* A failed fib() as a reason (enum toe_fwd_reason). */
static __always_inline __u32 fib_why(long rc)
{
	if (rc == FIB_NO_HDR)
		return TOE_FR_SLOW;
	return rc == BPF_FIB_LKUP_RET_FRAG_NEEDED ? TOE_FR_MTU : TOE_FR_ROUTE;
}

/*
 * The packet goes to the stack for reason why: counted under the hook's
 * counter of that kind (the reason's own count is fwd_returned's), and
 * returned as fwd_xmit() returns it, -why.  XDP: neigh and stack_only
 * each their own, the rest xdp_fwd_slow; tc: mtu and neigh their own,
 * the rest tc_fwd_slow.
 */
static __always_inline int fwd_slow(int hook, __u32 why)
{
	__u32 s = ctx_stat(hook, TOE_S_XDP_FWD_SLOW, TOE_S_TC_FWD_SLOW);

	if (why == TOE_FR_NEIGH)
		s = ctx_stat(hook, TOE_S_XDP_NEIGH_MISS,
			     TOE_S_TC_FWD_NEIGH_MISS);
	else if (why == TOE_FR_STACK_ONLY && hook == TOE_FH_XDP)
		s = TOE_S_XDP_FWD_STACK_ONLY;
	else if (why == TOE_FR_MTU && hook == TOE_FH_TC)
		s = TOE_S_TC_FWD_MTU;
	stat_inc(s);
	return -(int)why;
}

/*
 * A step failed after the packet was written (TTL down): not for the
 * stack, which would forward a half-forwarded packet; dropped, counted
 * with the slow ones.
 */
static __always_inline int fwd_written_drop(int hook)
{
	stat_inc(ctx_stat(hook, TOE_S_XDP_FWD_SLOW, TOE_S_TC_FWD_SLOW));
	return ctx_drop(hook);
}

/*
 * Whether fs's flow may use a cached route at all (both hooks): toed keeps a
 * route generation for the flow's namespace and renewed its lease in the
 * last TOE_FWD_RT_FRESH_NS (it renews every TOE_FWD_RT_RENEW_MS: a toed
 * killed bumps nothing, so a next hop's MAC or a route that changes after
 * its death is followed at most that long later; then every packet is
 * looked up in the kernel's tables).  Which cached route is current is
 * route_cached's check, under its generation.
 */
static __always_inline bool
route_cache_on(const struct toe_fwd *fs, const struct toe_fwd_gen *g, __u64 now)
{
	__u64 lease = g->lease_ns;

	/* (renewed under TOE_FWD_RT_FRESH_NS ago implies the lease runs) */
	return g->rt_gen && fs->netns == g->rt_netns &&
	       now + TOE_FWD_LEASE_NS < lease + TOE_FWD_RT_FRESH_NS;
}

/* A packet's admitted flow, as fwd_admitted() (forward.h) found it. */
struct fwd_hit {
	struct toe_fwd *fs; /* the flow's entry */
	struct toe_fwd_gen *g; /* toe_fwd_gen */
	struct toe_iface *in; /* the ingress's toe_ifaces record, or NULL */
	int from; /* the end that sent it (fwd_key()) */
	__u64 now; /* bpf_ktime_get_coarse_ns(), read once a packet */
};

/* Where a packet leaves: the egress and the next hop's MACs. */
struct fwd_out {
	__u32 ifout;
	__u8 dmac[6];
	__u8 smac[6];
};

/*
 * The cached route of c into o, if it is current: its gen, its fields,
 * its gen again (a CPU may be rewriting it); current only if both gens
 * are the one in force and the packet (tot_len; tc: 0, bpf_check_mtu
 * judges each segment) no longer than the route passed.  Whether its
 * egress is still opentoe's (toe-loader may have taken it out since) is
 * the caller's check, by hook.
 */
static __always_inline bool route_cached(const struct toe_fwd_route *c,
					 const struct toe_fwd_gen *g,
					 __u16 tot_len, struct fwd_out *o)
{
	__u32 cg = c->gen;
	__u16 max_len = c->max_len;

	o->ifout = c->ifout;
	__builtin_memcpy(o->dmac, c->dmac, 6);
	__builtin_memcpy(o->smac, c->smac, 6);
	return cg == g->rt_gen && c->gen == cg && tot_len <= max_len;
}

/*
 * Remember the route just found (gen last), unless rt_gen moved while it
 * was looked up; cleared if it moved while being written (two CPUs, one
 * with the old generation: the old route never stays marked current).
 */
static __always_inline void route_remember(struct toe_fwd *fs, int from,
					   const struct toe_fwd_gen *g,
					   __u32 rg, __u32 ifout,
					   const __u8 *dmac, const __u8 *smac,
					   __u16 tot_len)
{
	struct toe_fwd_route *c = &fs->rt[from & 1];

	if (!rg || fs->netns != g->rt_netns)
		return;
	if (c->gen == rg && c->ifout == ifout) {
		if (tot_len > c->max_len)
			c->max_len =
				tot_len; /* the same route, a longer packet */
		return;
	}
	c->gen = 0;
	c->ifout = ifout;
	__builtin_memcpy(c->dmac, dmac, 6);
	__builtin_memcpy(c->smac, smac, 6);
	c->max_len = tot_len;
	c->gen = rg;
	if (g->rt_gen != rg)
		c->gen = 0;
}

/*
 * The tests' fault: the TTL step fails (toe-loader with
 * TOE_LOADER_FAULT_HOP=1), to show that a packet a failed step leaves to
 * the stack is the one that came in.  0: the verifier drops the branch.
 */
const volatile __u32 toe_fault_hop = 0;

/*
 * TTL or hop limit down by one (the stack's forwarding does it too): the
 * first write to a forwarded packet, so that failing it leaves the packet
 * as it came (nothing written then).  IPv4: RFC 1624's incremental update
 * of the header's sum, as ip_decrease_ttl() (which also keeps a tc skb's
 * CHECKSUM_COMPLETE sum right: the header's sum is unchanged).  IPv6 has
 * no header checksum, but on tc a CHECKSUM_COMPLETE sum covers the hop
 * limit: bpf_skb_store_bytes() with BPF_F_RECOMPUTE_CSUM keeps it right.
 * 0, or -1 with nothing written.
 */
static __always_inline int fwd_hop(void *ctx, int hook, const struct toe_pkt *p)
{
	void *data = ctx_data(ctx, hook), *end = ctx_end(ctx, hook);
	struct ethhdr *eth = data;
	__u8 hl = p->ttl - 1;

	if ((void *)(eth + 1) > end || toe_fault_hop)
		return -1;
#ifdef TOE_BENCH_KEEP_TTL
	/*
	 * Benchmark only (bench/bench_xdp_steps.sh; see stat_add, stats.h):
	 * BPF_PROG_TEST_RUN runs every repeat on the same frame, whose TTL
	 * would run out after 63 repeats; checked above, not written here.
	 */
	return 0;
#endif
	if (p->family == TOE_AF_INET) {
		struct iphdr *iph = (void *)(eth + 1);
		__u32 check;

		if ((void *)(iph + 1) > end)
			return -1;
		check = iph->check;
		check += bpf_htons(0x0100);
		iph->check = (__u16)(check + (check >= 0xffff));
		iph->ttl--;
	} else if (hook == TOE_FH_XDP) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return -1;
		ip6->hop_limit--;
	} else if (bpf_skb_store_bytes(ctx, p->ttl_off, &hl, 1,
				       BPF_F_RECOMPUTE_CSUM)) {
		return -1;
	}
	return 0;
}

/* The MACs the packet leaves with (direct writes: the headers are linear). */
static __always_inline int fwd_macs(void *ctx, int hook, const __u8 *dmac,
				    const __u8 *smac)
{
	void *data = ctx_data(ctx, hook), *end = ctx_end(ctx, hook);
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > end)
		return -1;
	__builtin_memcpy(eth->h_dest, dmac, 6);
	__builtin_memcpy(eth->h_source, smac, 6);
	return 0;
}

/* Offsets of the fields fwd_nat() rewrites (IPv4 without options). */
#define FWD_NAT_IP (TOE_ETH_HLEN)
#define FWD_NAT_IPCSUM (FWD_NAT_IP + offsetof(struct iphdr, check))
#define FWD_NAT_ADDRS (FWD_NAT_IP + offsetof(struct iphdr, saddr))
#define FWD_NAT_L4 (FWD_NAT_IP + TOE_IPV4_HLEN)
#define FWD_NAT_TCPCSUM (FWD_NAT_L4 + offsetof(struct tcphdr, check))
#define FWD_NAT_UDPCSUM (FWD_NAT_L4 + offsetof(struct udphdr, check))

/*
 * IPv4 NAT (bpf/nat.h): packet p leaves as t reversed, on either hook (ctx.h's
 * checksum writes).  Checksums first, then the fields: the IPv4 header's,
 * the TCP checksum for the addresses as fields of the pseudo-header
 * (BPF_F_PSEUDO_HDR: on tc right for a CHECKSUM_PARTIAL skb, a TSO packet
 * whose field holds the pseudo-header's sum only, and skb->csum kept for
 * COMPLETE) and for the ports as fields of the segment; UDP's the same
 * way at its own offset, with BPF_F_MARK_MANGLED_0 (a datagram sent
 * without a checksum, 0, keeps none; a sum of 0 goes as 0xffff).  The fields'
 * values before are the parsed ones (p): nothing but the TTL was written
 * since.  0, or nonzero if a write failed half-way (the packet must not go
 * on; fwd_writable() rules it out).  tc: packet pointers are invalid
 * afterwards.
 */
static __always_inline int fwd_nat4(void *ctx, int hook,
				    const struct toe_pkt *p,
				    const struct toe_fwd_tuple *t)
{
	__u32 a0[2] = { p->saddr32[0], p->daddr32[0] };
	__u32 a1[2] = { t->daddr[0], t->saddr[0] };
	__u16 p0[2] = { p->sport, p->dport };
	__u16 p1[2] = { t->dport, t->sport };
	/*
	 * The transport checksum's offset (l4c) and UDP's flag (m0), by
	 * arithmetic, not a choice: clang turns a choice between two
	 * offsets into code the verifier refuses (a load through the
	 * offset, or two ctx reads merged into one of a moved ctx pointer)
	 */
	__u32 udp = p->l4proto == TOE_IPPROTO_UDP;
	__u32 l4c = FWD_NAT_TCPCSUM - udp * (FWD_NAT_TCPCSUM - FWD_NAT_UDPCSUM);
	__u64 m0 = (__u64)udp * BPF_F_MARK_MANGLED_0;
	int i;

	/* unrolled: a loop would have clang hoist &ctx->data_end (refused) */
#pragma unroll
	for (i = 0; i < 2; i++) {
		if (ctx_l3_csum(ctx, hook, FWD_NAT_IPCSUM, a0[i], a1[i]) ||
		    ctx_l4_csum(ctx, hook, l4c, a0[i], a1[i],
				m0 | BPF_F_PSEUDO_HDR | 4) ||
		    ctx_l4_csum(ctx, hook, l4c, p0[i], p1[i], m0 | 2))
			return -1;
	}
	if (ctx_store(ctx, hook, FWD_NAT_ADDRS, a1, sizeof(a1)) ||
	    ctx_store(ctx, hook, FWD_NAT_L4, p1, sizeof(p1)))
		return -1;
	return 0;
}

/* Offsets of the fields fwd_nat6() rewrites (IPv6 without extension headers). */
#define FWD_NAT6_ADDRS (FWD_NAT_IP + offsetof(struct ipv6hdr, saddr))
#define FWD_NAT6_L4 (FWD_NAT_IP + TOE_IPV6_HLEN)
#define FWD_NAT6_TCPCSUM (FWD_NAT6_L4 + offsetof(struct tcphdr, check))
#define FWD_NAT6_UDPCSUM (FWD_NAT6_L4 + offsetof(struct udphdr, check))

/*
 * NAT66: fwd_nat4's work for IPv6: no header checksum; each address is
 * four words of the transport checksum's pseudo-header (each updated as
 * one, BPF_F_PSEUDO_HDR), then the ports.  The addresses' new values are
 * written in one store (saddr and daddr are adjacent).
 */
static __always_inline int fwd_nat6(void *ctx, int hook,
				    const struct toe_pkt *p,
				    const struct toe_fwd_tuple *t)
{
	__u32 a1[8];
	__u16 p0[2] = { p->sport, p->dport };
	__u16 p1[2] = { t->dport, t->sport };
	__u32 udp = p->l4proto == TOE_IPPROTO_UDP;
	__u32 l4c =
		FWD_NAT6_TCPCSUM - udp * (FWD_NAT6_TCPCSUM - FWD_NAT6_UDPCSUM);
	__u64 m0 = (__u64)udp * BPF_F_MARK_MANGLED_0;
	int i;

	__builtin_memcpy(a1, t->daddr, 16); /* the new source */
	__builtin_memcpy(a1 + 4, t->saddr, 16); /* the new destination */
#pragma unroll
	for (i = 0; i < 4; i++) {
		if (ctx_l4_csum(ctx, hook, l4c, p->saddr32[i], a1[i],
				m0 | BPF_F_PSEUDO_HDR | 4) ||
		    ctx_l4_csum(ctx, hook, l4c, p->daddr32[i], a1[4 + i],
				m0 | BPF_F_PSEUDO_HDR | 4))
			return -1;
	}
#pragma unroll
	for (i = 0; i < 2; i++)
		if (ctx_l4_csum(ctx, hook, l4c, p0[i], p1[i], m0 | 2))
			return -1;
	if (ctx_store(ctx, hook, FWD_NAT6_ADDRS, a1, sizeof(a1)) ||
	    ctx_store(ctx, hook, FWD_NAT6_L4, p1, sizeof(p1)))
		return -1;
	return 0;
}

/* NAT (bpf/nat.h): packet p leaves as t reversed, IPv4 or IPv6. */
static __always_inline int fwd_nat(void *ctx, int hook, const struct toe_pkt *p,
				   const struct toe_fwd_tuple *t)
{
	if (p->family == TOE_AF_INET6)
		return fwd_nat6(ctx, hook, p, t);
	return fwd_nat4(ctx, hook, p, t);
}

/*
 * Whether every header fwd_xmit() writes is in the packet's linear part:
 * Ethernet and the IP header, and TCP's or UDP's for a NATed flow
 * (checked before the first write).
 */
static __always_inline bool fwd_writable(void *ctx, int hook,
					 const struct toe_pkt *p, bool nat)
{
	void *data = ctx_data(ctx, hook), *end = ctx_end(ctx, hook);
	__u32 need = TOE_ETH_HLEN +
		     (p->family == TOE_AF_INET ? TOE_IPV4_HLEN : TOE_IPV6_HLEN);

	if (nat)
		need += (p->l4proto == TOE_IPPROTO_UDP ? sizeof(struct udphdr) :
							 sizeof(struct tcphdr));
	return data + need <= end;
}

/*
 * The redirect to o's egress, out its toe_ifaces record: XDP, the devmap
 * (the entry was there a moment ago; if it went, the frame is dropped);
 * tc, the peer's ingress (a veth whose peer is in another namespace:
 * TOE_IFACE_PEER, skipping this device's transmit, its qdisc and a second
 * backlog pass), the egress with the MACs written (neigh), or the kernel
 * resolving the next hop (bpf_redirect_neigh, to fp's gateway).
 */
static __always_inline int fwd_redirect(void *ctx, int hook,
					const struct fwd_out *o,
					const struct toe_iface *out, bool neigh,
					const struct bpf_fib_lookup *fp)
{
	struct bpf_redir_neigh nh = {};

	if (hook == TOE_FH_XDP)
		return bpf_redirect_map(&toe_devmap, o->ifout, XDP_DROP);
	if (out->flags & TOE_IFACE_PEER) {
		stat_inc(TOE_S_TC_FWD_PEER);
		return bpf_redirect_peer(o->ifout, 0);
	}
	if (neigh)
		return bpf_redirect(o->ifout, 0);
	stat_inc(TOE_S_TC_FWD_NEIGH);
	if (fp->family == AF_INET) {
		nh.nh_family = AF_INET;
		nh.ipv4_nh = fp->ipv4_dst;
	} else {
		nh.nh_family = AF_INET6;
		__builtin_memcpy(nh.ipv6_nh, fp->ipv6_dst, 16);
	}
	return bpf_redirect_neigh(o->ifout, &nh, sizeof(nh), 0);
}

/*
 * tc: the IP length of the skb's longest segment, what tc_mtu_ok()
 * judges against the MTU: a GSO skb's headers (IP and TCP or UDP) and
 * gso_size, as skb_gso_network_seglen() counts them; else the datagram's.
 */
static __always_inline __u16 tc_seg_len(void *ctx, const struct toe_pkt *p,
					__u16 tot_len)
{
	__u32 gs = CTX_SKB(ctx)->gso_size;

	if (!gs)
		return tot_len;
	return p->payload_off - p->l3_off + gs;
}

/*
 * tc: each GSO segment of the skb against the egress's MTU, as
 * ip_forward() does (without BPF_MTU_CHK_SEGS any GSO skb passes): on a
 * looked-up route, and on a cached one for a segment longer than any it
 * passed (tc_seg_len).
 */
static __always_inline bool tc_mtu_ok(void *ctx, __u32 ifout)
{
	__u32 mtu = 0;

#ifdef TOE_BENCH_NO_MTU_CHECK /* (benchmark only: see stat_add, stats.h) */
	return true;
#endif
	return !bpf_check_mtu(ctx, ifout, &mtu, 0, BPF_MTU_CHK_SEGS);
}

/*
 * The fast path proper, for a packet of an admitted flow (h: its entry,
 * the end that sent it, the ingress's toe_ifaces record; fwd_admitted()),
 * on hook: route and next hop's MAC (the kernel's, or XDP's cached
 * route), the checks, TTL, NAT, MACs and the redirect.
 * Returns the redirect's verdict (XDP_REDIRECT, TC_ACT_REDIRECT), the
 * hook's drop verdict (a write failed half-way), or -reason (enum
 * toe_fwd_reason, fwd_slow()) with the packet untouched for the stack.
 * xdp_xmit and tc_xmit are its two instances.
 */
static __always_inline int
fwd_xmit(void *ctx, int hook, const struct toe_pkt *p, const struct fwd_hit *h)
{
	const struct toe_iface *in = h->in;
	const struct toe_fwd_gen *g = h->g;
	struct toe_fwd *fs = h->fs;
	int from = h->from;
	const struct toe_fwd_tuple *nt = nat_target(fs, from);
	void *data = ctx_data(ctx, hook), *end = ctx_end(ctx, hook);
	__u32 ifin = ctx_ifin(ctx, hook), rg;
	bool neigh = true, cached = false;
	struct bpf_fib_lookup fp;
	struct toe_iface *out = NULL;
	const __u8 *dmac = NULL, *smac = NULL;
	struct fwd_out o;
	__u16 tot_len, seg_len;
	long rc;

	if (p->ttl <= 1)
		return fwd_slow(hook, TOE_FR_SLOW); /* ICMP time exceeded */
	if (p->family == TOE_AF_INET) {
		if (p->l4_off - p->l3_off != TOE_IPV4_HLEN)
			return fwd_slow(hook, TOE_FR_SLOW); /* IP options */
		tot_len = TOE_IPV4_HLEN + p->ip_payload_len;
	} else {
		if (p->n_ext) /* a routing header may name this host */
			return fwd_slow(hook, TOE_FR_SLOW);
		tot_len = TOE_IPV6_HLEN + p->ip_payload_len;
	}
	seg_len = hook == TOE_FH_XDP ? tot_len : tc_seg_len(ctx, p, tot_len);
	/*
	 * A cached route carries the longest packet (tc: segment) that passed
	 * its egress's MTU (max_len): one no longer is within it, unless the
	 * MTU went down since, which a link change's rt_gen bump says (toed,
	 * nft.c); a longer one is looked up (XDP) or checked (tc) again.
	 */
	if (route_cache_on(fs, g, h->now) &&
	    route_cached(&fs->rt[from & 1], g, seg_len, &o)) {
		/*
		 * the egress still opentoe's, in the flow's namespace (XDP:
		 * in the devmap; tc: its toe_ifaces record, whose flags say
		 * how to redirect)
		 */
		if (hook == TOE_FH_XDP) {
			cached = bpf_map_lookup_elem(&toe_devmap, &o.ifout);
		} else {
			out = bpf_map_lookup_elem(&toe_ifaces, &o.ifout);
			cached = in && out && out->netns == fs->netns &&
				 in->netns == fs->netns;
		}
		if (cached) {
			dmac = o.dmac;
			smac = o.smac;
			goto write;
		}
	}
	rg = g->rt_gen; /* read before the lookup: a later bump wins */
	/*
	 * route and neighbour: the kernel's (no BPF_FIB_LOOKUP_SKIP_NEIGH);
	 * XDP has the lookup check the MTU, tc checks each GSO segment below
	 */
	rc = fib(ctx, ifin, p, data + TOE_ETH_HLEN, end,
		 hook == TOE_FH_XDP ? tot_len : 0, 0, nt, &fp);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH)
		return fwd_slow(hook, fib_why(rc));
	neigh = rc == BPF_FIB_LKUP_RET_SUCCESS;
	o.ifout = fp.ifindex;
	dmac = fp.dmac;
	smac = fp.smac;
	out = bpf_map_lookup_elem(&toe_ifaces, &o.ifout);
	/*
	 * Same namespace, the one that admitted the flow: ifindexes of other
	 * namespaces may share the maps.  XDP: an egress in the devmap.
	 */
	if (!in || !out || in->netns != out->netns || in->netns != fs->netns ||
	    (hook == TOE_FH_XDP && !bpf_map_lookup_elem(&toe_devmap, &o.ifout)))
		return fwd_slow(hook, TOE_FR_ROUTE);
	if (hook == TOE_FH_XDP) {
		/* a redirect there would be dropped, or lose its checksum */
		if (out->flags & TOE_IFACE_NO_XDP_TX)
			return fwd_slow(hook, TOE_FR_STACK_ONLY);
		if (!neigh) /* the stack resolves it, a later packet finds it */
			return fwd_slow(hook, TOE_FR_NEIGH);
		route_remember(fs, from, g, rg, o.ifout, dmac, smac, tot_len);
	} else {
		if (!tc_mtu_ok(ctx, o.ifout))
			return fwd_slow(hook, TOE_FR_MTU);
		/* a peer's ingress takes no bpf_redirect_neigh() */
		if (!neigh && (out->flags & TOE_IFACE_PEER))
			return fwd_slow(hook, TOE_FR_NEIGH);
		/* with the next hop's MAC: for the next skbs up to seg_len */
		if (neigh)
			route_remember(fs, from, g, rg, o.ifout, dmac, smac,
				       seg_len);
	}
write:
	if (!fwd_writable(ctx, hook, p, nt) || fwd_hop(ctx, hook, p))
		return fwd_slow(hook, TOE_FR_SLOW); /* nothing written yet */
	/* written: from here on not for the stack */
	if ((nt && fwd_nat(ctx, hook, p, nt)) ||
	    (neigh && fwd_macs(ctx, hook, dmac, smac)))
		return fwd_written_drop(hook);
	fwd_count(fs, from, ctx_segs(ctx, hook), ctx_len(ctx, hook), h->now);
	if (hook == TOE_FH_XDP) {
		stat_inc(TOE_S_XDP_FORWARD);
		if (cached)
			stat_inc(TOE_S_XDP_FWD_CACHED);
	} else {
		stat_inc(TOE_S_TC_FORWARD);
		stat_add(TOE_S_TC_FWD_SEGS, ctx_segs(ctx, hook));
		if (cached)
			stat_inc(TOE_S_TC_FWD_CACHED);
	}
	return fwd_redirect(ctx, hook, &o, out, neigh, &fp);
}

static __noinline __attribute__((unused)) int
xdp_xmit(struct xdp_md *ctx, const struct toe_pkt *p, const struct fwd_hit *h)
{
	return fwd_xmit(ctx, TOE_FH_XDP, p, h);
}

static __noinline __attribute__((unused)) int
tc_xmit(struct __sk_buff *skb, const struct toe_pkt *p, const struct fwd_hit *h)
{
	return fwd_xmit(skb, TOE_FH_TC, p, h);
}

#endif /* __TOE_FWD_XMIT_H */
