/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: the control clients (ctl.c), all from the epoll loop, none
 * blocking it.
 */
#ifndef __TOED_CTL_H
#define __TOED_CTL_H

struct toed;

#include <stddef.h>
#include <linux/types.h>
#include "lib/toe_ctl.h"

struct toe_maps;
struct mon_set;

#define MAX_CLIENTS 128 /* control clients at once, monitors not counted */
#define CTL_DEADLINE_NS \
	2000000000ULL /* to send a request; to read its answer */
#define CTL_LINGER_NS \
	1000000000ULL /* after the answer, for the client to close */

/* A control client (ctl.c): where it is in its one request. */
enum client_state {
	CL_FREE,
	CL_READ, /* its request, until the deadline */
	CL_WRITE, /* its answer, until the deadline */
	CL_LINGER, /* answered and shut down: reading to its close */
};

struct client {
	enum client_state state;
	int fd;
	__u32 gen; /* tells a reused slot's epoll events from the old ones */
	__u64 deadline; /* CLOCK_MONOTONIC ns */
	char in[TOE_CTL_REQ_MAX]; /* the request so far */
	size_t inlen;
	char *out; /* the answer (malloc'd) */
	size_t outlen, outoff;
};

/*
 * The control socket's clients (ctl.c): their slots and the counts.
 * ctl_init gives it the loop's epoll set and listening socket (both
 * opened later: pointers to them) and the monitor clients it hands the
 * clients that ask for monitor to.
 */
struct ctl {
	const int *epfd;
	const int *lsock;
	struct mon_set *mon;
	struct client cl[MAX_CLIENTS];
	/*
	 * A descriptor held for the moment toed has no other (EMFILE,
	 * ENFILE): closed to accept the waiting client, tell it why and
	 * close it, then taken again.  -1 if it could not be taken; then the
	 * listening socket is left out of epoll until listen_off_ns, so that
	 * a client it cannot accept does not keep it readable and spin the
	 * loop.  Only the loop's thread touches these.
	 */
	int spare;
	__u64 listen_off_ns;
	struct ctl_stats {
		__u64 requests, requests_bad;
		__u64 clients_refused; /* not root */
		__u64 clients_timed_out, clients_over_limit;
		__u64 clients_no_fd; /* toed out of descriptors */
	} cst;
};

void ctl_init(struct ctl *cs, const int *epfd, const int *lsock,
	      struct mon_set *mon);

void ctl_accept(struct ctl *cs);
void ctl_event(struct toed *d, __u32 data, __u32 events);
int ctl_timeout_ms(struct ctl *cs);
void ctl_expire(struct ctl *cs);
void ctl_close_all(struct ctl *cs);

#endif /* __TOED_CTL_H */
