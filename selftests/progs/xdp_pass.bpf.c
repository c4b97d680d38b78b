// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The floor for the XDP benchmark: an XDP program that only passes. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
