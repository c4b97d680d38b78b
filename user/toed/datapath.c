// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The datapath toed serves, followed.  toe-loader can unload and load the
 * datapath under a running toed: the pins then name new maps and a new
 * sock_ops link, and what toed opened at start is the old, freed datapath.
 * dp_check compares the ids behind the pins (toe_stats, toe_events,
 * toe_neigh, link_sockops and its program) with those of what toed has
 * open, on the 2 s timer and before each request; when they differ it
 * takes the datapath's change lock (so a load in progress finishes first),
 * closes everything, and opens the new datapath: maps, ring buffer, the
 * neighbour and address maps rtnetlink mirrors into, the policy in force
 * applied again, neighbours and addresses resynced, the module's TIDs
 * reconciled.  It says so in the log, to the monitors and in status.
 * With no datapath toed keeps running and requests that need one fail.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/err.h"
#include "lib/path.h"
#include "lib/pinned.h"
#include "ep.h"
#include "apply.h"
#include "datapath.h"
#include "kmod.h"
#include "tidpool.h"
#include "events.h"
#include "mon.h"
#include "log.h"
#include "show_maps.h"
#include "show_state.h"
#include "srcrec.h"
#include "state.h"

#define REOPEN_WAIT_MS 1000 /* for a load or unload in progress to finish */

/*
 * The id of the map or link pinned at name in the pin folder; 0: none, or
 * (*err set to its errno) a pin that could not be read for want of a
 * descriptor or memory: that is not an unload.
 */
static __u32 pin_id(struct toed *d, const char *name, bool link, __u32 *prog_id,
		    int *err)
{
	struct bpf_link_info li;
	struct bpf_map_info mi;
	char path[PATH_MAX];
	__u32 len, id = 0;
	int fd;

	if (toe_join(path, sizeof(path), d->pin_dir, name))
		return 0;
	fd = bpf_obj_get(path);
	if (fd < 0) {
		if (toe_errno_resource(errno) && !*err)
			*err = errno;
		return 0;
	}
	memset(&li, 0, sizeof(li));
	memset(&mi, 0, sizeof(mi));
	len = link ? sizeof(li) : sizeof(mi);
	if (!bpf_obj_get_info_by_fd(fd, link ? (void *)&li : (void *)&mi,
				    &len)) {
		id = link ? li.id : mi.id;
		if (link && prog_id)
			*prog_id = li.prog_id;
	}
	close(fd);
	return id;
}

/* The ids pinned now; 0, or the errno of a pin that could not be read. */
static int read_ids(struct toed *d, struct dp_ids *ids)
{
	int err = 0;

	memset(ids, 0, sizeof(*ids));
	ids->stats = pin_id(d, TOE_MAP(STATS), false, NULL, &err);
	ids->events = pin_id(d, TOE_MAP(EVENTS), false, NULL, &err);
	ids->neigh = pin_id(d, TOE_MAP(NEIGH), false, NULL, &err);
	ids->sockops_link =
		pin_id(d, TOE_PIN_LINK_SOCKOPS, true, &ids->sockops_prog, &err);
	return err;
}

/*
 * The pins could not be read (err): toed cannot tell loaded from not, so
 * it keeps what it has open, says why once, and looks again on its timer.
 */
static bool ids_unread(struct toed *d, int err, bool was)
{
	if (d->dp.pin_err != err)
		logm(LOG_WARN,
		     "cannot read the datapath's pins at %s: %s: %s until they can be read",
		     d->pin_dir, strerror(err),
		     was ? "the datapath open is kept" : "not attached");
	d->dp.pin_err = err;
	return was;
}

/* When the sock_ops program was loaded, in unix seconds (now if unknown). */
static __u64 load_time(__u32 prog_id)
{
	struct bpf_prog_info pi;
	struct timespec boot, real;
	__u32 len = sizeof(pi);
	__u64 t = 0;
	int fd = prog_id ? bpf_prog_get_fd_by_id(prog_id) : -1;

	clock_gettime(CLOCK_BOOTTIME, &boot);
	clock_gettime(CLOCK_REALTIME, &real);
	memset(&pi, 0, sizeof(pi));
	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &pi, &len) && pi.load_time) {
		__u64 bootns = boot.tv_sec * 1000000000ULL + boot.tv_nsec;

		if (pi.load_time <= bootns)
			t = real.tv_sec -
			    (bootns - pi.load_time) / 1000000000ULL;
	}
	if (fd >= 0)
		close(fd);
	return t ? t : (__u64)real.tv_sec;
}

/* Close what toed has open of the datapath; its last events read first. */
void dp_detach(struct toed *d)
{
	if (d->evs.rb) {
		events_consume(&d->evs);
		epoll_ctl(d->epfd, EPOLL_CTL_DEL,
			  ring_buffer__epoll_fd(d->evs.rb), NULL);
		ring_buffer__free(d->evs.rb);
		d->evs.rb = NULL;
	}
	pool_close(&d->kmod);
	if (d->dp.loaded)
		toe_maps_close(&d->m);
	d->nl.neigh_map = d->nl.local_map = -1;
	d->dp.loaded = false;
	memset(&d->dp.ids, 0, sizeof(d->dp.ids));
}

/*
 * A reload that kept the maps (toe-loader load in place) kept the policy in
 * force with them.  When that is another's (toed --apply from elsewhere,
 * after toed's own last apply), toed leaves it in force: a datapath reload
 * is not a policy change, and applying toed's own file again would undo
 * the other's.  toectl reload or SIGHUP applies toed's file, as ever.  At
 * toed's start (no apply of its own yet) and over new maps (no policy in
 * them) toed applies its own.
 */
