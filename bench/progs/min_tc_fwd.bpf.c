// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The minimal tc forwarder (bench/progs/min_fwd.h), on tc ingress: route
 * lookup on the skb (no MTU check: a GRO skb's segments are the egress's
 * size on the bench's veths), TTL, then bpf_redirect_peer() into the peer
 * of an egress marked in min_peer (a veth whose peer is in another
 * namespace: the bench marks them), bpf_redirect() with the MACs written
 * to any other, or bpf_redirect_neigh() when the kernel has no neighbour
 * yet (not into a peer).  Counted per skb redirected, in GSO segments (as
 * the kernel's forwarded counter counts them).  Anything else: TC_ACT_OK.
 */
#include "min_fwd.h"

#define MIN_TC_ACT_OK 0
#define MIN_PEER_SLOTS 1024

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MIN_PEER_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} min_peer SEC(".maps");

SEC("tc")
int min_tc_fwd(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct bpf_fib_lookup fp = {};
	__u32 *peer, segs = skb->gso_segs ? skb->gso_segs : 1;
	void *ip = NULL;
	long rc;

	if (!min_fib_in(data, data_end, &fp, &ip))
		return MIN_TC_ACT_OK;
	fp.tot_len = 0;
	fp.ifindex = skb->ingress_ifindex;
	rc = bpf_fib_lookup(skb, &fp, sizeof(fp), 0);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH)
		return MIN_TC_ACT_OK;
	peer = bpf_map_lookup_elem(&min_peer, &fp.ifindex);
	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH) {
		if (peer && *peer)
			return MIN_TC_ACT_OK;
		min_write(data, ip, &fp, false);
		min_count(segs);
		return bpf_redirect_neigh(fp.ifindex, NULL, 0, 0);
	}
	min_write(data, ip, &fp, true);
	min_count(segs);
	if (peer && *peer)
		return bpf_redirect_peer(fp.ifindex, 0);
	return bpf_redirect(fp.ifindex, 0);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
