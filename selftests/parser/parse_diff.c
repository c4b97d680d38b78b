// SPDX-License-Identifier: GPL-2.0
/*
 * parse_diff - tests for include/toe_parse.h.
 *
 * The same parser is compiled into an XDP program (parse_test.bpf.c) and
 * into this program.  Every packet is run through both: the XDP program with
 * BPF_PROG_TEST_RUN, the user-space copy directly; the result codes and
 * every field of struct toe_pkt must agree.
 *
 *  1. A crafted corpus, each packet with its expected verdict (and, where the
 *     header builder knows it, the whole expected struct toe_pkt): every
 *     malformed case, every VLAN / IPv4 IHL / IPv6 extension header
 *     combination, truncation at every length of valid packets.  Agreement
 *     alone cannot catch a bug present in both copies; these expectations
 *     come from the builder, not from the parser.
 *  2. Differential fuzzing: random packets from random header specs, and
 *     mutations (bit flips, byte writes, insertions, deletions, truncation)
 *     of those and of corpus packets, from a seeded PRNG (seed printed).
 *
 * Output: "ok - <desc>" / "not ok - <desc>" per group, diagnostics otherwise
 * (the selftests/run.sh sub-result format).  Exit status 1 on any failure.
 *
 * XDP test runs need at least 14 bytes (ETH_HLEN): shorter frames go through
 * the user-space copy only, against their expected verdict.
 *
 * Usage: parse_diff [-n COUNT] [-s SEED] [-b] [-v]
 *   -n COUNT  random/mutated packets after the corpus (default 50000)
 *   -s SEED   PRNG seed (default: from the clock; printed either way)
 *   -b        also measure ns/packet with BPF_PROG_TEST_RUN repeat=1000000
 *   -v        print every group's result histogram
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "toe_parse.h"
#include "parse_test.skel.h"

#define MAXPKT 3072 /* XDP test_run takes up to 3520 linear bytes */
#define MAX_SHOWN 8 /* mismatches printed in full */
#define MAX_EXT 12

static struct parse_test_bpf *skel;
static int prog_fd;
static bool verbose;
static int failed; /* any "not ok" */

/* ------------------------------------------------------------------ */
/* PRNG: splitmix64, deterministic for a given seed.                   */

static __u64 rng_state;

static __u64 rnd64(void)
{
	__u64 z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static __u32 rnd(__u32 n) /* uniform-enough in [0, n) */
{
	return n ? (__u32)(rnd64() % n) : 0;
}

/* ------------------------------------------------------------------ */
/* Running one packet through both copies.                             */

struct group {
	const char *name;
	long n, bad, ref_only;
	long hist[TOE_P__MAX];
};

static long shown;

static const char *rname(int r)
{
	return r >= 0 && r < TOE_P__MAX ? toe_parse_result_names[r] : "?";
}

static void hexdump(const __u8 *b, __u32 len)
{
	__u32 i;

	for (i = 0; i < len; i++)
		printf("%s%02x%s", i % 16 ? "" : "    ", b[i],
		       i % 16 == 15 || i + 1 == len ? "\n" : " ");
}

static void dump_pkt(const char *who, const struct toe_pkt *p)
{
	int i;

	printf("    %-8s fam=%u l4=%u nvlan=%u n_ext=%u ttl=%u flags=0x%02x eth=0x%04x tci=%u,%u\n",
	       who, p->family, p->l4proto, p->nvlan, p->n_ext, p->ttl,
	       p->tcp_flags, toe_ntohs(p->eth_proto), p->vlan_tci[0],
	       p->vlan_tci[1]);
	printf("    %-8s ttl_off=%u l3=%u l4=%u pl_off=%u ip_pl_len=%u pl_len=%u sport=%u dport=%u seq=%u ack=%u\n",
	       "", p->ttl_off, p->l3_off, p->l4_off, p->payload_off,
	       p->ip_payload_len, p->payload_len, toe_ntohs(p->sport),
	       toe_ntohs(p->dport), toe_ntohl(p->seq), toe_ntohl(p->ack_seq));
	printf("    %-8s saddr=", "");
	for (i = 0; i < 16; i++)
		printf("%02x", p->saddr[i]);
	printf(" daddr=");
	for (i = 0; i < 16; i++)
		printf("%02x", p->daddr[i]);
	printf("\n");
}

static int run_bpf(const __u8 *pkt, __u32 len, int *res, struct toe_pkt *out)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt,
		    .data_size_in = len, .repeat = 1, );
	__u64 before = skel->bss->runs;

	if (bpf_prog_test_run_opts(prog_fd, &opts)) {
		printf("    BPF_PROG_TEST_RUN failed: %s\n", strerror(errno));
		return -1;
	}
	if (opts.retval != XDP_PASS) {
		printf("    XDP verdict %u, expected XDP_PASS\n", opts.retval);
		return -1;
	}
	if (skel->bss->runs != before + 1) {
		printf("    program did not run (runs %llu -> %llu)\n",
		       (unsigned long long)before,
		       (unsigned long long)skel->bss->runs);
		return -1;
	}
	*res = skel->bss->out_res;
	memcpy(out, &skel->bss->out_pkt, sizeof(*out));
	return 0;
}

/*
 * Run pkt through both copies.  want: expected result or -1 (agreement
 * only); want_pkt: expected struct or NULL.  Returns the result.
 */
static int check_pkt(struct group *g, const __u8 *pkt, __u32 len, int want,
		     const struct toe_pkt *want_pkt, const char *what)
{
	struct toe_pkt ref, kern;
	int rref, rkern = -1, bad = 0, ran_bpf = len >= TOE_ETH_HLEN;
	__u8 *copy;

	/*
	 * The user-space copy parses an exactly-sized heap copy, so that a
	 * sanitizer build would see any read past data_end.
	 */
	copy = malloc(len ? len : 1);
	if (!copy) {
		perror("malloc");
		exit(1);
	}
	memcpy(copy, pkt, len);
	rref = toe_parse(copy, copy + len, &ref);
	free(copy);

	if (ran_bpf) {
		if (run_bpf(pkt, len, &rkern, &kern))
			bad = 1;
		else if (rkern != rref || memcmp(&kern, &ref, sizeof(ref)))
			bad = 1;
	} else {
		g->ref_only++;
	}
	if (want >= 0 && rref != want)
		bad = 1;
	if (want_pkt && memcmp(want_pkt, &ref, sizeof(ref)))
		bad = 1;

	g->n++;
	if (rref >= 0 && rref < TOE_P__MAX)
		g->hist[rref]++;
	if (bad) {
		g->bad++;
		if (shown++ < MAX_SHOWN) {
			printf("  MISMATCH [%s] %s: len %u, ref %s, bpf %s, expected %s\n",
			       g->name, what, len, rname(rref),
			       ran_bpf ? rname(rkern) : "(not run, < 14 bytes)",
			       want >= 0 ? rname(want) : "(agreement only)");
			hexdump(pkt, len);
			dump_pkt("ref", &ref);
			if (ran_bpf)
				dump_pkt("bpf", &kern);
			if (want_pkt)
				dump_pkt("expected", want_pkt);
		}
	}
	return rref;
}

