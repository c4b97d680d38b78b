// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed and the datapath's TID pools (include/opentoe.h, toe_tid_pool and
 * toe_tid_held): sock_ops takes a module TID when it offloads a
 * connection, synchronously, from a pool toed fills ahead of time with
 * TIDs the module reserved (TID_RESERVE).  Here:
 *
 *   pool_fill    keeps each module device's pool holding every TID the
 *                module has free, up to TOE_TID_POOL_MAX: after an offload
 *                took one, after a close gave one back, on the timer;
 *   stid_fill    the same for the device's server TIDs (listeners,
 *                TOE_STID_POOL), up to TOE_STID_POOL_MAX reserved;
 *   pool_drain   empties a pool whose device went or changed (its TIDs
 *                given back to the module when it still has them);
 *   pool_demote  runs toe_tid_demote: a flow the module will not bind (or
 *                whose device went) goes to the host, its slot released;
 *   pool_take    at a reconcile: the pools' contents, for reconciling;
 *   take_in_progress  whether the datapath is between a pop and its entry;
 *   stid_reconcile    server TIDs reserved that nothing holds: given back;
 *   acct_*       the counts of the TID invariant (state.h: struct toed's acct):
 *                what went into and out of each pool, and which of the
 *                TIDs the datapath took toed has settled.
 *
 * toe_tid_demote comes from the datapath's own object, loaded on the
 * pinned maps it uses and nothing else (as toe-loader's bypass probe).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/clock.h"
#include "opentoe_common.h"
#include "opentoe_policy.h"
#include "opentoe_flows.h"
#include "opentoe_tid.h"
#include "toe_maps.h"
#include "kmod.h"
#include "tidpool.h"
#include "genl.h"
#include "log.h"
#include "state.h"
#include "opentoe.skel.h"

/* The pools' state is struct kmod's (kmod.h): qfd, qmdev, qnone, qfresh... */

/* Load toe_tid_demote on the pinned maps; false if this datapath has none. */
static bool demote_open(struct kmod *km)
{
	struct bpf_program *prog;
	struct bpf_map *map;
	struct opentoe *s;

	if (km->demote_skel)
		return true;
	if (km->m->tid_held < 0) {
		/* once per datapath (pool_close clears it) */
		if (!km->no_held_said)
			logm(LOG_WARN,
			     "the datapath has no %s pin (an older toe-loader's): no kernel module TIDs are reserved for it and its connections stay on the host; load it again with this toe-loader",
			     TOE_MAP(TID_HELD));
		km->no_held_said = true;
		return false;
	}
	s = opentoe__open();
	if (!s)
		return false;
	bpf_object__for_each_map(map, s->obj) {
		if (map == s->maps.toe_tid_held)
			bpf_map__reuse_fd(map, km->m->tid_held);
		else if (map == s->maps.toe_flows)
			bpf_map__reuse_fd(map, km->m->flows);
		else if (map == s->maps.toe_dev_live)
			bpf_map__reuse_fd(map, km->m->live);
		else if (map == s->maps.toe_stats)
			bpf_map__reuse_fd(map, km->m->stats);
		else if (map != s->maps.rodata) /* .rodata: made, always */
			bpf_map__set_autocreate(map, false);
	}
	bpf_object__for_each_program(prog, s->obj)
		bpf_program__set_autoload(prog,
					  prog == s->progs.toe_tid_demote);
	if (opentoe__load(s)) {
		logm(LOG_ERR,
		     "cannot load toe_tid_demote: flows the kernel module refuses stay counted offloaded");
		opentoe__destroy(s);
		return false;
	}
	km->demote_skel = s;
	return true;
}

/* The datapath's tid_taken (stid_taken: server) of toe_devs index i. */
static __u64 dp_taken(struct kmod *km, __u32 i, bool server)
{
	struct toe_dev_live l;

	if (i >= TOE_MAX_DEVS || km->m->live < 0 ||
	    bpf_map_lookup_elem(km->m->live, &i, &l))
		return 0;
	return server ? l.stid_taken : l.tid_taken;
}

/*
 * The datapath's takes in progress on toe_devs index i (tid_taking;
 * stid_taking: server), bpf/tid.h.  0 also from a datapath without them.
 */
static __u32 dp_taking(struct kmod *km, __u32 i, bool server)
{
	struct toe_dev_live l;

	memset(&l, 0, sizeof(l));
	if (i >= TOE_MAX_DEVS || km->m->live < 0 ||
	    bpf_map_lookup_elem(km->m->live, &i, &l))
		return 0;
	return server ? l.stid_taking : l.tid_taking;
}

/* A take is one eBPF program's run: microseconds; looked at this long */
#define TAKE_WAIT_US 100
#define TAKE_WAIT_TRIES 20

/*
 * After a reconcile emptied pool i (server: its server pool): whether the
 * datapath is still between popping a TID from it and writing the entry
 * that holds it (toe_tid_held; toe_listeners), looked at until it is not
 * for 2 ms at most.  While one is, a reserved TID that neither a pool nor
 * an entry holds may be the one it took, not an orphan: the caller keeps
 * it and reconciles again soon (kmod_retry_soon).  Not: every TID popped
 * before the pools were emptied is in an entry by now (the datapath adds
 * to the count before it pops, and takes it off once the entry is
 * written).
 */
bool take_in_progress(struct kmod *km, __u32 i, bool server)
{
	int n;

	for (n = 0; dp_taking(km, i, server); n++) {
		if (n == TAKE_WAIT_TRIES) {
			logm(LOG_DEBUG,
			     "a %sTID take in progress on device %u: its unheld TIDs kept for the next reconcile",
			     server ? "server " : "", i);
			return true;
		}
		usleep(TAKE_WAIT_US);
	}
	return false;
}

/* A TID the datapath took from pool i is toed's business no more. */
void acct_settle(struct kmod *km, __u32 i)
{
	km->tid_settled_ns = toe_now_ns();
	if (i < TOE_MAX_DEVS && !km->acct_quiet)
		km->acct[i].settled++;
}

/*
 * The counts start over, the pools just emptied (pool_take) by the first
 * reconcile on this datapath: the TIDs taken before are settled by that
 * reconcile, quietly (acct_quiet, until its end).
 */
void acct_base(struct kmod *km)
{
	__u32 i;

	for (i = 0; i < TOE_MAX_DEVS; i++) {
		memset(&km->acct[i], 0, sizeof(km->acct[i]));
		km->acct[i].taken0 = dp_taken(km, i, false);
		km->acct[i].staken0 = dp_taken(km, i, true);
	}
	km->acct_based = true;
	km->acct_quiet = true;
}

/* Pool i's TIDs and those in flight, as the counts say now. */
void acct_view(struct kmod *km, __u32 i, long long *pool, long long *in_flight)
{
	struct tid_acct *a = &km->acct[i];
	__u64 taken = dp_taken(km, i, false) - a->taken0;

	*pool = (long long)(a->pushed - a->pulled - taken);
	*in_flight = (long long)(taken - a->settled);
}

/* A server TID the datapath took from pool i: toed's business no more. */
void acct_ssettle(struct kmod *km, __u32 i)
{
	if (i < TOE_MAX_DEVS && !km->acct_quiet)
		km->acct[i].ssettled++;
}

/* The same for server pool i: its server TIDs and those in flight. */
void acct_sview(struct kmod *km, __u32 i, long long *pool, long long *in_flight)
{
	struct tid_acct *a = &km->acct[i];
	__u64 taken = dp_taken(km, i, true) - a->staken0;

	*pool = (long long)(a->spushed - a->spulled - taken);
	*in_flight = (long long)(taken - a->ssettled);
}

void pool_close(struct kmod *km)
{
	int i;

	for (i = 0; i < 2 * TOE_MAX_DEVS; i++) {
		if (km->qfd[i] > 0)
			close(km->qfd[i]);
		km->qfd[i] = 0;
		km->qmdev[i] = 0;
		km->qnone[i] = false;
		km->qfresh[i] = false;
	}
	if (km->demote_skel)
		opentoe__destroy(km->demote_skel);
	km->demote_skel = NULL;
	km->no_held_said = false;
}

/* Queue i (fd) this toed's: an earlier toed's TIDs in it dropped. */
static int queue_fresh(struct kmod *km, __u32 i, int fd)
{
	__u32 tid;
	int n = 0;

	if (km->qfresh[i])
		return fd;
	while (bpf_map_lookup_and_delete_elem(fd, NULL, &tid) == 0)
		n++;
	km->qfresh[i] = true;
	if (n)
		logm(LOG_DEBUG,
		     "TID pool %u: %d TIDs an earlier toed left there dropped",
		     i, n);
	return fd;
}

/* toe_devs index i's queue, created and put in toe_tid_pool if missing. */
static int pool_queue(struct kmod *km, __u32 i)
{
	__u32 id;
	int fd;

	if (km->qfd[i] > 0)
		return queue_fresh(km, i, km->qfd[i]);
	if (km->m->tid_pool < 0)
		return -1;
	if (!km->qnone[i] &&
	    bpf_map_lookup_elem(km->m->tid_pool, &i, &id) == 0) {
		fd = bpf_map_get_fd_by_id(id);
		if (fd >= 0)
			return queue_fresh(km, i, km->qfd[i] = fd);
	}
	fd = bpf_map_create(BPF_MAP_TYPE_QUEUE, "toe_tid_queue", 0,
			    sizeof(__u32), TOE_TID_POOL_MAX, NULL);
	if (fd < 0 || bpf_map_update_elem(km->m->tid_pool, &i, &fd, BPF_ANY)) {
		logm(LOG_ERR, "cannot make the TID pool of device %u: %s", i,
		     strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	km->qnone[i] = false;
	km->qfresh[i] = true;
	return km->qfd[i] = fd;
}

/* The module's device mdev, as its DEV_GET says now. */
static bool kdev_now(struct kmod *km, __u32 mdev, struct toe_genl_dev *out)
{
	int i;

	if (!kmod_read_devs(km))
		return false;
	for (i = 0; i < km->nkdevs; i++)
		if (km->kdevs[i].index == mdev) {
			*out = km->kdevs[i];
			return true;
		}
	return false;
}

/*
 * Device i's server pool holds every server TID the module has free, up
 * to TOE_STID_POOL_MAX reserved at once (the module does not say how many
 * it has: it is asked until ENOSPC, and not again until a listener went).
 */
static void stid_fill(struct kmod *km, __u32 i, __u32 mdev,
		      const struct toe_genl_dev *k)
{
	__u32 sidx = TOE_STID_POOL(i), stid, n = 0;
	char err[512];
	int fd, ret;

	if (km->stid_out[i] &&
	    k->listeners + k->stids_reserved >= km->stid_out[i])
		return;
	km->stid_out[i] = 0;
	fd = pool_queue(km, sidx);
	if (fd < 0)
		return;
	km->qmdev[sidx] = mdev;
	while (k->stids_reserved + n < TOE_STID_POOL_MAX) {
		ret = toe_genl_stid_reserve(km->gl, mdev, &stid, err,
					    sizeof(err));
		if (ret) {
			if (ret == -ENOSPC)
				km->stid_out[i] =
					k->listeners + k->stids_reserved + n;
			else
				logm(LOG_DEBUG, "%s", err);
			break;
		}
		if (bpf_map_update_elem(fd, NULL, &stid, BPF_ANY)) {
			toe_genl_stid_free(km->gl, mdev, stid, err,
					   sizeof(err));
			break;
		}
		km->acct[i].spushed++;
		n++;
	}
}

/*
 * Pool i (a module device's) holds every TID the module has free, up to
 * TOE_TID_POOL_MAX reserved at once; how many were added.  Its server
 * pool is topped up too (stid_fill).
 */
int pool_fill(struct kmod *km, __u32 i)
{
	struct toe_genl_dev k;
	__u32 mdev, tid, want, busy, n = 0;
	char err[512];
	int fd;

	if (i >= TOE_MAX_DEVS)
		return 0;
	mdev = km->kmod_idx[i];
	if ((km->qmdev[i] && km->qmdev[i] != mdev) ||
	    (km->qmdev[TOE_STID_POOL(i)] &&
	     km->qmdev[TOE_STID_POOL(i)] != mdev))
		pool_drain(km,
			   i); /* the device went, or the index is another's */
	if (!mdev || !demote_open(km))
		return 0;
	fd = pool_queue(km, i);
	if (fd < 0 || !kdev_now(km, mdev, &k) || !k.tom[0])
		return 0;
	km->qmdev[i] = mdev;
	busy = k.tids_used + k.tids_reserved;
	want = k.nconn > TOE_TID_POOL_MAX ? TOE_TID_POOL_MAX : k.nconn;
	while (k.tids_reserved + n < want && busy + n < k.nconn) {
		if (toe_genl_tid_reserve(km->gl, mdev, &tid, err,
					 sizeof(err))) {
			logm(LOG_DEBUG, "%s", err);
			break;
		}
		if (bpf_map_update_elem(fd, NULL, &tid, BPF_ANY)) {
			toe_genl_tid_free(km->gl, mdev, tid, err, sizeof(err));
			break;
		}
		km->acct[i].pushed++;
		km->kst.reserved++;
		n++;
	}
	/* the server TIDs after the connections' (a listener waits longer) */
	stid_fill(km, i, mdev, &k);
	return n;
}

void pool_fill_all(struct kmod *km)
{
	__u32 i;

	for (i = 0; i < TOE_MAX_DEVS; i++)
		if (km->kmod_idx[i] || km->qmdev[i])
			pool_fill(km, i);
}

/*
 * A device releases a closed TID after the host let go of it (a card
 * acknowledges the close later; the simulator from its workqueue): the
 * pool_fill right after the close does not find it free.  Rather than
 * wait for the 2 s timer, toed looks again every REFILL_MS, REFILL_TRIES
 * times, while a device still holds TIDs toed let go of; a device slower
 * than that is left to the timer.
 */
#define REFILL_MS 10
#define REFILL_TRIES 50

void pool_refill_soon(struct kmod *km)
{
	km->refill_at_ns = toe_now_ns() + REFILL_MS * 1000000ULL;
	km->refill_left = REFILL_TRIES;
}

/* Whether a module device still holds TIDs toed let go of. */
static bool release_pending(struct kmod *km)
{
	int i;

	if (!kmod_read_devs(km))
		return false;
	for (i = 0; i < km->nkdevs; i++)
		if (km->kdevs[i].tids_used > tids_held(km, km->kdevs[i].index))
			return true;
	return false;
}

/* After every wake-up of the loop: look again if it is time. */
void pool_refill_tick(struct kmod *km)
{
	if (!km->refill_at_ns || toe_now_ns() < km->refill_at_ns)
		return;
	km->refill_at_ns = 0;
	if (!km->dp->loaded || !toe_genl_up(km->gl))
		return;
	pool_fill_all(km);
	if (--km->refill_left > 0 && release_pending(km))
		km->refill_at_ns = toe_now_ns() + REFILL_MS * 1000000ULL;
}

/* epoll_wait's timeout (ms, -1: none) bounded by the next look. */
int pool_refill_timeout_ms(struct kmod *km, int ms)
{
	return kmod_ms_until(km->refill_at_ns, ms);
}

/* Empty toe_tid_pool index q, its TIDs given back to module device mdev. */
static void queue_drain(struct kmod *km, __u32 q, __u32 mdev, bool server)
{
	int fd = km->qfd[q] > 0 ? km->qfd[q] : -1; /* only one toed opened */
	char err[512];
	__u32 tid;

	km->qmdev[q] = 0;
	if (fd < 0)
		return;
	km->qfresh[q] = true;
	while (bpf_map_lookup_and_delete_elem(fd, NULL, &tid) == 0) {
		if (!server)
			km->acct[q].pulled++;
		else
			km->acct[q - TOE_STID_POOL(0)].spulled++;
		if (!mdev || !toe_genl_up(km->gl))
			continue;
		if (server)
			toe_genl_stid_free(km->gl, mdev, tid, err, sizeof(err));
		else if (!toe_genl_tid_free(km->gl, mdev, tid, err,
					    sizeof(err)))
			km->kst.unreserved++;
	}
}

/*
 * Empty pool i and its server pool: their TIDs go back to the module
 * device they were reserved on, when it still has them (a device that
 * went took them along).
 */
void pool_drain(struct kmod *km, __u32 i)
{
	__u32 s = TOE_STID_POOL(i);

	queue_drain(km, i, km->qmdev[i] ? km->qmdev[i] : km->kmod_idx[i],
		    false);
	queue_drain(km, s, km->qmdev[s] ? km->qmdev[s] : km->kmod_idx[i], true);
	km->stid_out[i] = 0;
}

/* Put a reserved TID back in pool i (the module refused to bind it). */
void pool_put(struct kmod *km, __u32 i, __u32 tid)
{
	char err[512];
	int fd = pool_queue(km, i);

	if (fd < 0 || km->qmdev[i] != km->kmod_idx[i] ||
	    bpf_map_update_elem(fd, NULL, &tid, BPF_ANY))
		toe_genl_tid_free(km->gl, km->kmod_idx[i], tid, err,
				  sizeof(err));
	else
		km->acct[i].pushed++;
}

/*
 * A listener's server TID the module did not take, reserved still, on
 * module device mdev: back to its server pool (or to the module).
 */
void stid_put(struct kmod *km, __u32 mdev, __u32 stid)
{
	__u32 i = kmod_toe_index(km, mdev), s = TOE_STID_POOL(i);
	char err[512];
	int fd;

	if (i >= TOE_MAX_DEVS || km->qmdev[s] != mdev ||
	    (fd = pool_queue_if_any(km, s)) < 0 ||
	    bpf_map_update_elem(fd, NULL, &stid, BPF_ANY))
		toe_genl_stid_free(km->gl, mdev, stid, err, sizeof(err));
	else
		km->acct[i].spushed++;
}

/* Room for one more pair in *v of *cap; false: out of memory (*v as was). */
static bool pairs_room(__u32 (**v)[2], int n, int *cap)
{
	int ncap = *cap ? 2 * *cap : 256;
	void *p;

	if (n < *cap)
		return true;
	p = realloc(*v, ncap * sizeof(**v));
	if (!p)
		return false;
	*v = p;
	*cap = ncap;
	return true;
}

/*
 * Every TID of the queue fd (of toe_devs index i) into *v of *n pairs
 * (i, TID), each counted in *pulled; room is made before each is popped,
 * so none is ever out of both.  0; -1 if out of memory (what it took so
 * far in *v).
 */
static int pop_all(int fd, __u32 i, __u32 (**v)[2], int *n, int *cap,
		   __u64 *pulled)
{
	__u32 tid;

	for (;;) {
		if (!pairs_room(v, *n, cap))
			return -1;
		if (bpf_map_lookup_and_delete_elem(fd, NULL, &tid))
			return 0;
		(*v)[*n][0] = i;
		(*v)[*n][1] = tid;
		(*n)++;
		(*pulled)++;
	}
}

/* pool_take out of memory: the n TIDs it took back in their queues. */
static void pairs_put_back(struct kmod *km, __u32 (*v)[2], int n)
{
	char err[512];

	while (n-- > 0) {
		__u32 i = v[n][0];

		km->acct[i].pulled--; /* as if never taken */
		if (bpf_map_update_elem(km->qfd[i], NULL, &v[n][1], BPF_ANY) ==
		    0)
			continue;
		/* the queue it came from refuses it: given back, not leaked */
		km->acct[i].pulled++;
		if (!toe_genl_tid_free(km->gl,
				       km->qmdev[i] ? km->qmdev[i] :
						      km->kmod_idx[i],
				       v[n][1], err, sizeof(err)))
			km->kst.unreserved++;
	}
}

/*
 * At a reconcile: take every TID out of every pool into *out (pairs of
 * toe_devs index, TID); the caller puts back what the module still has
 * reserved (pool_put) and frees the rest.  How many; -1 (nothing taken,
 * the pools as they were, *out NULL) if out of memory: room is made
 * before each TID is popped, so none is ever out of both the pool and
 * *out.
 */
int pool_take(struct kmod *km, __u32 (**out)[2], bool servers)
{
	__u32(*v)[2] = NULL;
	int n = 0, cap = 0;
	__u32 i;

	*out = NULL;
	for (i = 0; i < TOE_MAX_DEVS; i++) {
		/* a module device's index, or one toed has open */
		int fd = km->kmod_idx[i] || km->qfd[i] > 0 ?
				 pool_queue_if_any(km, i) :
				 -1;

		if (fd < 0)
			continue;
		km->qfresh[i] = true; /* what stays in it is put back below */
		if (pop_all(fd, i, &v, &n, &cap, &km->acct[i].pulled)) {
			logm(LOG_ERR,
			     "out of memory reading the TID pools: not reconciled now");
			pairs_put_back(km, v, n);
			free(v);
			return -1;
		}
	}
	for (i = 0; i < TOE_MAX_DEVS; i++)
		if (km->qfd[i] > 0) /* its TIDs are of the device there now */
			km->qmdev[i] = km->kmod_idx[i];
	/*
	 * The server pools are not reconciled TID by TID: after a restart
	 * (servers), their TIDs go back to the device now at each index (a
	 * device that went or changed while toed was away left its own
	 * there), and pool_fill refills.  A running toed's are as it knows
	 * them: not churned (64 requests each way, seconds under TCG).
	 */
	for (i = 0; servers && i < TOE_MAX_DEVS; i++) {
		if (km->kmod_idx[i])
			pool_queue_if_any(
				km, TOE_STID_POOL(i)); /* opened: drained */
		queue_drain(km, TOE_STID_POOL(i), km->kmod_idx[i], true);
		km->stid_out[i] = 0;
	}
	*out = v;
	return n;
}

/* Pool i's queue if it has one already (never creates it). */
int pool_queue_if_any(struct kmod *km, __u32 i)
{
	__u32 id;
	int fd;

	if (km->qfd[i] > 0)
		return km->qfd[i];
	if (km->qnone[i] || km->m->tid_pool < 0)
		return -1;
	km->pool_lookups++;
	if (bpf_map_lookup_elem(km->m->tid_pool, &i, &id)) {
		km->qnone[i] = errno == ENOENT;
		return -1;
	}
	fd = bpf_map_get_fd_by_id(id);
	return fd < 0 ? -1 : (km->qfd[i] = fd);
}

/*
 * toe_tid_demote on the connection with cookie, holding tid of toe_devs
 * index dev: to the host with reason.  True if it was demoted (false: it
 * closed first, and released its slot itself).
 */
bool pool_demote(struct kmod *km, __u64 cookie, __u32 dev, __u32 tid,
		 __u32 reason)
{
	struct toe_tid_demote a = {
		.cookie = cookie, .dev = dev, .tid = tid, .reason = reason
	};
	struct toe_tid_demote o;
	LIBBPF_OPTS(bpf_test_run_opts, ro, .data_in = &a,
		    .data_size_in = sizeof(a), .data_out = &o,
		    .data_size_out = sizeof(o), .repeat = 1);

	if (!demote_open(km) ||
	    bpf_prog_test_run_opts(
		    bpf_program__fd(km->demote_skel->progs.toe_tid_demote),
		    &ro)) {
		logm(LOG_ERR,
		     "cannot demote the flow of TID %u on device %u: %s", tid,
		     dev, strerror(errno));
		return false;
	}
	if (o.done)
		km->kst.demoted++;
	return o.done;
}

/* (toe_devs index i, tid) in v[0..n): its place, or -1. */
static int pair_find(__u32 (*v)[2], int n, __u32 i, __u32 tid)
{
	int j;

	for (j = 0; j < n; j++)
		if (v[j][0] == i && v[j][1] == tid)
			return j;
	return -1;
}

/*
 * The server TIDs toe_listeners' entries hold, (toe_devs index, stid)
 * into *out; how many, -1 if out of memory.
 */
static int listener_stids(struct kmod *km, __u32 (**out)[2])
{
	struct toe_flow_key k, next, *prev = NULL;
	__u32(*v)[2] = NULL;
	struct toe_listen l;
	int n = 0, cap = 0;

	*out = NULL;
	while (km->m->listeners >= 0 &&
	       bpf_map_get_next_key(km->m->listeners, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(km->m->listeners, &k, &l) ||
		    l.stid == TOE_TID_NONE || l.dev >= TOE_MAX_DEVS)
			continue;
		if (!pairs_room(&v, n, &cap)) {
			free(v);
			return -1;
		}
		v[n][0] = l.dev;
		v[n][1] = l.stid;
		n++;
	}
	*out = v;
	return n;
}

/* Every server pool's TIDs into *out, (toe_devs index, stid); -1: no memory. */
static int spool_take(struct kmod *km, __u32 (**out)[2])
{
	__u32(*v)[2] = NULL, i;
	int n = 0, cap = 0, fd;

	*out = NULL;
	for (i = 0; i < TOE_MAX_DEVS; i++) {
		if (!km->kmod_idx[i] ||
		    (fd = pool_queue_if_any(km, TOE_STID_POOL(i))) < 0)
			continue;
		km->qfresh[TOE_STID_POOL(i)] =
			true; /* refilled below as it was */
		if (pop_all(fd, i, &v, &n, &cap, &km->acct[i].spulled)) {
			while (n-- > 0) /* as they were */
				stid_put(km, km->kmod_idx[v[n][0]], v[n][1]);
			free(v);
			return -1;
		}
	}
	*out = v;
	return n;
}

/*
 * A server TID of module device mdev (toe_devs index i) that no listener
 * took and nothing holds: back to the module, settled.
 */
static void stid_orphan(struct kmod *km, __u32 i, __u32 mdev, __u32 stid)
{
	char err[512];

	if (toe_genl_stid_free(km->gl, mdev, stid, err, sizeof(err))) {
		logm(LOG_WARN, "%s", err);
		return;
	}
	acct_ssettle(km, i);
	km->stid_out[i] = 0; /* one is free again */
	km->lst->orphans++;
	logm(LOG_INFO,
	     "freed server TID %u on module device %u: no listener holds it",
	     stid, mdev);
}

/*
 * At a reconcile: the server TIDs the module holds reserved (LISTEN_GET +
 * SERVER) that neither a server pool nor a toe_listeners entry holds were
 * taken by listeners gone unheard (their listen_start lost, and closed
 * before anyone read toe_listeners; or a SO_REUSEPORT sibling's entry
 * replaced theirs): given back and settled.  The server pools are emptied
 * for the look and refilled with what they held (map operations only, no
 * module request); a device with a listener between its pop and its entry
 * (take_in_progress) keeps its own for the next reconcile.
 */
void stid_reconcile(struct kmod *km)
{
	__u32(*pv)[2] = NULL, (*lv)[2] = NULL, i;
	struct toe_genl_listener *rl = NULL;
	bool busy[TOE_MAX_DEVS] = { false }, read = false;
	int np, nl, nr = 0, j, k;
	char err[512];

	if (!toe_genl_up(km->gl) || (np = spool_take(km, &pv)) < 0)
		return;
	for (i = 0; i < TOE_MAX_DEVS; i++)
		busy[i] = km->kmod_idx[i] && take_in_progress(km, i, true);
	nl = listener_stids(km, &lv);
	if (nl >= 0) {
		read = !toe_genl_listeners(km->gl, 0, true, &rl, &nr, err,
					   sizeof(err));
		if (!read)
			logm(LOG_DEBUG, "%s", err);
	}
	for (j = 0; j < nr; j++) {
		i = kmod_toe_index(km, rl[j].dev);
		if (i >= TOE_MAX_DEVS)
			continue; /* not a device toed serves */
		k = pair_find(pv, np, i, rl[j].stid);
		if (k >= 0) {
			pv[k][0] = TOE_DEV_NONE; /* back below */
			stid_put(km, rl[j].dev, rl[j].stid);
		} else if (pair_find(lv, nl, i, rl[j].stid) < 0) {
			if (busy[i])
				kmod_retry_soon(km);
			else
				stid_orphan(km, i, rl[j].dev, rl[j].stid);
		}
	}
	/* unread: every pooled one back as it was (read: those not reserved
	 * any more went with their device) */
	for (k = 0; !read && k < np; k++)
		if (pv[k][0] != TOE_DEV_NONE)
			stid_put(km, km->kmod_idx[pv[k][0]], pv[k][1]);
	free(rl);
	free(lv);
	free(pv);
}
