/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, the tc ingress hook ("toe-loader load --hook tc"):
 * parsing an skb, whose headers may not all be in its linear part
 * (tc_parse, tc_headers).
 *
 * toe_tc does toe_xdp's accounting on the tcx ingress hook instead of
 * XDP.  XDP sees one frame per packet before GRO; on a veth, native XDP
 * also makes the kernel turn TSO off on the peer (veth_fix_features), and
 * skb-mode XDP copies every GRO packet into one linear buffer, so a host
 * flow pays for opentoe even though opentoe does nothing with it.  tc
 * ingress runs after GRO on the skb as it is: offloads stay on, and one
 * lookup covers a whole GRO packet (gso_segs segments).  No steering
 * here: cpumap and devmap redirects are XDP's.  toe_tc returns TCX_NEXT:
 * whatever else is attached runs, and at the end of the chain the packet
 * goes on into the stack untouched.
 */
#ifndef __TOE_TC_H
#define __TOE_TC_H

#include "common.h"
#include "toe_parse.h"

#define TOE_TC_PULL 256 /* bytes made linear for the parser */

/*
 * The cookie of the network namespace of the device an skb arrived on.
 * bpf_get_netns_cookie() takes an skb only from 6.15 on: read it as the
 * kernel would, from the struct sk_buff ctx is, by plain loads or by
 * probe reads (see xdp_netns()).
 */
#ifdef TOE_KERN_CTX
static __always_inline __u64 skb_netns(struct __sk_buff *skb)
{
	struct sk_buff *s = bpf_cast_to_kern_ctx(skb);

	return s->dev->nd_net.net->net_cookie;
}
#else
static __always_inline __u64 skb_netns(struct __sk_buff *skb)
{
	struct net_device *dev = NULL;

	bpf_probe_read_kernel(
		&dev, sizeof(dev),
		(char *)skb + bpf_core_field_offset(struct sk_buff, dev));
	return BPF_CORE_READ(dev, nd_net.net, net_cookie);
}
#endif

/*
 * tc_parse()'s result for a UDP datagram the forward path may take
 * (toe_parse_udp), beyond the parser's own: toe_parse() says TOE_P_NOT_TCP.
 */
#define TC_P_UDP TOE_P__MAX

/*
 * The skb's linear part may hold fewer bytes than the datagram (the
 * payload is in page fragments): "datagram longer than the frame" is
 * judged against skb->len.  A UDP datagram's header is parsed here too
 * (TC_P_UDP), in this function's frame: the admission's (toe_egress) has
 * no byte to spare on 6.1.
 */
static __noinline int tc_parse(struct __sk_buff *skb, struct toe_pkt *p)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	__u32 ip_end;
	int res;

	res = toe_parse(data, data_end, p);
	if (res == TOE_P_NOT_TCP)
		return toe_parse_udp(res, data, data_end, skb->len, p) ?
			       res :
			       TC_P_UDP;
	if (res != TOE_P_TRUNC_IP)
		return res;
	/* Headers complete (*p filled); the datagram's end against the skb's. */
	/* clang-format off */
	ip_end = p->ip_payload_len +
		 (p->family == TOE_AF_INET ? p->l4_off : p->l3_off + TOE_IPV6_HLEN);
	/* clang-format on */
	return ip_end <= skb->len ? TOE_P_TCP : res;
}

/*
 * The headers of an skb, parsed into *p: pulled into the linear part when
 * they are not all there.  Returns toe_parse()'s TOE_P_* result, or
 * TC_P_UDP.
 */
static __always_inline int tc_headers(struct __sk_buff *skb, struct toe_pkt *p)
{
	__u32 linear = skb->data_end - skb->data;
	int res;

	res = tc_parse(skb, p);
	if ((res == TOE_P_TRUNC_L2 || res == TOE_P_TRUNC_L3 ||
	     res == TOE_P_TRUNC_L4) &&
	    skb->len > linear) {
		/* Headers in the fragments: rare (GRO keeps them linear). */
		/* clang-format off */
		bpf_skb_pull_data(skb, skb->len < TOE_TC_PULL ? skb->len : TOE_TC_PULL);
		/* clang-format on */
		res = tc_parse(skb, p);
	}
	return res;
}

#endif /* __TOE_TC_H */
