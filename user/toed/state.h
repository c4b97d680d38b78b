/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: the daemon's one state object (state.c's instance).  toed is one
 * thread: main takes it, sets the options before anything else runs and
 * passes it to daemon_run.  The parts with a state of their own (struct
 * mon_set, kmod, listeners, fwdev, events, ctl, metrics, apply, reconcile,
 * capture: main.c lists them) are members, initialised by
 * toed_state_init; the rest are the options, the datapath, the event
 * sources and the counters of what joins them, each field saying which
 * part writes it.
 */
#ifndef __TOE_STATE_H
#define __TOE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "config.h"
#include "genl.h"
#include "fwdev.h"
#include "apply.h"
#include "capture.h"
#include "events.h"
#include "ctl.h"
#include "kmod.h"
#include "metrics.h"
#include "reconcile.h"
#include "listen.h"
#include "mon.h"
#include "neigh.h"
#include "nlat.h"
#include "policy.h"
#include "show_maps.h"

#define DEFAULT_CONFIG "/etc/opentoe/opentoe.conf"

#define MAX_IFACES 32 /* --interface */
/* The datapath toed serves (datapath.c): the ids behind its pins. */
struct dp_ids {
	__u32 stats, events, neigh; /* map ids */
	__u32 sockops_link, sockops_prog;
};

struct toed {
	/* Options: set by main, read-only after. */
	const char *config;
	const char *pin_dir;
	const char *run_dir;
	const char *ifaces[MAX_IFACES]; /* --interface */
	int nifaces;
	int rcvbuf;

	/* The policy: apply.c's (apply.h). */
	struct apply ap;
	char src_shown
		[4096]; /* show_state.c: the source of another's policy, shown */

	/* The datapath: datapath.c follows it. */
	struct toed_dp {
		bool loaded; /* m and rb are open */
		bool absent_logged; /* "not loaded" said once */
		int pin_err; /* errno of the last look that could not tell */
		bool pinned; /* the last look found a datapath pinned */
		struct dp_ids ids; /* of the one open */
		__u64 since; /* its programs' load time, unix seconds */
		__u64 reloads, unloads;
	} dp;

	/* The datapath and the event sources: loop.c sets them up and tears them down. */
	struct toe_maps m; /* the pinned maps; fds -1 while not loaded */
	struct toe_nl nl; /* rtnetlink (neigh.c) */
	bool retrack; /* a link changed: recompute tracked (events.c) */
	int epfd, sigfd, lsock, tfd;
	int lockfd; /* the datapath's TOE_LOCK_DAEMON, held for toed's life */
	int runlockfd; /* the run folder's toed.lock: one toed per socket */
	char sock_path[108]; /* the control socket's path */
	struct mon_set mon; /* monitor clients (mon.c; ctl.c adds them) */
	__u64 start_ns;
	__u64 start_unix_ns; /* the same moment, CLOCK_REALTIME */
	unsigned long netns_ino; /* toed's network namespace, for display */
	__u64 netns_cookie; /* and its identity (pin names, lib/pinned.h) */

	/*
	 * The kernel module (user/toed/genl.c); gl.family 0 while it is not
	 * loaded.  loop.c (and main's --apply) opens gl; kmod.c and tidpool.c
 * keep the rest, a state of their own.
	 */
	struct toe_genl gl;
	bool gl_open;
	struct kmod kmod; /* its devices and the TIDs toed holds (kmod.h) */

	/* Counters (toectl stats): apply.c, ctl.c count them; events.h its own. */
	struct events evs; /* the ring, its events counted (events.h) */
	struct fwdev fwd; /* the forward path's events and evictions (fwdev.h) */
	struct ctl ctl; /* the control clients (ctl.h) */
	struct listeners lis; /* listeners on module devices (listen.h) */
	struct {
		__u64 runs; /* reconciles made */
		__u64 event_loss; /* of them, for events lost */
		__u64 fixed; /* TIDs and listeners they put right */
		/* fast-path flows whose conntrack entry toed made true late:
		 * their admission not read (toed not running, or lost) */
		__u64 ct_swept;
		/*
		 * the last one: when it began (CLOCK_MONOTONIC), how long its
		 * read of the ring took, how long it took in all
		 */
		__u64 last_ns, last_read_ns, last_took_ns;
	} rec; /* loss makes good (reconcile.c) */
	struct reconcile rcl; /* reconcile.c's own */
	struct capture cap; /* capture.c's own */
	struct metrics met; /* --metrics: the server (metrics.c) */
};

/*
 * The daemon's state, state.c's one instance, with its defaults and the
 * slots of clients and monitors free: main takes it before anything else
 * runs and hands it on (every part is passed it, none reads a global).
 */
struct toed *toed_state_init(void);

#endif /* __TOE_STATE_H */
