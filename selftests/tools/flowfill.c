// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Test helper: fill a pinned toe_flows map with N host-decided records
 * (keys 10.99.x.x:port -> 10.98.x.x:port, all distinct), in batches, and
 * print how many it wrote and how many records the map then holds (an
 * LRU map may have evicted some).  Usage: flowfill [--fwd] MAP_PATH N
 * For measuring what a full flow table costs (selftests/metrics).
 * --fwd: the map is toe_fwd, filled with established routed flows of a
 * namespace that does not exist (cookie ~0: no packet ever matches them),
 * for what a full forward table costs toed (selftests/xdp).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include "opentoe.h"

#define BATCH 4096

/* The records the map holds now. */
static unsigned long count(int fd)
{
	struct toe_flow_key k, next;
	unsigned long n = 0;
	void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		n++;
	}
	return n;
}

/* One toe_fwd value: established, in no namespace that exists. */
static void fwd_value(struct toe_fwd *f)
{
	memset(f, 0, sizeof(*f));
	f->dev = 0;
	f->rule = TOE_RULE_NONE;
	f->state = TOE_FWD_ESTABLISHED;
	f->netns = ~0ULL;
}

int main(int argc, char **argv)
{
	struct toe_flow_key *k = calloc(BATCH, sizeof(*k));
	struct toe_flow *v = calloc(BATCH, sizeof(*v));
	struct toe_fwd *fv = calloc(BATCH, sizeof(*fv));
	unsigned long n, i, done = 0;
	bool fwd = argc > 1 && !strcmp(argv[1], "--fwd");
	__u32 cnt;
	int fd, b, ret = 1;

	argv += fwd;
	argc -= fwd;
	if (argc != 3 || !k || !v || !fv) {
		fprintf(stderr, "usage: flowfill [--fwd] MAP_PATH N\n");
		goto out;
	}
	n = strtoul(argv[2], NULL, 10);
	fd = bpf_obj_get(argv[1]);
	if (fd < 0) {
		fprintf(stderr, "flowfill: %s: %s\n", argv[1], strerror(errno));
		goto out;
	}
	for (i = 0; i < n; i += cnt) {
		cnt = n - i < BATCH ? n - i : BATCH;
		for (b = 0; b < (int)cnt; b++) {
			unsigned long x = i + b;

			memset(&k[b], 0, sizeof(k[b]));
			k[b].family = TOE_AF_INET;
			k[b].laddr[0] = htonl(0x0a630000 | (x >> 16));
			k[b].raddr[0] = htonl(0x0a620000 | (x & 0xffff));
			k[b].lport = 40000;
			k[b].rport = 1 + (x & 0x7fff);
			memset(&v[b], 0, sizeof(v[b]));
			v[b].dev = TOE_DEV_NONE;
			v[b].rule = TOE_RULE_NONE;
			v[b].decision = TOE_ACT_HOST;
			v[b].reason = TOE_R_DEFAULT;
			v[b].state = 1;
			fwd_value(&fv[b]);
		}
		if (bpf_map_update_batch(fd, k, fwd ? (void *)fv : (void *)v,
					 &cnt, NULL)) {
			fprintf(stderr, "flowfill: batch at %lu: %s\n", i,
				strerror(errno));
			goto out;
		}
		done += cnt;
	}
	printf("%lu %lu\n", done, count(fd));
	ret = 0;
out:
	free(k);
	free(v);
	free(fv);
	return ret;
}
