// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The minimal XDP forwarder (bench/progs/min_fwd.h): route lookup, TTL,
 * MACs and bpf_redirect_map() into min_tx, a devmap the bench fills with
 * the egress interfaces (key and value: the ifindex), as the kernel's
 * samples/bpf/xdp_fwd does.  An egress not in min_tx, no route, or no
 * neighbour: XDP_PASS, the frame untouched.  The lookup checks the MTU
 * (tot_len), as xdp_fwd's does.
 */
#include "min_fwd.h"

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} min_tx SEC(".maps");

SEC("xdp")
int min_xdp_fwd(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bpf_fib_lookup fp = {};
	void *ip = NULL;
	long rc;

	if (!min_fib_in(data, data_end, &fp, &ip))
		return XDP_PASS;
	fp.ifindex = ctx->ingress_ifindex;
	rc = bpf_fib_lookup(ctx, &fp, sizeof(fp), 0);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS ||
	    !bpf_map_lookup_elem(&min_tx, &fp.ifindex))
		return XDP_PASS;
	min_write(data, ip, &fp, true);
	rc = bpf_redirect_map(&min_tx, fp.ifindex, 0);
	if (rc == XDP_REDIRECT)
		min_count(1);
	return rc;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
