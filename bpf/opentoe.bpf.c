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

static __always_inline int xdp_next(struct xdp_md *ctx)
{
	__u32 slot = ctx->ingress_ifindex;

	if (slot < TOE_XDP_CHAIN_SLOTS) {
		bpf_tail_call(ctx, &toe_xdp_next, slot);
		/* Empty slot: nothing chained on this interface. */
	}
	return XDP_PASS;
}

/*
 * A packet of an offloaded flow of this host: "steer cpu N" devices move
 * its receive work to CPU N through the cpumap; if CPU N has no entry the
 * redirect fails and the packet is passed here, as with "steer account".
 * ("steer forward" is for flows this host routes: an offloaded local flow
 * of such a device is only accounted.)
 */
static __always_inline int steer_local(struct xdp_md *ctx, __u32 idx)
{
	struct toe_dev *dev = bpf_map_lookup_elem(&toe_devs, &idx);
	long rc;

	if (!dev || dev->steer != TOE_STEER_CPU || !(dev->flags & TOE_DEVF_PRESENT))
		return xdp_next(ctx);
	rc = bpf_redirect_map(&toe_cpumap, dev->steer_cpu, XDP_PASS);
	if (rc != XDP_REDIRECT)
		return xdp_next(ctx);
	stat_inc(TOE_S_XDP_REDIRECT_CPU);
	return XDP_REDIRECT;
}

/* ------------------------------------------------------- XDP forwarding */

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
static __always_inline int fwd_key(const struct toe_pkt *p, struct toe_flow_key *k)
{
	int c = addr_cmp(p->saddr32, p->daddr32);
	bool src_low = c < 0 || (c == 0 && bpf_ntohs(p->sport) <= bpf_ntohs(p->dport));

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

/*
 * Route lookup as the stack would do it for this packet on this ingress
 * interface (policy routing included; refused when forwarding is off on
 * it).  BPF_FIB_LOOKUP_SKIP_NEIGH: the next hop's MAC comes from toe_neigh,
 * which toed mirrors from the kernel.  tot_len != 0 also checks the egress
 * MTU (BPF_FIB_LKUP_RET_FRAG_NEEDED).
 */
static __always_inline long fib(struct xdp_md *ctx, const struct toe_pkt *p,
				 const void *ip, const void *data_end,
				 __u16 tot_len, struct bpf_fib_lookup *fp)
{
	__builtin_memset(fp, 0, sizeof(*fp));
	fp->ifindex = ctx->ingress_ifindex;
	fp->l4_protocol = TOE_IPPROTO_TCP;
	fp->sport = p->sport;
	fp->dport = p->dport;
	fp->tot_len = tot_len;
	if (p->family == TOE_AF_INET) {
		const struct iphdr *iph = ip;

		if ((void *)(iph + 1) > data_end)
			return -1;
		fp->family = AF_INET;
		fp->tos = iph->tos;
		fp->ipv4_src = p->saddr32[0];
		fp->ipv4_dst = p->daddr32[0];
	} else {
		const struct ipv6hdr *ip6 = ip;

		if ((void *)(ip6 + 1) > data_end)
			return -1;
		fp->family = AF_INET6;
		fp->flowinfo = *(const __be32 *)ip6 & bpf_htonl(0x0fffffff);
		__builtin_memcpy(fp->ipv6_src, p->saddr, 16);
		__builtin_memcpy(fp->ipv6_dst, p->daddr, 16);
	}
	return bpf_fib_lookup(ctx, fp, sizeof(*fp), BPF_FIB_LOOKUP_SKIP_NEIGH);
}

/*
 * A SYN: if this host routes it and policy offloads it (seen from the
 * client: local = the SYN's sender) on a device in forward mode, start
 * tracking its handshake.  Anything else writes nothing.  Not inlined: its
 * stack (route lookup, policy search) is not the main program's.
 */
static __noinline int fwd_syn(struct xdp_md *ctx, const struct toe_pkt *p,
			      const struct toe_flow_key *ck, int from)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	union {			/* one after the other: the stack is 512 bytes */
		struct bpf_fib_lookup fp;
		struct toe_fwd v;
	} u;
	struct toe_flow_key k = {};
	struct decision d;
	struct toe_dev *dev;
	__u32 idx;

	if (fib(ctx, p, data + TOE_ETH_HLEN, data_end, 0, &u.fp) != BPF_FIB_LKUP_RET_SUCCESS)
		return 0;	/* local, unroutable, or forwarding off: the stack's */
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
	if (!dev || !(dev->flags & TOE_DEVF_PRESENT) || dev->steer != TOE_STEER_FORWARD)
		return 0;
	__builtin_memset(&u.v, 0, sizeof(u.v));
	u.v.start_ns = bpf_ktime_get_ns();
	u.v.client_isn = bpf_ntohl(p->seq);
	u.v.dev = d.dev;
	u.v.rule = d.rule;
	u.v.policy = (__u32)d.serial;
	u.v.state = TOE_FWD_SYN_SENT;
	u.v.client = from;
	u.v.reason = d.reason;
	bpf_map_update_elem(&toe_fwd, ck, &u.v, BPF_ANY);
	return 0;
}

/*
 * The fast path proper, for an established flow: route, next hop's MAC,
 * TTL, redirect to the egress device.  Whatever it cannot do the way the
 * stack would (TTL expiring, IPv4 options, IPv6 extension headers, a frame
 * over the egress MTU, no route, an egress opentoe is not on, no valid
 * neighbour) goes to the stack untouched.
 */
