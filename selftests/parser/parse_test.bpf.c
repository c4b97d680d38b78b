// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * parse_test.bpf.c - XDP harness for include/toe_parse.h.
 *
 * Parses the frame with toe_parse() into a stack struct (as the datapath
 * does), publishes the result code and the struct in .bss for the user-space
 * tester (read through the skeleton's mmap of .bss), counts its runs so the
 * tester can tell the program really ran, and always returns XDP_PASS.
 * parse_bench and pass_only are for the benchmark.
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

/*
 * Benchmark: parse, then read the fields a flow lookup and the forward path
 * use, field by field as the datapath does, folded into one word so that
 * nothing is optimised away.  (parse_test's 68-byte copy of the whole struct
 * costs more than the parse: its word loads wait on the parser's narrower
 * stores.)
 */
__u32 bench_sink;

SEC("xdp")
int parse_bench(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct toe_pkt pkt;
	__u32 h;
	int r, i;

	r = toe_parse(data, data_end, &pkt);
	if (r == TOE_P_TCP) {
		h = pkt.family ^ pkt.l4proto ^ pkt.sport ^
		    ((__u32)pkt.dport << 16);
		for (i = 0; i < 4; i++)
			h ^= pkt.saddr32[i] ^ pkt.daddr32[i];
		h ^= pkt.seq ^ pkt.tcp_flags ^ pkt.payload_len ^ pkt.ttl_off;
	} else {
		h = r;
	}
	bench_sink = h;
	return XDP_PASS;
}

/* Baseline for the benchmark: the cost of BPF_PROG_TEST_RUN itself. */
SEC("xdp")
int pass_only(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
