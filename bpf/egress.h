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
 * its server's; or, for a flow conntrack has established whose handshake
 * the fast path never saw (running before the load, evicted, its
 * conntrack entry made again), the stack forwarding it once each way
 * between A and B (egress_join).  A sender controls what arrives on its own side, never what
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
#include "nat.h"

/*
 * The stack forwarded a SYN from iif out of oif: if policy offloads it
 * (seen from the client: local = the SYN's sender) on a present device in
 * forward mode, its handshake goes into toe_fwd_half.  toe_fwd is not
 * touched: a SYN never evicts or resets an admitted flow.  Not inlined:
 * the policy search has its own stack.
 */
/*
 * Where the stack forwarded a packet: ifs is (ingress << 32 | egress), ns
 * the namespace's cookie (packed: the program's stack is tight on 6.1).
 */
#define FWD_IFS(iif, oif) (((__u64)(iif) << 32) | (oif))

/*
 * The key policy decides a routed flow by, from packet p: seen from the
 * end that sent it if toward is 0 (a SYN: egress_syn), from the other end
 * if 1 (join_decide), with the addresses as FORWARD sees them.  A TCP
 * flow's (proto 0): join_decide sets a UDP flow's proto itself (a SYN's
 * frame has no byte to spare on 6.1).
 */
static __always_inline void fwd_policy_key(const struct toe_pkt *p, int toward,
					   struct toe_flow_key *k)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->family = p->family;
	if (!toward) {
		__builtin_memcpy(k->laddr, p->saddr, 16);
		__builtin_memcpy(k->raddr, p->daddr, 16);
		k->lport = bpf_ntohs(p->sport);
		k->rport = bpf_ntohs(p->dport);
	} else {
		__builtin_memcpy(k->laddr, p->daddr, 16);
		__builtin_memcpy(k->raddr, p->saddr, 16);
		k->lport = bpf_ntohs(p->dport);
		k->rport = bpf_ntohs(p->sport);
	}
}

/* Whether decision d offloads to a present device in forward mode. */
static __always_inline bool fwd_dev_ok(const struct decision *d)
{
	__u32 idx = d->dev;
	struct toe_dev *dev;

	if (d->action != TOE_ACT_OFFLOAD)
		return false;
	dev = bpf_map_lookup_elem(&toe_devs, &idx);
	return dev && (dev->flags & TOE_DEVF_PRESENT) &&
	       dev->steer == TOE_STEER_FORWARD;
}

/*
 * The SYN's half of the handshake into toe_fwd_half, after the decision
 * d.  Inlined, but its record's lifetime starts after the policy search's
 * ends, so the two may share stack (the combined limit is 512 bytes).
 */
static __always_inline void egress_half(const struct toe_pkt *p,
					const struct toe_flow_key *ck, int from,
					__u64 ifs, __u64 ns,
					const struct decision *d, __u32 gen)
{
	struct toe_fwd_half h = {};

	h.start_ns = bpf_ktime_get_ns();
	h.client_isn = bpf_ntohl(p->seq);
	h.dev = d->dev;
	h.rule = d->rule;
	h.policy = (__u32)d->serial;
	h.client_if = ifs >> 32;
	h.server_if = (__u32)ifs;
	h.gen = gen;
	h.state = TOE_FWD_SYN_SENT;
	h.client = from;
	h.reason = d->reason;
	h.netns = ns;
	bpf_map_update_elem(&toe_fwd_half, ck, &h, BPF_ANY);
	stat_inc(TOE_S_FWD_HALF);
}

static __noinline int egress_syn(const struct toe_pkt *p,
				 const struct toe_flow_key *ck, int from,
				 __u64 ifs, __u64 ns)
{
	__u32 oif = (__u32)ifs;
	struct toe_iface *out;
	struct toe_fwd_gen *g;
	struct decision d;
	__u32 idx = 0;

	out = bpf_map_lookup_elem(&toe_ifaces, &oif);
	g = bpf_map_lookup_elem(&toe_fwd_gen, &idx);
	if (!out || !g || out->netns != ns)
		return 0; /* not an interface the fast path sends on, here */
	{
		struct toe_flow_key k;

		fwd_policy_key(p, 0, &k);
		decide(&k, 0, &d);
	}
	if (!fwd_dev_ok(&d))
		return 0;
	egress_half(p, ck, from, ifs, ns, &d, g->gen);
	return 0;
}

