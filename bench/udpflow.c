// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * UDP load for make bench-forward's udp settings: one flow, as fast as one
 * thread can send it, through the router.
 *
 *   udpflow recv -p PORT -t SECONDS
 *	counts the datagrams and bytes that arrive on PORT (IPv4 and IPv6)
 *	for SECONDS after the first one; answers a sender's hello (its first
 *	datagram, 4 bytes) so that conntrack on the router sees the flow's
 *	reply, as every request/response protocol gives it.  Prints one JSON
 *	line: bytes, datagrams, seconds (first to last datagram), Gbit/s.
 *   udpflow send -a ADDR -p PORT -t SECONDS [-l LEN] [-g]
 *	says hello (again each 100 ms until answered, 5 s at most), then
 *	sends LEN-byte datagrams (default 1472: an Ethernet MTU's IPv4
 *	datagram) for SECONDS; -g: with UDP GSO (UDP_SEGMENT), 44
 *	datagrams a send, which the stack segments as late as it can (on a
 *	veth: at the router, or never on a redirect_peer path).  Prints one
 *	JSON line: bytes and datagrams sent, seconds.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#define HELLO "helo"
#define GSO_SEGS 44 /* 44 * 1472 = 64,768: under 64 KiB */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: udpflow recv -p PORT -t SECONDS\n"
		"       udpflow send -a ADDR -p PORT -t SECONDS [-l LEN] [-g]\n");
	exit(2);
}

static int recv_main(int port, double secs)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6,
				  .sin6_port = htons(port) };
	static char buf[65536];
	unsigned long long bytes = 0, n = 0;
	int fd, off = 0, rb = 32 << 20;
	double t0 = 0, t1 = 0;

	fd = socket(AF_INET6, SOCK_DGRAM, 0);
	if (fd < 0 ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("udpflow recv: socket");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rb, sizeof(rb));
	printf("{\"ready\": true}\n");
	fflush(stdout);
	for (;;) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (t0 && now() - t0 >= secs)
			break;
		if (poll(&p, 1, 100) <= 0)
			continue;
		r = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT,
			     (struct sockaddr *)&from, &fl);
		if (r < 0)
			continue;
		if (r == 4 && !memcmp(buf, HELLO, 4)) {
			sendto(fd, buf, 4, 0, (struct sockaddr *)&from, fl);
			continue;
		}
		if (!t0)
			t0 = now();
		t1 = now();
		bytes += r;
		n++;
	}
	printf("{\"bytes\": %llu, \"datagrams\": %llu, \"seconds\": %.6f, \"gbit_s\": %.4f}\n",
	       bytes, n, t1 - t0, t1 > t0 ? bytes * 8 / (t1 - t0) / 1e9 : 0);
	return 0;
}

static int hello(int fd)
{
	double t0 = now();
	char b[16];

	while (now() - t0 < 5) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (send(fd, HELLO, 4, 0) != 4 && errno != ECONNREFUSED)
			return -1;
		if (poll(&p, 1, 100) > 0 && recv(fd, b, sizeof(b), 0) == 4)
			return 0;
	}
	return -1;
}

static int send_main(const char *addr, int port, double secs, int len, int gso)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai;
	static char buf[GSO_SEGS * 1500];
	unsigned long long bytes = 0, n = 0;
	char ps[8];
	size_t chunk;
	double t0;
	int fd;

	snprintf(ps, sizeof(ps), "%d", port);
	if (getaddrinfo(addr, ps, &hints, &ai)) {
		fprintf(stderr, "udpflow send: bad address '%s'\n", addr);
		return 2;
	}
	fd = socket(ai->ai_family, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		perror("udpflow send: connect");
		return 1;
	}
	freeaddrinfo(ai);
	if (hello(fd)) {
		fprintf(stderr, "udpflow send: no answer from %s port %d\n",
			addr, port);
		return 1;
	}
	if (gso && setsockopt(fd, SOL_UDP, UDP_SEGMENT, &len, sizeof(len))) {
		perror("udpflow send: UDP_SEGMENT");
		return 1;
	}
	memset(buf, 'u', sizeof(buf));
	chunk = gso ? (size_t)len * GSO_SEGS : (size_t)len;
	t0 = now();
	while (now() - t0 < secs) {
		int i;

		for (i = 0; i < 64; i++) {
			ssize_t r = send(fd, buf, chunk, 0);

			if (r < 0)
				continue; /* ENOBUFS, ECONNREFUSED: go on */
			bytes += r;
			n += gso ? (r + len - 1) / len : 1;
		}
	}
	printf("{\"bytes_sent\": %llu, \"datagrams_sent\": %llu, \"seconds\": %.6f}\n",
	       bytes, n, now() - t0);
	return 0;
}

int main(int argc, char **argv)
{
	const char *addr = NULL;
	int port = 0, len = 1472, gso = 0, c;
	double secs = 4;

	if (argc < 2)
		usage();
	optind = 2;
	while ((c = getopt(argc, argv, "a:p:t:l:gh")) != -1) {
		switch (c) {
		case 'a':
			addr = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 't':
			secs = atof(optarg);
			break;
		case 'l':
			len = atoi(optarg);
			break;
		case 'g':
			gso = 1;
			break;
		default:
			usage();
		}
	}
	if (port <= 0 || port > 65535 || secs <= 0 || len < 1 || len > 1500)
		usage();
	if (!strcmp(argv[1], "recv"))
		return recv_main(port, secs);
	if (!strcmp(argv[1], "send") && addr)
		return send_main(addr, port, secs, len, gso);
	usage();
	return 2;
}
