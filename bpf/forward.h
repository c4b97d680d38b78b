/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, the forward path ("steer forward"): for flows this
 * host routes, the canonical key of both directions (fwd_key), whether an
 * admitted flow may take the fast path now (fwd_valid: its sender's
 * interface, the firewall generation; fwd_admitted: the whole judgement,
 * FIN/RST and re-admission included), the route lookup (fib) and the TTL
 * (hop).  Those are shared by both hooks: they take the ingress ifindex
 * and namespace cookie, or the program's ctx as bpf_fib_lookup() takes
 * either, never an xdp_md field.  Then XDP's fast path proper: cached
 * route, or the route and the next hop's MAC from the kernel's own tables,
 * and a devmap redirect (fwd_xmit, xdp_fwd); the tc one is in tc_fwd.h.
 * Neither hook admits anything: flows enter toe_fwd only through the
 * admission (egress.h), which watches what the stack forwards.  Maps:
 * maps_forward.h.
 */
#ifndef __TOE_FORWARD_H
#define __TOE_FORWARD_H

#include "common.h"
#include "toe_parse.h"
#include "maps_forward.h"
#include "maps_policy.h"
#include "maps_xdp.h"
#include "policy.h"
#include "stats.h"
#include "xdp.h"
#include "nat.h"
#include "fwd_ct.h"
#include "fwd_events.h"
#include "capture.h"

/* Addresses as bytes in network order: <0, 0, >0. */
static __always_inline int addr_cmp(const __u32 *a, const __u32 *b)
{
	int i;

	for (i = 0; i < 4; i++) {
		__u32 x = bpf_ntohl(a[i]), y = bpf_ntohl(b[i]);

		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/*
 * The canonical key of a routed flow (lower end first, include/opentoe.h),
 * the same for both directions.  Returns the end that sent the packet:
 * 0 = laddr/lport, 1 = raddr/rport.
 */
static __always_inline int fwd_key(const struct toe_pkt *p,
				   struct toe_flow_key *k)
{
	int c = addr_cmp(p->saddr32, p->daddr32);
	bool src_low = c < 0 ||
		       (c == 0 && bpf_ntohs(p->sport) <= bpf_ntohs(p->dport));

	__builtin_memset(k, 0, sizeof(*k));
	k->family = p->family;
	if (src_low) {
		__builtin_memcpy(k->laddr, p->saddr, 16);
		__builtin_memcpy(k->raddr, p->daddr, 16);
		k->lport = bpf_ntohs(p->sport);
		k->rport = bpf_ntohs(p->dport);
		return 0;
	}
	__builtin_memcpy(k->laddr, p->daddr, 16);
	__builtin_memcpy(k->raddr, p->saddr, 16);
	k->lport = bpf_ntohs(p->dport);
	k->rport = bpf_ntohs(p->sport);
	return 1;
}

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
	fp->l4_protocol = TOE_IPPROTO_TCP;
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
		if (nt)
			nat_fib(fp, nt); /* routed as it leaves (bpf/nat.h) */
	} else {
		const struct ipv6hdr *ip6 = ip;

		if ((void *)(ip6 + 1) > data_end)
			return FIB_NO_HDR;
		fp->family = AF_INET6;
		fp->flowinfo = *(const __be32 *)ip6 & bpf_htonl(0x0fffffff);
		__builtin_memcpy(fp->ipv6_src, p->saddr, 16);
		__builtin_memcpy(fp->ipv6_dst, p->daddr, 16);
	}
	return bpf_fib_lookup(ctx, fp, sizeof(*fp), flags);
}

/*
 * What fwd_xmit() returns when it does not redirect the frame (when it
 * does, it returns bpf_redirect_map()'s XDP action, never negative).  The
 * frame then goes on, untouched, to the chained program or the stack.
 */