/*
 * toed hears of an admission (TOE_EV_FWD_ADMITTED, fwd_ev_admit): it
 * makes the flow's conntrack entry ESTABLISHED and window-liberal, as
 * nftables' flowtable does at offload (user/toed/ct.c), so that the stack
 * takes the flow back (FIN, RST, READMIT) without INVALID drops.
 */

/*
 * Admission: the flow of handshake or join record h (toe_fwd_half), key
 * ck, into toe_fwd with conntrack's word c; server_isn: the SYN-ACK's
 * sequence number (0 for a join).  Admitted under the record's
 * generation: if the ruleset changed since, the fast path sends it back
 * through the stack (READMIT) before its first packet.  The entry is
 * built in toe_fwd_scratch, not on the stack (6.1's 512 bytes a chain).
 */
static __noinline int fwd_admit_half(const struct toe_flow_key *ck,
				     const struct toe_nat_ct *c,
				     const struct toe_fwd_half *h,
				     __u32 server_isn)
{
	struct toe_fwd_scratch *sc;
	struct toe_fwd *vp;
	__u32 zero = 0;

	/* the entry built in toe_fwd_scratch (bpf/nat.h): 272 bytes */
	sc = bpf_map_lookup_elem(&toe_fwd_scratch, &zero);
	if (!sc)
		return 0;
	vp = &sc->v;
	__builtin_memset(vp, 0, sizeof(*vp));

	vp->start_ns = h->start_ns;
	vp->est_ns = bpf_ktime_get_ns();
	vp->adm_ns = vp->est_ns; /* netfilter: no coarse clock */
	vp->client_isn = h->client_isn;
	vp->server_isn = server_isn;
	vp->dev = h->dev;
	vp->rule = h->rule;
	vp->policy = h->policy;
	vp->client_if = h->client_if;
	vp->server_if = h->server_if;
	vp->gen = h->gen;
	/*
	 * A flow conntrack tracks waits for toed to make its entry true
	 * (toe_fwd_ctok): until then the stack forwards it, and conntrack
	 * follows its window as for any flow.
	 */
	vp->state = c->tracked ? TOE_FWD_CT_WAIT : TOE_FWD_ESTABLISHED;
	vp->client = h->client;
	vp->reason = h->reason;
	vp->netns = h->netns;
	vp->ct_zone = c->zone;
	vp->ct_tracked = c->tracked;
	vp->joined = h->state == TOE_FWD_JOINING;
	if (c->nat)
		nat_admit(c, ck, vp); /* with its translation (bpf/nat.h) */
	/* a word toed left for an earlier flow of this tuple is not this one's */
	bpf_map_delete_elem(&toe_fwd_ctok, ck);
	bpf_map_update_elem(&toe_fwd, ck, vp, BPF_ANY);
	stat_inc(TOE_S_XDP_FWD_FLOWS);
	return 1;
}

/*
 * The stack forwarded a SYN-ACK from iif out of oif: if it answers a SYN
 * it forwarded the other way (same flow, sent by the other end, from the
 * SYN's egress interface out of its ingress one, acking the SYN's
 * sequence number), the flow is to be admitted (its caller does, from
 * toe_fwd_half: fwd_admit_half, each in a frame of its own).  1 if so.
 */
static __noinline int egress_synack(const struct toe_pkt *p,
				    const struct toe_flow_key *ck,
				    const struct toe_nat_ct *c, __u64 ifs,
				    __u64 ns)
{
	__u32 iif = ifs >> 32, oif = (__u32)ifs;
	int from = c->from;
	struct toe_fwd_half *h;

	h = bpf_map_lookup_elem(&toe_fwd_half, ck);
	/* (namespace, ifindex): the SYN's interfaces, in the SYN's namespace */
	if (!h || h->state != TOE_FWD_SYN_SENT || from == h->client ||
	    h->netns != ns || iif != h->server_if || oif != h->client_if ||
	    bpf_ntohl(p->ack_seq) != h->client_isn + 1)
		return 0;
	return 1; /* the caller admits it (fwd_admit_half) */
}

