/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, the forward path at tc ingress ("steer forward" on a
 * device loaded with --hook tc, the default for a veth): the skb is kept
 * as it is, GSO and checksum state included, so one program run moves a
 * whole GRO or TSO packet (up to 64 KiB) and nothing is copied.  On a
 * veth XDP is the wrong hook (every frame copied into a page-pool page,
 * TSO off on the peer, and a redirected frame loses CHECKSUM_PARTIAL).
 *
 * The flow's judgement is XDP's (fwd_admitted() in forward.h: admission by
 * the stack, the firewall generation, toed's lease, FIN/RST, the sender's
 * interface and namespace).  Then, for the packet: TTL and checksum, a
 * route lookup with the kernel's neighbour table (no route cache: one
 * lookup per skb, which is up to 64 KiB, so route and neighbour changes
 * apply at the next skb), the egress MTU by bpf_check_mtu() (GSO-aware:
 * the segments' size, not the skb's), MAC rewrite and:
 *   - bpf_redirect_peer() when the egress is a veth whose peer is in
 *     another namespace (TOE_IFACE_PEER): straight into the peer's ingress
 *     in its namespace, skipping this device's transmit and qdisc (and
 *     tcpdump on it) and a second backlog pass;
 *   - bpf_redirect() to any other egress with a valid neighbour;
 *   - bpf_redirect_neigh() without one: the kernel resolves the next hop.
 * Whatever it cannot do as the stack would goes to the stack untouched
 * and is counted by reason (TOE_S_TC_FWD_*).
 */
#ifndef __TOE_TC_FWD_H
#define __TOE_TC_FWD_H

#include "common.h"
#include "toe_parse.h"
#include "maps_forward.h"
#include "stats.h"
#include "forward.h"
#include "tc.h"

/* tc_xmit()'s result when it leaves the skb to the stack. */
#define TC_FWD_STACK (-1)

/*
 * TTL or hop limit down by one.  IPv4: as hop(), an incremental update that
 * keeps the header's sum (so CHECKSUM_COMPLETE stays right); IPv6 has no
 * header checksum, but a CHECKSUM_COMPLETE sum covers the hop limit:
 * bpf_skb_store_bytes() with BPF_F_RECOMPUTE_CSUM keeps it right.  0, or
 * TC_FWD_STACK.  Packet pointers are invalid afterwards.
 */
static __always_inline int tc_hop(struct __sk_buff *skb,
				  const struct toe_pkt *p)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	__u8 hl = p->ttl - 1;

	if (p->family == TOE_AF_INET)
		return hop(data, data_end, p->family) ? TC_FWD_STACK : 0;
	if (bpf_skb_store_bytes(skb, p->ttl_off, &hl, 1, BPF_F_RECOMPUTE_CSUM))
		return TC_FWD_STACK;
	return 0;
}

/* The MACs the skb leaves with (direct write: the headers are linear). */
static __always_inline int tc_macs(struct __sk_buff *skb, const __u8 *dmac,
				   const __u8 *smac)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return TC_FWD_STACK;
	__builtin_memcpy(eth->h_dest, dmac, 6);
	__builtin_memcpy(eth->h_source, smac, 6);
	return 0;
}

/*
 * Route, MTU, TTL, MACs and the redirect for one skb of an admitted flow
 * (tc_fwd_path()).  Returns the redirect's TC_ACT_REDIRECT, or
 * TC_FWD_STACK after counting why.
 */
static __noinline int tc_xmit(struct __sk_buff *skb, const struct toe_pkt *p,
			      struct toe_fwd *fs)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct bpf_redir_neigh nh = {};
	struct toe_iface *in, *out;
	struct bpf_fib_lookup fp;
	__u32 ifin = skb->ingress_ifindex, ifout, mtu = 0;
	__u32 segs = skb->gso_segs ? skb->gso_segs : 1, len = skb->len;
	long rc;

	/* NAT: XDP's alone so far (bpf/nat.h); the stack translates it here */
	if (fs->nat || p->ttl <= 1 || p->nvlan ||
	    (p->family == TOE_AF_INET ? p->l4_off - p->l3_off != TOE_IPV4_HLEN :
					p->n_ext))
		goto slow; /* ICMP time exceeded, options, extension headers */
	rc = fib(skb, ifin, p, data + TOE_ETH_HLEN, data_end, 0, 0, NULL, &fp);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH)
		goto slow;
	ifout = fp.ifindex;
	in = bpf_map_lookup_elem(&toe_ifaces, &ifin);
	out = bpf_map_lookup_elem(&toe_ifaces, &ifout);
	/* as fwd_xmit: both opentoe's, in the namespace that admitted it */
	if (!in || !out || in->netns != out->netns || in->netns != fs->netns)
		goto slow;
	/*
	 * GSO: each segment against the egress MTU, as ip_forward() does
	 * (without BPF_MTU_CHK_SEGS any GSO skb passes)
	 */
	if (bpf_check_mtu(skb, ifout, &mtu, 0, BPF_MTU_CHK_SEGS)) {
		stat_inc(TOE_S_TC_FWD_MTU);
		return TC_FWD_STACK;
	}
	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH && (out->flags & TOE_IFACE_PEER)) {
		/* the stack resolves it; the next skb finds it */
		stat_inc(TOE_S_TC_FWD_NEIGH_MISS);
		return TC_FWD_STACK;
	}
	if (rc == BPF_FIB_LKUP_RET_SUCCESS && tc_macs(skb, fp.dmac, fp.smac))
		goto slow;
	if (tc_hop(skb, p))
		goto slow;
	count_pkts(&fs->packets, &fs->bytes, segs, len);
	stat_inc(TOE_S_TC_FORWARD);
	stat_add(TOE_S_TC_FWD_SEGS, segs);
	if (out->flags & TOE_IFACE_PEER) {
		stat_inc(TOE_S_TC_FWD_PEER);
		return bpf_redirect_peer(ifout, 0);
	}
	if (rc == BPF_FIB_LKUP_RET_SUCCESS)
		return bpf_redirect(ifout, 0);
	stat_inc(TOE_S_TC_FWD_NEIGH);
	if (p->family == TOE_AF_INET) {
		nh.nh_family = AF_INET;
		nh.ipv4_nh = fp.ipv4_dst;
	} else {
		nh.nh_family = AF_INET6;
		__builtin_memcpy(nh.ipv6_nh, fp.ipv6_dst, 16);
	}
	return bpf_redirect_neigh(ifout, &nh, sizeof(nh), 0);
slow:
	stat_inc(TOE_S_TC_FWD_SLOW);
	return TC_FWD_STACK;
}

/*
 * A packet of no local flow at tc ingress: forwarded by tc_xmit() if it
 * belongs to an admitted routed flow the fast path may take now
 * (fwd_admitted()), else TCX_NEXT (the rest of the chain, then the stack).
 * ck: scratch.
 */
static __always_inline int tc_fwd_path(struct __sk_buff *skb,
				       const struct toe_pkt *p,
				       struct toe_flow_key *ck)
{
	struct toe_fwd_gen *g = NULL;
	struct toe_fwd *fs;
	int from = 0, rc;

	fs = fwd_admitted(p, ck, skb->ingress_ifindex, skb_netns(skb), &from,
			  &g);
	if (!fs || !g)
		return TCX_NEXT;
	rc = tc_xmit(skb, p, fs);
	return rc < 0 ? TCX_NEXT : rc;
}

#endif /* __TOE_TC_FWD_H */
