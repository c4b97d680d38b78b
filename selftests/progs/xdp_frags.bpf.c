// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* An XDP program that takes multi-buffer frames (xdp.frags: loaded with
 * BPF_F_XDP_HAS_FRAGS): the kernel refuses it in a program array whose
 * owner does not, so opentoe cannot chain it (loader/test_chain_refused.sh).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("xdp.frags")
int xdp_frags(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