static void group_end(struct group *g, const char *fmt, ...)
{
	char desc[256], only[64] = "";
	va_list ap;
	int i;

	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	if (verbose || g->bad) {
		printf("  %s:", g->name);
		for (i = 0; i < TOE_P__MAX; i++)
			if (g->hist[i])
				printf(" %s=%ld", toe_parse_result_names[i],
				       g->hist[i]);
		printf("\n");
	}
	if (g->n == 0 || g->bad)
		failed = 1;
	if (g->ref_only)
		snprintf(only, sizeof(only), ", %ld of them user-space only",
			 g->ref_only);
	printf("%s - %s: %s (%ld packets%s, %ld bad)\n",
	       g->n && !g->bad ? "ok" : "not ok", g->name, desc, g->n, only,
	       g->bad);
}

/* ------------------------------------------------------------------ */
/* Packet builder: a header spec -> bytes, expected result and struct.  */

enum ext_kind {
	X_HBH,
	X_RT,
	X_DST,
	X_FRAG_ATOMIC,
	X_FRAG_FIRST,
	X_FRAG_LATER,
	X__N
};
static const char *const ext_names[X__N] = { "hbh",   "rt",	 "dst",
					     "frag0", "frag1st", "fragN" };

struct spec {
	int nvlan; /* 0..4 tags written */
	__u16 tpid[4], tci[4];
	int ipv; /* 4, 6, or 0: ethertype below, no IP */
	__u16 ethertype; /* ipv == 0 */
	int ihl; /* IPv4: 5..15 */
	__u16 frag_off; /* IPv4 flags + offset, host order */
	__u8 ttl;
	int n_ext; /* IPv6 extension headers */
	__u8 ext[MAX_EXT]; /* enum ext_kind */
	__u8 ext_len[MAX_EXT]; /* hdr ext len field (not fragment) */
	__u8 l4; /* IPPROTO_* after IP / last ext header */
	int doff; /* TCP: 5..15 */
	int payload; /* bytes after the L4 header */
	int pad; /* bytes after the IP datagram */
	__u8 flags;
	__u16 sport, dport;
	__u32 seq, ack;
};

static void default_spec(struct spec *s)
{
	memset(s, 0, sizeof(*s));
	s->ipv = 4;
	s->ihl = 5;
	s->ttl = 64;
	s->l4 = TOE_IPPROTO_TCP;
	s->doff = 5;
	s->payload = 10;
	s->flags = TOE_TCP_ACK | TOE_TCP_PSH;
	s->sport = 40000;
	s->dport = 80;
	s->seq = 0x01020304;
	s->ack = 0xa0b0c0d0;
}

static void put16(__u8 *b, __u16 v)
{
	b[0] = v >> 8;
	b[1] = v;
}

static void put32(__u8 *b, __u32 v)
{
	put16(b, v >> 16);
	put16(b + 2, v);
}

