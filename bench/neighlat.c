// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * neighlat: neighbour propagation through toed, measured from outside.
 *
 *   neighlat latency PIN_DIR IFINDEX COUNT
 *	COUNT times: replace 10.251.0.1's MAC on IFINDEX through rtnetlink
 *	(what `ip neigh replace` does), then spin on the pinned toe_neigh map
 *	until the new MAC is there (polling every 20 us).  Prints one line per sample: the time from
 *	just before the request to toed's map write (the entry's updated_ns,
 *	same clock) and to the moment this program saw it, in nanoseconds.
 *
 *   neighlat rate PIN_DIR IFINDEX COUNT PER_SECOND
 *	COUNT replaces of distinct addresses (10.252.x.y), paced at
 *	PER_SECOND, then wait until the map holds every last MAC.  Prints the
 *	rate achieved and how long the map took to catch up.
 *
 * Run it in toed's network namespace.  The ack of each request is read
 * (so a failed request is seen), after the clock starts.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>
#include "opentoe.h"

static __u64 now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int nl_fd;
static __u32 seq;

/* RTM_NEWNEIGH, replace: dst (IPv4, network order) -> mac, permanent. */
static int neigh_replace(int ifindex, __u32 dst, const __u8 *mac)
{
	struct {
		struct nlmsghdr h;
		struct ndmsg nd;
		char attrs[64];
	} req = {};
	struct rtattr *a;
	char buf[4096];
	struct nlmsghdr *h;
	ssize_t n;

	req.h.nlmsg_len = NLMSG_LENGTH(sizeof(req.nd));
	req.h.nlmsg_type = RTM_NEWNEIGH;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE |
			    NLM_F_REPLACE;
	req.h.nlmsg_seq = ++seq;
	req.nd.ndm_family = AF_INET;
	req.nd.ndm_ifindex = ifindex;
	req.nd.ndm_state = NUD_PERMANENT;
	a = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.h.nlmsg_len));
	a->rta_type = NDA_DST;
	a->rta_len = RTA_LENGTH(4);
	memcpy(RTA_DATA(a), &dst, 4);
	req.h.nlmsg_len = NLMSG_ALIGN(req.h.nlmsg_len) + RTA_ALIGN(a->rta_len);
	a = (struct rtattr *)((char *)&req + req.h.nlmsg_len);
	a->rta_type = NDA_LLADDR;
	a->rta_len = RTA_LENGTH(6);
	memcpy(RTA_DATA(a), mac, 6);
	req.h.nlmsg_len += RTA_ALIGN(a->rta_len);
	if (send(nl_fd, &req, req.h.nlmsg_len, 0) < 0)
		return -1;
	n = recv(nl_fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -1;
	h = (struct nlmsghdr *)buf;
	if (NLMSG_OK(h, (unsigned int)n) && h->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr *e = NLMSG_DATA(h);

		if (e->error) {
			errno = -e->error;
			return -1;
		}
	}
	return 0;
}

static bool has_mac(int map, int ifindex, __u32 dst, const __u8 *mac,
		    __u64 *written)
{
	struct toe_neigh_key k = { .ifindex = ifindex, .family = TOE_AF_INET };
	struct toe_neigh v;

	k.addr[0] = dst;
	if (bpf_map_lookup_elem(map, &k, &v) || memcmp(v.mac, mac, 6))
		return false;
	if (written)
		*written = v.updated_ns;
	return true;
}

/*
 * latency: COUNT replaces of one neighbour, one at a time; per sample, the
 * time until toed wrote the map and until the reader saw it (ns).
 */
static int run_latency(int map, int ifindex, int count)
{
	__u32 dst = htonl(0x0afb0001); /* 10.251.0.1 */
	int i;

	for (i = 0; i < count; i++) {
		__u8 mac[6] = { 0x02,		0xfb,	 (__u8)(i >> 16),
				(__u8)(i >> 8), (__u8)i, 1 };
		__u64 t0, t1, w = 0, deadline;

		t0 = now();
		if (neigh_replace(ifindex, dst, mac)) {
			perror("RTM_NEWNEIGH");
			return 1;
		}
		deadline = t0 + 2000000000ULL;
		/*
		 * Poll, not spin: on a 2-CPU machine a spinning reader
		 * takes the CPU toed needs.  The write time (updated_ns)
		 * is exact whatever the polling step.
		 */
		while (!has_mac(map, ifindex, dst, mac, &w) && now() < deadline)
			usleep(20);
		t1 = now();
		if (t1 >= deadline) {
			fprintf(stderr, "sample %d: not in the map after 2 s\n",
				i);
			return 1;
		}
		printf("%llu %llu\n", (unsigned long long)(w - t0),
		       (unsigned long long)(t1 - t0));
		usleep(1000); /* one at a time: no batching effects */
	}
	return 0;
}

/*
 * rate: COUNT new neighbours at PER_SECOND; the rate reached and the time
 * from the last write until the last one is in the map (ms).
 */
static int run_rate(int map, int ifindex, int count, double rate)
{
	__u64 t0 = now(), t1, t2, gap = (__u64)(1e9 / rate);
	__u8 mac[6] = { 0x02, 0xfc, 0, 0, 0, 0 };
	__u32 last;
	int i;

	for (i = 0; i < count; i++) {
		__u32 dst = htonl(0x0afc0000 | (i + 1));

		while (now() < t0 + (__u64)i * gap)
			;
		mac[3] = (__u8)(i >> 16);
		mac[4] = (__u8)(i >> 8);
		mac[5] = (__u8)i;
		if (neigh_replace(ifindex, dst, mac)) {
			perror("RTM_NEWNEIGH");
			return 1;
		}
	}
	t1 = now();
	last = htonl(0x0afc0000 | count);
	while (!has_mac(map, ifindex, last, mac, NULL) &&
	       now() < t1 + 10000000000ULL)
		;
	t2 = now();
	printf("%.0f %.3f\n", count / ((t1 - t0) / 1e9), (t2 - t1) / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char path[4096];
	int map, ifindex, count;

	if (argc > 1 && !strcmp(argv[1], "--help")) {
		printf("usage: neighlat latency PIN_DIR IFINDEX COUNT\n"
		       "       neighlat rate PIN_DIR IFINDEX COUNT PER_SECOND\n\n"
		       "latency: COUNT neighbour updates on IFINDEX, each timed from the\n"
		       "request to its entry in PIN_DIR's toe_neigh; rate: COUNT updates\n"
		       "paced at PER_SECOND, then the entries checked.\n");
		return 0;
	}
	if (argc < 5 ||
	    (strcmp(argv[1], "latency") && strcmp(argv[1], "rate")) ||
	    (!strcmp(argv[1], "rate") && argc < 6)) {
		fprintf(stderr,
			"usage: neighlat latency PIN_DIR IFINDEX COUNT\n"
			"       neighlat rate PIN_DIR IFINDEX COUNT PER_SECOND\n");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%s", argv[2], TOE_MAP(NEIGH));
	map = bpf_obj_get(path);
	if (map < 0) {
		perror(path);
		return 1;
	}
	ifindex = atoi(argv[3]);
	count = atoi(argv[4]);
	nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (nl_fd < 0 || bind(nl_fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("netlink");
		return 1;
	}
	if (!strcmp(argv[1], "latency"))
		return run_latency(map, ifindex, count);
	return run_rate(map, ifindex, count, atof(argv[5]));
}
