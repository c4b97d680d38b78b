// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * opentoe datapath: the cgroup sock_ops program that decides, at
 * connection time, which flows are offloaded (the 2005 patch's
 * tcp_connect_offload / tcp_listen_offload hooks, without touching TCP),
 * and the XDP program that accounts and steers offloaded flows on the
 * lower device (its toe_receive_skb path), with the host stack still in
 * charge of everything policy does not name; and, for connections whose
 * two ends are sockets of this host, the sk_msg program that moves each
 * send straight into the peer socket (policy action bypass).
 */
#include "common.h"
#include "toe_parse.h"
#include "maps_policy.h"
#include "maps_flows.h"
#include "maps_stats.h"
#include "maps_xdp.h"
#include "maps_forward.h"
#include "maps_bypass.h"
#include "stats.h"
#include "policy.h"
#include "bypass.h"
#include "flows.h"
#include "xdp.h"
#include "forward.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define TOE_TC_PULL	256	/* toe_tc: bytes made linear for the parser */

/* Every event of a TCP socket of the cgroup: flows.h. */
SEC("sockops")
int toe_sockops(struct bpf_sock_ops *skops)
{
	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
		on_established(skops, TOE_DIR_ACTIVE);
		break;
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		on_established(skops, TOE_DIR_PASSIVE);
		break;
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
		on_listen(skops);
		break;
	case BPF_SOCK_OPS_STATE_CB:
		on_state(skops);
		break;
	case BPF_SOCK_OPS_RTT_CB:
	case BPF_SOCK_OPS_RETRANS_CB:
		on_update(skops);
		break;
	}
	return 1;
}

/* Every send of a socket in toe_bypass: to the peer, or over TCP (bypass.h). */
SEC("sk_msg")
int toe_skmsg(struct sk_msg_md *msg)
{
	return bypass_msg(msg);
}

/* Never attached: toe-loader unload's probe of unread bypassed data (bypass.h). */
SEC("xdp")
int toe_byp_probe(struct xdp_md *ctx)
{
	return bypass_probe(ctx);
}

/* ----------------------------------------------------------------- XDP */

SEC("xdp")
int toe_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct toe_flow_key k = {};
	struct toe_flow *f;
	struct toe_pkt p;
	int res;

	res = toe_parse(data, data_end, &p);
	if (res != TOE_P_TCP) {
		/* Malformed packets are counted, never dropped: the stack decides. */
		if (res != TOE_P_NOT_TCP)
			stat_inc(res);
		return xdp_next(ctx);
	}
	ingress_key(&p, &k);
	f = flow_lookup(&k);
	if (!f)
		return xdp_fwd(ctx, &p, &k);	/* not ours: perhaps routed (k: scratch) */
	if (f->decision != TOE_ACT_OFFLOAD)
		return xdp_next(ctx);	/* host flow: no map write */

	count_pkts(&f->xdp_packets, &f->xdp_bytes, 1, data_end - data);
	stat_inc(TOE_S_XDP_FLOW_HIT);
	return steer_local(ctx, f->dev);
}

/* ------------------------------------------------------------ tc ingress */

/*
 * "toe-loader load --hook tc": the same accounting as toe_xdp's, on the
 * tcx ingress hook instead of XDP.  XDP sees one frame per packet before
 * GRO; on a veth, native XDP also makes the kernel turn TSO off on the
 * peer (veth_fix_features), and skb-mode XDP copies every GRO packet into
 * one linear buffer, so a host flow pays for opentoe even though opentoe
 * does nothing with it.  tc ingress runs after GRO on the skb as it is:
 * offloads stay on, and one lookup covers a whole GRO packet (gso_segs
 * segments).  No steering here: cpumap and devmap redirects are XDP's.
 *
 * The skb's linear part may hold fewer bytes than the datagram (the
 * payload is in page fragments): the headers are pulled in when they are
 * not all there, and "datagram longer than the frame" is judged against
 * skb->len.  Returns TCX_NEXT: whatever else is attached runs, and at the
 * end of the chain the packet goes on into the stack untouched.
 */
static __noinline int tc_parse(struct __sk_buff *skb, struct toe_pkt *p)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	__u32 ip_end;
	int res;

	res = toe_parse(data, data_end, p);
	if (res != TOE_P_TRUNC_IP)
		return res;
	/* Headers complete (*p filled); the datagram's end against the skb's. */
	ip_end = p->ip_payload_len +
		 (p->family == TOE_AF_INET ? p->l4_off : p->l3_off + TOE_IPV6_HLEN);
	return ip_end <= skb->len ? TOE_P_TCP : res;
}

SEC("tc")
int toe_tc(struct __sk_buff *skb)
{
	struct toe_flow_key k = {};
	struct toe_flow *f;
	struct toe_pkt p;
	__u32 linear = skb->data_end - skb->data, segs;
	int res;

	res = tc_parse(skb, &p);
	if ((res == TOE_P_TRUNC_L2 || res == TOE_P_TRUNC_L3 || res == TOE_P_TRUNC_L4) &&
	    skb->len > linear) {
		/* Headers in the fragments: rare (GRO keeps them linear). */
		bpf_skb_pull_data(skb, skb->len < TOE_TC_PULL ? skb->len : TOE_TC_PULL);
		res = tc_parse(skb, &p);
	}
	if (res != TOE_P_TCP) {
		if (res != TOE_P_NOT_TCP)
			stat_inc(res);
		return TCX_NEXT;
	}
	ingress_key(&p, &k);
	f = flow_lookup(&k);
	if (!f || f->decision != TOE_ACT_OFFLOAD)
		return TCX_NEXT;	/* host flow: no map write */
	segs = skb->gso_segs ? skb->gso_segs : 1;
	count_pkts(&f->xdp_packets, &f->xdp_bytes, segs, skb->len);
	stat_add(TOE_S_XDP_FLOW_HIT, segs);
	return TCX_NEXT;
}