static __u16 ip_csum(const __u8 *b, int len)
{
	__u32 sum = 0;
	int i;

	for (i = 0; i < len; i += 2)
		sum += (b[i] << 8) | b[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/*
 * Build s into b; return its length.  *res and *e receive the verdict and
 * struct the parser's contract (top of toe_parse.h) promises for it: this
 * is an independent model, written from the contract, not from the parser.
 */
static __u32 build(const struct spec *s, __u8 *b, int *res, struct toe_pkt *e)
{
	__u32 off = 0, l3, l4len, iplen, i, j;
	int r = -1; /* verdict, once known; e is then frozen */
	__u8 next;

	memset(e, 0, sizeof(*e));
	memset(b, 0, MAXPKT);
	memcpy(b, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	off = 12;
	for (i = 0; i < (__u32)s->nvlan; i++) {
		put16(b + off, s->tpid[i]);
		put16(b + off + 2, s->tci[i]);
		off += 4;
		if (i < TOE_MAX_VLAN) {
			e->vlan_tci[i] = s->tci[i];
			e->nvlan = i + 1;
		}
	}
	put16(b + off, s->ipv == 4 ? TOE_ETH_P_IP :
		       s->ipv == 6 ? TOE_ETH_P_IPV6 :
				     s->ethertype);
	off += 2;
	l3 = off;
	if (s->nvlan > TOE_MAX_VLAN) {
		e->eth_proto = toe_htons(s->tpid[TOE_MAX_VLAN]);
		e->l3_off = 14 + 4 * TOE_MAX_VLAN;
		r = TOE_P_TOO_MANY_VLAN;
	} else {
		e->eth_proto = toe_htons(s->ipv == 4 ? TOE_ETH_P_IP :
					 s->ipv == 6 ? TOE_ETH_P_IPV6 :
						       s->ethertype);
		e->l3_off = l3;
	}

	/* L4 length first: the IP headers carry it. */
	if (s->l4 == TOE_IPPROTO_TCP)
		l4len = s->doff * 4 + s->payload;
	else if (s->l4 == TOE_IPPROTO_NONE)
		l4len = 0;
	else
		l4len = 8 + s->payload;

	if (s->ipv == 0) {
		/* Non-IP payload: 46 bytes of pattern. */
		for (i = 0; i < 46; i++)
			b[off + i] = 0xa0 + i;
		if (r < 0)
			r = s->ethertype == TOE_ETH_P_ARP ?
				    TOE_P_NOT_TCP :
				    TOE_P_UNKNOWN_ETHERTYPE;
		*res = r;
		return off + 46;
	}

	if (s->ipv == 4) {
		__u32 hl = s->ihl * 4;

		iplen = hl + l4len;
		b[off] = 0x40 | s->ihl;
		put16(b + off + 2, iplen);
		put16(b + off + 4, 0x1234);
		put16(b + off + 6, s->frag_off);
		b[off + 8] = s->ttl;
		b[off + 9] = s->l4;
		put32(b + off + 12, 0x0a000001);
		put32(b + off + 16, 0xc0a80102);
		for (i = 20; i < hl; i++)
			b[off + i] = 1; /* NOP options */
		put16(b + off + 10, ip_csum(b + off, hl));
		if (r < 0) {
			e->family = TOE_AF_INET;
			e->l4proto = s->l4;
			e->ttl = s->ttl;
			e->ttl_off = off + 8;
			e->ip_payload_len = l4len;
			memcpy(e->saddr, b + off + 12, 4);
			memcpy(e->daddr, b + off + 16, 4);
			e->l4_off = off + hl;
			if (s->frag_off & 0x3fff)
				r = TOE_P_FRAG;
			else if (s->l4 != TOE_IPPROTO_TCP)
				r = TOE_P_NOT_TCP;
		}
		off += hl;
	} else {
		__u32 extlen = 0, ip6 = off;

		for (i = 0; i < (__u32)s->n_ext; i++)
			extlen += s->ext[i] >= X_FRAG_ATOMIC ?
					  8 :
					  (s->ext_len[i] + 1) * 8;
		iplen = 40 + extlen + l4len;
		b[off] = 0x60;
		b[off + 1] = 0x0a; /* traffic class / flow label */
		b[off + 3] = 0x42;
		put16(b + off + 4, extlen + l4len);
		b[off + 7] = s->ttl;
		put32(b + off + 8, 0x20010db8);
		b[off + 23] = 1;
		put32(b + off + 24, 0x20010db8);
		b[off + 27] = 0x99;
		b[off + 39] = 2;
		if (r < 0) {
			e->family = TOE_AF_INET6;
			e->ttl = s->ttl;
			e->ttl_off = off + 7;
			e->ip_payload_len = extlen + l4len;
			memcpy(e->saddr, b + off + 8, 16);
			memcpy(e->daddr, b + off + 24, 16);
		}
		off += 40;
		for (i = 0; i <= (__u32)s->n_ext; i++) {
			static const __u8 proto[X__N] = {
				TOE_IPPROTO_HOPOPTS,  TOE_IPPROTO_ROUTING,
				TOE_IPPROTO_DSTOPTS,  TOE_IPPROTO_FRAGMENT,
				TOE_IPPROTO_FRAGMENT, TOE_IPPROTO_FRAGMENT
			};
			__u32 hl;

			next = i < (__u32)s->n_ext ? proto[s->ext[i]] : s->l4;
			/* "next header" of the previous header */
			b[i ? off - (s->ext[i - 1] >= X_FRAG_ATOMIC ?
					     8 :
					     (s->ext_len[i - 1] + 1) * 8) :
			      ip6 + 6] = next;
			if (i == 0 && r < 0)
				e->l4proto = next;
			if (i == (__u32)s->n_ext)
				break;
			if (r < 0 && i == TOE_IPV6_MAX_EXT) {
				e->l4proto = next;
				e->l4_off = off;
				r = TOE_P_TOO_MANY_EXT;
			}
			if (r < 0 && s->ext[i] == X_HBH && i) {
				r = TOE_P_BAD_EXT;
			}
			switch (s->ext[i]) {
			case X_FRAG_ATOMIC:
			case X_FRAG_FIRST:
			case X_FRAG_LATER:
				hl = 8;
				put16(b + off + 2,
				      s->ext[i] == X_FRAG_ATOMIC ?
					      0 :
				      s->ext[i] == X_FRAG_FIRST ?
					      1 :
					      (185 << 3) | (i & 1));
				put32(b + off + 4, 0xdeadbeef);
				break;
			case X_RT:
				hl = (s->ext_len[i] + 1) * 8;
				b[off + 1] = s->ext_len[i];
				b[off + 2] = 4; /* segment routing */
				b[off + 3] = 0; /* segments left */
				break;
			default:
				hl = (s->ext_len[i] + 1) * 8;
				b[off + 1] = s->ext_len[i];
				b[off + 2] = 1; /* PadN */
				b[off + 3] = hl - 4;
				break;
			}
			if (r < 0) {
				e->n_ext = i + 1;
				if (s->ext[i] == X_FRAG_FIRST ||
				    s->ext[i] == X_FRAG_LATER) {
					e->l4proto =
						i + 1 < (__u32)s->n_ext ?
							proto[s->ext[i + 1]] :
							s->l4;
					e->l4_off = off + 8;
					r = TOE_P_FRAG;
				}
			}
			off += hl;
		}
		if (r < 0) {
			e->l4proto = s->l4;
			e->l4_off = off;
			if (s->l4 != TOE_IPPROTO_TCP)
				r = TOE_P_NOT_TCP;
		}
	}

	/* L4 */
	if (s->l4 == TOE_IPPROTO_TCP) {
		__u32 hl = s->doff * 4;

		put16(b + off, s->sport);
		put16(b + off + 2, s->dport);
		put32(b + off + 4, s->seq);
		put32(b + off + 8, s->ack);
		b[off + 12] = s->doff << 4;
		b[off + 13] = s->flags;
		put16(b + off + 14, 65535);
		for (i = 20; i < hl; i++)
			b[off + i] = 1; /* NOP options */
		if (r < 0) {
			e->l4proto = TOE_IPPROTO_TCP;
			e->sport = toe_htons(s->sport);
			e->dport = toe_htons(s->dport);
			e->seq = toe_htonl(s->seq);
			e->ack_seq = toe_htonl(s->ack);
			e->tcp_flags = s->flags;
			e->payload_off = off + hl;
			e->payload_len = s->payload;
			r = TOE_P_TCP;
		}
		off += hl;
	} else if (s->l4 != TOE_IPPROTO_NONE) {
		put16(b + off, s->sport); /* UDP-like 8 bytes */
		put16(b + off + 2, s->dport);
		put16(b + off + 4, 8 + s->payload);
		off += 8;
	}
	for (j = 0; j < (__u32)s->payload; j++)
		b[off + j] = 'a' + j % 26;
	off += s->payload;
	(void)iplen;
	for (j = 0; j < (__u32)s->pad; j++)
		b[off + j] = 0;
	off += s->pad;
	*res = r;
	return off;
}

/* End of the IP datagram of a packet built from a valid spec. */
static __u32 ip_end_of(const struct toe_pkt *e)
{
	return e->family == TOE_AF_INET ?
		       e->l4_off + e->ip_payload_len :
		       e->l3_off + TOE_IPV6_HLEN + e->ip_payload_len;
}

/* ------------------------------------------------------------------ */
/* The crafted corpus.                                                 */

/* Kept for the mutation fuzzer. */
#define CORPUS_MAX 20000
static struct {
	__u8 *b;
	__u32 len;
} corpus[CORPUS_MAX];
static int ncorpus;

static void corpus_add(const __u8 *b, __u32 len)
{
	if (ncorpus < CORPUS_MAX && len) {
		corpus[ncorpus].b = malloc(len);
		if (!corpus[ncorpus].b) {
			perror("malloc");
			exit(1);
		}
		memcpy(corpus[ncorpus].b, b, len);
		corpus[ncorpus++].len = len;
	}
}

static const __u16 tpids[2] = { TOE_ETH_P_8021Q, TOE_ETH_P_8021AD };

/* VLAN layouts: 0 tags, 1 tag (2 tpids), 2 tags (4 tpid pairs) = 7. */
#define N_VLAN_LAYOUTS 7
static void set_vlan(struct spec *s, int layout)
{
	s->nvlan = layout == 0 ? 0 : layout < 3 ? 1 : 2;
	if (layout >= 1 && layout < 3) {
		s->tpid[0] = tpids[layout - 1];
	} else if (layout >= 3) {
		s->tpid[0] = tpids[(layout - 3) >> 1];
		s->tpid[1] = tpids[(layout - 3) & 1];
	}
	s->tci[0] = 0x2000 | (100 + layout); /* PCP 1, VID 100+ */
	s->tci[1] = 0xe000 | (200 + layout); /* PCP 7 */
}

/* Build, check against the builder's expectation, keep in the corpus. */
static int check_spec(struct group *g, const struct spec *s, const char *what)
{
	__u8 b[MAXPKT];
	struct toe_pkt e;
	int r;
	__u32 len = build(s, b, &r, &e);

	corpus_add(b, len);
	return check_pkt(g, b, len, r, &e, what);
}

static void corpus_valid_ipv4(void)
{
	struct group g = { .name = "corpus IPv4" };
	int v, ihl, doff, pl;
	struct spec s;

	for (v = 0; v < N_VLAN_LAYOUTS; v++)
		for (ihl = 5; ihl <= 15; ihl++)
			for (doff = 5; doff <= 15; doff++)
				for (pl = 0; pl < 3; pl++) {
					default_spec(&s);
					set_vlan(&s, v);
					s.ihl = ihl;
					s.doff = doff;
					s.payload = pl == 0 ? 0 :
						    pl == 1 ? 1 :
							      1400 - 60;
					s.frag_off =
						pl == 1 ?
							0x4000 :
							0; /* DF: not a fragment */
					s.flags = 1 << pl;
					check_spec(&g, &s, "valid IPv4 TCP");
				}
	group_end(
		&g,
		"VLAN 0/1/2 (802.1Q/802.1ad) x IHL 5..15 x doff 5..15 x payload -> tcp, tuple as built");
}

static void chain_name(const struct spec *s, char *buf, size_t size)
{
	int i, n;

	n = snprintf(buf, size, "IPv6 ext chain:");
	for (i = 0; i < s->n_ext && n < (int)size; i++)
		n += snprintf(buf + n, size - n, " %s", ext_names[s->ext[i]]);
}

/* Enumerate all extension header sequences of length <= maxlen. */
static void corpus_ipv6_ext(void)
{
	struct group g = { .name = "corpus IPv6 ext" };
	int v, len, code, i, total, k, lenvar;
	char what[128];
	struct spec s;

	for (v = 0; v < N_VLAN_LAYOUTS; v++)
		for (len = 0; len <= 3; len++) {
			total = 1;
			for (i = 0; i < len; i++)
				total *= X__N;
			for (code = 0; code < total; code++)
				for (lenvar = 0; lenvar < 2; lenvar++) {
					default_spec(&s);
					set_vlan(&s, v);
					s.ipv = 6;
					s.n_ext = len;
					for (i = 0, k = code; i < len;
					     i++, k /= X__N) {
						s.ext[i] = k % X__N;
						s.ext_len[i] = lenvar ?
								       (i * 7 +
									1) % 5 :
								       0;
					}
					s.doff = lenvar ? 8 : 5;
					chain_name(&s, what, sizeof(what));
					check_spec(&g, &s, what);
				}
		}
	group_end(
		&g,
		"VLAN 0/1/2 x every chain of <= 3 of {hbh,rt,dst,frag atomic/first/non-first} -> tcp/frag/bad_ext as built");
}

static void corpus_ipv6_chain_len(void)
{
	struct group g = { .name = "corpus IPv6 ext bound" };
	int n, i, r, bad = 0;
	struct spec s;

	for (n = 0; n <= 11; n++) {
		default_spec(&s);
		s.ipv = 6;
		s.n_ext = n;
		for (i = 0; i < n; i++) {
			s.ext[i] = i == 0 ? X_HBH : i % 2 ? X_DST : X_RT;
			s.ext_len[i] = i % 3;
		}
		r = check_spec(&g, &s, "IPv6 chain length");
		/* Explicit, beyond the builder: the bound itself. */
		if (r !=
		    (n <= TOE_IPV6_MAX_EXT ? TOE_P_TCP : TOE_P_TOO_MANY_EXT))
			bad = 1;
	}
	g.bad += bad;
	group_end(&g, "0..%d extension headers -> tcp, %d..11 -> too_many_ext",
		  TOE_IPV6_MAX_EXT, TOE_IPV6_MAX_EXT + 1);
}

static void corpus_ipv4_frag(void)
{
	static const struct {
		__u16 frag_off;
		int want;
	} cases[] = {
		{ 0x0000, TOE_P_TCP }, /* not a fragment */
		{ 0x4000, TOE_P_TCP }, /* DF */
		{ 0x8000, TOE_P_TCP }, /* reserved bit: not a fragment */
		{ 0x2000, TOE_P_FRAG }, /* MF, offset 0: first fragment */
		{ 0x6000, TOE_P_FRAG }, /* DF|MF (bogus) */
		{ 0x0001, TOE_P_FRAG }, /* last fragment, offset 8 */
		{ 0x2001, TOE_P_FRAG }, /* middle fragment */
		{ 0x1fff, TOE_P_FRAG }, /* max offset */
	};
	struct group g = { .name = "corpus IPv4 frag" };
	struct spec s;
	int v, i, r, proto;

	for (v = 0; v < N_VLAN_LAYOUTS; v++)
		for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++)
			for (proto = 0; proto < 2; proto++) {
				default_spec(&s);
				set_vlan(&s, v);
				s.ihl = 5 + i;
				s.frag_off = cases[i].frag_off;
				s.l4 = proto ? TOE_IPPROTO_UDP :
					       TOE_IPPROTO_TCP;
				r = check_spec(&g, &s, "IPv4 fragment");
				if (r != (cases[i].want == TOE_P_FRAG ?
						  TOE_P_FRAG :
					  proto ? TOE_P_NOT_TCP :
						  TOE_P_TCP))
					g.bad++;
			}
	group_end(
		&g,
		"MF or offset -> frag (first fragment too); DF, reserved bit -> tcp");
}

static void corpus_not_tcp(void)
{
	static const __u8 l4s[] = { TOE_IPPROTO_UDP,
				    TOE_IPPROTO_ICMP,
				    TOE_IPPROTO_ICMPV6,
				    TOE_IPPROTO_NONE,
				    50 /* ESP */,
				    51 /* AH */,
				    132 /* SCTP */ };
	struct group g = { .name = "corpus not TCP" };
	struct spec s;
	int v, i, ipv, r;

	for (v = 0; v < N_VLAN_LAYOUTS; v++) {
		for (ipv = 4; ipv <= 6; ipv += 2)
			for (i = 0; i < (int)sizeof(l4s); i++) {
				default_spec(&s);
				set_vlan(&s, v);
				s.ipv = ipv;
				s.l4 = l4s[i];
				s.payload = s.l4 == TOE_IPPROTO_NONE ? 0 : 20;
				if (ipv == 6 &&
				    i % 2) { /* behind ext headers */
					s.n_ext = 2;
					s.ext[0] = X_HBH;
					s.ext[1] = X_DST;
				}
				r = check_spec(&g, &s, "not TCP");
				if (r != TOE_P_NOT_TCP)
					g.bad++;
			}
		default_spec(&s);
		set_vlan(&s, v);
		s.ipv = 0;
		s.ethertype = TOE_ETH_P_ARP;
		if (check_spec(&g, &s, "ARP") != TOE_P_NOT_TCP)
			g.bad++;
	}
	group_end(
		&g,
		"UDP, ICMP, ICMPv6, no-next-header, ESP, AH, SCTP, ARP -> not_tcp, fields as built");
}

static void corpus_ethertypes(void)
{
	static const __u16 types[] = { 0x0000,
				       0x0001,
				       0x05dc /* 802.3 length */,
				       0x0600,
				       0x0805,
				       0x0807,
				       0x0801,
				       0x86dc,
				       0x86de,
				       0x8847 /* MPLS */,
				       0x8848,
				       0x88cc /* LLDP */,
				       0x88e5 /* MACsec */,
				       0x8906 /* FCoE */,
				       0x9100 /* old QinQ */,
				       0x8101,
				       0x88a9,
				       0xffff };
	struct group g = { .name = "corpus ethertype" };
	struct spec s;
	int v, i;

	for (v = 0; v < N_VLAN_LAYOUTS; v++)
		for (i = 0; i < (int)(sizeof(types) / sizeof(types[0])); i++) {
			default_spec(&s);
			set_vlan(&s, v);
			s.ipv = 0;
			s.ethertype = types[i];
			if (check_spec(&g, &s, "unknown ethertype") !=
			    TOE_P_UNKNOWN_ETHERTYPE)
				g.bad++;
		}
	group_end(
		&g,
		"18 non-IP/ARP/VLAN ethertypes (incl. 0x9100, 802.3 lengths) x VLAN 0/1/2 -> unknown_ethertype");
}

static void corpus_vlan(void)
{
	struct group g = { .name = "corpus VLAN" };
	struct spec s;
	int n, combo, i;

	for (n = 3; n <= 4; n++)
		for (combo = 0; combo < (1 << n); combo++) {
			default_spec(&s);
			s.nvlan = n;
			for (i = 0; i < n; i++) {
				s.tpid[i] = tpids[(combo >> i) & 1];
				s.tci[i] = 10 * (i + 1);
			}
			if (check_spec(&g, &s, "3+ VLAN tags") !=
			    TOE_P_TOO_MANY_VLAN)
				g.bad++;
		}
	group_end(&g,
		  "3 and 4 tags, every 802.1Q/802.1ad order -> too_many_vlan");
}

/* A valid spec for the malformation groups, by index: v4/v6, VLANs, options. */
#define N_BASES 12
static void base_spec(struct spec *s, int i)
{
	default_spec(s);
	set_vlan(s, (i * 3) % N_VLAN_LAYOUTS);
	s->ipv = i % 2 ? 6 : 4;
	s->ihl = i % 4 == 2 ? 15 : 5 + i % 3;
	s->doff = i % 3 == 1 ? 15 : 5 + (i % 5);
	s->payload = (i * 13) % 40;
	if (s->ipv == 6 && i % 4 == 3) {
		s->n_ext = 3;
		s->ext[0] = X_HBH;
		s->ext[1] = X_RT;
		s->ext_len[1] = 2;
		s->ext[2] = X_FRAG_ATOMIC;
	}
}

static void corpus_malformed_ip(void)
{
	struct group gv = { .name = "corpus bad version" };
	struct group gi = { .name = "corpus bad IHL" };
	struct group gl = { .name = "corpus bad IP length" };
	struct group gd = { .name = "corpus bad doff" };
	struct group gt = { .name = "corpus IP datagram cut" };
	__u8 b[MAXPKT];
	struct toe_pkt e;
	struct spec s;
	int i, x, r;
	__u32 len, l3, l4, hl, ipend;

	for (i = 0; i < N_BASES; i++) {
		base_spec(&s, i);
		len = build(&s, b, &r, &e);
		l3 = e.l3_off;
		l4 = e.l4_off;
		hl = e.payload_off - l4; /* TCP header length */
		ipend = ip_end_of(&e);

		/* Version nibble that does not match the ethertype. */
		for (x = 0; x < 16; x++) {
			if (x == s.ipv)
				continue;
			b[l3] = (x << 4) | (b[l3] & 0x0f);
			check_pkt(&gv, b, len, TOE_P_BAD_VERSION, NULL,
				  "version");
		}
		b[l3] = (s.ipv << 4) | (b[l3] & 0x0f);

		if (s.ipv == 4) {
			/* IHL 0..4 */
			for (x = 0; x < 5; x++) {
				b[l3] = 0x40 | x;
				check_pkt(&gi, b, len, TOE_P_BAD_IHL, NULL,
					  "IHL < 5");
			}
			b[l3] = 0x40 | s.ihl;
			/* total length < IHL*4: every value */
			for (x = 0; x < s.ihl * 4; x++) {
				put16(b + l3 + 2, x);
				check_pkt(&gl, b, len, TOE_P_BAD_IPLEN, NULL,
					  "tot_len < IHL*4");
			}
			/* total length that ends inside the TCP header */
			for (x = s.ihl * 4; x < (int)(s.ihl * 4 + hl); x++) {
				put16(b + l3 + 2, x);
				check_pkt(&gl, b, len, TOE_P_BAD_IPLEN, NULL,
					  "tot_len < IHL*4 + doff*4");
			}
			/* total length beyond the frame */
			for (x = ipend - l3 + 1; x < (int)(ipend - l3 + 40);
			     x++) {
				put16(b + l3 + 2, x);
				check_pkt(&gt, b, len, TOE_P_TRUNC_IP, NULL,
					  "tot_len > frame");
			}
			put16(b + l3 + 2, 0xffff);
			check_pkt(&gt, b, len, TOE_P_TRUNC_IP, NULL,
				  "tot_len 65535");
			put16(b + l3 + 2, ipend - l3);
		} else {
			__u32 plen = ipend - l3 - 40;
			int extlen = l4 - l3 - 40;

			/* payload length ends inside an ext header or the TCP header */
			for (x = 0; x < (int)(extlen + hl); x++) {
				put16(b + l3 + 4, x);
				check_pkt(&gl, b, len, TOE_P_BAD_IPLEN, NULL,
					  "plen < headers");
			}
			for (x = plen + 1; x < (int)plen + 40; x++) {
				put16(b + l3 + 4, x);
				check_pkt(&gt, b, len, TOE_P_TRUNC_IP, NULL,
					  "plen > frame");
			}
			put16(b + l3 + 4, plen);
		}

		/* TCP data offset 0..4, and larger than the frame */
		for (x = 0; x < 5; x++) {
			b[l4 + 12] = x << 4;
			check_pkt(&gd, b, len, TOE_P_BAD_DOFF, NULL,
				  "doff < 5");
		}
		b[l4 + 12] = s.doff << 4;
		if (check_pkt(&gd, b, len, TOE_P_TCP, &e, "restored") !=
		    TOE_P_TCP)
			printf("  base %d not valid after restore\n", i);
		/*
		 * A data offset pointing past the frame: truncation.  One
		 * inside the frame but past the IP length: bad_iplen.
		 */
		for (x = s.doff + 1; x <= 15; x++) {
			b[l4 + 12] = x << 4;
			check_pkt(&gd, b, len,
				  l4 + 4 * x > len   ? TOE_P_TRUNC_L4 :
				  l4 + 4 * x > ipend ? TOE_P_BAD_IPLEN :
						       TOE_P_TCP,
				  NULL, "doff > header");
		}
		b[l4 + 12] = s.doff << 4;
		corpus_add(b, len);
	}
	group_end(&gv, "IP version nibble != ethertype's -> bad_version");
	group_end(&gi, "IPv4 IHL 0..4 -> bad_ihl");
	group_end(
		&gl,
		"IPv4 total length < IHL*4 or < IHL*4+doff*4, IPv6 payload length < ext+TCP headers -> bad_iplen");
	group_end(
		&gd,
		"TCP doff 0..4 -> bad_doff; doff past frame -> trunc_l4, past IP length -> bad_iplen");
	group_end(&gt, "IP length > frame -> trunc_ip");
}

static void corpus_ipv6_special(void)
{
	struct group g = { .name = "corpus IPv6 lengths" };
	__u8 b[MAXPKT];
	struct toe_pkt e;
	struct spec s;
	__u32 len;
	int r;

	/* Jumbogram: payload length 0 with a hop-by-hop header. */
	default_spec(&s);
	s.ipv = 6;
	s.n_ext = 1;
	s.ext[0] = X_HBH;
	len = build(&s, b, &r, &e);
	put16(b + e.l3_off + 4, 0);
	check_pkt(&g, b, len, TOE_P_BAD_IPLEN, NULL, "jumbogram");

	/* Payload length 0 with no next header: a valid empty packet. */
	default_spec(&s);
	s.ipv = 6;
	s.l4 = TOE_IPPROTO_NONE;
	s.payload = 0;
	r = check_spec(&g, &s, "plen 0, no next header");
	if (r != TOE_P_NOT_TCP)
		g.bad++;

	/* Ethernet padding after a short datagram is ignored. */
	default_spec(&s);
	s.payload = 0;
	s.pad = 6; /* 54 + 6: minimum frame */
	s.flags = TOE_TCP_SYN;
	if (check_spec(&g, &s, "IPv4 SYN padded to 60 bytes") != TOE_P_TCP)
		g.bad++;
	default_spec(&s);
	s.ipv = 6;
	s.payload = 3;
	s.pad = 17;
	if (check_spec(&g, &s, "IPv6 with trailing padding") != TOE_P_TCP)
		g.bad++;
	group_end(
		&g,
		"jumbogram -> bad_iplen, empty no-next-header -> not_tcp, Ethernet padding ignored");
}

/* Truncation at every length of valid packets. */
static void corpus_truncation(void)
{
	struct group g = { .name = "corpus truncation" };
	__u8 b[MAXPKT];
	struct toe_pkt e;
	struct spec s;
	__u32 len, n, ipend;
	int i, r, want;

	for (i = 0; i < N_BASES + 2; i++) {
		if (i < N_BASES) {
			base_spec(&s, i);
		} else { /* the largest headers: 2 tags, IHL 15 / 8 ext, doff 15 */
			default_spec(&s);
			set_vlan(&s, 6);
			s.ipv = i == N_BASES ? 4 : 6;
			s.ihl = 15;
			s.doff = 15;
			s.n_ext = s.ipv == 6 ? TOE_IPV6_MAX_EXT : 0;
			for (n = 0; n < (__u32)s.n_ext; n++) {
				s.ext[n] = n ? X_DST : X_HBH;
				s.ext_len[n] = n;
			}
		}
		s.pad = i % 3;
		len = build(&s, b, &r, &e);
		ipend = ip_end_of(&e);
		for (n = 0; n <= len; n++) {
			want = n < e.l3_off	 ? TOE_P_TRUNC_L2 :
			       n < e.l4_off	 ? TOE_P_TRUNC_L3 :
			       n < e.payload_off ? TOE_P_TRUNC_L4 :
			       n < ipend	 ? TOE_P_TRUNC_IP :
						   TOE_P_TCP;
			check_pkt(&g, b, n, want, want == TOE_P_TCP ? &e : NULL,
				  "truncated");
		}
	}
	group_end(
		&g,
		"every length 0..len of 14 valid packets -> trunc_l2/l3/l4/ip, tcp once whole");
}

/* ------------------------------------------------------------------ */
/* Differential fuzzing.                                               */

static void random_spec(struct spec *s)
{
	static const __u8 l4s[] = { TOE_IPPROTO_TCP,
				    TOE_IPPROTO_TCP,
				    TOE_IPPROTO_TCP,
				    TOE_IPPROTO_TCP,
				    TOE_IPPROTO_UDP,
				    TOE_IPPROTO_ICMP,
				    TOE_IPPROTO_ICMPV6,
				    TOE_IPPROTO_NONE,
				    50,
				    51 };
	static const __u16 ethertypes[] = { TOE_ETH_P_ARP, 0x88cc, 0x8847,
					    0x9100, 0x0042 };
	int i;

	default_spec(s);
	s->nvlan = rnd(10) < 7 ? rnd(3) : rnd(5);
	for (i = 0; i < s->nvlan; i++) {
		s->tpid[i] = tpids[rnd(2)];
		s->tci[i] = rnd(65536);
	}
	i = rnd(20);
	s->ipv = i < 9 ? 4 : i < 18 ? 6 : 0;
	s->ethertype =
		ethertypes[rnd(sizeof(ethertypes) / sizeof(ethertypes[0]))];
	s->ihl = 5 + (rnd(3) ? 0 : rnd(11));
	s->frag_off = rnd(8) ? (rnd(2) ? 0x4000 : 0) : rnd(65536);
	s->ttl = rnd(256);
	s->n_ext = rnd(3) ? rnd(4) : rnd(11);
	for (i = 0; i < s->n_ext; i++) {
		s->ext[i] = rnd(4) ? (rnd(3) ? X_DST : X_RT) : (__u8)rnd(X__N);
		if (i == 0 && rnd(2))
			s->ext[i] = X_HBH;
		s->ext_len[i] = rnd(4) ? rnd(3) : rnd(16);
	}
	s->l4 = l4s[rnd(sizeof(l4s))];
	s->doff = 5 + (rnd(2) ? 0 : rnd(11));
	s->payload = rnd(4) ? rnd(64) : rnd(600);
	s->pad = rnd(4) ? 0 : rnd(20);
	s->flags = rnd(256);
	s->sport = rnd(65536);
	s->dport = rnd(65536);
	s->seq = rnd64();
	s->ack = rnd64();
}

/* Bytes that matter to the parser, to write at random header positions. */
static __u8 interesting_byte(void)
{
	static const __u8 v[] = { 0x00, 0x01, 0x04, 0x05, 0x06, 0x08,
				  0x11, 0x2b, 0x2c, 0x3a, 0x3b, 0x3c,
				  0x40, 0x45, 0x4f, 0x50, 0x60, 0x81,
				  0x86, 0x88, 0xa8, 0xdd, 0xf0, 0xff };

	return rnd(2) ? v[rnd(sizeof(v))] : rnd(256);
}

static __u32 mutate(__u8 *b, __u32 len)
{
	int ops = 1 + rnd(3), k;
	__u32 pos, n, span;

	while (ops--) {
		/* Aim at the first 120 bytes (the headers) most of the time. */
		span = len && rnd(4) ? (len < 120 ? len : 120) : len;
		pos = rnd(span ? span : 1);
		switch (rnd(7)) {
		case 0: /* flip a bit */
			if (len)
				b[pos] ^= 1 << rnd(8);
			break;
		case 1: /* write an interesting byte */
		case 2:
			if (len)
				b[pos] = interesting_byte();
			break;
		case 3: /* truncate */
			len = rnd(len + 1);
			break;
		case 4: /* insert bytes */
			n = 1 + rnd(rnd(2) ? 4 : 16);
			if (len + n > MAXPKT)
				break;
			memmove(b + pos + n, b + pos, len - pos);
			for (k = 0; k < (int)n; k++)
				b[pos + k] = interesting_byte();
			len += n;
			break;
		case 5: /* delete bytes */
			n = 1 + rnd(8);
			if (pos + n > len)
				break;
			memmove(b + pos, b + pos + n, len - pos - n);
			len -= n;
			break;
		case 6: /* random 16-bit value (length fields, tags) */
			if (pos + 2 <= len)
				put16(b + pos, rnd(8) ? rnd(65536) : rnd(128));
			break;
		}
	}
	return len;
}

static void fuzz(long count, __u64 seed)
{
	struct group g = { .name = "fuzz" };
	__u8 b[MAXPKT];
	struct toe_pkt e;
	struct spec s;
	long i, missing = 0;
	__u32 len;
	int r, c;

	rng_state = seed;
	for (i = 0; i < count; i++) {
		c = rnd(100);
		if (c < 5) { /* pure noise, sometimes with an IP ethertype */
			len = rnd(200);
			for (__u32 k = 0; k < len; k++)
				b[k] = rnd(256);
			if (len >= 14 && rnd(2))
				put16(b + 12,
				      rnd(2) ? TOE_ETH_P_IP : TOE_ETH_P_IPV6);
		} else if (c < 40 && ncorpus) { /* mutated corpus packet */
			int k = rnd(ncorpus);

			len = corpus[k].len;
			memcpy(b, corpus[k].b, len);
			len = mutate(b, len);
		} else { /* random spec, mutated or not */
			random_spec(&s);
			len = build(&s, b, &r, &e);
			if (len > MAXPKT - 32)
				len = MAXPKT - 32;
			if (rnd(4))
				len = mutate(b, len);
		}
		check_pkt(&g, b, len, -1, NULL, "fuzz");
	}
	group_end(&g,
		  "%ld random/mutated packets, seed %llu, BPF == user space",
		  count, (unsigned long long)seed);

	/* The agreement means little unless every verdict was exercised. */
	if (count >= 10000) {
		for (c = 0; c < TOE_P__MAX; c++)
			if (!g.hist[c]) {
				printf("  fuzz never produced %s\n",
				       toe_parse_result_names[c]);
				missing++;
			}
		printf("  fuzz verdicts:");
		for (c = 0; c < TOE_P__MAX; c++)
			printf(" %s=%ld", toe_parse_result_names[c], g.hist[c]);
		printf("\n");
		if (missing)
			failed = 1;
		printf("%s - fuzz: reached all %d verdicts\n",
		       missing ? "not ok" : "ok", TOE_P__MAX);
	}
}

/* ------------------------------------------------------------------ */

/*
 * Average ns per run of prog over the packet with repeat 1,000,000: the
 * best of 3 such runs, as this VM's timings are noisy.
 */
static int time_prog(int fd, const __u8 *b, __u32 len, __u32 *ns)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = b, .data_size_in = len,
		    .repeat = 1000000, );
	int i;

	*ns = ~0U;
	for (i = 0; i < 3; i++) {
		if (bpf_prog_test_run_opts(fd, &opts) ||
		    opts.retval != XDP_PASS)
			return -1;
		if (opts.duration < *ns)
			*ns = opts.duration;
	}
	return 0;
}

