// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * A stand-in for "another XDP program on the same interface" in the
 * coexistence tests: counts every packet it sees and drops UDP to port
 * 9 (discard), so a test can show that it still sees traffic and still
 * enforces its own verdict while opentoe is attached in front of it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} cnt SEC(".maps"); /* [0] packets seen, [1] packets dropped */

SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	struct udphdr *udp = (void *)(ip + 1);
	__u32 k = 0;
	__u64 *c = bpf_map_lookup_elem(&cnt, &k);

	if (c)
		__sync_fetch_and_add(c, 1);
	if ((void *)(udp + 1) > end || eth->h_proto != bpf_htons(0x0800) ||
	    ip->ihl != 5 || ip->protocol != 17 || udp->dest != bpf_htons(9))
		return XDP_PASS;
	k = 1;
	c = bpf_map_lookup_elem(&cnt, &k);
	if (c)
		__sync_fetch_and_add(c, 1);
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
