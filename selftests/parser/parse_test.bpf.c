// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * parse_test.bpf.c - XDP harness for include/toe_parse.h.
 *
 * Parses the frame with toe_parse() into a stack struct (as the datapath
 * does), publishes the result code and the struct in .bss for the user-space
 * tester (read through the skeleton's mmap of .bss), counts its runs so the
 * tester can tell the program really ran, and always returns XDP_PASS.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "toe_parse.h"

struct toe_pkt out_pkt;
int out_res;
__u64 runs;

SEC("xdp")
int parse_test(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct toe_pkt pkt;

	out_res = toe_parse(data, data_end, &pkt);
	__builtin_memcpy(&out_pkt, &pkt, sizeof(pkt));
	runs++;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
