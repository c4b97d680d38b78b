/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, the forward path ("steer forward"), one pipeline for
 * both hooks (XDP and tc ingress, written once over ctx.h): for flows this
 * host routes, the canonical key of both directions (fwd_key), whether an
 * admitted flow may take the fast path now (fwd_valid: its sender's
 * interface, the firewall generation; fwd_frame_ok: a frame the stack
 * would route; fwd_admitted: the whole judgement, FIN/RST and
 * re-admission included), then the pipeline (fwd_path): conntrack kept
 * (fwd_ct.h), the packet sent (fwd_xmit.h: route, checks, writes,
 * redirect), the capture (capture.h), and why a packet went to the stack
 * (fwd_events.h).  Neither hook admits anything: flows enter toe_fwd only
 * through the admission (egress.h), which watches what the stack
 * forwards.  Maps: maps_forward.h.
 */
#ifndef __TOE_FORWARD_H
#define __TOE_FORWARD_H

#include "common.h"
#include "toe_parse.h"
#include "ctx.h"
#include "maps_forward.h"
#include "maps_xdp.h"
#include "stats.h"
#include "nat.h"
#include "fwd_ct.h"
#include "fwd_events.h"
#include "fwd_xmit.h"
#include "capture.h"

/*
 * The canonical key of a routed flow (lower end first, include/opentoe.h),
 * the same for both directions.  Returns the end that sent the packet:
 * 0 = laddr/lport, 1 = raddr/rport.
 */
static __always_inline int fwd_key(const struct toe_pkt *p,
				   struct toe_flow_key *k)
{
	int c = nat_addr_cmp(p->saddr32, p->daddr32); /* (bpf/nat.h) */
	bool src_low = c < 0 ||
		       (c == 0 && bpf_ntohs(p->sport) <= bpf_ntohs(p->dport));

	__builtin_memset(k, 0, sizeof(*k));
	k->family = p->family;
	k->proto = fwd_proto(p);
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
				     const struct toe_fwd_gen *g, __u64 now)
{
	__u32 want = from == fs->client ? fs->client_if : fs->server_if;

	/*
	 * (namespace, ifindex): an interface of another namespace with the
	 * same ifindex is not the sender's side.  This is what keeps FIN/RST
	 * deletion and READMIT marking below to the flow's own interfaces.
	 */
	if (ifin != want || fs->netns != netns)
		return FWD_WRONG_IF;
	if (fs->state != TOE_FWD_ESTABLISHED || fs->gen != g->gen)
		return FWD_STALE;
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
 * path).  XDP reads the frame's destination MAC against the interface's
 * (in->mac); tc reads the skb's pkt_type and VLAN tag, which the kernel
 * has set from it (fwd_to_host).
 */
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

/*
 * Whether the frame was sent to this host, as the hook can tell: XDP by
 * its destination MAC against in's (the interface it came in on; NULL:
 * not one of opentoe's, so not), tc by the skb's pkt_type (PACKET_HOST)
 * and no VLAN tag the kernel moved into the skb before tc (that tag's
 * sub-interface judges it, or the stack drops it).
 */
static __always_inline bool fwd_to_host(void *ctx, int hook,
					const struct toe_iface *in)
{
	const __u8 *d = ctx_data(ctx, hook), *mac;

	if (hook == TOE_FH_TC)
		return CTX_SKB(ctx)->pkt_type == 0 /* PACKET_HOST */ &&
		       !CTX_SKB(ctx)->vlan_present;
	if (!in || (void *)(d + 6) > ctx_end(ctx, hook))
		return false;
	mac = in->mac;
	return d[0] == mac[0] && d[1] == mac[1] && d[2] == mac[2] &&
	       d[3] == mac[3] && d[4] == mac[4] && d[5] == mac[5];
}

/* The frame checks above, counted; true if the stack would route it. */
static __always_inline bool fwd_frame_ok(void *ctx, int hook,
					 const struct toe_pkt *p,
					 const struct toe_iface *in)
{
	__u32 l3 = p->l3_off;

#ifdef TOE_BENCH_NO_FRAME_CHECK /* (benchmark only: see stat_add, stats.h) */
	return true;
#endif
	if (!fwd_to_host(ctx, hook, in)) {
		stat_inc(TOE_S_FWD_NOT_HOST);
		return false;
	}
	if (l3 > TOE_ETH_HLEN + 8)
		return false; /* (two VLAN tags at most: never, for the verifier) */
	if (p->family == TOE_AF_INET && p->l4_off - l3 == TOE_IPV4_HLEN &&
	    !ip4_csum_ok(ctx_data(ctx, hook) + l3, ctx_end(ctx, hook))) {
		stat_inc(TOE_S_FWD_BAD_IPCSUM);
		return false;
	}
	return true;
}

/*
 * The admitted flow a packet of no local flow belongs to, if the fast path
 * may take it now, on hook (ctx.h): true with *h filled; false otherwise,
 * and the packet goes on to the stack untouched.  ck: scratch, the flow's
 * canonical key on return.  FIN and RST from the right side end the fast
 * path (the entry goes); a flow admitted under an older ruleset, or with
 * toed's lease out, is sent back to the stack for re-admission (READMIT).
 * Counted under the xdp_fwd_* names for both hooks (the flow's state, not
 * the hook's work).
 */
