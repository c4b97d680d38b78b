/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: the daemon's one state object and what its parts call on each other.
 *
 *   main.c    options, usage, --check / --apply, the state and its log
 *   loop.c    daemon_run: start-up, the epoll loop, the one teardown
 *   apply.c   applying the configuration (start, SIGHUP, toectl reload,
 *             the kernel module's devices changing)
 *   ctl.c     the control socket: clients read and answered without
 *             blocking, each with a deadline; requests dispatched by a table
 *   ctl_parse.c  a request's bytes to a command (no I/O: fuzzed)
 *   datapath.c   which datapath toed serves: noticing a reload or unload
 *             by the ids behind the pins, and opening it again
 *   show_state.c  what toectl status, stats, policy and devices show
 *   show_maps.c   what toectl flows and neigh show, from the maps alone
 *   config.c  the configuration file's parser (fuzzed)
 *   policy.c  the configuration into the datapath's maps: devices.c,
 *             cpumap.c, classify.c; srcrec.c records where it came from
 *   neigh.c   rtnetlink: the neighbour table mirrored into toe_neigh
 *   genl.c    the kernel module's generic netlink family
 *   kmod.c    the kernel module: its devices, the TIDs toed holds there
 *   listen.c  the server TIDs toed holds there for offloaded listeners
 *   events.c  ring-buffer events, monitor clients, neighbour and link
 *             callbacks, which interfaces are mirrored
 *   metrics.c --metrics: /metrics for Prometheus, served from the loop
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
#include "srcrec.h"
#include "lib/toe_ctl.h"
#include "show_maps.h"

#define MAX_MON 32 /* monitor clients at once */
#define MAX_IFACES 32 /* --interface */
#define MAX_CLIENTS 128 /* control clients at once, monitors not counted */
#define CTL_DEADLINE_NS 2000000000ULL /* to send a request; to read its answer */
#define CTL_LINGER_NS 1000000000ULL /* after the answer, for the client to close */

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
	SRC_CLIENT,
	SRC_NFT, /* nftables' ruleset changes (nft.c) */
	SRC_NFT_AGAIN, /* the second bump after a change (nft.c) */
	SRC_METRICS /* --metrics: libmicrohttpd's epoll fd (metrics.c) */
};

#define NLAT_BUCKETS 12 /* neighbour propagation latency histogram (metrics.c) */

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

/* The datapath toed serves (datapath.c): the ids behind its pins. */
struct dp_ids {
	__u32 stats, events, neigh; /* map ids */
	__u32 sockops_link, sockops_prog;
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
	char *cfg_text; /* its file's text, as parsed (recorded at each apply) */
	size_t cfg_len;
	char src_shown[4096]; /* show_state.c: the source of another's policy, shown */
	struct toe_apply_stats ast; /* its last apply */
	__u64 applied_ns;
	/*
	 * The datapath's TOE_LOCK_CHANGE (dplock.h) while toed applies or
	 * reopens the datapath, else -1: it keeps toe-loader and toed --apply
	 * out of the datapath meanwhile (apply.c takes it, or finds it held).
	 */
	int change_lock;

	/* The datapath: datapath.c follows it. */
	struct {
		bool loaded; /* D->m and D->rb are open */
		bool absent_logged; /* "not loaded" said once */
		struct dp_ids ids; /* of the one open */
		__u64 since; /* its programs' load time, unix seconds */
		__u64 reloads, unloads;
	} dp;

	/* The datapath and the event sources: loop.c sets them up and tears them down. */
	struct toe_maps m; /* the pinned maps; fds -1 while not loaded */
	struct ring_buffer *rb; /* toe_events (events.c consumes) */
	struct toe_nl nl; /* rtnetlink (neigh.c) */
	bool retrack; /* a link changed: recompute tracked (events.c) */
	int epfd, sigfd, lsock, tfd;
	int lockfd; /* the datapath's TOE_LOCK_DAEMON, held for toed's life */
	int runlockfd; /* the run folder's toed.lock: one toed per socket */
	char sock_path[108]; /* the control socket's path */
	struct mon mon[MAX_MON]; /* monitor clients (events.c, ctl.c adds) */
	struct client cl[MAX_CLIENTS]; /* control clients (ctl.c) */
	__u64 start_ns;
	__u64 start_unix_ns; /* the same moment, CLOCK_REALTIME */
	unsigned long netns_ino; /* toed's network namespace */

