/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The options that place both ends of a connection, for the tools that fork
 * a server and a client (bench/loadgen, selftests/tools/bypass_check):
 * --addr A --port P (the server listens there, IPv4 or IPv6) and --srv-ns
 * PATH / --cli-ns PATH (each end's network namespace, see toe_setns.h).
 * Owns their getopt entries, their parsing and the server's address.
 */
#ifndef __TOE_ENDPOINT_OPTS_H
#define __TOE_ENDPOINT_OPTS_H

#include <arpa/inet.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

struct endpoint_opts {
	const char *addr;
	int port;
	const char *srv_ns, *cli_ns;
};

/* In a struct option table; the values are endpoint_opt()'s. */
/* clang-format off */
#define ENDPOINT_OPTIONS					\
	{ "addr", required_argument, NULL, 'a' },		\
	{ "port", required_argument, NULL, 'p' },		\
	{ "srv-ns", required_argument, NULL, 'S' },		\
	{ "cli-ns", required_argument, NULL, 'C' }
/* clang-format on */

/* getopt_long's c (with arg) when it is one of ENDPOINT_OPTIONS: taken. */
static inline bool endpoint_opt(struct endpoint_opts *e, int c, const char *arg)
{
	switch (c) {
	case 'a':
		e->addr = arg;
		return true;
	case 'p':
		e->port = atoi(arg);
		return true;
	case 'S':
		e->srv_ns = arg;
		return true;
	case 'C':
		e->cli_ns = arg;
		return true;
	default:
		return false;
	}
}

/*
 * The server's address, e->addr port e->port, into sa: its length, or 0
 * when addr is neither an IPv4 nor an IPv6 address.
 */
static inline socklen_t endpoint_addr(const struct endpoint_opts *e,
				      struct sockaddr_storage *sa)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)sa;

	memset(sa, 0, sizeof(*sa));
	if (inet_pton(AF_INET, e->addr, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(e->port);
		return sizeof(*a4);
	}
	if (inet_pton(AF_INET6, e->addr, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(e->port);
		return sizeof(*a6);
	}
	return 0;
}

#endif /* __TOE_ENDPOINT_OPTS_H */
