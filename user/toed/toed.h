/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: what its parts call on each other (the state they share is
 * state.h's D, the log log.h's).
 *
 *   main.c    options, usage, --check / --apply
 *   state.c   the daemon's one state, D, and its defaults
 *   log.c     the log: "toed: LEVEL: ..." on stderr, within --log-level
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
 *   events.c  ring-buffer events, neighbour and link callbacks, which
 *             interfaces are mirrored
 *   evtypes.c who takes each event type (the table events.c hands on by)
 *   mon.c     the monitor clients (toectl monitor)
 *   ep.c      the one epoll set loop.c waits on
 *   nlat.c    the neighbour propagation latency histogram
 *   fwdev.c   the forward path's flow events and per-reason counters
 *   metrics.c --metrics: /metrics for Prometheus, served from the loop
 *   reconcile.c  lost events made good: TIDs and listeners reconciled
 *
 * toed is one thread: every part reads and writes the state through D
 * (state.h), its options set once by main before anything else runs.
 */
#ifndef __TOE_TOED_H
#define __TOE_TOED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "config.h"
#include "genl.h"
#include "log.h"
#include "neigh.h"
#include "opentoe.h"
#include "policy.h"
#include "show_maps.h"
#include "srcrec.h"
#include "state.h"

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
	SRC_NFT, /* conntrack's destroy events (nft.c: the warden reads nftables') */
	SRC_METRICS /* --metrics: libmicrohttpd's epoll fd (metrics.c) */
};

/* loop.c: run the daemon until SIGTERM or SIGINT; the exit status. */
int daemon_run(void);
int ep_add(int fd, enum src s);

/* apply.c */
/* The configuration an apply merges, applies and records. */
struct apply_src {
	const struct toe_cfg *cfg; /* as the file says */
	const char *file; /* the file's name and text, recorded beside */
	const char *text;
	size_t len;
	const struct toe_genl_dev *kdevs; /* the kernel module's devices */
	int nkdevs;
	bool kmod_up; /* the module is loaded (its devices merged) */
};
int apply_locked(const char *pin_dir, const struct apply_src *src, int lock,
		 const char *who, int wait_ms, struct toe_cfg *merged,
		 struct toe_apply_stats *st, char *err, size_t errlen);
int apply(bool reload, const char *why, char *err, size_t errlen);
int do_apply(char *err, size_t errlen);
int config_load(char *err, size_t errlen);
int change_lock(const char *who, int wait_ms, char *err, size_t errlen);
void change_unlock(void);
void kmod_changed(void);

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

#define MAX_COUNTERS 80

size_t daemon_counters(struct counter *out);
size_t control_counters(struct counter *out);
void kmod_view(struct toe_view_kmod *kv);
void view_status(FILE *f, bool json);
void view_stats(FILE *f, bool json);
void view_policy(FILE *f, bool json);
void view_devices(FILE *f, bool json);
void view_neigh(FILE *f, bool json);

/* fwdev.c: the forward path's events and reasons (issue 35) */
void fwd_event_show(const struct toe_event *e, bool ct);
void fwd_reasons_read(__u64 *out);
size_t reason_counters(struct counter *out);
const char *toe_byp_why_name(__u32 why);
bool toe_reason_refusal(__u32 r);
/* the open flows' states, as /metrics names them (fast, readmit, ct_wait) */
enum {
	TOE_FWD_OPEN_FAST,
	TOE_FWD_OPEN_READMIT,
	TOE_FWD_OPEN_CT_WAIT,
	TOE_FWD_OPEN__N
};
void fwd_open_count(__u32 (*n)[TOE_FH__MAX][TOE_FWD_OPEN__N]);
void fwd_track(const struct toe_event *e);
void fwd_on_admitted(const struct toe_event *e);
void fwd_on_returned(const struct toe_event *e);
void fwd_evict_check(void);

/* kmod.c */
long long tid_of(const struct toe_flow_key *k, void *ctx);
void tid_clear(void);
__u32 tids_held(__u32 mdev);
size_t tids_held_all(void);
bool kmod_read_devs(void);
void kmod_map_refresh(void);
void kmod_on_offloaded(struct toe_event *e);
void kmod_on_closed(const struct toe_event *e);
void kmod_reconcile(void);
void kmod_retry_soon(void);
void kmod_retry_tick(void);
int kmod_retry_timeout_ms(int ms);
void on_genl(struct toe_genl *g, enum toe_genl_ev ev, __u32 dev, void *ctx);

