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
#include "capture.h"

/* tc_xmit()'s result when it leaves the skb to the stack. */
#define TC_FWD_STACK (-1)

/*
 * TTL or hop limit down by one.  IPv4: as hop(), an incremental update that
 * keeps the header's sum (so CHECKSUM_COMPLETE stays right); IPv6 has no
 * header checksum, but a CHECKSUM_COMPLETE sum covers the hop limit:
 * bpf_skb_store_bytes() with BPF_F_RECOMPUTE_CSUM keeps it right.  0, or
 * TC_FWD_STACK with nothing written (tc_xmit()'s first write).  Packet
 * pointers are invalid afterwards.
 */
static __always_inline int tc_hop(struct __sk_buff *skb,
				  const struct toe_pkt *p)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	__u8 hl = p->ttl - 1;

	if (p->family == TOE_AF_INET)
		return hop(data, data_end, p->family) ? TC_FWD_STACK : 0;
	if (toe_fault_hop ||
	    bpf_skb_store_bytes(skb, p->ttl_off, &hl, 1, BPF_F_RECOMPUTE_CSUM))
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

/* Offsets of the fields tc_nat() rewrites (IPv4 without options). */
#define TC_NAT_IP (TOE_ETH_HLEN)
#define TC_NAT_IPCSUM (TC_NAT_IP + offsetof(struct iphdr, check))
#define TC_NAT_ADDRS (TC_NAT_IP + offsetof(struct iphdr, saddr))
#define TC_NAT_TCP (TC_NAT_IP + TOE_IPV4_HLEN)
#define TC_NAT_TCPCSUM (TC_NAT_TCP + offsetof(struct tcphdr, check))

/*
 * NAT on an skb (bpf/nat.h's rewrite, with the kernel's helpers): the
 * packet leaves as t reversed.  The skb may be CHECKSUM_PARTIAL (GSO/TSO,
 * the TCP checksum field holding the pseudo-header's sum), COMPLETE or
 * NONE: bpf_l3_csum_replace() for the IPv4 header, bpf_l4_csum_replace()
 * with BPF_F_PSEUDO_HDR for the addresses (the pseudo-header: right for
 * PARTIAL, and skb->csum kept for COMPLETE) and without it for the ports
 * (which PARTIAL's checksum does not hold yet), then the fields.  0, -1
 * if the headers are not there (nothing written), or -2 if a helper
 * failed half-way (the skb must not go on).  Packet pointers are invalid
 * afterwards.
 */
static __always_inline int tc_nat(struct __sk_buff *skb,
				  const struct toe_fwd_tuple *t)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct iphdr *iph = data + TC_NAT_IP;
	struct tcphdr *th = (void *)(iph + 1);
	__u32 a0[2], a1[2] = { t->daddr, t->saddr };
	__u16 p0[2], p1[2] = { t->dport, t->sport };
	int i;

	if ((void *)(th + 1) > data_end)
		return -1;
	a0[0] = iph->saddr;
	a0[1] = iph->daddr;
	p0[0] = th->source;
	p0[1] = th->dest;
	for (i = 0; i < 2; i++) {
		if (bpf_l3_csum_replace(skb, TC_NAT_IPCSUM, a0[i], a1[i], 4) ||
		    bpf_l4_csum_replace(skb, TC_NAT_TCPCSUM, a0[i], a1[i],
					BPF_F_PSEUDO_HDR | 4) ||
		    bpf_l4_csum_replace(skb, TC_NAT_TCPCSUM, p0[i], p1[i], 2))
			return -2;
	}
	if (bpf_skb_store_bytes(skb, TC_NAT_ADDRS, a1, sizeof(a1), 0) ||
	    bpf_skb_store_bytes(skb, TC_NAT_TCP, p1, sizeof(p1), 0))
		return -2;
	return 0;
}

/*
 * Whether every header tc_xmit() writes is in the skb's linear part:
 * Ethernet and the IP header, and TCP's for a NATed flow (checked before
 * the first write).
 */
static __always_inline bool tc_writable(struct __sk_buff *skb,
					const struct toe_pkt *p, bool nat)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	__u32 need = TOE_ETH_HLEN +
		     (p->family == TOE_AF_INET ? TOE_IPV4_HLEN : TOE_IPV6_HLEN);

	if (nat)
		need = TC_NAT_TCP + sizeof(struct tcphdr);
	return data + need <= data_end;
}

