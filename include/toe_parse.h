/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toe_parse.h - opentoe packet parser, shared by the XDP program and user space.
 *
 * One parser, compiled twice: into the XDP datapath (bpf/opentoe.bpf.c, after
 * "vmlinux.h", <bpf/bpf_helpers.h> and <bpf/bpf_endian.h>) and into the
 * user-space reference that the selftests compare it with
 * (selftests/parser/, after <linux/types.h>).  It therefore includes nothing,
 * uses only __u8/__u16/__u32/__u64/__be16/__be32, and names everything it
 * defines with a toe_ / TOE_ prefix so that it never collides with vmlinux.h.
 *
 * API
 * ---
 *   int toe_parse(const void *data, const void *data_end, struct toe_pkt *p);
 *
 * parses one Ethernet frame [data, data_end) and returns an enum
 * toe_parse_result.  TOE_P_TCP means a TCP segment that opentoe may handle:
 * every field of *p is valid.  Anything else means "leave the packet to the
 * stack" (XDP_PASS, untouched) and the code is the reason, to be counted in a
 * per-reason counter (toe_parse_result_names[] names them for user space).
 * opentoe never drops a packet because of what the parser says.
 *
 * What is accepted (in packet order; the first failing check decides):
 *   L2  Ethernet, then 0, 1 or 2 VLAN tags, each 802.1Q (0x8100) or 802.1ad
 *       (0x88a8) in any order.  A third tag: TOE_P_TOO_MANY_VLAN.  Final
 *       ethertype IPv4 or IPv6: parsed; ARP: TOE_P_NOT_TCP; anything else
 *       (including 802.3 length fields): TOE_P_UNKNOWN_ETHERTYPE.
 *   IPv4  20 bytes present (else TRUNC_L3), version 4 (BAD_VERSION), IHL >= 5
 *       (BAD_IHL), IHL*4 bytes present (TRUNC_L3), total length >= IHL*4
 *       (BAD_IPLEN).  Options are skipped, not interpreted; the header
 *       checksum is not verified (the stack does both).  MF set or fragment
 *       offset non-zero: TOE_P_FRAG (see below).  Protocol not TCP: NOT_TCP.
 *   IPv6  40 bytes present (TRUNC_L3), version 6 (BAD_VERSION).  Then up to
 *       TOE_IPV6_MAX_EXT extension headers among hop-by-hop (only as the first
 *       one, as in RFC 8200 and the kernel, else TOE_P_BAD_EXT), routing,
 *       destination options and fragment: each must be in the frame
 *       (TRUNC_L3) and inside the payload length (BAD_IPLEN).  One more
 *       extension header after the bound: TOE_P_TOO_MANY_EXT.  Final next
 *       header not TCP (UDP, ICMPv6, no-next-header, ESP, AH, ...): NOT_TCP.
 *       A payload length of 0 (jumbogram) leaves no room for the hop-by-hop
 *       header that must carry the jumbo option: BAD_IPLEN.
 *   TCP  20 bytes present (TRUNC_L4), data offset >= 5 (BAD_DOFF), data
 *       offset*4 bytes present (TRUNC_L4), TCP header inside the IP length
 *       (BAD_IPLEN), whole IP datagram inside the frame (TRUNC_IP).  Bytes
 *       after the IP datagram (Ethernet padding) are ignored.
 *
 * Fragments: every fragment, the first one included, is TOE_P_FRAG.  A first
 * fragment may hold a whole TCP header, but the rest of its datagram would
 * take the stack's path: the flow's accounting and forwarding would be split
 * between two paths.  TCP over IP fragments is rare (PMTU discovery, MSS), so
 * opentoe leaves all of them to the stack.  IPv6 "atomic fragments" (a
 * fragment header with offset 0 and M clear, RFC 6946) are whole datagrams
 * and are parsed through.
 *
 * struct toe_pkt is cleared first, then filled in packet order, so after a
 * failure it holds what was parsed before it (useful for counters):
 *   - L2: nvlan, vlan_tci[], eth_proto, l3_off;
 *   - after the fixed IP header checks: family, ttl, ttl_off, saddr, daddr,
 *     ip_payload_len, and l4proto = IPv4 protocol / IPv6 next header;
 *   - IPv6 extension headers: n_ext as each one is validated; at the end of
 *     the chain (or at a fragment header) l4proto and l4_off;
 *   - IPv4: l4_off after the header checks;
 *   - TCP: sport, dport, seq, ack_seq, tcp_flags, payload_off after the data
 *     offset checks; payload_len only with TOE_P_TCP.
 *
 * For the forward path: TOE_P_TCP says the headers are sound, not that a
 * router may forward the packet untouched.  IPv4 options (l4_off - l3_off >
 * 20: record route, timestamp, source route) and IPv6 extension headers
 * (n_ext > 0: a routing header may name this host) need the stack's
 * processing; checking those two is the caller's policy.
 *
 * Verifier notes: every read is preceded by a bounds check of the same
 * pointer against data_end; both loops have constant bounds (TOE_MAX_VLAN,
 * TOE_IPV6_MAX_EXT); nothing is copied to the stack with a variable length.
 * Offsets are u16 (XDP frames are at most a page).
 */
