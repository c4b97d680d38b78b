/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: follow rtnetlink neighbour, address and link events and mirror
 * them into the toe_neigh and toe_local_addr maps (the patch's neighbour.c
 * hooks, done in user space).
 */
#ifndef __TOE_NEIGH_H
#define __TOE_NEIGH_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "opentoe_forward.h"

#define TOE_NL_MAX_TRACKED 256

struct toe_nl_stats {
	__u64 neigh_set; /* map writes from add/replace/dump */
	__u64 neigh_del; /* map deletes (event, sweep, interface gone) */
	__u64 addr_set;
	__u64 addr_del;
	__u64 link_events;
	__u64 messages; /* rtnetlink messages read */
	__u64 malformed; /* messages too short or without a key */
	__u64 enobufs; /* receive queue overruns */
	__u64 resyncs; /* full dumps */
	__u64 dump_restarts; /* dumps interrupted (NLM_F_DUMP_INTR) */
	__u64 map_errors; /* failed map writes (map full?) */
};

enum toe_nl_op { TOE_NL_SET = 1, TOE_NL_DEL = 2 };

struct toe_nl;
/* Called after every neighbour map write of an event (not of a dump). */
typedef void (*toe_nl_neigh_cb)(struct toe_nl *nl, enum toe_nl_op op,
				const struct toe_neigh_key *k,
				const struct toe_neigh *v);
/* Called on a link event: the tracked set may need recomputing. */
typedef void (*toe_nl_link_cb)(struct toe_nl *nl, int ifindex, bool gone);
/*
 * Called on every event that may change how a packet is routed: a route,
 * rule, address, link or neighbour change (the forward path's route cache).
 */
typedef void (*toe_nl_route_cb)(struct toe_nl *nl);

struct toe_nl {
	int ev_fd; /* subscribed to neigh/addr/link/route/rule groups */
	int dump_fd; /* requests and their dumps */
	int neigh_map;
	int local_map;
	__u32 seq;
	__u32 tracked[TOE_NL_MAX_TRACKED]; /* ifindexes mirrored */
	int ntracked;
	struct toe_nl_stats st;
	toe_nl_neigh_cb neigh_cb;
	toe_nl_link_cb link_cb;
	toe_nl_route_cb route_cb;
	void *ctx;
	__u64 last_recv_ns; /* CLOCK_MONOTONIC of the last event or dump part read */
};

/*
 * Open both sockets.  rcvbuf (bytes, 0 = kernel default) sizes the event
 * socket's receive buffer; it is set with SO_RCVBUFFORCE when root allows.
 */
int toe_nl_open(struct toe_nl *nl, int neigh_map, int local_map, int rcvbuf,
		char *err, size_t errlen);
void toe_nl_close(struct toe_nl *nl);

/* Replace the set of interfaces mirrored; returns true if it changed. */
bool toe_nl_set_tracked(struct toe_nl *nl, const __u32 *ifindex, int n);
bool toe_nl_is_tracked(const struct toe_nl *nl, __u32 ifindex);

/*
 * Full resync: dump addresses and neighbours, write them, then delete every
 * map entry the dump did not show (and every neighbour of an interface no
 * longer tracked).  Returns 0 or -1 with err set.
 */
int toe_nl_resync(struct toe_nl *nl, char *err, size_t errlen);

/*
 * Read and apply every pending event.  On ENOBUFS the queue is drained and
 * a full resync is done, so no update is lost.  Returns 0 or -1.
 */
int toe_nl_process(struct toe_nl *nl, char *err, size_t errlen);

/* Format a neighbour key's address ("10.0.0.1" / "fe80::1"). */
const char *toe_nl_addr_str(__u8 family, const __u32 *addr, char *buf,
			    size_t len);
const char *toe_nl_mac_str(const __u8 *mac, char *buf, size_t len);
const char *toe_nl_nud_str(__u16 state);

#endif /* __TOE_NEIGH_H */