/* (struct fwd_hit: fwd_xmit.h) */
static __always_inline bool fwd_admitted(void *ctx, int hook,
					 const struct toe_pkt *p,
					 struct toe_flow_key *ck,
					 struct fwd_hit *h)
{
	__u32 ifin = ctx_ifin(ctx, hook), zero = 0;
	struct toe_xdp_conf *conf;
	struct toe_fwd_gen *g;
	struct toe_fwd *fs;
	__u8 fl = p->tcp_flags;
	int from, rc;

	conf = bpf_map_lookup_elem(&toe_xdp_conf, &zero);
	if (!conf || !conf->fwd_devs || p->nvlan)
		return false;
	from = fwd_key(p, ck);
	fs = bpf_map_lookup_elem(&toe_fwd, ck);
	if (!fs)
		fs = nat_find(p, ck, &from); /* a NATed flow's server side */
	else if (nat_wrong_way(fs, from))
		return false;
	g = bpf_map_lookup_elem(&toe_fwd_gen, &zero);
	if (!fs || !g)
		return false;
	/* the coarse clock, once: fwd_valid, the route cache, conntrack's refresh */
	h->now = bpf_ktime_get_coarse_ns();
	rc = fwd_valid(ifin, ctx_netns(ctx, hook), fs, from, g, h->now);
	if (rc == FWD_WRONG_IF) {
		stat_inc(TOE_S_XDP_FWD_WRONG_IF);
		return false;
	}
	/*
	 * On its sender's side, but a frame the stack would not route: it
	 * changes nothing of the flow.  (in: also fwd_xmit's.)
	 */
	h->in = bpf_map_lookup_elem(&toe_ifaces, &ifin);
	if (hook == TOE_FH_XDP && !h->in)
		return false; /* not an interface of opentoe's */
	if (!fwd_frame_ok(ctx, hook, p, h->in))
		return false;
	if (!(fl & (TOE_TCP_FIN | TOE_TCP_RST | TOE_TCP_SYN)) &&
	    fwd_ct_ready(fs, ck))
		rc = fwd_valid(ifin, ctx_netns(ctx, hook), fs, from, g, h->now);
	if (fl & (TOE_TCP_FIN | TOE_TCP_RST)) {
		if (fs->state == TOE_FWD_ESTABLISHED)
			stat_inc(TOE_S_XDP_FWD_ENDED);
		fwd_ended(fs, ck, hook,
			  fl & TOE_TCP_RST ? TOE_FR_RST : TOE_FR_FIN);
		if (fs->state == TOE_FWD_CT_WAIT)
			bpf_map_delete_elem(&toe_fwd_ctok, ck);
		bpf_map_delete_elem(&toe_fwd, ck);
		return false;
	}
	if (fl & TOE_TCP_SYN)
		return false; /* the tuple reused: the admission decides */
	if (rc == FWD_STALE) {
		if (fs->state == TOE_FWD_ESTABLISHED) {
			fwd_returned(fs, ck, hook,
				     fs->gen != g->gen ? TOE_FR_RULESET :
							 TOE_FR_LEASE);
			/* Back through the stack until it forwards both ways again. */
			fs->seen = 0;
			fs->gen = g->gen;
			fs->state = TOE_FWD_READMIT;
			stat_inc(TOE_S_XDP_FWD_READMIT);
		}
		return false;
	}
	h->fs = fs;
	h->g = g;
	h->from = from;
	return true;
}

/*
 * Flows this host routes, for devices in forward mode, on either hook:
 * once the admission (egress.h) has seen the stack forward a flow both
 * ways (so the FORWARD chain accepted both), the fast path forwards it
 * itself, as an nftables flowtable would, as long as the ruleset it was
 * admitted under is in force (fwd_admitted()): its conntrack entry kept
 * (fwd_ct.h), the packet sent (fwd_xmit.h), captured while a dump runs
 * (capture.h).  Everything else, FIN and RST included, goes through the
 * stack, and a packet fwd_xmit leaves to it says why (fwd_returned).
 * Neither hook writes an entry for a packet of a flow it does not know:
 * what arrives proves nothing.  Returns the hook's verdict.
 */
static __always_inline int
fwd_path(void *ctx, int hook, const struct toe_pkt *p, struct toe_flow_key *ck)
{
	struct fwd_hit h = {};
	int rc;

	if (!fwd_admitted(ctx, hook, p, ck, &h) || !h.fs || !h.g)
		return ctx_pass(ctx, hook);
	/*
	 * conntrack kept (fwd_ct.h), in the flow's zone; its entry gone, the
	 * fast path ends, as toed ends it on the destroy event (which an
	 * entry made before toed listened never sends): the stack judges the
	 * packet and tracks the flow anew, and the flow may join again
	 */
	if (fwd_ct_refresh(ctx, hook, p, h.fs, h.now)) {
		fwd_ended(h.fs, ck, hook, TOE_FR_CT_GONE);
		bpf_map_delete_elem(&toe_fwd, ck);
		return ctx_pass(ctx, hook);
	}
	if (hook == TOE_FH_XDP)
		rc = xdp_xmit(ctx, p, &h);
	else
		rc = tc_xmit(ctx, p, &h);
	if (rc == (hook == TOE_FH_XDP ? XDP_REDIRECT : TOE_TC_ACT_REDIRECT))
		capture(ctx, hook, p, /* toectl dump: capture.h */
			hook == TOE_FH_XDP ? TOE_CAP_XDP_FWD : TOE_CAP_TC_FWD);
	if (rc >= 0)
		return rc;
	fwd_returned(h.fs, ck, hook, -rc); /* fwd_events.h */
	return ctx_pass(ctx, hook);
}

#endif /* __TOE_FORWARD_H */