/*
 * What parse_bench leaves in bench_sink for a TCP packet whose expected
 * parse is e (its hash of the fields a flow lookup reads): the proof that
 * the runs timed parsed the packet as TCP, fields and all.
 */
static __u32 bench_hash(const struct toe_pkt *e)
{
	__u32 h = e->family ^ e->l4proto ^ e->sport ^ ((__u32)e->dport << 16);
	int i;

	for (i = 0; i < 4; i++)
		h ^= e->saddr32[i] ^ e->daddr32[i];
	return h ^ e->seq ^ e->tcp_flags ^ e->payload_len ^ e->ttl_off;
}

static int bench(void)
{
	static const char *const what[] = {
		"IPv4 TCP, 64 B",
		"IPv4 TCP, 1 VLAN, 12 B TCP options, 1500 B",
		"IPv6 TCP, 2 VLAN, hbh+rt+dst ext headers",
	};
	int base_fd = bpf_program__fd(skel->progs.pass_only);
	int bench_fd = bpf_program__fd(skel->progs.parse_bench);
	__u32 len, ns, base, use;
	__u8 b[MAXPKT];
	struct toe_pkt e;
	struct spec s;
	__u64 runs0;
	int i, r;

	for (i = 0; i < 3; i++) {
		default_spec(&s);
		if (i == 0) {
			s.payload = 64 - 54;
		} else if (i == 1) {
			set_vlan(&s, 1);
			s.doff = 8;
			s.payload = 1500 - 20 - 32;
		} else {
			set_vlan(&s, 4);
			s.ipv = 6;
			s.n_ext = 3;
			s.ext[0] = X_HBH;
			s.ext[1] = X_RT;
			s.ext[2] = X_DST;
		}
		len = build(&s, b, &r, &e);
		skel->bss->bench_sink = ~bench_hash(&e);
		if (time_prog(base_fd, b, len, &base) ||
		    time_prog(bench_fd, b, len, &use)) {
			printf("not ok - bench %s: test run failed\n", what[i]);
			return 1;
		}
		/* the proofs: parse_bench parsed it as TCP, fields and
		 * all; parse_test ran 3,000,000 times and parsed it as TCP */
		if (r != TOE_P_TCP || skel->bss->bench_sink != bench_hash(&e)) {
			printf("not ok - bench %s: parse_bench did not parse it as TCP (bench_sink %#x, expected %#x)\n",
			       what[i], skel->bss->bench_sink, bench_hash(&e));
			return 1;
		}
		runs0 = skel->bss->runs;
		if (time_prog(prog_fd, b, len, &ns) ||
		    skel->bss->out_res != TOE_P_TCP ||
		    skel->bss->runs - runs0 != 3000000) {
			printf("not ok - bench %s: parse_test did not run 3,000,000 times on it as TCP (%llu runs, result %d)\n",
			       what[i],
			       (unsigned long long)(skel->bss->runs - runs0),
			       skel->bss->out_res);
			return 1;
		}
		printf("  bench: %-44s parse_bench %3u ns, parse_test %3u ns, empty program %3u ns\n",
		       what[i], use, ns, base);
	}
	printf("  bench: ns/packet, BPF_PROG_TEST_RUN repeat 1000000, best of 3; parse_bench = parse +\n"
	       "  bench: the fields a flow lookup reads; parse_test = parse + copy of the struct\n");
	return 0;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stdout, fmt, ap);
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-n COUNT] [-s SEED] [-b] [-v]\n", prog);
	exit(2);
}

