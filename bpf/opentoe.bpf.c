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
 *
 * This file is the list of entry points; the machinery is in one header
 * per concern (policy.h, flows.h, bypass.h, xdp.h, forward.h, egress.h,
 * tc.h, stats.h, capture.h; the forward path is one pipeline for both
 * hooks over ctx.h: forward.h, fwd_xmit.h, fwd_ct.h) and the maps in one header per
 * concern (maps_*.h).  One object, one skeleton.
 */
#include "common.h"
#include "toe_parse.h"
#include "stats.h"
#include "policy.h"
#include "bypass.h"
#include "flows.h"
#include "xdp.h"
#include "forward.h"
#include "tc.h"
#include "egress.h"
#include "capture.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

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

/* Never attached: unload's probe of unread bypassed data (bypass.h). */
SEC("xdp")
int toe_byp_probe(struct xdp_md *ctx)
{
	return bypass_probe(ctx);
}

/*
 * Never attached: toed's demotion of a module device's flow (tid.h), run
 * with BPF_PROG_TEST_RUN on a struct toe_tid_demote.
 */
SEC("xdp")
int toe_tid_demote(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct toe_tid_demote *a = data;

	if ((void *)(a + 1) > data_end)
		return XDP_ABORTED;
	tid_demote(a);
	return XDP_PASS;
}

/*
 * Every received frame: a packet of an offloaded flow of this host is
 * counted in its record and steered (xdp.h); one of no local flow may be
 * of a flow this host routes (forward.h); everything else goes on
 * untouched, to the chained program or the stack.
 */
SEC("xdp")
int toe_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct toe_flow_key k = {};
	struct toe_flow *f;
	struct toe_pkt p;
	int res;

	f = NULL;
	res = toe_parse(data, data_end, &p);
	if (res == TOE_P_TCP) {
		ingress_key(&p, &k);
		if (flow_maybe(&k)) {
			k.netns = xdp_netns(ctx);
			f = bpf_map_lookup_elem(&toe_flows, &k);
		}
	} else if (toe_parse_udp(res, data, data_end, data_end - data, &p)) {
		stat_parse(res);
		return xdp_next(ctx);
	}
	/* Not ours: perhaps routed (k: scratch); UDP only ever is. */
	if (!f)
		return fwd_path(ctx, TOE_FH_XDP, &p, &k);
	if (f->decision != TOE_ACT_OFFLOAD)
		return xdp_next(ctx); /* host flow: no map write */

	count_pkts(&f->xdp_packets, &f->xdp_bytes, 1, data_end - data);
	stat_inc(TOE_S_XDP_FLOW_HIT);
	/* toectl dump: capture.h */
	capture(ctx, TOE_FH_XDP, &p, TOE_CAP_XDP_LOCAL);
	return steer_local(ctx, f->dev);
}

/*
 * toe_xdp's work on tc ingress, after GRO, instead of XDP (tc.h): a packet
 * of an offloaded flow is counted; one of no local flow may be of a flow
 * this host routes, forwarded with the skb kept whole (forward.h).
 */
SEC("tc")
int toe_tc(struct __sk_buff *skb)
{
	struct toe_flow_key k = {};
	struct toe_flow *f;
	struct toe_pkt p;
	__u32 segs;
	int res;

	f = NULL;
	res = tc_headers(skb, &p);
	if (res == TOE_P_TCP) {
		ingress_key(&p, &k);
		if (flow_maybe(&k)) {
			k.netns = skb_netns(skb);
			f = bpf_map_lookup_elem(&toe_flows, &k);
		}
	} else if (res != TC_P_UDP) {
		stat_parse(res);
		return TCX_NEXT;
	}
	/* Not ours: perhaps routed (k: scratch), forward.h; UDP only ever is. */
	if (!f)
		return fwd_path(skb, TOE_FH_TC, &p, &k);
	if (f->decision != TOE_ACT_OFFLOAD)
		return TCX_NEXT; /* host flow: no map write */
	segs = skb->gso_segs ? skb->gso_segs : 1;
	count_pkts(&f->xdp_packets, &f->xdp_bytes, segs, skb->len);
	stat_add(TOE_S_XDP_FLOW_HIT, segs);
	/* toectl dump: capture.h */
	capture(skb, TOE_FH_TC, &p, TOE_CAP_TC_LOCAL);
	return TCX_NEXT;
}

/*
 * The forward path's admission, on tcx egress of every interface XDP is
 * on: what the stack itself forwarded admits a routed flow (egress.h).
 */
SEC("tc")
int toe_egress(struct __sk_buff *skb)
{
	return fwd_egress(skb);
}

/*
 * The forward path's admission at the end of the stack's FORWARD hook
 * (kernel 6.4 on): what the stack forwarded and every FORWARD chain
 * accepted (egress.h).  libbpf 1.1 does not know SEC("netfilter"):
 * toe-loader sets its type and attach type before the load, or does not
 * load it where the kernel has no such programs.
 */
SEC("netfilter")
int toe_nf_fwd(struct bpf_nf_ctx *ctx)
{
	return nf_fwd_admit(ctx);
}