/*
 * Route, MTU, TTL, MACs and the redirect for one skb of an admitted flow
 * (tc_fwd_path()), sent by end from: a NATed flow's routed as it leaves
 * and translated (tc_nat()) once the redirect is decided.  Every check
 * comes before the first write, and that write (the TTL) writes nothing
 * when it fails: what goes to the stack is the skb as it came.  A step
 * failing after it (which the checks rule out) drops the skb rather than
 * hand the stack a half-forwarded one.  Returns the redirect's
 * TC_ACT_REDIRECT, TCX_DROP, or -reason (enum toe_fwd_reason) for the
 * stack after counting why.
 */
static __noinline int tc_xmit(struct __sk_buff *skb, const struct toe_pkt *p,
			      struct toe_fwd *fs, int from)
{
	const struct toe_fwd_tuple *nt = nat_target(fs, from);
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct bpf_redir_neigh nh = {};
	struct toe_iface *in, *out;
	struct bpf_fib_lookup fp;
	__u32 ifin = skb->ingress_ifindex, ifout, mtu = 0;
	__u32 segs = skb->gso_segs ? skb->gso_segs : 1, len = skb->len;
	__u32 why = TOE_FR_SLOW; /* the reason, when it goes to the stack */
	long rc;

	if (p->ttl <= 1 || p->nvlan ||
	    (p->family == TOE_AF_INET ? p->l4_off - p->l3_off != TOE_IPV4_HLEN :
					p->n_ext))
		goto slow; /* ICMP time exceeded, options, extension headers */
	rc = fib(skb, ifin, p, data + TOE_ETH_HLEN, data_end, 0, 0, nt, &fp);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH) {
		why = fwd_xmit_why(fib_fail(rc));
		goto slow;
	}
	ifout = fp.ifindex;
	in = bpf_map_lookup_elem(&toe_ifaces, &ifin);
	out = bpf_map_lookup_elem(&toe_ifaces, &ifout);
	/* as fwd_xmit: both opentoe's, in the namespace that admitted it */
	if (!in || !out || in->netns != out->netns || in->netns != fs->netns) {
		why = TOE_FR_ROUTE;
		goto slow;
	}
	/*
	 * GSO: each segment against the egress MTU, as ip_forward() does
	 * (without BPF_MTU_CHK_SEGS any GSO skb passes)
	 */
	if (bpf_check_mtu(skb, ifout, &mtu, 0, BPF_MTU_CHK_SEGS)) {
		stat_inc(TOE_S_TC_FWD_MTU);
		return -TOE_FR_MTU;
	}
	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH && (out->flags & TOE_IFACE_PEER)) {
		/* the stack resolves it; the next skb finds it */
		stat_inc(TOE_S_TC_FWD_NEIGH_MISS);
		return -TOE_FR_NEIGH;
	}
	if (!tc_writable(skb, p, nt) || tc_hop(skb, p))
		goto slow; /* nothing written */
	/* written: from here on not for the stack */
	if ((nt && tc_nat(skb, nt)) || (rc == BPF_FIB_LKUP_RET_SUCCESS &&
					tc_macs(skb, fp.dmac, fp.smac))) {
		stat_inc(TOE_S_TC_FWD_SLOW);
		return TCX_DROP;
	}
	fwd_count(fs, from, segs, len);
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
	return -(int)why;
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

	/*
	 * not_host: another host's frame (PACKET_OTHERHOST, broadcast,
	 * multicast), or one whose VLAN tag the kernel moved into the skb
	 * before tc: the stack judges it (its sub-interface's, or dropped).
	 */
	fs = fwd_admitted(
		p, ck, skb->ingress_ifindex, skb_netns(skb), &from, &g,
		(void *)(long)skb->data, (void *)(long)skb->data_end,
		skb->pkt_type != 0 /* PACKET_HOST */ || skb->vlan_present ?
			FWD_FRAME_NOT_HOST :
			FWD_FRAME_HOST);
	if (!fs || !g)
		return TCX_NEXT;
	/* conntrack kept (fwd_ct.h), in the flow's zone */
	tc_fwd_ct_refresh(skb, p, &fs->ct_ns, fs->ct_zone);
	rc = tc_xmit(skb, p, fs, from);
	if (rc == TOE_TC_ACT_REDIRECT)
		capture_tc(skb, p, TOE_CAP_TC_FWD); /* toectl dump: capture.h */
	if (rc >= 0)
		return rc;
	fwd_returned(fs, ck, skb->ingress_ifindex, -rc); /* fwd_events.h */
	return TCX_NEXT;
}

#endif /* __TOE_TC_FWD_H */