int main(int argc, char **argv)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);
	long count = 50000;
	__u64 seed;
	int opt, do_bench = 0;

	seed = (__u64)time(NULL) ^ ((__u64)getpid() << 32);
	while ((opt = getopt(argc, argv, "n:s:bvh")) != -1) {
		switch (opt) {
		case 'n':
			count = strtol(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'b':
			do_bench = 1;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			usage(argv[0]);
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	libbpf_set_print(libbpf_print);

	skel = parse_test_bpf__open_and_load();
	if (!skel) {
		printf("not ok - XDP program with toe_parse.h loads: %s\n",
		       strerror(errno));
		return 1;
	}
	prog_fd = bpf_program__fd(skel->progs.parse_test);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &info_len)) {
		printf("not ok - XDP program info: %s\n", strerror(errno));
		return 1;
	}
	printf("ok - XDP program with toe_parse.h loads (%u BPF insns, verifier processed %u)\n",
	       info.xlated_prog_len / 8, info.verified_insns);

	corpus_valid_ipv4();
	corpus_ipv6_ext();
	corpus_ipv6_chain_len();
	corpus_ipv4_frag();
	corpus_not_tcp();
	corpus_ethertypes();
	corpus_vlan();
	corpus_malformed_ip();
	corpus_ipv6_special();
	corpus_truncation();
	printf("  corpus: %d packets kept as mutation seeds\n", ncorpus);

	if (count > 0) {
		printf("  fuzz seed: %llu (rerun with -s %llu -n %ld)\n",
		       (unsigned long long)seed, (unsigned long long)seed,
		       count);
		fuzz(count, seed);
	}
	if (do_bench && bench())
		failed = 1;

	parse_test_bpf__destroy(skel);
	while (ncorpus)
		free(corpus[--ncorpus].b);
	return failed;
}