	/*
	 * The kernel module (user/toed/genl.c); gl.family 0 while it is not
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
		__u64 reserved, unreserved; /* TIDs into the pools, given back unused */
		__u64 demoted; /* flows toe_tid_demote sent to the host */
		__u64 bind_refused; /* of alloc_*: a pool's TID the module would not bind */
	} kst;

	/* Counters (toectl stats): events.c, apply.c, ctl.c count them. */
	__u64 ev[TOE_EV_FLOW_CLOSED + 1];
	__u64 ev_bad;
	__u64 closed_by[TOE_ACT_BYPASS + 1]; /* flow_closed events by decision */
	__u64 refused_by[TOE_R__MAX]; /* flow_refused events by reason */
	struct {
		__u64 bucket[NLAT_BUCKETS]; /* not cumulative; over the last: count */
		__u64 count, sum_ns;
	} nlat; /* neighbour event read -> map write (events.c, metrics.c) */
	__u64 reload_ok, reload_failed;
	__u64 mon_lost;
	struct {
		__u64 requests, requests_bad;
		__u64 clients_refused; /* not root */
		__u64 clients_timed_out, clients_over_limit;
	} cst; /* the control socket (ctl.c) */
	struct {
		__u64 starts, stops; /* module LISTEN_START / STOP that succeeded */
		__u64 failed; /* refused, or the table out of memory */
		__u64 reconciled; /* of starts and stops, made by a reconcile */
	} lst; /* listeners on module devices (listen.c) */
};

/* The daemon's state: main's, the one instance. */
extern struct toed *D;

/* main.c: "toed: LEVEL: ..." on stderr, when level is within --log-level. */
void logm(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* loop.c: run the daemon until SIGTERM or SIGINT; the exit status. */
int daemon_run(void);
int ep_add(int fd, enum src s);

/* apply.c */
int apply(bool reload, const char *why, char *err, size_t errlen);
int do_apply(char *err, size_t errlen);
int config_load(char *err, size_t errlen);
int change_lock(const char *who, int wait_ms, char *err, size_t errlen);
void change_unlock(void);

/* ctl.c: the control clients, all from the epoll loop, none blocking it. */
void ctl_accept(void);
void ctl_event(__u32 data, __u32 events);
int ctl_timeout_ms(void);
void ctl_expire(void);
void ctl_close_all(void);

/* datapath.c */
bool dp_check(void);
void dp_detach(void);

/* show_state.c: what toectl shows; the metrics (metrics.c) gather the same way. */
struct counter {
	const char *name; /* as toectl stats names it */
	__u64 v;
};

#define MAX_COUNTERS 64

size_t daemon_counters(struct counter *out);
size_t control_counters(struct counter *out);
void kmod_view(struct toe_view_kmod *kv);
void view_status(FILE *f, bool json);
void view_stats(FILE *f, bool json);
void view_policy(FILE *f, bool json);
void view_devices(FILE *f, bool json);
void view_neigh(FILE *f, bool json);

/* kmod.c */
long long tid_of(const struct toe_flow_key *k, void *ctx);
void tid_clear(void);
__u32 tids_held(__u32 mdev);
size_t tids_held_all(void);
bool kmod_read_devs(void);
void kmod_map_refresh(void);
bool kmod_offload(struct toe_event *e);
void kmod_close(const struct toe_event *e);
void kmod_reconcile(void);
void kmod_changed(void);
void on_genl(struct toe_genl *g, enum toe_genl_ev ev, __u32 dev, void *ctx);

/* tidpool.c */
void pool_close(void);
int pool_fill(__u32 i);
void pool_fill_all(void);
void pool_drain(__u32 i);
void pool_put(__u32 i, __u32 tid);
int pool_take(__u32 (**out)[2]);
int pool_queue_if_any(__u32 i);
bool pool_demote(__u64 cookie, __u32 dev, __u32 tid, __u32 reason);
/* listen.c */
void listen_event(const struct toe_event *e);
void listen_reconcile(void);
void listen_clear(void);
__u32 listeners_held(__u32 mdev);
size_t listeners_held_all(void);

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
void on_route(struct toe_nl *nl);
void retrack(bool force);

/* metrics.c */
int metrics_parse(const char *arg, char *err, size_t errlen);
int metrics_open(void);
void metrics_run(void);
int metrics_timeout_ms(int ms);
void metrics_close(void);
void neigh_lat_observe(__u64 ns);

#endif /* __TOE_TOED_H */