/* Policy's word on a flow about to join (join_decide). */
/* egress_join()'s results besides 0 (nothing to do). */
#define JOIN_ADMIT 1 /* proved: to admit from its record (fwd_admit_half) */
#define JOIN_BEGIN 2 /* a join record to make: join_begin(), join_decide() */

/*
 * A flow's join record (toe_fwd_half, TOE_FWD_JOINING), new or to be
 * decided again (egress_join said JOIN_BEGIN), with its client taken to
 * be conntrack's original direction's sender: its interfaces, the
 * direction this packet proved, and the joins counted so far kept from its
 * previous record.  Policy's word comes next, into the record in the map
 * (join_decide, dev TOE_DEV_NONE until then).  fwd_join calls each step
 * in a frame of its own: the policy search's stack, the record's and
 * toe_fwd's entry are never on one chain (6.1: 512 bytes for the whole
 * chain).
 */
static __noinline int join_begin(const struct toe_flow_key *ck,
				 const struct toe_nat_ct *c, __u64 ifs,
				 __u64 ns)
{
	__u32 iif = ifs >> 32, oif = (__u32)ifs, zero = 0;
	struct toe_fwd_half r = {}, *old;
	struct toe_fwd_gen *g;

	g = bpf_map_lookup_elem(&toe_fwd_gen, &zero);
	if (!g)
		return 0;
	r.start_ns = bpf_ktime_get_ns();
	r.dev = TOE_DEV_NONE;
	r.client = c->reply ? !c->from : c->from;
	/* the client's interface is the one its packets come in on */
	r.client_if = c->from == r.client ? iif : oif;
	r.server_if = c->from == r.client ? oif : iif;
	r.seen = c->from == r.client ? TOE_FWD_SEEN_C2S : TOE_FWD_SEEN_S2C;
	r.gen = g->gen;
	r.state = TOE_FWD_JOINING;
	r.netns = ns;
	old = bpf_map_lookup_elem(&toe_fwd_half, ck);
	if (old && old->state == TOE_FWD_JOINING && old->dev != TOE_DEV_NONE) {
		/* the flow's window goes on */
		r.joins = old->joins;
		r.start_ns = old->start_ns;
	}
	bpf_map_update_elem(&toe_fwd_half, ck, &r, BPF_ANY);
	return 0;
}

/*
 * Policy's word on flow ck about to join, into its join record
 * (join_begin), as a SYN is decided (egress_syn): seen from its client
 * with the addresses as FORWARD sees its packets to the server (p: the
 * packet that made the record).  Its client is conntrack's original
 * direction's sender, unless conntrack picked the flow up mid-stream from
 * a packet of the server (its entry made again after a delete or a flush,
 * its first packet the server's): then the original direction is the
 * server's.  So a flow conntrack does not translate, which policy does
 * not name seen from the original sender, is decided again seen from the
 * other end, and if that names it, the record is turned round (the other
 * end its client: TOE_FWD_HALF_FLIP); a translated one keeps conntrack's
 * orientation, which its NAT tuples follow.  Policy only chooses what to
 * offload; what may take the fast path is proved by the stack forwarding
 * both directions.  Not inlined: the policy search has its own stack.
 */
static __noinline int join_decide(const struct toe_pkt *p,
				  const struct toe_flow_key *ck,
				  const struct toe_nat_ct *c)
{
	struct toe_fwd_half *h;
	struct toe_flow_key k;
	struct decision d;
	__u32 ifs;
	bool flip = false;

	fwd_policy_key(p, c->reply, &k);
	k.proto = fwd_proto(p); /* a UDP flow: only rules saying so */
	decide(&k, 0, &d);
	if (!fwd_dev_ok(&d)) {
		if (c->nat)
			return 0;
		fwd_policy_key(p, !c->reply, &k);
		k.proto = fwd_proto(p);
		decide(&k, 0, &d);
		if (!fwd_dev_ok(&d))
			return 0;
		flip = true;
	}
	h = bpf_map_lookup_elem(&toe_fwd_half, ck);
	if (!h || h->state != TOE_FWD_JOINING)
		return 0;
	if (flip) {
		h->client = !h->client;
		ifs = h->client_if;
		h->client_if = h->server_if;
		h->server_if = ifs;
		h->seen = (h->seen & TOE_FWD_SEEN_C2S ? TOE_FWD_SEEN_S2C :
							TOE_FWD_SEEN_C2S) |
			  TOE_FWD_HALF_FLIP;
	}
	h->rule = d.rule;
	h->policy = (__u32)d.serial;
	h->reason = d.reason;
	h->dev = d.dev; /* last: the record is decided */
	return 0;
}