enum fwd_xmit_rc {
	/*
	 * Not for the fast path: TTL expiring, IP options or extension
	 * headers, over the egress MTU, no route, an egress opentoe is not
	 * on, a short frame.  xdp_fwd counts it (TOE_S_XDP_FWD_SLOW).
	 */
	FWD_SLOW = -1,
	/*
	 * No valid neighbour for the next hop in the kernel's table
	 * (BPF_FIB_LKUP_RET_NO_NEIGH): the stack resolves it, a later packet
	 * finds it.  fwd_xmit counts it (TOE_S_XDP_NEIGH_MISS).
	 */
	FWD_NEIGH_MISS = -2,
	/*
	 * The egress takes no XDP redirect (TOE_IFACE_NO_XDP_TX: a veth,
	 * unless toe-loader was told its peer can): the stack forwards it.
	 * fwd_xmit counts it (TOE_S_XDP_FWD_STACK_ONLY).
	 */
	FWD_STACK_ONLY = -3,
	/* no route, or not one the fast path may take (TOE_FR_ROUTE) */
	FWD_ROUTE = -4,
	/* over the egress MTU (BPF_FIB_LKUP_RET_FRAG_NEEDED, TOE_FR_MTU) */
	FWD_MTU = -5,
};

/* The reason (enum toe_fwd_reason) of a fwd_xmit_rc. */
static __always_inline __u32 fwd_xmit_why(int rc)
{
	if (rc == FWD_NEIGH_MISS)
		return TOE_FR_NEIGH;
	if (rc == FWD_STACK_ONLY)
		return TOE_FR_STACK_ONLY;
	if (rc == FWD_ROUTE)
		return TOE_FR_ROUTE;
	if (rc == FWD_MTU)
		return TOE_FR_MTU;
	return TOE_FR_SLOW;
}

/* A failed fib() as a fwd_xmit_rc. */
static __always_inline int fib_fail(long rc)
{
	if (rc == FIB_NO_HDR)
		return FWD_SLOW;
	return rc == BPF_FIB_LKUP_RET_FRAG_NEEDED ? FWD_MTU : FWD_ROUTE;
}

/*
 * Whether fs's flow may use a cached route at all: toed keeps a route
 * generation for the flow's namespace and renewed its lease in the last
 * TOE_FWD_RT_FRESH_NS (it renews every TOE_FWD_RT_RENEW_MS: a toed killed
 * bumps nothing, so a next hop's MAC or a route that changes after its
 * death is followed at most that long later; then every packet is looked
 * up in the kernel's tables).  Which cached route is current is
 * fwd_xmit's check, under its generation.
 */
static __always_inline bool route_cache_on(const struct toe_fwd *fs,
					   const struct toe_fwd_gen *g)
{
	__u64 now = bpf_ktime_get_coarse_ns(), lease = g->lease_ns;

	/* (renewed under TOE_FWD_RT_FRESH_NS ago implies the lease runs) */
	return g->rt_gen && fs->netns == g->rt_netns &&
	       now + TOE_FWD_LEASE_NS < lease + TOE_FWD_RT_FRESH_NS;
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
 * as it came (nothing written then).
 */
static __always_inline int hop(void *data, void *data_end, __u8 family)
{
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end || toe_fault_hop)
		return FWD_SLOW;
	if (family == TOE_AF_INET) {
		struct iphdr *iph = (void *)(eth + 1);
		__u32 check;

		if ((void *)(iph + 1) > data_end)
			return FWD_SLOW;
		/* As ip_decrease_ttl(): RFC 1624 incremental update. */
		check = iph->check;
		check += bpf_htons(0x0100);
		iph->check = (__u16)(check + (check >= 0xffff));
		iph->ttl--;
	} else {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end)
			return FWD_SLOW;
		ip6->hop_limit--;
	}
	return 0;
}

/*
 * A step failed after the frame was written (TTL down): not for the stack,
 * which would forward a half-forwarded frame (nat_rewrite() fails only on
 * a short frame, which the parser already refused).
 */
static __always_inline int fwd_written_drop(void)
{
	stat_inc(TOE_S_XDP_FWD_SLOW);
	return XDP_DROP;
}