#ifndef __TOE_PARSE_H
#define __TOE_PARSE_H

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#if defined(__bpf__) || defined(__BPF__)
#define TOE_PARSE_BPF 1 /* __u8 and friends come from vmlinux.h */
#else
#include <linux/types.h>
#endif

/* Byte order: our own, so that neither bpf_endian.h nor <endian.h> is needed. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define toe_htons(x) ((__be16)__builtin_bswap16((__u16)(x)))
#define toe_ntohs(x) ((__u16)__builtin_bswap16((__u16)(x)))
#define toe_htonl(x) ((__be32)__builtin_bswap32((__u32)(x)))
#define toe_ntohl(x) ((__u32)__builtin_bswap32((__u32)(x)))
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define toe_htons(x) ((__be16)(__u16)(x))
#define toe_ntohs(x) ((__u16)(x))
#define toe_htonl(x) ((__be32)(__u32)(x))
#define toe_ntohl(x) ((__u32)(x))
#else
#error "toe_parse.h: __BYTE_ORDER__ not defined"
#endif

#define TOE_AF_INET 2 /* = AF_INET */
#define TOE_AF_INET6 10 /* = AF_INET6 */

#define TOE_ETH_HLEN 14
#define TOE_VLAN_HLEN 4
#define TOE_ETH_P_IP 0x0800
#define TOE_ETH_P_ARP 0x0806
#define TOE_ETH_P_8021Q 0x8100
#define TOE_ETH_P_8021AD 0x88a8
#define TOE_ETH_P_IPV6 0x86dd
#define TOE_VLAN_VID(tci) ((tci)&0x0fff)

#define TOE_IPV4_HLEN 20
#define TOE_IPV6_HLEN 40
#define TOE_TCP_HLEN 20
#define TOE_UDP_HLEN 8

#define TOE_IPPROTO_HOPOPTS 0
#define TOE_IPPROTO_ICMP 1
#define TOE_IPPROTO_TCP 6
#define TOE_IPPROTO_UDP 17
#define TOE_IPPROTO_ROUTING 43
#define TOE_IPPROTO_FRAGMENT 44
#define TOE_IPPROTO_ICMPV6 58
#define TOE_IPPROTO_NONE 59
#define TOE_IPPROTO_DSTOPTS 60

/* TCP flags, byte 13 of the TCP header (tcp_flags below). */
#define TOE_TCP_FIN 0x01
#define TOE_TCP_SYN 0x02
#define TOE_TCP_RST 0x04
#define TOE_TCP_PSH 0x08
#define TOE_TCP_ACK 0x10
#define TOE_TCP_URG 0x20
#define TOE_TCP_ECE 0x40
#define TOE_TCP_CWR 0x80

/* Bounds of the two loops. */
#define TOE_MAX_VLAN 2
#define TOE_IPV6_MAX_EXT 8