/* A joining flow's client end, in its record's orientation (seen's flip). */
static __always_inline __u8 join_client(const struct toe_nat_ct *c, __u8 seen)
{
	__u8 orig = c->reply ? !c->from : c->from;

	return seen & TOE_FWD_HALF_FLIP ? !orig : orig;
}

/*
 * The stack forwarded a packet of a flow with no toe_fwd entry that is not
 * a SYN, SYN-ACK, FIN or RST: if conntrack has it established (c->est:
 * it saw both directions; for TCP, the state ESTABLISHED), the flow may
 * join the fast path mid-stream, as nftables' flowtable takes any
 * established flow: one that ran before toe-loader load, one whose entry
 * a full toe_fwd evicted, one whose conntrack entry was made again (toed
 * ended its fast path then).  Conntrack's direction names its client
 * (the original direction's sender) and so the client's and server's
 * interfaces: the ones the stack forwarded it between.  Policy decides as
 * on a SYN (join_decide).  As for READMIT, the stack must forward it both
 * ways, under one generation and over those interfaces (toe_fwd_half,
 * TOE_FWD_JOINING), before it is admitted as a SYN-ACK admits it (toed
 * then makes its conntrack entry window-liberal, CT_WAIT): never a packet
 * the fast path only saw arrive.  At most TOE_FWD_JOIN_MAX joins a flow in
 * TOE_FWD_JOIN_WIN_NS (fwd_join_limited).  JOIN_ADMIT if the flow is to
 * be admitted from its record, JOIN_BEGIN if its join record is to be
 * made (join_begin), 0 otherwise.
 */
static __noinline int egress_join(const struct toe_pkt *p,
				  const struct toe_flow_key *ck,
				  const struct toe_nat_ct *c, __u64 ifs,
				  __u64 ns)
{
	__u32 iif = ifs >> 32, oif = (__u32)ifs, zero = 0, cif, sif;
	struct toe_iface *in, *out;
	struct toe_fwd_half *h;
	struct toe_fwd_gen *g;
	__u8 client, bit;
	__u64 now;

	if (!c->est || (c->nat && !c->final))
		return 0; /* NAT not set up at both ends yet: a later packet */
	now = bpf_ktime_get_ns();
	h = bpf_map_lookup_elem(&toe_fwd_half, ck);
	if (h && h->state == TOE_FWD_SYN_SENT)
		return 0; /* a handshake under way: its SYN-ACK admits */
	if (h && h->state == TOE_FWD_JOINING) {
		/* this packet's way, in the record's orientation */
		client = join_client(c, h->seen);
		cif = c->from == client ? iif : oif;
		sif = c->from == client ? oif : iif;
		bit = c->from == client ? TOE_FWD_SEEN_C2S : TOE_FWD_SEEN_S2C;
		/*
		 * policy does not name it (decided under 1 s ago): the
		 * cheapest way out, for every packet of such a flow
		 */
		if (h->dev == TOE_DEV_NONE && h->netns == ns &&
		    h->client == client && h->client_if == cif &&
		    h->server_if == sif &&
		    now - h->start_ns < TOE_FWD_JOIN_RECHECK_NS)
			return 0;
	}
	g = bpf_map_lookup_elem(&toe_fwd_gen, &zero);
	in = bpf_map_lookup_elem(&toe_ifaces, &iif);
	out = bpf_map_lookup_elem(&toe_ifaces, &oif);
	if (!g || !in || !out || in->netns != ns || out->netns != ns)
		return 0; /* not interfaces the fast path is on, here */
	if (!h || h->state != TOE_FWD_JOINING || h->netns != ns ||
	    h->client != client || h->client_if != cif || h->server_if != sif ||
	    h->dev == TOE_DEV_NONE)
		return JOIN_BEGIN; /* first sight, or decided over 1 s ago */
	if (h->gen != g->gen) {
		/* The ruleset changed: prove both ways under this one. */
		h->gen = g->gen;
		h->seen &= TOE_FWD_HALF_FLIP;
	}
	h->seen |= bit;
	if ((h->seen & TOE_FWD_SEEN_BOTH) != TOE_FWD_SEEN_BOTH)
		return 0;
	h->seen &= TOE_FWD_HALF_FLIP;
	if (now - h->start_ns >= TOE_FWD_JOIN_WIN_NS) {
		h->start_ns = now;
		h->joins = 0;
	}
	if (h->joins >= TOE_FWD_JOIN_MAX) {
		stat_inc(TOE_S_FWD_JOIN_LIMITED);
		return 0;
	}
	h->joins++;
	return JOIN_ADMIT;
}