/* tidpool.c */
void pool_close(void);
int pool_fill(__u32 i);
void pool_fill_all(void);
void pool_drain(__u32 i);
void pool_put(__u32 i, __u32 tid);
void stid_put(__u32 mdev, __u32 stid);
__u32 kmod_toe_index(__u32 mdev);
int pool_take(__u32 (**out)[2], bool servers);
bool take_in_progress(__u32 i, bool server);
void stid_reconcile(void);
int pool_queue_if_any(__u32 i);
bool pool_demote(__u64 cookie, __u32 dev, __u32 tid, __u32 reason);
void pool_refill_soon(void);
void pool_refill_tick(void);
int pool_refill_timeout_ms(int ms);
void acct_settle(__u32 i);
void acct_base(void);
void acct_view(__u32 i, long long *pool, long long *in_flight);
void acct_ssettle(__u32 i);
void acct_sview(__u32 i, long long *pool, long long *in_flight);
/* listen.c */
void listen_event(const struct toe_event *e);
void listen_reconcile(void);
void listen_clear(void);
__u32 listeners_held(__u32 mdev);
size_t listeners_held_all(void);

/* events.c */
/*
 * What is done with an event of one type (evtypes.c's toed_ev_table, by
 * type): the forward path's are fwd's whole; a listener's and a flow's
 * (flow) are counted, logged and streamed by events.c, with the part of
 * the concern that owns them before (it may make the event another) and
 * after (the flow's TID read first).
 */
struct ev_type {
	void (*fwd)(const struct toe_event *e);
	bool flow;
	void (*before)(struct toe_event *e);
	void (*after)(const struct toe_event *e);
};
#define TOE_EV__N (TOE_EV_FWD_ENDED + 1)
struct ev_table {
	struct ev_type type[TOE_EV__N];
	toe_tid_fn tid; /* the TID a flow holds, for its log line (kmod.c) */
};
extern const struct ev_table toed_ev_table;
void mon_send(const char *text, const char *json);
bool mon_any(void);
int mon_free_slot(void);
void mon_attach(int slot, int fd, bool json);
void mon_input(int slot, __u32 events);
void mon_close_all(void);
int on_event(void *ctx, void *data, size_t len);
void events_consume(void);
void on_neigh(struct toe_nl *nl, enum toe_nl_op op,
	      const struct toe_neigh_key *k, const struct toe_neigh *v);
void on_link(struct toe_nl *nl, int ifindex, bool gone);
void retrack(bool force);

/*
 * attached.c: an interface opentoe is attached to in toed's namespace, as
 * toe-loader's pins and the kernel's links say (toectl status).
 */
struct toe_attached {
	__u32 ifindex;
	const char *hook; /* "xdp", "tc"; NULL: only toe_egress there */
	const char *mode; /* xdp: native, generic, hw; tc: tcx, clsact */
	bool dispatcher; /* xdp through libxdp's dispatcher */
	const char *egress; /* toe_egress at tc egress: tcx, clsact, NULL */
	bool mirrored; /* toed mirrors its neighbours (status fills it) */
};
int attached_read(struct toe_attached *out, int max);

/* reconcile.c: lost events made good */
void reconcile_now(const char *why);
void reconcile_tick(void);
void reconcile_soon(void);
int reconcile_timeout_ms(int ms);

/* capture.c: a killed toectl dump's capture switched off (every 2 s) */
void capture_sweep(void);

/* metrics.c */
int metrics_parse(const char *arg, char *err, size_t errlen);
int metrics_open(void);
void metrics_run(void);
int metrics_timeout_ms(int ms);
void metrics_close(void);
struct metrics_stats {
	__u64 bind_failed; /* binds failed (each retried later) */
	__u64 deadline; /* connections shut at the request deadline */
	__u64 evicted; /* the stalest, for a new one over a limit */
	__u64 refused; /* a new one over a limit, none to evict */
	__u64 connections; /* open now */
};
const char *metrics_state(const char **addr, const char **error,
			  long long *retry_ms);
const struct metrics_stats *metrics_stats(void);

#endif /* __TOE_TOED_H */