enum toe_parse_result {
	TOE_P_TCP = 0, /* TCP segment, *p complete */
	TOE_P_NOT_TCP, /* well-formed, not TCP: ARP, UDP, ICMP, no-next-header... */
	TOE_P_TRUNC_L2, /* frame ends inside Ethernet header or a VLAN tag */
	TOE_P_TRUNC_L3, /* frame ends inside IPv4 header/options or IPv6 headers */
	TOE_P_TRUNC_L4, /* frame ends inside the TCP header (20 bytes or data offset) */
	TOE_P_TRUNC_IP, /* frame shorter than the IP datagram (total/payload length) */
	TOE_P_BAD_VERSION, /* IP version does not match the ethertype */
	TOE_P_BAD_IHL, /* IPv4 IHL < 5 */
	TOE_P_BAD_IPLEN, /* IP length shorter than the headers it must hold */
	TOE_P_BAD_DOFF, /* TCP data offset < 5 */
	TOE_P_BAD_EXT, /* IPv6 hop-by-hop header not first */
	TOE_P_FRAG, /* IP fragment, first or not */
	TOE_P_UNKNOWN_ETHERTYPE, /* not IPv4, IPv6, ARP or VLAN */
	TOE_P_TOO_MANY_VLAN, /* 3 or more VLAN tags */
	TOE_P_TOO_MANY_EXT, /* more than TOE_IPV6_MAX_EXT IPv6 extension headers */
	TOE_P__MAX
};

#ifndef TOE_PARSE_BPF
static const char *const toe_parse_result_names[TOE_P__MAX]
	__attribute__((unused)) = {
		[TOE_P_TCP] = "tcp",
		[TOE_P_NOT_TCP] = "not_tcp",
		[TOE_P_TRUNC_L2] = "trunc_l2",
		[TOE_P_TRUNC_L3] = "trunc_l3",
		[TOE_P_TRUNC_L4] = "trunc_l4",
		[TOE_P_TRUNC_IP] = "trunc_ip",
		[TOE_P_BAD_VERSION] = "bad_version",
		[TOE_P_BAD_IHL] = "bad_ihl",
		[TOE_P_BAD_IPLEN] = "bad_iplen",
		[TOE_P_BAD_DOFF] = "bad_doff",
		[TOE_P_BAD_EXT] = "bad_ext",
		[TOE_P_FRAG] = "frag",
		[TOE_P_UNKNOWN_ETHERTYPE] = "unknown_ethertype",
		[TOE_P_TOO_MANY_VLAN] = "too_many_vlan",
		[TOE_P_TOO_MANY_EXT] = "too_many_ext",
	};
#endif

/*
 * Parser output.  Fixed layout, 68 bytes, no holes (checked below).
 * Offsets are from the start of the frame; addresses, ports, seq and ack are
 * in network order; everything else in host order.
 */
struct toe_pkt {
	__u8 family; /*  0 TOE_AF_INET / TOE_AF_INET6, 0 before IP */
	__u8 l4proto; /*  1 IPv4 protocol / final IPv6 next header */
	__u8 nvlan; /*  2 VLAN tags, 0..2 */
	__u8 n_ext; /*  3 IPv6 extension headers skipped */
	__u8 ttl; /*  4 IPv4 TTL / IPv6 hop limit */
	__u8 tcp_flags; /*  5 TOE_TCP_* */
	__be16 eth_proto; /*  6 ethertype after the VLAN tags */
	__u16 vlan_tci[TOE_MAX_VLAN]; /* 8 TCIs, outer first */
	__u16 ttl_off; /* 12 offset of ttl/hop limit */
	__u16 l3_off; /* 14 IP header */
	__u16 l4_off; /* 16 TCP header (IPv6: after extension headers) */
	__u16 payload_off; /* 18 TCP payload */
	__u16 ip_payload_len; /* 20 IPv4 total length - IHL*4 / IPv6 payload length */
	__u16 payload_len; /* 22 TCP payload bytes (per IP length) */
	__be16 sport; /* 24 */
	__be16 dport; /* 26 */
	__be32 seq; /* 28 */
	__be32 ack_seq; /* 32 */
	union { /* 36 IPv4: first 4 bytes, rest zero */
		__u8 saddr[16];
		__be32 saddr32[4];
	};
	union { /* 52 */
		__u8 daddr[16];
		__be32 daddr32[4];
	};
};