/*
 * A suspended flow whose conntrack entry translates it otherwise than its
 * toe_fwd entry does: conntrack's entry was made again (a flush, a loss
 * of toed's destroy events, a toed restart) under a changed NAT rule, or
 * NAT now applies where it did not.  The entry takes conntrack's current
 * translation (its tuples, and the reply tuple's key in toe_fwd_nat in
 * place of the old one), and what was seen under the old one is
 * forgotten: both directions are proved again, so the fast path never
 * rewrites a packet as the stack no longer would.  True if it moved (or
 * if conntrack's tuples could not be read for a NATed flow: not proved).
 */
static __noinline bool egress_nat_moved(struct toe_fwd *fs,
					const struct toe_nat_ct *c,
					const struct toe_flow_key *ck)
{
	struct toe_flow_key rk;

	if (!fs->nat && !c->nat)
		return false;
	if (!c->tuples)
		return true; /* its translation not read: the stack keeps it */
	if (fs->nat && c->nat && nat_tu_eq(&fs->nat_tu[0], &c->tu[0]) &&
	    nat_tu_eq(&fs->nat_tu[1], &c->tu[1]))
		return false;
	if (!c->final)
		return true; /* NAT not set up at both ends yet: a later packet */
	if (fs->nat) {
		nat_key(&fs->nat_tu[1], ck->family, ck->proto, &rk);
		bpf_map_delete_elem(&toe_fwd_nat, &rk);
	}
	if (c->nat) {
		nat_admit(c, ck, fs);
	} else {
		fs->nat = 0;
		__builtin_memset(fs->nat_tu, 0, sizeof(fs->nat_tu));
	}
	fs->seen = 0;
	stat_inc(TOE_S_FWD_NAT_MOVED);
	return true;
}

/*
 * The stack forwarded a packet of a suspended flow (READMIT): if it went
 * the way the flow's direction says (client's interface out of the
 * server's, or back), that direction is proven under the generation in
 * force; both proven under one generation, the flow is admitted again.
 */
static __always_inline bool egress_readmit(const struct toe_flow_key *ck,
					   const struct toe_nat_ct *c, int from,
					   __u32 iif, __u32 oif, __u32 gen,
					   __u64 ns)
{
	struct toe_fwd *fs;
	__u8 bit;

	fs = bpf_map_lookup_elem(&toe_fwd, ck);
	if (!fs)
		return false; /* no entry: perhaps a join (egress_join) */
	if (fs->state != TOE_FWD_READMIT || fs->netns != ns)
		return true;
	if (egress_nat_moved(fs, c, ck))
		return true; /* proved again under conntrack's translation */
	if (from == fs->client && iif == fs->client_if && oif == fs->server_if)
		bit = TOE_FWD_SEEN_C2S;
	else if (from != fs->client && iif == fs->server_if &&
		 oif == fs->client_if)
		bit = TOE_FWD_SEEN_S2C;
	else
		return true;
	if (fs->gen != gen) {
		/* The ruleset changed again: prove both ways under this one. */
		fs->gen = gen;
		fs->seen = 0;
	}
	fs->seen |= bit;
	if (fs->seen != (TOE_FWD_SEEN_C2S | TOE_FWD_SEEN_S2C))
		return true;
	fs->adm_ns = bpf_ktime_get_ns(); /* netfilter: no coarse clock */
	fs->readmits++;
	fs->ret_reason = 0; /* a later return is a new event (fwd_events.h) */
	fs->state = TOE_FWD_ESTABLISHED;
	stat_inc(TOE_S_FWD_READMITTED);
	return true;
}

