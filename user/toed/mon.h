/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: the monitor clients, toectl monitor (mon.c). */
#ifndef __TOE_MON_H
#define __TOE_MON_H

#include <stdbool.h>
#include <linux/types.h>

#define MAX_MON 32 /* monitor clients at once */

/* A monitor client (toectl monitor): events streamed until it goes away. */
struct mon {
	int fd; /* -1: free slot */
	bool json;
	__u64 lost; /* lines dropped because the client was slow */
};

/*
 * The monitor clients: the parts that stream lines (events, policy
 * applies, datapath changes) are handed the one set.
 */
struct mon_set {
	int epfd; /* the loop's epoll set, where each client's hangup is watched */
	struct mon c[MAX_MON];
	__u64 lost; /* lines dropped, all clients (toectl stats monitor_lost) */
};

/* Every slot free; epfd the loop's (-1 until it has one). */
void mon_init(struct mon_set *ms, int epfd);
/* Every client closed. */
void mon_exit(struct mon_set *ms);
/* One line to every monitor client: its text and JSON versions. */
void mon_send(struct mon_set *ms, const char *text, const char *json);
bool mon_any(const struct mon_set *ms);
/* A free slot, or -1: MAX_MON clients already. */
int mon_free_slot(const struct mon_set *ms);
void mon_attach(struct mon_set *ms, int slot, int fd, bool json);
void mon_input(struct mon_set *ms, int slot, __u32 events);

#endif /* __TOE_MON_H */