static bool kept_others_policy(struct toed *d)
{
	struct toe_pol_hdr h = {};
	struct toe_policy_src rec;
	const char *src;
	__u32 gen = 0;
	bool own;

	if (!d->ap.ast.serial || toe_policy_hdr(&d->m, &gen, &h))
		return false;
	src = policy_source(d, &h, &rec, &own);
	if (!src || own)
		return false; /* rec: freed by policy_source, or never filled */
	logm(LOG_INFO,
	     "the datapath was loaded again with its maps: the policy in force, %llu from %s (applied by another), is kept",
	     (unsigned long long)h.serial, src);
	toe_policy_src_free(&rec);
	return true;
}

/* Open the datapath whose pins have ids, and bring it to toed's state. */
static int dp_attach(struct toed *d, const struct dp_ids *ids, char *err,
		     size_t len)
{
	char e[1200];

	if (toe_maps_open(d->pin_dir, &d->m, err, len))
		return -1;
	d->evs.rb = ring_buffer__new(d->m.events, on_event, d, NULL);
	if (!d->evs.rb ||
	    ep_add(d->epfd, ring_buffer__epoll_fd(d->evs.rb), SRC_RING)) {
		toe_errf(err, len, "cannot read the event ring buffer: %s",
			 strerror(errno));
		ring_buffer__free(d->evs.rb);
		d->evs.rb = NULL;
		toe_maps_close(&d->m);
		return -1;
	}
	d->nl.neigh_map = d->m.neigh;
	d->nl.local_map = d->m.local;
	d->dp.loaded = true;
	d->dp.absent_logged = false;
	d->dp.ids = *ids;
	d->dp.since = load_time(ids->sockops_prog);
	kmod_read_devs(&d->kmod);
	/*
	 * the policy in force, again (unless the maps kept another's); a
	 * failure is logged there, and retried
	 */
	if (!kept_others_policy(d) && apply(d, false, "", e, sizeof(e)))
		d->kmod.kmod_dirty = true;
	retrack(d, true); /* neighbours and addresses into the new maps */
	/*
	 * What is still on the ring first (a toed killed before reading it,
	 * or this one's start): a flow that closed gives its TID back here,
	 * once.  Read after the reconcile, the close of a TID the reconcile
	 * freed as an orphan would free it again, in the pool by then.
	 */
	events_consume(&d->evs);
	d->kmod.acct_based =
		false; /* its tid_taken: the TID counts start over */
	kmod_reconcile(
		&d->kmod); /* the old datapath's flows are gone: their TIDs too */
	return 0;
}

/* Log and tell the monitors: what (loaded, reloaded, unloaded), old ids. */
static void announce(struct toed *d, const char *what, const struct dp_ids *o)
{
	const struct dp_ids *n = &d->dp.ids;
	char text[512], json[512];

	snprintf(
		text, sizeof(text),
		"datapath %s: %s: stats map id %u -> %u, events map id %u -> %u, neigh map id %u -> %u, sockops prog id %u -> %u",
		what, d->pin_dir, o->stats, n->stats, o->events, n->events,
		o->neigh, n->neigh, o->sockops_prog, n->sockops_prog);
	logm(LOG_INFO, "%s", text);
	if (!mon_any(&d->mon))
		return;
	snprintf(
		json, sizeof(json),
		"{\"event\":\"datapath\",\"state\":\"%s\",\"pin_dir\":\"%s\",\"loaded\":%s,"
		"\"stats_map_id\":%u,\"events_map_id\":%u,\"neigh_map_id\":%u,\"sockops_prog_id\":%u,"
		"\"policy\":%llu}\n",
		what, d->pin_dir, d->dp.loaded ? "true" : "false", n->stats,
		n->events, n->neigh, n->sockops_prog,
		(unsigned long long)(d->dp.loaded ? d->ap.ast.serial : 0));
	{
		char line[600];

		snprintf(line, sizeof(line), "[datapath] %s\n",
			 text + strlen("datapath "));
		mon_send(&d->mon, line, json);
	}
}

/*
 * Is the datapath toed has open the one pinned now?  If not, open the one
 * pinned now (or none).  True: a datapath is open.
 */
bool dp_check(struct toed *d)
{
	struct dp_ids now, old = d->dp.ids;
	bool was = d->dp.loaded;
	char err[1200];
	int err_no;

	err_no = read_ids(d, &now);
	if (err_no)
		return ids_unread(d, err_no, was);
	d->dp.pin_err = 0;
	d->dp.pinned = now.stats != 0;
	if (was ? !memcmp(&now, &old, sizeof(now)) : !now.stats)
		return was;
	/* it changed, or is changing: wait for a load or unload in progress */
	if (change_lock(&d->ap, "toed reopen", REOPEN_WAIT_MS, err,
			sizeof(err))) {
		logm(LOG_WARN, "cannot reopen the datapath now: %s", err);
		return was;
	}
	err_no = read_ids(d, &now);
	if (err_no) {
		change_unlock(&d->ap);
		return ids_unread(d, err_no, was);
	}
	if (was && !memcmp(&now, &old, sizeof(now))) {
		/*
		 * a load seen half-way that failed and was undone: the
		 * datapath open is the one pinned (reopening it would apply
		 * the policy again, a new serial and generation for nothing)
		 */
		change_unlock(&d->ap);
		return was;
	}
	dp_detach(d);
	if (now.stats && dp_attach(d, &now, err, sizeof(err)) == 0) {
		if (was)
			d->dp.reloads++;
		announce(d, was ? "reloaded" : "loaded", &old);
	} else {
		if (now.stats && !d->dp.absent_logged)
			logm(LOG_WARN, "%s", err);
		d->dp.absent_logged = now.stats;
		if (was) {
			d->dp.unloads++;
			announce(d, "unloaded", &old);
		}
	}
	change_unlock(&d->ap);
	return d->dp.loaded;
}