_Static_assert(sizeof(struct toe_pkt) == 68,
	       "struct toe_pkt has holes or padding");
_Static_assert(__builtin_offsetof(struct toe_pkt, ttl_off) == 12,
	       "toe_pkt layout");
_Static_assert(__builtin_offsetof(struct toe_pkt, sport) == 24,
	       "toe_pkt layout");
_Static_assert(__builtin_offsetof(struct toe_pkt, saddr) == 36,
	       "toe_pkt layout");

/*
 * Unaligned loads of header fields, raw (network order).  Packet data is not
 * aligned (IP starts at offset 14).  BPF: the verifier accepts unaligned
 * packet loads on this architecture, and a plain load is one instruction.
 * User space: memcpy, which the compiler turns into one load, without the
 * undefined behaviour of a misaligned dereference.
 */
#ifdef TOE_PARSE_BPF
#define toe_ld16(ptr) (*(const __u16 *)(ptr))
#define toe_ld32(ptr) (*(const __u32 *)(ptr))
#else
static __always_inline __u16 toe_ld16(const __u8 *ptr)
{
	__u16 v;

	__builtin_memcpy(&v, ptr, sizeof(v));
	return v;
}

static __always_inline __u32 toe_ld32(const __u8 *ptr)
{
	__u32 v;

	__builtin_memcpy(&v, ptr, sizeof(v));
	return v;
}
#endif

/*
 * Copy n (4 or 16, constant) address bytes from the packet into dst, in
 * 32-bit words: byte stores would cost 4 times the instructions and stall a
 * consumer's word loads (store forwarding).
 */
static __always_inline void toe_copy_addr(__be32 *dst, const __u8 *src, int n)
{
	int i;

	for (i = 0; i < n / 4; i++)
		dst[i] = toe_ld32(src + 4 * i);
}

/*
 * x & mask, kept by the compiler.  The verifier of kernels before 6.x (6.1
 * here) does not follow the bounds of a byte swap: toe_ntohs() of the IP
 * length is an unbounded scalar to it, and an unbounded scalar added to a
 * packet pointer is refused ("math between pkt pointer and register with
 * unbounded min value").  The compiler knows the value is small and would
 * drop a plain mask; the empty asm hides the value from it, so the AND
 * reaches the verifier.  Callers pass a mask no valid value exceeds, so it
 * changes nothing (user space: the plain mask).
 */
#ifdef TOE_PARSE_BPF
#define toe_bound(x, mask)                        \
	({                                        \
		__u32 __toe_v = (x);              \
		asm volatile("" : "+r"(__toe_v)); \
		__toe_v &(mask);                  \
	})
#else
#define toe_bound(x, mask) ((x) & (mask))
#endif

/*
 * TCP header at offset off; the IP datagram ends at offset ip_end (from the
 * IP length field, not from data_end).
 */
static __always_inline int toe_parse_tcp(const __u8 *d, const __u8 *end,
					 __u32 off, __u32 ip_end,
					 struct toe_pkt *p)
{
	const __u8 *th = d + off;
	__u32 doff;

	if (th + TOE_TCP_HLEN > end)
		return TOE_P_TRUNC_L4;
	doff = (__u32)(th[12] >> 4) * 4;
	if (doff < TOE_TCP_HLEN)
		return TOE_P_BAD_DOFF;
	if (th + doff > end)
		return TOE_P_TRUNC_L4;

	p->sport = toe_ld16(th);
	p->dport = toe_ld16(th + 2);
	p->seq = toe_ld32(th + 4);
	p->ack_seq = toe_ld32(th + 8);
	p->tcp_flags = th[13];
	p->payload_off = off + doff;

	if (off + doff > ip_end)
		return TOE_P_BAD_IPLEN;
	/* Compared, never dereferenced: the datagram must fit in the frame. */
	if (d + toe_bound(ip_end, 0x1ffff) > end)
		return TOE_P_TRUNC_IP;
	p->payload_len = ip_end - (off + doff);
	return TOE_P_TCP;
}

