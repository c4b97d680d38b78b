/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, NAT on the forward path (issue 33): what the stack's
 * conntrack translates, learned at admission, done again by the fast path.
 *
 * Learning (nat_ct_read): the admission (egress.h) reads the skb's conntrack
 * entry (skb->_nfct, through CO-RE) at FORWARD, or at tc egress on the
 * fallback: its original tuple (as the client's packets arrive) and its
 * reply tuple (as the server's arrive).  DNAT (PREROUTING) and SNAT or
 * MASQUERADE (POSTROUTING) are both in the reply tuple once the SYN has
 * left, so the SYN-ACK carries the whole translation.  The flow's toe_fwd
 * key is the canonical key of the original tuple (which never changes; for
 * a flow without NAT it is the canonical key of its packets, as before);
 * a NATed flow's server packets carry the reply tuple, whose canonical key
 * goes into toe_fwd_nat and names the toe_fwd entry (nat_find).
 *
 * Rewriting (nat_target, nat_fib here; fwd_nat in fwd_xmit.h, one body
 * for both hooks over ctx.h's checksum writes): a packet that arrives with
 * one direction's tuple leaves with the other direction's tuple reversed:
 * addresses and ports, the IPv4 header checksum and the TCP checksum
 * (pseudo-header and ports) updated incrementally.  IPv4 and IPv6 (NAT66:
 * masquerade, SNAT, DNAT; IPv6 has no header checksum, its addresses are
 * four words each of the transport checksum's pseudo-header).
 */
#ifndef __TOE_NAT_H
#define __TOE_NAT_H

#include "common.h"
#include "toe_parse.h"
#include "maps_forward.h"

/*
 * The translation of a packet of fs sent by end from (0 = laddr, 1 =
 * raddr of its key), or NULL if fs is not NATed: the other direction's
 * tuple, which fwd_nat and nat_fib reverse.  The client's packets
 * leave as the reply tuple reversed, the server's as the original one.
 */
static __always_inline const struct toe_fwd_tuple *
nat_target(const struct toe_fwd *fs, int from)
{
	if (!fs->nat)
		return NULL;
	return &fs->nat_tu[from == fs->client ? 1 : 0];
}

/*
 * The route lookup of a translated packet of family fam: what it leaves
 * with (t reversed).
 */
static __always_inline void nat_fib(struct bpf_fib_lookup *fp,
				    const struct toe_fwd_tuple *t, __u8 fam)
{
	if (fam == TOE_AF_INET) {
		fp->ipv4_src = t->daddr[0];
		fp->ipv4_dst = t->saddr[0];
	} else {
		__builtin_memcpy(fp->ipv6_src, t->daddr, 16);
		__builtin_memcpy(fp->ipv6_dst, t->saddr, 16);
	}
	fp->sport = t->dport;
	fp->dport = t->sport;
}

/*
 * Addresses a and b (4 words, network order; IPv4 in [0], the rest zero)
 * as bytes: <0, 0, >0.  The same order for both families.
 */
static __always_inline int nat_addr_cmp(const __be32 *a, const __be32 *b)
{
	int i;

	for (i = 0; i < 4; i++) {
		__u32 x = bpf_ntohl(a[i]), y = bpf_ntohl(b[i]);

		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/* Whether tuples a and b are the same (both families). */
static __always_inline bool nat_tu_eq(const struct toe_fwd_tuple *a,
				      const struct toe_fwd_tuple *b)
{
	int i;

	for (i = 0; i < 4; i++)
		if (a->saddr[i] != b->saddr[i] || a->daddr[i] != b->daddr[i])
			return false;
	return a->sport == b->sport && a->dport == b->dport;
}

/* ------------------------------------------------------ keys and look-ups */

/* toe_flow_key.proto of packet p: 0 for TCP, TOE_IPPROTO_UDP for UDP. */
static __always_inline __u8 fwd_proto(const struct toe_pkt *p)
{
	return p->l4proto == TOE_IPPROTO_UDP ? TOE_IPPROTO_UDP : 0;
}

/*
 * The canonical key of tuple t of family fam and protocol proto
 * (toe_flow_key's) into k (lower end first, as fwd_key orders a
 * packet's); returns the end t's source is: 0 = laddr, 1 = raddr.
 */
static __always_inline int nat_key(const struct toe_fwd_tuple *t, __u8 fam,
				   __u8 proto, struct toe_flow_key *k)
{
	int c = nat_addr_cmp(t->saddr, t->daddr);
	bool src_low = c < 0 ||
		       (c == 0 && bpf_ntohs(t->sport) <= bpf_ntohs(t->dport));

	__builtin_memset(k, 0, sizeof(*k));
	k->family = fam;
	k->proto = proto;
	__builtin_memcpy(k->laddr, src_low ? t->saddr : t->daddr, 16);
	__builtin_memcpy(k->raddr, src_low ? t->daddr : t->saddr, 16);
	k->lport = bpf_ntohs(src_low ? t->sport : t->dport);
	k->rport = bpf_ntohs(src_low ? t->dport : t->sport);
	return !src_low;
}

/*
 * Whether packet p carries tuple t exactly (the packet's addresses are
 * zero past an IPv4 one, as the tuple's: toe_parse clears them).
 */
static __always_inline bool nat_same(const struct toe_pkt *p,
				     const struct toe_fwd_tuple *t)
{
	int i;

	for (i = 0; i < 4; i++)
		if (p->saddr32[i] != t->saddr[i] ||
		    p->daddr32[i] != t->daddr[i])
			return false;
	return p->sport == t->sport && p->dport == t->dport;
}

/*
 * A packet whose key ck found no toe_fwd entry: if it is a server's packet
 * of a NATed flow (its key in toe_fwd_nat, its tuple the entry's reply
 * tuple exactly), ck becomes the flow's key, *from the server's end, and
 * the entry is returned; NULL otherwise (ck unchanged).
 */
static __always_inline struct toe_fwd *
nat_find(const struct toe_pkt *p, struct toe_flow_key *ck, int *from)
{
	struct toe_flow_key *main;
	struct toe_fwd *fs;

	main = bpf_map_lookup_elem(&toe_fwd_nat, ck);
	if (!main)
		return NULL;
	fs = bpf_map_lookup_elem(&toe_fwd, main);
	if (!fs || !fs->nat || !nat_same(p, &fs->nat_tu[1]))
		return NULL;
	__builtin_memcpy(ck, main, sizeof(*ck));
	*from = !fs->client;
	return fs;
}

/*
 * A packet that found fs by its own key: a NATed flow's entry is found so
 * only by the client's packets (the original tuple); a packet from the
 * other end with that key is not one the stack would take as the flow's.
 */
static __always_inline bool nat_wrong_way(const struct toe_fwd *fs, int from)
{
	return fs->nat && from != fs->client;
}

/* --------------------------------------------- learning from conntrack */

/*
 * struct toe_nat_ct, what conntrack says of a packet the stack forwarded
 * (nat_ct_read), and struct toe_fwd_scratch are in include/opentoe_forward.h
 * (their map's layout, read from there by the BTF test).
 *
 * toe_fwd_scratch: PERCPU_ARRAY[1], the admission's large records off
 * the program's stack, which on 6.1 has no room for them beside the
 * policy search's (512 bytes for the whole chain of calls): conntrack's
 * word (80 bytes with IPv6's tuples), the flow's key (48) and the toe_fwd
 * entry being made (272).  The admission is its only user, and runs in softirq context
 * only (FORWARD, or tc egress of a packet the stack forwarded), which
 * does not nest on a CPU: one record a CPU.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct toe_fwd_scratch);
} toe_fwd_scratch SEC(".maps");

#define TOE_IPS_FINAL ((1UL << 3) | (1UL << 7) | (1UL << 8))

#define TOE_IP_CT_ESTABLISHED 0
#define TOE_IP_CT_IS_REPLY 3 /* also IP_CT_ESTABLISHED_REPLY */
#define TOE_IP_CT_UNTRACKED 7
#define TOE_CT_TCP_ESTABLISHED 3 /* TCP_CONNTRACK_ESTABLISHED */
#define TOE_NFCT_PTRMASK (~7UL)

/*
 * The conntrack entry attached to skb (a kernel pointer: the netfilter
 * program's skb, or tc's ctx) into c.  Returns 0 if there is one for TCP
 * or UDP, IPv4 or IPv6 (c->tu, c->family, c->reply, c->nat set), 1 if
 * there is none (or another protocol: c->nat then tells whether its
 * addresses or ports are translated), -1 if it could not be read;
 * c->tracked: whether there is one at all.  Not inlined: its tuples have
 * their own stack.
 */
/* unused where only the fast path includes this header */
static __noinline __attribute__((unused)) int nat_ct_read(void *skb,
							  struct toe_nat_ct *c)
{
	struct nf_conntrack_tuple tu[2];
	unsigned long nfct = 0, st = 0;
	struct nf_conn *ct;
	int i;

	__builtin_memset(c, 0, sizeof(*c));
	if (bpf_probe_read_kernel(
		    &nfct, sizeof(nfct),
		    (char *)skb + bpf_core_field_offset(struct sk_buff, _nfct)))
		return -1;
	ct = (struct nf_conn *)(nfct & TOE_NFCT_PTRMASK);
	c->notrack = (nfct & 7) == TOE_IP_CT_UNTRACKED;
	if (!ct || c->notrack)
		return 1;
	c->tracked = 1;
	if (bpf_core_read(&st, sizeof(st), &ct->status))
		return -1;
	c->final = (st & TOE_IPS_FINAL) == TOE_IPS_FINAL;
	if (bpf_core_field_exists(ct->zone))
		c->zone = BPF_CORE_READ(ct, zone.id);
	if (bpf_core_read(&tu[0], sizeof(tu[0]), &ct->tuplehash[0].tuple) ||
	    bpf_core_read(&tu[1], sizeof(tu[1]), &ct->tuplehash[1].tuple))
		return -1;
	c->reply = (nfct & 7) >= TOE_IP_CT_IS_REPLY;
	for (i = 0; i < 4; i++)
		c->nat |= tu[0].src.u3.all[i] != tu[1].dst.u3.all[i] ||
			  tu[0].dst.u3.all[i] != tu[1].src.u3.all[i];
	c->nat |= tu[0].src.u.all != tu[1].dst.u.all ||
		  tu[0].dst.u.all != tu[1].src.u.all;
	c->udp = tu[0].dst.protonum == TOE_IPPROTO_UDP;
	/* UDP: conntrack saw the reply (its ctinfo says so), nothing more */
	if ((nfct & 7) == TOE_IP_CT_ESTABLISHED ||
	    (nfct & 7) == TOE_IP_CT_IS_REPLY)
		c->est = c->udp || (tu[0].dst.protonum == TOE_IPPROTO_TCP &&
				    BPF_CORE_READ(ct, proto.tcp.state) ==
					    TOE_CT_TCP_ESTABLISHED);
	if ((tu[0].src.l3num != AF_INET && tu[0].src.l3num != AF_INET6) ||
	    (tu[0].dst.protonum != TOE_IPPROTO_TCP && !c->udp))
		return 1;
	c->family = tu[0].src.l3num == AF_INET ? TOE_AF_INET : TOE_AF_INET6;
	for (i = 0; i < 2; i++) {
		/* (an IPv4 address is all[0], the rest of all[] zero) */
		__builtin_memcpy(c->tu[i].saddr, tu[i].src.u3.all, 16);
		__builtin_memcpy(c->tu[i].daddr, tu[i].dst.u3.all, 16);
		c->tu[i].sport = tu[i].src.u.all;
		c->tu[i].dport = tu[i].dst.u.all;
	}
	c->tuples = 1;
	return 0;
}

/*
 * The key of a packet the stack forwarded, from its conntrack entry c: the
 * canonical key of the original tuple into ck; returns the end that sent
 * the packet (0 = laddr, 1 = raddr).
 */
static __always_inline int nat_admit_key(const struct toe_nat_ct *c,
					 struct toe_flow_key *ck)
{
	int csrc =
		nat_key(&c->tu[0], c->family, c->udp ? TOE_IPPROTO_UDP : 0, ck);

	return c->reply ? !csrc : csrc;
}

/*
 * A NATed flow admitted under key ck: its tuples into v, and the reply
 * tuple's key into toe_fwd_nat, naming ck.
 */
static __always_inline void nat_admit(const struct toe_nat_ct *c,
				      const struct toe_flow_key *ck,
				      struct toe_fwd *v)
{
	struct toe_flow_key rk;

	v->nat = 1;
	__builtin_memcpy(v->nat_tu, c->tu, sizeof(v->nat_tu));
	nat_key(&c->tu[1], ck->family, ck->proto, &rk);
	bpf_map_update_elem(&toe_fwd_nat, &rk, ck, BPF_ANY);
}

#endif /* __TOE_NAT_H */