/*
 * The fast path proper, for an established flow: route and next hop's MAC
 * (the kernel's, by bpf_fib_lookup), TTL, redirect to the egress device.
 * Whatever it cannot do the way the stack would (TTL expiring, IPv4
 * options, IPv6 extension headers, a frame over the egress MTU, no route,
 * an egress opentoe is not on, no valid neighbour) goes to the stack
 * untouched.  Returns the redirect's XDP
 * action, or a (negative) enum fwd_xmit_rc.
 */
static __noinline int fwd_xmit(struct xdp_md *ctx, const struct toe_pkt *p,
			       struct toe_fwd *fs, int from,
			       const struct toe_fwd_gen *g)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct bpf_fib_lookup fp;
	struct toe_iface *in, *out;
	struct toe_fwd_route *c = &fs->rt[from & 1];
	const struct toe_fwd_tuple *nt = nat_target(fs, from);
	__u32 ifin = ctx->ingress_ifindex, ifout, rg, cg;
	__u16 tot_len, max_len;
	long rc;

	if (p->ttl <= 1)
		return FWD_SLOW; /* the stack sends the ICMP time exceeded */
	if (p->family == TOE_AF_INET) {
		if (p->l4_off - p->l3_off != TOE_IPV4_HLEN)
			return FWD_SLOW; /* options: record route, source route... */
		tot_len = TOE_IPV4_HLEN + p->ip_payload_len;
	} else {
		if (p->n_ext)
			return FWD_SLOW; /* a routing header may name this host */
		tot_len = TOE_IPV6_HLEN + p->ip_payload_len;
	}
	if (route_cache_on(fs, g)) {
		__u8 dmac[6], smac[6];

		/*
		 * The cached route: its gen, its fields, its gen again (a CPU
		 * may be rewriting it); current only if both gens are the one
		 * in force and the packet no longer than the route passed.
		 */
		cg = c->gen;
		ifout = c->ifout;
		max_len = c->max_len;
		__builtin_memcpy(dmac, c->dmac, 6);
		__builtin_memcpy(smac, c->smac, 6);
		if (cg != g->rt_gen || c->gen != cg || tot_len > max_len)
			goto lookup;
		/* the egress may have left opentoe since (toe-loader) */
		if (!bpf_map_lookup_elem(&toe_devmap, &ifout))
			goto lookup;
		if (hop(data, data_end, p->family))
			return FWD_SLOW; /* nothing written yet */
		if (nt && nat_rewrite(data + TOE_ETH_HLEN, data_end, nt))
			return fwd_written_drop();
		__builtin_memcpy(eth->h_dest, dmac, 6);
		__builtin_memcpy(eth->h_source, smac, 6);
		fwd_count(fs, from, 1, data_end - data);
		stat_inc(TOE_S_XDP_FORWARD);
		stat_inc(TOE_S_XDP_FWD_CACHED);
		return bpf_redirect_map(&toe_devmap, ifout, XDP_DROP);
	}
lookup:
	rg = g->rt_gen; /* read before the lookup: a later bump wins */
	/* route and neighbour: the kernel's (no BPF_FIB_LOOKUP_SKIP_NEIGH) */
	rc = fib(ctx, ifin, p, data + TOE_ETH_HLEN, data_end, tot_len, 0, nt,
		 &fp);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH)
		return fib_fail(rc);
	ifout = fp.ifindex;
	in = bpf_map_lookup_elem(&toe_ifaces, &ifin);
	out = bpf_map_lookup_elem(&toe_ifaces, &ifout);
	/*
	 * Same namespace, the one that admitted the flow: ifindexes of other
	 * namespaces may share the maps.
	 */
	if (!in || !out || in->netns != out->netns || in->netns != fs->netns ||
	    !bpf_map_lookup_elem(&toe_devmap, &ifout))
		return FWD_ROUTE;
	if (out->flags & TOE_IFACE_NO_XDP_TX) {
		/* a redirect there would be dropped, or lose its checksum */
		stat_inc(TOE_S_XDP_FWD_STACK_ONLY);
		return FWD_STACK_ONLY;
	}
	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH) {
		stat_inc(TOE_S_XDP_NEIGH_MISS);
		return FWD_NEIGH_MISS; /* the stack resolves it */
	}

	route_remember(fs, from, g, rg, ifout, fp.dmac, fp.smac, tot_len);
	if (hop(data, data_end, p->family))
		return FWD_SLOW; /* nothing written yet */
	if (nt && nat_rewrite(data + TOE_ETH_HLEN, data_end, nt))
		return fwd_written_drop();
	eth = data;
	__builtin_memcpy(eth->h_dest, fp.dmac, 6);
	__builtin_memcpy(eth->h_source, fp.smac, 6);
	fwd_count(fs, from, 1, data_end - data);
	stat_inc(TOE_S_XDP_FORWARD);
	/* The entry was there a moment ago; if it went, the frame is dropped. */
	return bpf_redirect_map(&toe_devmap, ifout, XDP_DROP);
}