static __noinline int fwd_xmit(struct xdp_md *ctx, const struct toe_pkt *p,
			       struct toe_fwd *fs)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct bpf_fib_lookup fp;
	struct toe_neigh_key nk = {};
	struct toe_iface *in, *out;
	struct toe_neigh *n;
	__u32 ifin = ctx->ingress_ifindex, ifout;
	__u16 tot_len;

	if (p->ttl <= 1)
		return -1;	/* the stack sends the ICMP time exceeded */
	if (p->family == TOE_AF_INET) {
		if (p->l4_off - p->l3_off != TOE_IPV4_HLEN)
			return -1;	/* options: record route, source route... */
		tot_len = TOE_IPV4_HLEN + p->ip_payload_len;
	} else {
		if (p->n_ext)
			return -1;	/* a routing header may name this host */
		tot_len = TOE_IPV6_HLEN + p->ip_payload_len;
	}
	if (fib(ctx, p, data + TOE_ETH_HLEN, data_end, tot_len, &fp) != BPF_FIB_LKUP_RET_SUCCESS)
		return -1;
	ifout = fp.ifindex;
	in = bpf_map_lookup_elem(&toe_ifaces, &ifin);
	out = bpf_map_lookup_elem(&toe_ifaces, &ifout);
	/* Same namespace: ifindexes of other namespaces may share the map. */
	if (!in || !out || in->netns != out->netns ||
	    !bpf_map_lookup_elem(&toe_devmap, &ifout))
		return -1;
	nk.ifindex = ifout;
	nk.family = p->family;
	if (p->family == TOE_AF_INET)
		nk.addr[0] = fp.ipv4_dst;	/* the next hop: gateway or destination */
	else
		__builtin_memcpy(nk.addr, fp.ipv6_dst, 16);
	n = bpf_map_lookup_elem(&toe_neigh, &nk);
	if (!n || !(n->state & TOE_NUD_VALID) || !n->has_mac) {
		stat_inc(TOE_S_XDP_NEIGH_MISS);
		return -2;	/* the stack resolves it; toed then mirrors it */
	}

	if ((void *)(eth + 1) > data_end)
		return -1;
	if (p->family == TOE_AF_INET) {
		struct iphdr *iph = (void *)(eth + 1);
		__u32 check;

		if ((void *)(iph + 1) > data_end)
			return -1;
		/* As ip_decrease_ttl(): RFC 1624 incremental update. */
		check = iph->check;
		check += bpf_htons(0x0100);
		iph->check = (__u16)(check + (check >= 0xffff));
		iph->ttl--;
	} else {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end)
			return -1;
		ip6->hop_limit--;
	}
	__builtin_memcpy(eth->h_dest, n->mac, 6);
	__builtin_memcpy(eth->h_source, out->mac, 6);
	count_pkts(&fs->packets, &fs->bytes, 1, data_end - data);
	stat_inc(TOE_S_XDP_FORWARD);
	/* The entry was there a moment ago; if it went, the frame is dropped. */
	return bpf_redirect_map(&toe_devmap, ifout, XDP_DROP);
}

/*
 * Flows this host routes, for devices in forward mode: the handshake is
 * tracked (SYN, SYN-ACK acking it, ACK acking that) while it goes through
 * the stack, so that netfilter's FORWARD chain has accepted the connection;
 * from then on XDP forwards the flow itself, as an nftables flowtable
 * would.  FIN and RST end the fast path and go through the stack.
 */
static __always_inline int xdp_fwd(struct xdp_md *ctx, const struct toe_pkt *p,
				   struct toe_flow_key *ck)
{
	struct toe_xdp_conf *conf;
	struct toe_fwd *fs;
	__u8 fl = p->tcp_flags;
	__u32 zero = 0;
	int from, rc;

	conf = bpf_map_lookup_elem(&toe_xdp_conf, &zero);
	if (!conf || !conf->fwd_devs || p->nvlan)
		return xdp_next(ctx);
	from = fwd_key(p, ck);
	fs = bpf_map_lookup_elem(&toe_fwd, ck);
	if (!fs) {
		if ((fl & (TOE_TCP_SYN | TOE_TCP_ACK | TOE_TCP_RST | TOE_TCP_FIN)) == TOE_TCP_SYN)
			fwd_syn(ctx, p, ck, from);
		return xdp_next(ctx);
	}
	if (fl & (TOE_TCP_FIN | TOE_TCP_RST)) {
		if (fs->state == TOE_FWD_ESTABLISHED)
			stat_inc(TOE_S_XDP_FWD_ENDED);
		bpf_map_delete_elem(&toe_fwd, ck);
		return xdp_next(ctx);
	}
	if (fl & TOE_TCP_SYN) {
		if (!(fl & TOE_TCP_ACK)) {
			/* A retransmitted SYN, or the tuple reused: start again. */
			fwd_syn(ctx, p, ck, from);
		} else if (fs->state == TOE_FWD_SYN_SENT && from != fs->client &&
			   bpf_ntohl(p->ack_seq) == fs->client_isn + 1) {
			fs->server_isn = bpf_ntohl(p->seq);
			fs->state = TOE_FWD_SYN_RECV;
		}
		return xdp_next(ctx);
	}
	if (fs->state != TOE_FWD_ESTABLISHED) {
		if (fs->state == TOE_FWD_SYN_RECV && from == fs->client &&
		    (fl & TOE_TCP_ACK) &&
		    bpf_ntohl(p->ack_seq) == fs->server_isn + 1) {
			fs->est_ns = bpf_ktime_get_ns();
			fs->state = TOE_FWD_ESTABLISHED;
			stat_inc(TOE_S_XDP_FWD_FLOWS);
		}
		return xdp_next(ctx);	/* the handshake goes through the stack */
	}
	rc = fwd_xmit(ctx, p, fs);
	if (rc >= 0)
		return rc;
	if (rc == -1)
		stat_inc(TOE_S_XDP_FWD_SLOW);
	return xdp_next(ctx);
}

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