static __always_inline int toe_parse_ipv4(const __u8 *d, const __u8 *end,
					  __u32 off, struct toe_pkt *p)
{
	const __u8 *ip = d + off;
	__u32 hlen, tot;

	if (ip + TOE_IPV4_HLEN > end)
		return TOE_P_TRUNC_L3;
	if ((ip[0] >> 4) != 4)
		return TOE_P_BAD_VERSION;
	hlen = (__u32)(ip[0] & 0x0f) * 4;
	if (hlen < TOE_IPV4_HLEN)
		return TOE_P_BAD_IHL;
	if (ip + hlen > end)
		return TOE_P_TRUNC_L3;
	tot = toe_ntohs(toe_ld16(ip + 2));
	if (tot < hlen)
		return TOE_P_BAD_IPLEN;

	p->family = TOE_AF_INET;
	p->ttl = ip[8];
	p->ttl_off = off + 8;
	p->l4proto = ip[9];
	p->ip_payload_len = tot - hlen;
	toe_copy_addr(p->saddr32, ip + 12, 4);
	toe_copy_addr(p->daddr32, ip + 16, 4);
	p->l4_off = off + hlen;

	/* MF or a fragment offset: any fragment, first one included. */
	if (toe_ld16(ip + 6) & toe_htons(0x3fff))
		return TOE_P_FRAG;
	if (ip[9] != TOE_IPPROTO_TCP)
		return TOE_P_NOT_TCP;
	return toe_parse_tcp(d, end, off + hlen, off + tot, p);
}

static __always_inline int toe_ipv6_is_ext(__u8 nh)
{
	return nh == TOE_IPPROTO_HOPOPTS || nh == TOE_IPPROTO_ROUTING ||
	       nh == TOE_IPPROTO_DSTOPTS || nh == TOE_IPPROTO_FRAGMENT;
}

static __always_inline int toe_parse_ipv6(const __u8 *d, const __u8 *end,
					  __u32 off, struct toe_pkt *p)
{
	const __u8 *ip = d + off;
	const __u8 *h;
	__u32 ip_end, len;
	__u8 nh;
	int i;

	if (ip + TOE_IPV6_HLEN > end)
		return TOE_P_TRUNC_L3;
	if ((ip[0] >> 4) != 6)
		return TOE_P_BAD_VERSION;

	p->family = TOE_AF_INET6;
	p->ttl = ip[7];
	p->ttl_off = off + 7;
	p->ip_payload_len = toe_ntohs(toe_ld16(ip + 4));
	toe_copy_addr(p->saddr32, ip + 8, 16);
	toe_copy_addr(p->daddr32, ip + 24, 16);
	nh = ip[6];
	p->l4proto = nh;
	ip_end = off + TOE_IPV6_HLEN + p->ip_payload_len;
	off += TOE_IPV6_HLEN;

	for (i = 0; i < TOE_IPV6_MAX_EXT; i++) {
		if (!toe_ipv6_is_ext(nh))
			break;
		if (nh == TOE_IPPROTO_HOPOPTS && i)
			return TOE_P_BAD_EXT;
		h = d + off;
		if (h + 8 > end)
			return TOE_P_TRUNC_L3;
		/* Fragment header: 8 bytes; the others: (hdr ext len + 1) * 8. */
		len = nh == TOE_IPPROTO_FRAGMENT ? 8 : ((__u32)h[1] + 1) * 8;
		if (h + len > end)
			return TOE_P_TRUNC_L3;
		if (off + len > ip_end)
			return TOE_P_BAD_IPLEN;
		p->n_ext = i + 1;
		/* Offset (13 bits) or M set: a fragment; else atomic, go on. */
		if (nh == TOE_IPPROTO_FRAGMENT &&
		    (toe_ld16(h + 2) & toe_htons(0xfff9))) {
			p->l4proto = h[0];
			p->l4_off = off + 8;
			return TOE_P_FRAG;
		}
		nh = h[0];
		off += len;
	}
	p->l4proto = nh;
	p->l4_off = off;
	if (toe_ipv6_is_ext(nh))
		return TOE_P_TOO_MANY_EXT;
	if (nh != TOE_IPPROTO_TCP)
		return TOE_P_NOT_TCP;
	return toe_parse_tcp(d, end, off, ip_end, p);
}

