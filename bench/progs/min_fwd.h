/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * What bench/progs/min_xdp_fwd.bpf.c and min_tc_fwd.bpf.c share: the
 * reference forwarders of make bench-xdp and make bench-forward (benchmark
 * code, never loaded by opentoe).  Each is the smallest program that
 * forwards as the kernel's samples/bpf/xdp_fwd does: parse Ethernet and
 * IPv4/IPv6 (no VLAN, no options check beyond the header), bpf_fib_lookup()
 * on the ingress interface, TTL or hop limit down (IPv4: the header
 * checksum fixed incrementally), the MACs from the lookup, the redirect.
 * Its one addition is the proof a benchmark needs (bench/lib.sh): a per-CPU
 * count of the packets it redirected, min_fwd_cnt[0], which the bench reads
 * with bpftool.  Anything else goes to the stack (XDP_PASS, TC_ACT_OK).
 */
#ifndef __MIN_FWD_H
#define __MIN_FWD_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define MIN_AF_INET 2
#define MIN_AF_INET6 10
#define MIN_ETH_P_IP 0x0800
#define MIN_ETH_P_IPV6 0x86DD

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} min_fwd_cnt SEC(".maps");

static __always_inline void min_count(__u64 n)
{
	__u32 zero = 0;
	__u64 *c = bpf_map_lookup_elem(&min_fwd_cnt, &zero);

	if (c)
		*c += n;
}

/*
 * As the kernel's ip_decrease_ttl(): TTL down, checksum fixed.
 * MIN_TEST_RUN (min_xdp_fwd_run.bpf.c): computed, not stored (volatile
 * sinks: the compiler keeps the work).
 */
static __always_inline void min_ttl4(struct iphdr *iph)
{
	__u32 check = iph->check;

	check += bpf_htons(0x0100);
#ifdef MIN_TEST_RUN
	{
		volatile __u16 c = (__u16)(check + (check >= 0xFFFF));
		volatile __u8 t = iph->ttl - 1;

		(void)c;
		(void)t;
	}
#else
	iph->check = (__u16)(check + (check >= 0xFFFF));
	iph->ttl--;
#endif
}

/*
 * The lookup's input from the frame at data (Ethernet first); false if it
 * is not IPv4 or IPv6, or its TTL would expire here.  *ip: its IP header.
 */
static __always_inline bool min_fib_in(void *data, void *data_end,
				       struct bpf_fib_lookup *fp, void **ip)
{
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return false;
	if (eth->h_proto == bpf_htons(MIN_ETH_P_IP)) {
		struct iphdr *iph = (void *)(eth + 1);

		if ((void *)(iph + 1) > data_end || iph->ttl <= 1)
			return false;
		fp->family = MIN_AF_INET;
		fp->tos = iph->tos;
		fp->l4_protocol = iph->protocol;
		fp->tot_len = bpf_ntohs(iph->tot_len);
		fp->ipv4_src = iph->saddr;
		fp->ipv4_dst = iph->daddr;
		*ip = iph;
		return true;
	}
	if (eth->h_proto == bpf_htons(MIN_ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end || ip6->hop_limit <= 1)
			return false;
		fp->family = MIN_AF_INET6;
		fp->flowinfo = *(__be32 *)ip6 & bpf_htonl(0x0fffffff);
		fp->l4_protocol = ip6->nexthdr;
		fp->tot_len = bpf_ntohs(ip6->payload_len) + sizeof(*ip6);
		__builtin_memcpy(fp->ipv6_src, &ip6->saddr, 16);
		__builtin_memcpy(fp->ipv6_dst, &ip6->daddr, 16);
		*ip = ip6;
		return true;
	}
	return false;
}

/* The writes once the route is known: TTL (hop limit) down, the MACs. */
static __always_inline void
min_write(void *data, void *ip, const struct bpf_fib_lookup *fp, bool macs)
{
	struct ethhdr *eth = data;

	if (fp->family == MIN_AF_INET)
		min_ttl4(ip);
	else
#ifdef MIN_TEST_RUN
		(void)ip;
#else
		((struct ipv6hdr *)ip)->hop_limit--;
#endif
	if (macs) {
		__builtin_memcpy(eth->h_dest, fp->dmac, 6);
		__builtin_memcpy(eth->h_source, fp->smac, 6);
	}
}

#endif /* __MIN_FWD_H */