/*
 * A SYN-ACK (egress_synack): the flow admitted from its handshake.  Not
 * inlined (nor fwd_join): their locals stay out of the program's frame,
 * which every chain of the admission's includes (6.1: 512 bytes).
 */
static __noinline int fwd_synack(const struct toe_pkt *p,
				 const struct toe_flow_key *ck,
				 const struct toe_nat_ct *c, __u64 ifs,
				 __u64 ns)
{
	struct toe_fwd_half *h;

	if (!egress_synack(p, ck, c, ifs, ns))
		return 0;
	h = bpf_map_lookup_elem(&toe_fwd_half, ck);
	if (!h)
		return 0;
	fwd_admit_half(ck, c, h, bpf_ntohl(p->seq));
	bpf_map_delete_elem(&toe_fwd_half, ck);
	fwd_ev_admit(ck); /* bpf/fwd_events.h */
	return 0;
}

/*
 * A packet of a flow with no toe_fwd entry (egress_join), each step in a
 * frame of its own.
 */
static __noinline int fwd_join(const struct toe_pkt *p,
			       const struct toe_flow_key *ck,
			       const struct toe_nat_ct *c, __u64 ifs, __u64 ns)
{
	int rc = egress_join(p, ck, c, ifs, ns);
	struct toe_fwd_half *h;

	if (rc == JOIN_ADMIT) {
		h = bpf_map_lookup_elem(&toe_fwd_half, ck);
		if (!h)
			return 0;
		fwd_admit_half(ck, c, h, 0);
		stat_inc(TOE_S_FWD_JOINED);
		fwd_ev_admit(ck); /* bpf/fwd_events.h */
	} else if (rc == JOIN_BEGIN) {
		join_begin(ck, c, ifs, ns);
		join_decide(p, ck, c);
	}
	return 0;
}

/*
 * Set by toe-loader before the load (.rodata): 1 when the netfilter
 * program (toe_nf_fwd, nf_fwd_admit below) admits flows at the end of
 * FORWARD; toe_egress then admits nothing, so a program swapped into an
 * older load's tc egress links cannot admit what a tc redirect made.
 */
const volatile __u32 toe_nf_admit = 0;

/*
 * What the stack forwarded from iif out of oif, parsed into p: the
 * admission steps.  Shared by both proofs (toe_nf_fwd, toe_egress).
 */
static __always_inline void fwd_admit(void *skb, const struct toe_pkt *p,
				      __u32 iif, __u32 oif, __u64 ns)
{
	struct toe_fwd_scratch *sc;
	struct toe_flow_key *ck;
	struct toe_xdp_conf *conf;
	struct toe_nat_ct *c;
	struct toe_fwd_gen *g;
	__u32 zero = 0;
	int from;
	__u8 fl;

	conf = bpf_map_lookup_elem(&toe_xdp_conf, &zero);
	g = bpf_map_lookup_elem(&toe_fwd_gen, &zero);
	if (!conf || !conf->fwd_devs || !g)
		return;
	if (ns != g->rt_netns) {
		/*
		 * Routed in a namespace that is not the datapath's home: its
		 * firewall, sysctls and routes are not watched; never admitted.
		 */
		if ((p->tcp_flags & (TOE_TCP_SYN | TOE_TCP_ACK)) == TOE_TCP_SYN)
			stat_inc(TOE_S_FWD_NOT_HOME);
		return;
	}
	/*
	 * Conntrack's entry (in toe_fwd_scratch: bpf/nat.h): a NATed flow is
	 * keyed by its original tuple, IPv4 or IPv6 (bpf/nat.h)
	 */
	sc = bpf_map_lookup_elem(&toe_fwd_scratch, &zero);
	if (!sc)
		return;
	c = &sc->c;
	ck = &sc->ck;
	__builtin_memset(ck, 0, sizeof(*ck));
	if (nat_ct_read(skb, c) == 0 && c->nat) {
		from = nat_admit_key(c, ck);
	} else if (c->nat) {
		return; /* another protocol's translation: not taken */
	} else if (c->notrack) {
		stat_inc(TOE_S_FWD_NOTRACK);
		return;
	} else {
		from = fwd_key(p, ck);
	}
	c->from = from;
	fl = p->tcp_flags &
	     (TOE_TCP_SYN | TOE_TCP_ACK | TOE_TCP_RST | TOE_TCP_FIN);
	if (fl == TOE_TCP_SYN)
		egress_syn(p, ck, from, FWD_IFS(iif, oif), ns);
	else if (fl == (TOE_TCP_SYN | TOE_TCP_ACK))
		fwd_synack(p, ck, c, FWD_IFS(iif, oif), ns);
	else if (fl & (TOE_TCP_RST | TOE_TCP_FIN))
		bpf_map_delete_elem(&toe_fwd_half, ck);
	else if (!egress_readmit(ck, c, from, iif, oif, g->gen, ns) &&
		 c->tracked)
		fwd_join(p, ck, c, FWD_IFS(iif, oif), ns);
}

