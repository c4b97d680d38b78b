/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: the daemon's one state object and what its parts call on each other.
 *
 *   main.c    options, usage, --check / --apply, the state and its log
 *   loop.c    daemon_run: start-up, the epoll loop, the one teardown
 *   apply.c   applying the configuration (start, SIGHUP, toectl reload,
 *             the kernel module's devices changing)
 *   ctl.c     the control socket: one request, dispatched by a table
 *   views.c   what toectl status, stats, policy and devices show
 *   kmod.c    the kernel module: its devices, the TIDs toed holds there
 *   events.c  ring-buffer events, monitor clients, neighbour and link
 *             callbacks, which interfaces are mirrored
 *
 * toed is one thread: every part reads and writes the state through D, set
 * once by main before anything else runs.
 */
#ifndef __TOE_TOED_H
#define __TOE_TOED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "config.h"
#include "genl.h"
#include "neigh.h"
#include "opentoe.h"
#include "policy.h"
#include "views.h"

#define MAX_MON 32 /* monitor clients at once */
#define MAX_IFACES 32 /* --interface */

enum toed_log { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* What an epoll event came from: the high 32 bits of its data.u64. */
enum src {
	SRC_SIGNAL = 1,
	SRC_NETLINK,
	SRC_RING,
	SRC_LISTEN,
	SRC_TIMER,
	SRC_MON,
	SRC_GENL,
	SRC_NFT /* nftables' ruleset changes (nft.c) */
};

/* A monitor client (toectl monitor): events streamed until it goes away. */
struct mon {
	int fd; /* -1: free slot */
	bool json;
	__u64 lost; /* lines dropped because the client was slow */
};

struct tident; /* a TID held in the kernel module (kmod.c) */

struct toed {
	/* Options: set by main, read-only after. */
	const char *config;
	const char *pin_dir;
	const char *run_dir;
	const char *ifaces[MAX_IFACES]; /* --interface */
	int nifaces;
	int rcvbuf;
	int log_level; /* enum toed_log */

	/* The policy: apply.c writes it. */
	struct toe_cfg cfg; /* the configuration in force */
	struct toe_apply_stats ast; /* its last apply */
	__u64 applied_ns;

	/* The datapath and the event sources: loop.c sets them up and tears them down. */
	struct toe_maps m; /* the pinned maps */
	struct ring_buffer *rb; /* toe_events (events.c consumes) */
	struct toe_nl nl; /* rtnetlink (user/neigh.c) */
	bool retrack; /* a link changed: recompute tracked (events.c) */
	int epfd, sigfd, lsock, tfd, lockfd;
	char sock_path[108]; /* the control socket's path */
	struct mon mon[MAX_MON]; /* monitor clients (events.c, ctl.c adds) */
	__u64 start_ns;
	unsigned long netns_ino; /* toed's network namespace */

	/*
	 * The kernel module (user/genl.c); gl.family 0 while it is not
	 * loaded.  loop.c (and main's --apply) opens gl; kmod.c writes the rest.
	 */
	struct toe_genl gl;
	bool gl_open;
	struct toe_genl_dev kdevs[TOE_MAX_DEVS]; /* its devices here */
	int nkdevs;
	__u32 kmod_idx[TOE_MAX_DEVS]; /* toe_devs index -> module index, 0 */
	struct tident **tids; /* TIDs held, by flow key */
	size_t tid_nb, tid_n; /* hash buckets, entries */
	bool kmod_dirty; /* a module device changed: re-apply */
	struct {
		__u64 alloc, alloc_nospc, alloc_unreach, alloc_failed;
		__u64 no_tid; /* offloaded by the datapath, no TID */
		__u64 freed, free_failed, adopted, orphans, lost;
	} kst;

	/* Counters (toectl stats): events.c, apply.c, ctl.c count them. */
	__u64 ev[TOE_EV_FLOW_CLOSED + 1];
	__u64 ev_bad;
	__u64 reload_ok, reload_failed;
	__u64 requests, refused_clients, mon_lost;
};

/* The daemon's state: main's, the one instance. */
extern struct toed *D;

/* main.c: "toed: LEVEL: ..." on stderr, when level is within --log-level. */
void logm(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* loop.c: run the daemon until SIGTERM or SIGINT; the exit status. */
int daemon_run(void);

/* apply.c */
int apply(bool reload, char *err, size_t errlen);
int do_apply(char *err, size_t errlen);

/* ctl.c: answer one control client, then close it (or keep it: monitor). */
void serve(int fd);

/* views.c */
void view_status(FILE *f, bool json);
void view_stats(FILE *f, bool json);
void view_policy(FILE *f, bool json);
void view_devices(FILE *f, bool json);

/* kmod.c */
long long tid_of(const struct toe_flow_key *k, void *ctx);
void tid_clear(void);
__u32 tids_held(__u32 mdev);
size_t tids_held_all(void);
bool kmod_read_devs(void);
void kmod_merge(const struct toe_cfg *file, struct toe_cfg *out);
void kmod_map_refresh(void);
void kmod_offload(const struct toe_flow_key *k, __u32 dev);
void kmod_close(const struct toe_flow_key *k);
void kmod_reconcile(void);
void kmod_changed(void);
void on_genl(struct toe_genl *g, enum toe_genl_ev ev, __u32 dev, void *ctx);

/* events.c */
void mon_send(const char *text, const char *json);
bool mon_any(void);
int mon_free_slot(void);
void mon_attach(int slot, int fd, bool json);
void mon_input(int slot, __u32 events);
void mon_close_all(void);
int on_event(void *ctx, void *data, size_t len);
void on_neigh(struct toe_nl *nl, enum toe_nl_op op,
	      const struct toe_neigh_key *k, const struct toe_neigh *v);
void on_link(struct toe_nl *nl, int ifindex, bool gone);
void retrack(bool force);

#endif /* __TOE_TOED_H */
