/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: the server TIDs it holds for offloaded listeners (listen.c). */
#ifndef __TOE_LISTEN_H
#define __TOE_LISTEN_H

struct toed;

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "opentoe_events.h"
#include "show_maps.h"

struct lsn; /* a listener of toe_listeners on a module device (listen.c) */
struct lsnmod; /* a listener of the module: one tuple, one device */
struct kmod;
struct toed_dp;

/*
 * The server TIDs toed holds for offloaded listeners (listen.c): its
 * tables, its counters.  listen_init gives it what it works with: the
 * module's family, the datapath's maps, whether the datapath is loaded,
 * the module's part (its device indexes, the server TID pools).
 */
struct listeners {
	struct toe_genl *gl;
	struct toe_maps *m;
	const struct toed_dp *dp;
	struct kmod *kmod;

	struct lsn *lsn;
	size_t lsn_n, lsn_cap;
	struct lsnmod *mods;
	size_t mods_n, mods_cap;
	bool reconciling; /* module requests count as reconciled */
	/* counted for toectl stats and the metrics */
	struct listen_stats {
		__u64 starts,
			stops; /* module LISTEN_START / STOP that succeeded */
		__u64 failed; /* refused, or the table out of memory */
		__u64 reconciled; /* of starts and stops, made by a reconcile */
		/* SO_REUSEPORT siblings' server TIDs back in the server pool */
		__u64 siblings;
		/* server TIDs reserved that nothing held, freed by a reconcile */
		__u64 orphans;
	} lst;
};

void listen_init(struct listeners *ls, struct toe_genl *gl, struct toe_maps *m,
		 const struct toed_dp *dp, struct kmod *kmod);

/* the event table's (evtypes.c): a listener's start or stop */
void listen_event(struct toed *d, const struct toe_event *e);
void listen_reconcile(struct listeners *ls);
/* ls's tables let go (toed stops). */
void listen_exit(struct listeners *ls);
__u32 listeners_held(struct listeners *ls, __u32 mdev);
size_t listeners_held_all(struct listeners *ls);

#endif /* __TOE_LISTEN_H */