static __always_inline int toe_is_vlan(__be16 proto)
{
	return proto == toe_htons(TOE_ETH_P_8021Q) ||
	       proto == toe_htons(TOE_ETH_P_8021AD);
}

static __always_inline int toe_parse(const void *data, const void *data_end,
				     struct toe_pkt *p)
{
	const __u8 *d = (const __u8 *)data, *end = (const __u8 *)data_end;
	const __u8 *h;
	__u32 off = TOE_ETH_HLEN;
	__be16 proto;
	int i;

	__builtin_memset(p, 0, sizeof(*p));
	if (d + TOE_ETH_HLEN > end)
		return TOE_P_TRUNC_L2;
	proto = toe_ld16(d + 12);

	for (i = 0; i < TOE_MAX_VLAN; i++) {
		if (!toe_is_vlan(proto))
			break;
		h = d + off;
		if (h + TOE_VLAN_HLEN > end)
			return TOE_P_TRUNC_L2;
		p->vlan_tci[i] = toe_ntohs(toe_ld16(h));
		p->nvlan = i + 1;
		proto = toe_ld16(h + 2);
		off += TOE_VLAN_HLEN;
	}
	p->eth_proto = proto;
	p->l3_off = off;
	if (toe_is_vlan(proto))
		return TOE_P_TOO_MANY_VLAN;

	if (proto == toe_htons(TOE_ETH_P_IP))
		return toe_parse_ipv4(d, end, off, p);
	if (proto == toe_htons(TOE_ETH_P_IPV6))
		return toe_parse_ipv6(d, end, off, p);
	if (proto == toe_htons(TOE_ETH_P_ARP))
		return TOE_P_NOT_TCP;
	return TOE_P_UNKNOWN_ETHERTYPE;
}

/*
 * The UDP datagram of a frame toe_parse() said was not TCP (res, and *p as
 * it left it: TOE_P_NOT_TCP with l4proto UDP, so every header before UDP's
 * passed its checks, and no fragment): for the forward path only (routed UDP flows).  Returns 0
 * and fills sport, dport, payload_off and payload_len if the 8-byte header
 * is in the frame, its length field is the datagram's L4 length exactly
 * (at least 8; the kernel would trim a shorter one, a router forwards it
 * as it is: either way not one to take), the datagram ends within len
 * bytes (the frame's, or the skb's: its payload may not be linear), and,
 * over IPv6, its checksum is not zero (RFC 8200 forbids it; the stack
 * judges such a datagram).  Nonzero otherwise: the frame goes to the
 * stack untouched.  tcp_flags, seq and ack_seq stay zero.
 */
static __always_inline int toe_parse_udp(int res, const void *data,
					 const void *end, __u32 len,
					 struct toe_pkt *p)
{
	const __u8 *d = (const __u8 *)data;
	const __u8 *uh;
	__u32 off = p->l4_off, ip_end, ulen;

	if (res != TOE_P_NOT_TCP || p->l4proto != TOE_IPPROTO_UDP || !p->family)
		return -1;
	ip_end = p->ip_payload_len + (p->family == TOE_AF_INET ?
					      (__u32)p->l4_off :
					      (__u32)p->l3_off + TOE_IPV6_HLEN);
	uh = d + toe_bound(off, 0xfff);
	if (uh + TOE_UDP_HLEN > (const __u8 *)end)
		return -1;
	ulen = toe_ntohs(toe_ld16(uh + 4));
	if (ulen < TOE_UDP_HLEN || off + ulen != ip_end || ip_end > len)
		return -1;
	if (p->family == TOE_AF_INET6 && !toe_ld16(uh + 6))
		return -1;
	p->sport = toe_ld16(uh);
	p->dport = toe_ld16(uh + 2);
	p->payload_off = off + TOE_UDP_HLEN;
	p->payload_len = ulen - TOE_UDP_HLEN;
	return 0;
}

#endif /* __TOE_PARSE_H */
