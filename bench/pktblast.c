// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Small-packet load for make bench-forward: the same 64-byte IPv4 TCP
 * segment (ACK, 10 bytes of payload) sent as fast as one thread can, with
 * sendmmsg() on an AF_PACKET socket bound to one interface (qdisc
 * bypassed), for a number of seconds.  The segment belongs to a connection
 * the caller opened through the router, so the router's fast path knows
 * the flow; its TCP checksum is wrong on purpose, so the receiver drops it
 * without an answer (no reverse traffic through the router: an in-window
 * or old segment would draw an ACK each).  Routers, XDP's fast path
 * included, do not check TCP checksums.
 *
 * Usage: pktblast -i IFNAME -s SRC_MAC -d DST_MAC -S SRC_IP -D DST_IP
 *                 -p SPORT -P DPORT [-q SEQ] [-t SECONDS]
 * Prints one JSON line: sent frames, seconds, frames per second.
 */
#define _GNU_SOURCE /* sendmmsg */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FRAME_LEN 64 /* 14 + 20 + 20 + 10 */
#define PAYLOAD 10
#define BATCH 256

struct opts {
	const char *ifname;
	unsigned char smac[6], dmac[6];
	struct in_addr src, dst;
	uint16_t sport, dport;
	uint32_t seq;
	double secs;
};

static int parse_mac(const char *s, unsigned char *m)
{
	return sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &m[0], &m[1], &m[2],
		      &m[3], &m[4], &m[5]) == 6 ?
		       0 :
		       -1;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t csum_add(uint32_t sum, const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)(b[len - 1] << 8);
	return sum;
}

/* The frame: Ethernet, IPv4 (DF, TTL 64), TCP ACK with PAYLOAD bytes. */
static void build(const struct opts *o, unsigned char *f)
{
	struct ether_header *eth = (void *)f;
	struct iphdr *ip = (void *)(f + sizeof(*eth));
	struct tcphdr *tcp = (void *)(ip + 1);
	uint32_t sum;
	struct {
		uint32_t src, dst;
		uint8_t zero, proto;
		uint16_t len;
	} __attribute__((packed)) ph;

	memset(f, 0, FRAME_LEN);
	memcpy(eth->ether_dhost, o->dmac, 6);
	memcpy(eth->ether_shost, o->smac, 6);
	eth->ether_type = htons(ETHERTYPE_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->tot_len = htons(sizeof(*ip) + sizeof(*tcp) + PAYLOAD);
	ip->frag_off = htons(IP_DF);
	ip->ttl = 64;
	ip->protocol = IPPROTO_TCP;
	ip->saddr = o->src.s_addr;
	ip->daddr = o->dst.s_addr;
	ip->check = htons(csum_fold(csum_add(0, ip, sizeof(*ip))));
	tcp->source = htons(o->sport);
	tcp->dest = htons(o->dport);
	tcp->seq = htonl(o->seq);
	tcp->doff = 5;
	tcp->ack = 1;
	tcp->window = htons(512);
	memset(tcp + 1, 'x', PAYLOAD);
	ph.src = o->src.s_addr;
	ph.dst = o->dst.s_addr;
	ph.zero = 0;
	ph.proto = IPPROTO_TCP;
	ph.len = htons(sizeof(*tcp) + PAYLOAD);
	sum = csum_add(0, &ph, sizeof(ph));
	sum = csum_add(sum, tcp, sizeof(*tcp) + PAYLOAD);
	tcp->check = htons(csum_fold(sum) ^ 0x5a5a); /* wrong: see the top */
}

static int parse(int argc, char **argv, struct opts *o)
{
	int c, got = 0;

	o->seq = 0x40000000;
	o->secs = 3;
	while ((c = getopt(argc, argv, "i:s:d:S:D:p:P:q:t:")) != -1) {
		switch (c) {
		case 'i':
			o->ifname = optarg;
			got |= 1;
			break;
		case 's':
			if (parse_mac(optarg, o->smac))
				return -1;
			got |= 2;
			break;
		case 'd':
			if (parse_mac(optarg, o->dmac))
				return -1;
			got |= 4;
			break;
		case 'S':
			if (inet_pton(AF_INET, optarg, &o->src) != 1)
				return -1;
			got |= 8;
			break;
		case 'D':
			if (inet_pton(AF_INET, optarg, &o->dst) != 1)
				return -1;
			got |= 16;
			break;
		case 'p':
			o->sport = (uint16_t)atoi(optarg);
			got |= 32;
			break;
		case 'P':
			o->dport = (uint16_t)atoi(optarg);
			got |= 64;
			break;
		case 'q':
			o->seq = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 't':
			o->secs = atof(optarg);
			break;
		default:
			return -1;
		}
	}
	return got == 127 && o->secs > 0 ? 0 : -1;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static unsigned char frame[FRAME_LEN];
	struct mmsghdr msgs[BATCH];
	struct iovec iov = { frame, FRAME_LEN };
	struct sockaddr_ll sll = { 0 };
	struct opts o = { 0 };
	unsigned long long sent = 0;
	double t0, t1;
	int fd, one = 1, i, n;

	if (argc > 1 && !strcmp(argv[1], "--help")) {
		printf("usage: pktblast -i IFNAME -s SRC_MAC -d DST_MAC -S SRC_IP -D DST_IP -p SPORT -P DPORT [-q SEQ] [-t SECONDS]\n\n"
		       "Sends 64-byte TCP segments (ACK, SEQ onwards, a deliberately wrong\n"
		       "TCP checksum so the receiver drops them unanswered) out of IFNAME\n"
		       "with AF_PACKET and sendmmsg for SECONDS (default 3); prints the\n"
		       "frames sent and the rate (JSON).\n");
		return 0;
	}
	if (parse(argc, argv, &o)) {
		fprintf(stderr,
			"usage: pktblast -i IFNAME -s SRC_MAC -d DST_MAC -S SRC_IP -D DST_IP -p SPORT -P DPORT [-q SEQ] [-t SECONDS]\n");
		return 2;
	}
	build(&o, frame);
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		perror("pktblast: socket(AF_PACKET)");
		return 1;
	}
	setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = (int)if_nametoindex(o.ifname);
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, o.dmac, 6);
	if (!sll.sll_ifindex) {
		fprintf(stderr, "pktblast: no interface %s\n", o.ifname);
		return 1;
	}
	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < BATCH; i++) {
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
		msgs[i].msg_hdr.msg_name = &sll;
		msgs[i].msg_hdr.msg_namelen = sizeof(sll);
	}
	t0 = now();
	do {
		n = sendmmsg(fd, msgs, BATCH, 0);
		if (n < 0 && errno != ENOBUFS && errno != EAGAIN) {
			perror("pktblast: sendmmsg");
			return 1;
		}
		if (n > 0)
			sent += (unsigned long long)n;
		t1 = now();
	} while (t1 - t0 < o.secs);
	printf("{\"sent\": %llu, \"secs\": %.3f, \"pps\": %.0f}\n", sent,
	       t1 - t0, sent / (t1 - t0));
	close(fd);
	return 0;
}