/* What fwd_valid() says of an admitted flow's packet. */
enum fwd_valid_rc {
	FWD_OK = 0, /* the fast path may take it */
	FWD_WRONG_IF = 1, /* not on its sender's side: the stack judges it */
	FWD_STALE = 2, /* older ruleset than admitted under, or lease out */
};

/*
 * Whether the fast path may take this packet of an admitted flow: it came
 * in on the interface its sender's side is on (ifin, the ingress ifindex
 * of either hook), in the flow's namespace (netns: the cookie of ifin's)
 * (by cookie; the SYN's ingress for the
 * client, its egress for the server), never the other one; and the flow
 * was admitted under the firewall generation in force, with toed vouching
 * for it (lease) or recently enough (TOE_FWD_UNWATCHED_NS).
 */
static __always_inline int fwd_valid(__u32 ifin, __u64 netns,
				     const struct toe_fwd *fs, int from,
				     const struct toe_fwd_gen *g)
{
	__u32 want = from == fs->client ? fs->client_if : fs->server_if;
	__u64 now;

	/*
	 * (namespace, ifindex): an interface of another namespace with the
	 * same ifindex is not the sender's side.  This is what keeps FIN/RST
	 * deletion and READMIT marking below to the flow's own interfaces.
	 */
	if (ifin != want || fs->netns != netns)
		return FWD_WRONG_IF;
	if (fs->state != TOE_FWD_ESTABLISHED || fs->gen != g->gen)
		return FWD_STALE;
	now = bpf_ktime_get_coarse_ns();
	if (now < g->lease_ns || now < fs->adm_ns + TOE_FWD_UNWATCHED_NS)
		return FWD_OK;
	return FWD_STALE;
}

/*
 * A flow admitted TOE_FWD_CT_WAIT (egress.h): once toed has made its
 * conntrack entry ESTABLISHED and window-liberal (toe_fwd_ctok), it is the
 * fast path's; until then the stack forwards it.  True if fs is now
 * TOE_FWD_ESTABLISHED.  Only this program writes fs->state here, and toed
 * only toe_fwd_ctok: no field of toe_fwd has two writers.
 */
static __always_inline bool fwd_ct_ready(struct toe_fwd *fs,
					 const struct toe_flow_key *ck)
{
	if (fs->state != TOE_FWD_CT_WAIT)
		return false;
	if (!bpf_map_lookup_elem(&toe_fwd_ctok, ck)) {
		stat_inc(TOE_S_FWD_CT_WAIT);
		return false;
	}
	bpf_map_delete_elem(&toe_fwd_ctok, ck);
	fs->adm_ns = bpf_ktime_get_ns(); /* netfilter: no coarse clock */
	fs->state = TOE_FWD_ESTABLISHED;
	stat_inc(TOE_S_FWD_CT_READY);
	return true;
}

/*
 * What ip_rcv_core() and ip_forward() check of a frame before it may be
 * routed that a flow's admission does not prove for its later packets:
 * the frame is addressed to this host (PACKET_HOST: not another host's
 * unicast MAC on a shared segment or a promiscuous interface, nor a
 * broadcast or multicast one) and, for IPv4, its header checksum holds.
 * Everything else the two check is the admission's (addresses, the route,
 * the firewall), the parser's (version, lengths, fragments) or fwd_xmit's
 * (TTL, options, MTU).  A frame that fails goes to the stack untouched,
 * counted, before the flow's state is looked at: it changes nothing of
 * the flow (a forged FIN or RST in another host's frames ends no fast
 * path).  mac: the MAC of the interface it came in on (XDP), or NULL (tc
 * reads the skb's pkt_type and VLAN tag instead: FWD_FRAME_NOT_HOST).
 */
