/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, admission to the forward path: toe_egress, on the tcx
 * egress hook of every interface opentoe's XDP is on, sees what the host
 * stack forwards and nothing else that arrives.  A packet there with
 * skb->ingress_ifindex set and different from skb->ifindex was routed by
 * this host from one of its interfaces out of another: it passed
 * PREROUTING, the route lookup, FORWARD and POSTROUTING (conntrack and
 * every nftables or iptables chain) and was not dropped.  Packets XDP
 * redirects never come here (a devmap redirect transmits without tc), nor
 * do those the stack dropped.  So:
 *
 *   the stack forwarded a SYN from A out of B   -> toe_fwd_half (egress_syn)
 *   then its SYN-ACK from B out of A, acking it -> toe_fwd     (egress_synack)
 *
 * and only that admits a flow, with A as its client's interface and B as
 * its server's.  A sender controls what arrives on its own side, never what
 * the stack forwards, nor the interface the other side's packets come in
 * on.  A flow the fast path suspended (TOE_FWD_READMIT: the ruleset
 * changed, or toed's lease ran out) is admitted again the same way, by the
 * stack forwarding one of its packets each way (egress_readmit).
 */
#ifndef __TOE_EGRESS_H
#define __TOE_EGRESS_H

#include "common.h"
#include "toe_parse.h"
#include "maps_forward.h"
#include "maps_policy.h"
#include "maps_xdp.h"
#include "policy.h"
#include "stats.h"
#include "tc.h"
#include "forward.h"

/*
 * The stack forwarded a SYN from iif out of oif: if policy offloads it
 * (seen from the client: local = the SYN's sender) on a present device in
 * forward mode, its handshake goes into toe_fwd_half.  toe_fwd is not
 * touched: a SYN never evicts or resets an admitted flow.  Not inlined:
 * the policy search has its own stack.
 */
static __noinline int egress_syn(const struct toe_pkt *p,
				 const struct toe_flow_key *ck, int from,
				 __u32 iif, __u32 oif)
{
	struct toe_flow_key k = {};
	struct toe_fwd_half h = {};
	struct toe_iface *out;
	struct toe_fwd_gen *g;
	struct decision d;
	struct toe_dev *dev;
	__u32 idx = 0;

	out = bpf_map_lookup_elem(&toe_ifaces, &oif);
	g = bpf_map_lookup_elem(&toe_fwd_gen, &idx);
	if (!out || !g)
		return 0; /* not an interface the fast path sends on */
	k.family = p->family;
	__builtin_memcpy(k.laddr, p->saddr, 16);
	__builtin_memcpy(k.raddr, p->daddr, 16);
	k.lport = bpf_ntohs(p->sport);
	k.rport = bpf_ntohs(p->dport);
	decide(&k, 0, &d);
	if (d.action != TOE_ACT_OFFLOAD)
		return 0;
	idx = d.dev;
	dev = bpf_map_lookup_elem(&toe_devs, &idx);
	if (!dev || !(dev->flags & TOE_DEVF_PRESENT) ||
	    dev->steer != TOE_STEER_FORWARD)
		return 0;
	h.start_ns = bpf_ktime_get_ns();
	h.client_isn = bpf_ntohl(p->seq);
	h.dev = d.dev;
	h.rule = d.rule;
	h.policy = (__u32)d.serial;
	h.client_if = iif;
	h.server_if = oif;
	h.gen = g->gen;
	h.state = TOE_FWD_SYN_SENT;
	h.client = from;
	h.reason = d.reason;
	h.netns = out->netns;
	bpf_map_update_elem(&toe_fwd_half, ck, &h, BPF_ANY);
	stat_inc(TOE_S_FWD_HALF);
	return 0;
}

/*
 * The stack forwarded a SYN-ACK from iif out of oif: if it answers a SYN
 * it forwarded the other way (same flow, sent by the other end, from the
 * SYN's egress interface out of its ingress one, acking the SYN's
 * sequence number), the flow is admitted.  Admitted under the generation
 * of the SYN: if the ruleset changed in between, XDP sends it back through
 * the stack (READMIT) before its first fast-path packet.
 */
static __noinline int egress_synack(const struct toe_pkt *p,
				    const struct toe_flow_key *ck, int from,
				    __u32 iif, __u32 oif)
{
	struct toe_fwd_half *h;
	struct toe_fwd v = {};

	h = bpf_map_lookup_elem(&toe_fwd_half, ck);
	if (!h || from == h->client || iif != h->server_if ||
	    oif != h->client_if || bpf_ntohl(p->ack_seq) != h->client_isn + 1)
		return 0;
	v.start_ns = h->start_ns;
	v.est_ns = bpf_ktime_get_ns();
	v.adm_ns = bpf_ktime_get_coarse_ns();
	v.client_isn = h->client_isn;
	v.server_isn = bpf_ntohl(p->seq);
	v.dev = h->dev;
	v.rule = h->rule;
	v.policy = h->policy;
	v.client_if = h->client_if;
	v.server_if = h->server_if;
	v.gen = h->gen;
	v.state = TOE_FWD_ESTABLISHED;
	v.client = h->client;
	v.reason = h->reason;
	v.netns = h->netns;
	bpf_map_update_elem(&toe_fwd, ck, &v, BPF_ANY);
	bpf_map_delete_elem(&toe_fwd_half, ck);
	stat_inc(TOE_S_XDP_FWD_FLOWS);
	return 0;
}

/*
 * The stack forwarded a packet of a suspended flow (READMIT): if it went
 * the way the flow's direction says (client's interface out of the
 * server's, or back), that direction is proven under the generation in
 * force; both proven under one generation, the flow is admitted again.
 */
static __always_inline void egress_readmit(const struct toe_flow_key *ck,
					   int from, __u32 iif, __u32 oif,
					   __u32 gen)
{
	struct toe_fwd *fs;
	__u8 bit;

	fs = bpf_map_lookup_elem(&toe_fwd, ck);
	if (!fs || fs->state != TOE_FWD_READMIT)
		return;
	if (from == fs->client && iif == fs->client_if && oif == fs->server_if)
		bit = TOE_FWD_SEEN_C2S;
	else if (from != fs->client && iif == fs->server_if &&
		 oif == fs->client_if)
		bit = TOE_FWD_SEEN_S2C;
	else
		return;
	if (fs->gen != gen) {
		/* The ruleset changed again: prove both ways under this one. */
		fs->gen = gen;
		fs->seen = 0;
	}
	fs->seen |= bit;
	if (fs->seen != (TOE_FWD_SEEN_C2S | TOE_FWD_SEEN_S2C))
		return;
	fs->adm_ns = bpf_ktime_get_coarse_ns();
	fs->readmits++;
	fs->state = TOE_FWD_ESTABLISHED;
	stat_inc(TOE_S_FWD_READMITTED);
}

/*
 * toe_egress: every packet leaving an interface opentoe's XDP is on.  Only
 * what the stack forwarded (ingress_ifindex set, and not this interface)
 * and only TCP of a host with a forward device is looked at; the packet
 * always goes on (TCX_NEXT), untouched.
 */
static __always_inline int fwd_egress(struct __sk_buff *skb)
{
	__u32 iif = skb->ingress_ifindex, oif = skb->ifindex, zero = 0;
	struct toe_flow_key ck = {};
	struct toe_xdp_conf *conf;
	struct toe_fwd_gen *g;
	struct toe_pkt p;
	int from;
	__u8 fl;

	if (!iif || iif == oif)
		return TCX_NEXT; /* sent by this host, or not routed */
	conf = bpf_map_lookup_elem(&toe_xdp_conf, &zero);
	g = bpf_map_lookup_elem(&toe_fwd_gen, &zero);
	if (!conf || !conf->fwd_devs || !g)
		return TCX_NEXT;
	if (tc_headers(skb, &p) != TOE_P_TCP || p.nvlan)
		return TCX_NEXT;
	from = fwd_key(&p, &ck);
	fl = p.tcp_flags &
	     (TOE_TCP_SYN | TOE_TCP_ACK | TOE_TCP_RST | TOE_TCP_FIN);
	if (fl == TOE_TCP_SYN)
		egress_syn(&p, &ck, from, iif, oif);
	else if (fl == (TOE_TCP_SYN | TOE_TCP_ACK))
		egress_synack(&p, &ck, from, iif, oif);
	else if (fl & (TOE_TCP_RST | TOE_TCP_FIN))
		bpf_map_delete_elem(&toe_fwd_half, &ck);
	else
		egress_readmit(&ck, from, iif, oif, g->gen);
	return TCX_NEXT;
}

#endif /* __TOE_EGRESS_H */
