/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: the kernel module (kmod.c): its devices, the TIDs toed holds there. */
#ifndef __TOE_KMOD_H
#define __TOE_KMOD_H

struct toed;

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "genl.h"
#include "opentoe_common.h"
#include "opentoe_flows.h"
#include "opentoe_events.h"
#include "show_maps.h"

struct tident; /* a TID held in the kernel module (kmod.c) */
struct tidrec; /* a TID of a device, and its flow (kmod.c) */
/* A list of TIDs (kmod.c), grown as they come. */
struct tidrecs {
	struct tidrec *v;
	size_t n, cap;
};
struct opentoe; /* the skeleton whose toe_tid_demote tidpool.c loads */
struct toed_dp; /* the datapath toed serves (state.h) */
struct listen_stats; /* listen.c's counters (state.h) */

/*
 * The kernel module's part of toed (kmod.c, tidpool.c): its devices, the
 * TIDs toed holds there, the datapath's pools of them and their counts.
 * kmod_init gives it what it works with of the rest: the module's
 * family, the datapath's maps, whether the datapath is loaded, listen.c's
 * counters (a server TID orphaned is counted there).
 */
struct kmod {
	struct toe_genl *gl; /* the family (loop.c opens it) */
	struct toe_maps *m; /* the datapath's maps (-1 while not loaded) */
	const struct toed_dp *dp;
	struct listen_stats *lst;

	struct toe_genl_dev kdevs[TOE_MAX_DEVS]; /* its devices here */
	int nkdevs;
	__u32 kmod_idx[TOE_MAX_DEVS]; /* toe_devs index -> module index, 0 */
	struct tident **tids; /* TIDs held, by flow key */
	size_t tid_nb, tid_n; /* hash buckets, entries */
	bool kmod_dirty; /* a module device changed: re-apply */
	struct kmod_stats {
		/* binds of a pool's TID: accepted, refused by reason */
		__u64 alloc, alloc_nospc, alloc_unreach, alloc_failed;
		__u64 freed, free_failed, adopted, orphans, lost;
		__u64 reserved,
			unreserved; /* TIDs into the pools, given back unused */
		__u64 demoted; /* flows toe_tid_demote sent to the host */
		__u64 bind_refused; /* alloc_nospc + _unreach + _failed */
		/*
		 * events of TIDs a reconcile dealt with: closes of TIDs toed
		 * held no record of, offloads before that reconcile
		 */
		__u64 stale;
	} kst;
	/*
	 * The TID invariant (docs/architecture.md): for each toe_devs index,
	 * pool + bound + in flight = the module's TIDs held by the host
	 * (DEV_TIDS_HOST), where pool = pushed - pulled - taken, in flight =
	 * taken - settled, taken being the datapath's toe_dev_live tid_taken
	 * less taken0, and bound toed's TID table (tids_held).  tidpool.c
	 * and kmod.c count; kmod_reconcile starts the counts over (based
	 * false: at start, on a new datapath).
	 */
	struct tid_acct {
		__u64 pushed; /* TIDs toed put in the pool */
		__u64 pulled; /* TIDs toed took out of it (drained, reconciled) */
		__u64 settled; /* taken ones toed bound, gave back or put back */
		__u64 taken0; /* tid_taken when the counts started */
		/* the same for the server pool and stid_taken (listen.c) */
		__u64 spushed, spulled, ssettled, staken0;
	} acct[TOE_MAX_DEVS];
	bool acct_based; /* the counts started on this datapath */
	bool acct_quiet; /* the first reconcile: settles are of before */
	__u64 tid_event_ns; /* ts_ns of the last event with a TID toed read */
	/* when toed last settled a TID or let a bound one go (monotonic) */
	__u64 tid_settled_ns;

	/* closed flows' TIDs never bound, and the last reconcile's (kmod.c) */
	struct tidrecs ub, disp;
	__u64 disp_ns;
	/* a reconcile again soon: a take was in progress (kmod.c) */
	bool retry_wanted;
	__u64 retry_at_ns;
	unsigned int retry_ms;
	/* the pools (tidpool.c): toe_tid_pool index -> its queue */
	struct opentoe *demote_skel;
	bool no_held_said; /* "no toe_tid_held pin" logged on this datapath */
	int qfd[2 * TOE_MAX_DEVS]; /* its queue's fd, 0: not open */
	__u32 qmdev[2 * TOE_MAX_DEVS]; /* the module device its TIDs are of */
	/*
	 * Looked up and found none: not looked up again on this datapath
	 * (only toed puts queues in toe_tid_pool, pool_queue, and one toed
	 * runs).  On Linux before 6.8 every lookup of a map-in-map from user
	 * space waits for an RCU grace period (maybe_wait_bpf_programs), ~17
	 * ms under TCG: the 64 of every reconcile made a loss reconcile take
	 * over a second.
	 */
	bool qnone[2 * TOE_MAX_DEVS];
	__u64 pool_lookups; /* toe_tid_pool indexes looked up, ever (the log) */
	/*
	 * Emptied or made by this toed: what it holds is this toed's.  toed
	 * looks at an index only when a module device is there (a start's
	 * reconcile) or comes there, not at all 128 (a grace period each
	 * before 6.8: two seconds under TCG); a queue found later at another
	 * index is an earlier toed's, whose TIDs that start's reconcile gave
	 * back as held by nothing: emptied, not given back again, when first
	 * used (queue_fresh).
	 */
	bool qfresh[2 * TOE_MAX_DEVS];
	/*
	 * device i's listeners + server TIDs reserved when TID_RESERVE +
	 * SERVER last said ENOSPC: not asked again until a listener went
	 */
	__u32 stid_out[TOE_MAX_DEVS];
	__u64 refill_at_ns; /* the next refill of what a device released */
	int refill_left;
};

/* km's pointers to the rest of toed's state; its own part empty. */
/* km's state let go (toed stops). */
void kmod_exit(struct kmod *km);
void kmod_init(struct kmod *km, struct toe_genl *gl, struct toe_maps *m,
	       const struct toed_dp *dp, struct listen_stats *lst);

long long tid_of(const struct toe_flow_key *k, void *ctx);
void tid_clear(struct kmod *km);
__u32 tids_held(struct kmod *km, __u32 mdev);
size_t tids_held_all(struct kmod *km);
bool kmod_read_devs(struct kmod *km);
void kmod_map_refresh(struct kmod *km);
/* the event table's (evtypes.c): a flow offloaded; closed */
void kmod_on_offloaded(struct toed *d, struct toe_event *e);
void kmod_on_closed(struct toed *d, const struct toe_event *e);
void kmod_reconcile(struct kmod *km);
void kmod_retry_soon(struct kmod *km);
void kmod_retry_tick(struct toed *d);
int kmod_ms_until(__u64 at_ns, int ms);
int kmod_retry_timeout_ms(struct kmod *km, int ms);
void on_genl(struct toe_genl *g, enum toe_genl_ev ev, __u32 dev, void *ctx);

#endif /* __TOE_KMOD_H */