/* What the hook knows of where a frame was sent (fwd_admitted's frame). */
enum {
	FWD_FRAME_HOST, /* to this host (tc: pkt_type PACKET_HOST, no tag) */
	FWD_FRAME_NOT_HOST, /* not (tc: another pkt_type, or a VLAN tag) */
	FWD_FRAME_MAC, /* its destination MAC says (XDP) */
};

static __always_inline bool ip4_csum_ok(const void *ip, const void *end)
{
	const __u16 *w = ip;
	__u32 sum = 0;
	int i;

	if (ip + TOE_IPV4_HLEN > end)
		return false;
		/* the 20 bytes fwd_xmit forwards (options go to the stack) */
#pragma unroll
	for (i = 0; i < TOE_IPV4_HLEN / 2; i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

static __always_inline bool fwd_frame_ok(const void *data, const void *end,
					 const struct toe_pkt *p,
					 const __u8 *mac)
{
	const __u8 *d = data;
	__u32 l3 = p->l3_off;

	if (mac && (data + 6 > end || d[0] != mac[0] || d[1] != mac[1] ||
		    d[2] != mac[2] || d[3] != mac[3] || d[4] != mac[4] ||
		    d[5] != mac[5])) {
		stat_inc(TOE_S_FWD_NOT_HOST);
		return false;
	}
	if (l3 > TOE_ETH_HLEN + 8)
		return false; /* (two VLAN tags at most: never, for the verifier) */
	if (p->family == TOE_AF_INET && p->l4_off - l3 == TOE_IPV4_HLEN &&
	    !ip4_csum_ok(data + l3, end)) {
		stat_inc(TOE_S_FWD_BAD_IPCSUM);
		return false;
	}
	return true;
}

/*
 * The admitted flow a packet of no local flow belongs to, if the fast path
 * (either hook) may take it now; NULL otherwise, and the packet goes on to
 * the stack untouched.  ifin, netns: the interface it came in on and the
 * cookie of its namespace.  ck: scratch, the flow's canonical key on
 * return; *fromp: the end that sent it (fwd_key()); *gp: toe_fwd_gen.
 * FIN and RST from the right side end the fast path (the entry goes); a
 * flow admitted under an older ruleset, or with toed's lease out, is sent
 * back to the stack for re-admission (READMIT).  Counted under the
 * xdp_fwd_* names for both hooks (the flow's state, not the hook's work).
 */
static __always_inline struct toe_fwd *
fwd_admitted(const struct toe_pkt *p, struct toe_flow_key *ck, __u32 ifin,
	     __u64 netns, int *fromp, struct toe_fwd_gen **gp, const void *data,
	     const void *data_end, int frame)
{
	struct toe_iface *in = NULL;
	struct toe_xdp_conf *conf;
	struct toe_fwd_gen *g;
	struct toe_fwd *fs;
	__u8 fl = p->tcp_flags;
	__u32 zero = 0;
	int from, rc;

	conf = bpf_map_lookup_elem(&toe_xdp_conf, &zero);
	if (!conf || !conf->fwd_devs || p->nvlan)
		return NULL;
	from = fwd_key(p, ck);
	fs = bpf_map_lookup_elem(&toe_fwd, ck);
	if (!fs)
		fs = nat_find(p, ck, &from); /* a NATed flow's server side */
	else if (nat_wrong_way(fs, from))
		return NULL;
	g = bpf_map_lookup_elem(&toe_fwd_gen, &zero);
	if (!fs || !g)
		return NULL;
	rc = fwd_valid(ifin, netns, fs, from, g);
	if (rc == FWD_WRONG_IF) {
		stat_inc(TOE_S_XDP_FWD_WRONG_IF);
		return NULL;
	}
	/*
	 * On its sender's side, but a frame the stack would not route
	 * (fwd_frame_ok: XDP reads the MAC, tc the skb's pkt_type and tag):
	 * it changes nothing of the flow.
	 */
	if (frame == FWD_FRAME_NOT_HOST) {
		stat_inc(TOE_S_FWD_NOT_HOST);
		return NULL;
	}
	if (frame == FWD_FRAME_MAC &&
	    !(in = bpf_map_lookup_elem(&toe_ifaces, &ifin)))
		return NULL;
	if (!fwd_frame_ok(data, data_end, p, in ? in->mac : NULL))
		return NULL;
	if (!(fl & (TOE_TCP_FIN | TOE_TCP_RST | TOE_TCP_SYN)) &&
	    fwd_ct_ready(fs, ck))
		rc = fwd_valid(ifin, netns, fs, from, g);
	if (fl & (TOE_TCP_FIN | TOE_TCP_RST)) {
		if (fs->state == TOE_FWD_ESTABLISHED)
			stat_inc(TOE_S_XDP_FWD_ENDED);
		fwd_ended(fs, ck, ifin,
			  fl & TOE_TCP_RST ? TOE_FR_RST : TOE_FR_FIN);
		if (fs->state == TOE_FWD_CT_WAIT)
			bpf_map_delete_elem(&toe_fwd_ctok, ck);
		bpf_map_delete_elem(&toe_fwd, ck);
		return NULL;
	}
	if (fl & TOE_TCP_SYN)
		return NULL; /* the tuple reused: the admission decides */
	if (rc == FWD_STALE) {
		if (fs->state == TOE_FWD_ESTABLISHED) {
			fwd_returned(fs, ck, ifin,
				     fs->gen != g->gen ? TOE_FR_RULESET :
							 TOE_FR_LEASE);
			/* Back through the stack until it forwards both ways again. */
			fs->seen = 0;
			fs->gen = g->gen;
			fs->state = TOE_FWD_READMIT;
			stat_inc(TOE_S_XDP_FWD_READMIT);
		}
		return NULL;
	}
	*fromp = from;
	*gp = g;
	return fs;
}

/*
 * Flows this host routes, for devices in forward mode: once the admission
 * (egress.h) has seen the stack forward a flow's SYN and SYN-ACK (so the
 * FORWARD chain accepted both), XDP forwards the flow itself, as an
 * nftables flowtable would, as long as the ruleset it was admitted under
 * is in force (fwd_admitted()).  Everything else, FIN and RST included,
 * goes through the stack.  XDP writes no entry for a packet of a flow it
 * does not know: what arrives proves nothing.
 */
static __always_inline int xdp_fwd(struct xdp_md *ctx, const struct toe_pkt *p,
				   struct toe_flow_key *ck)
{
	struct toe_fwd_gen *g = NULL;
	struct toe_fwd *fs;
	int from = 0, rc;

	fs = fwd_admitted(p, ck, ctx->ingress_ifindex, xdp_netns(ctx), &from,
			  &g, (void *)(long)ctx->data,
			  (void *)(long)ctx->data_end, FWD_FRAME_MAC);
	if (!fs || !g)
		return xdp_next(ctx);
	/* conntrack kept (fwd_ct.h), in the flow's zone */
	xdp_fwd_ct_refresh(ctx, p, &fs->ct_ns, fs->ct_zone);
	rc = fwd_xmit(ctx, p, fs, from, g);
	if (rc == XDP_REDIRECT)
		capture_xdp(ctx, p,
			    TOE_CAP_XDP_FWD); /* toectl dump: capture.h */
	if (rc >= 0)
		return rc;
	if (rc == FWD_SLOW || rc == FWD_ROUTE || rc == FWD_MTU)
		stat_inc(TOE_S_XDP_FWD_SLOW);
	fwd_returned(fs, ck, ctx->ingress_ifindex, fwd_xmit_why(rc));
	return xdp_next(ctx);
}

#endif /* __TOE_FORWARD_H */