/*
 * Whether the host routed skb: the stack's route lookup gave it a dst
 * (skb->_skb_refdst, read through CO-RE as skb_netns() reads dev).  A
 * frame tc moved from an ingress hook to another interface (mirred, a
 * plain bpf_redirect) reaches egress without one.
 */
static __always_inline bool skb_routed(struct __sk_buff *skb,
				       struct toe_pkt *scratch)
{
	struct bpf_sock *sk = skb->sk;
	__u32 refdst;

	/* into the caller's packet buffer: 6.1 counts every stack byte */
	__builtin_memset(scratch->saddr, 0, 8);
	bpf_probe_read_kernel(scratch->saddr, 8,
			      (char *)skb +
				      bpf_core_field_offset(struct sk_buff,
							    _skb_refdst));
	refdst = scratch->saddr32[0] | scratch->saddr32[1];
	/*
	 * BPF_PROG_TEST_RUN's skb (the selftests' packet-by-packet runs) has
	 * no route either; it carries the kernel's dummy socket, of no type,
	 * which no packet the network sends can: a forwarded packet has no
	 * socket, a socket of the host has a type.
	 */
	if (refdst)
		return true;
	if (sk)
		sk = bpf_sk_fullsock(sk);
	return sk && !sk->type;
}

/*
 * toe_egress, the fallback proof (kernels without BPF_PROG_TYPE_NETFILTER,
 * before 6.4): every packet leaving an interface opentoe's XDP is on.
 * Only what the stack forwarded (ingress_ifindex set, and not this
 * interface) and only TCP of a host with a forward device is looked at;
 * the packet always goes on (TCX_NEXT), untouched.  A tc mirred or plain
 * bpf_redirect from one interface to another also arrives here with
 * ingress_ifindex set, but without a route (skb_routed); its limit: a
 * bpf_redirect_neigh does its own route lookup, and so passes
 * (docs/forwarding.md).
 */
static __always_inline int fwd_egress(struct __sk_buff *skb)
{
	__u32 iif = skb->ingress_ifindex, oif = skb->ifindex;
	struct toe_pkt p;
	int res;

	if (toe_nf_admit)
		return TCX_NEXT; /* the netfilter program admits */
	if (!iif || iif == oif || !skb_routed(skb, &p))
		return TCX_NEXT; /* sent by this host, or not routed */
	res = tc_headers(skb, &p);
	if (p.nvlan || (res != TOE_P_TCP && res != TC_P_UDP))
		return TCX_NEXT; /* neither TCP nor UDP the fast path takes */
	fwd_admit(skb, &p, iif, oif, skb_netns(skb));
	return TCX_NEXT;
}

/* ---------------------------------- the proof: the stack's FORWARD hook */

#define TOE_NF_ACCEPT 1
#define TOE_NFPROTO_IPV4 2
#define TOE_NFPROTO_IPV6 10

/* Weak: the object also loads where they do not exist (6.1). */
extern int bpf_dynptr_from_skb(struct __sk_buff *skb, __u64 flags,
			       struct bpf_dynptr *ptr__uninit) __ksym __weak;
extern void *bpf_dynptr_slice(const struct bpf_dynptr *ptr, __u32 offset,
			      void *buffer, __u32 buffer__szk) __ksym __weak;

/*
 * The TCP header at off of the datagram into p (a UDP datagram's: its
 * ports only, p->l4proto UDP); 0 if it is there.
 */
static __always_inline int nf_tcp(const struct bpf_dynptr *d, __u32 off,
				  struct toe_pkt *p)
{
	__u8 buf[20];
	__u8 *th;

	if (p->l4proto == TOE_IPPROTO_UDP) {
		th = bpf_dynptr_slice(d, off, buf, TOE_UDP_HLEN);
		if (!th)
			return -1;
		__builtin_memcpy(&p->sport, th, 2);
		__builtin_memcpy(&p->dport, th + 2, 2);
		return 0;
	}
	th = bpf_dynptr_slice(d, off, buf, sizeof(buf));
	if (!th)
		return -1;
	__builtin_memcpy(&p->sport, th, 2);
	__builtin_memcpy(&p->dport, th + 2, 2);
	__builtin_memcpy(&p->seq, th + 4, 4);
	__builtin_memcpy(&p->ack_seq, th + 8, 4);
	p->tcp_flags = th[13];
	return 0;
}

/* Whether IP protocol pr is one the fast path carries (TCP, UDP). */
static __always_inline bool nf_l4_ok(__u8 pr)
{
	return pr == TOE_IPPROTO_TCP || pr == TOE_IPPROTO_UDP;
}

/*
 * The datagram at FORWARD (skb->data is its IP header): its addresses and
 * TCP header (UDP's ports) into p; 0 if it is TCP or UDP the fast path
 * could carry (no IPv4 fragment, no IPv6 extension header: XDP leaves
 * those to the stack).
 */
static __always_inline int nf_parse(struct sk_buff *skb, __u8 pf,
				    struct toe_pkt *p)
{
	struct bpf_dynptr d;
	__u8 buf[40], *ip;

	__builtin_memset(p, 0, sizeof(*p));
	if (bpf_dynptr_from_skb((struct __sk_buff *)skb, 0, &d))
		return -1;
	if (pf == TOE_NFPROTO_IPV4) {
		ip = bpf_dynptr_slice(&d, 0, buf, 20);
		if (!ip || (ip[0] >> 4) != 4 || !nf_l4_ok(ip[9]) ||
		    ((ip[6] & 0x3f) | ip[7]))
			return -1;
		p->family = TOE_AF_INET;
		p->l4proto = ip[9];
		__builtin_memcpy(p->saddr, ip + 12, 4);
		__builtin_memcpy(p->daddr, ip + 16, 4);
		return nf_tcp(&d, (ip[0] & 0x0f) * 4, p);
	}
	ip = bpf_dynptr_slice(&d, 0, buf, 40);
	if (!ip || (ip[0] >> 4) != 6 || !nf_l4_ok(ip[6]))
		return -1;
	p->family = TOE_AF_INET6;
	p->l4proto = ip[6];
	__builtin_memcpy(p->saddr, ip + 8, 16);
	__builtin_memcpy(p->daddr, ip + 24, 16);
	return nf_tcp(&d, 40, p);
}

/*
 * toe_nf_fwd: a BPF_PROG_TYPE_NETFILTER program at NF_INET_FORWARD (IPv4
 * and IPv6), at the hook's last priority but one, in the datapath's home
 * namespace.  The kernel runs it only for a packet it routed from one of
 * its interfaces out of another, and only once every FORWARD chain before
 * it accepted the packet: a tc redirect or mirred never passes FORWARD, a
 * packet a FORWARD rule dropped never reaches it.  state->in and
 * state->out are the route's devices.  Always NF_ACCEPT: it judges
 * nothing, it only watches.
 */
static __always_inline int nf_fwd_admit(struct bpf_nf_ctx *ctx)
{
	const struct nf_hook_state *st = ctx->state;
	struct toe_pkt p;
	__u32 iif, oif;

	if (!st->in || !st->out)
		return TOE_NF_ACCEPT;
	iif = st->in->ifindex;
	oif = st->out->ifindex;
	if (iif == oif || nf_parse(ctx->skb, st->pf, &p))
		return TOE_NF_ACCEPT;
	fwd_admit(ctx->skb, &p, iif, oif, st->net->net_cookie);
	return TOE_NF_ACCEPT;
}

#endif /* __TOE_EGRESS_H */
