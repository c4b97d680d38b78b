// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed's run: the locks (one toed per datapath: dplock's TOE_LOCK_DAEMON;
 * one per run folder), the configuration, the kernel module, rtnetlink,
 * the datapath if it is there (datapath.c), the control socket, then one
 * epoll loop over signals (signalfd), rtnetlink, the ring buffer, the
 * control socket, its clients and monitors, the module's events, the
 * metrics' HTTP server (metrics.c) and a 2 s timer, until SIGTERM or SIGINT; then one teardown (toed_teardown).
 * Nothing in the loop blocks on a client: it wakes for the next client
 * deadline too (ctl.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "lib/err.h"
#include "lib/path.h"
#include "lib/netns.h"
#include "lib/dplock.h"
#include "lib/toe_ctl.h"
#include "lib/clock.h"
#include "lib/rundir.h"
#include "opentoe_common.h"
#include "ep.h"
#include "loop.h"
#include "apply.h"
#include "ctl.h"
#include "datapath.h"
#include "fwdev.h"
#include "kmod.h"
#include "tidpool.h"
#include "listen.h"
#include "events.h"
#include "mon.h"
#include "reconcile.h"
#include "metrics.h"
#include "config.h"
#include "genl.h"
#include "log.h"
#include "neigh.h"
#include "state.h"
#include "nft.h"

#define LOCK_NAME "toed.lock"

/*
 * The datapath's daemon lock, for toed's life: a second toed on the same
 * pin folder is refused, whatever its run folder.
 */
static int take_dp_lock(struct toed *d)
{
	char err[1200], who[600];
	const char *by;

	snprintf(who, sizeof(who), "toed, run folder %.500s", d->run_dir);
	d->lockfd = toe_dplock_take(d->pin_dir, TOE_LOCK_DAEMON, who, 0, err,
				    sizeof(err));
	if (d->lockfd >= 0)
		return 0;
	by = strstr(err, " is locked by ");
	if (by)
		toe_err("another toed is running (%s) on datapath %s", by + 14,
			d->pin_dir);
	else
		toe_err("%s", err);
	return -1;
}

/*
 * The run folder's own lock (two toeds of two datapaths must not share a
 * socket), then the control socket in it.
 */
static int take_run_lock(struct toed *d)
{
	d->runlockfd = toe_rundir_lock(d->run_dir, LOCK_NAME);
	return d->runlockfd < 0 ? -1 : 0;
}

static int open_listen(struct toed *d)
{
	int fd;

	fd = toe_rundir_listen(d->run_dir, TOE_CTL_SOCK, d->sock_path,
			       sizeof(d->sock_path));
	if (fd < 0)
		return -1;
	d->lsock = fd;
	return ep_add(d->epfd, fd, SRC_LISTEN);
}

/* systemd Type=notify, without libsystemd. */
static void sd_ready(void)
{
	const char *p = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (!p || (p[0] != '/' && p[0] != '@') ||
	    strlen(p) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, p, strlen(p));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0;
	len = offsetof(struct sockaddr_un, sun_path) + strlen(p);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sendto(fd, "READY=1", 7, 0, (struct sockaddr *)&sa, len);
	close(fd);
}

/*
 * Root, the locks (held until toed exits), the run folder: made 0700, or
 * refused if it is a link, someone else's or writable by others.
 */
static int preflight(struct toed *d)
{
	char err[1200];

	if (geteuid() != 0) {
		toe_err("must be run as root");
		return -1;
	}
	if (toe_secure_dir(d->run_dir, err, sizeof(err))) {
		toe_err("run folder: %s", err);
		return -1;
	}
	return take_dp_lock(d) || take_run_lock(d) ? -1 : 0;
}

/*
 * Signals into a signalfd, the 2 s timer, one epoll set for every source
 * (first: toed_teardown counts on it).
 */
static int start_loop(struct toed *d)
{
	struct itimerspec its = { .it_interval.tv_sec = 2,
				  .it_value.tv_sec = 2 };
	sigset_t mask;

	/* before nft_open: the lease names the namespace whose routes toed follows */
	d->netns_ino = toe_netns_ino();
	d->netns_cookie = toe_netns_cookie();
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	d->evs.evt = &toed_ev_table;
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	mon_init(&d->mon, d->epfd);
	if (d->sigfd < 0 || d->tfd < 0 || d->epfd < 0 ||
	    timerfd_settime(d->tfd, 0, &its, NULL) ||
	    ep_add(d->epfd, d->sigfd, SRC_SIGNAL) ||
	    ep_add(d->epfd, d->tfd, SRC_TIMER) ||
	    (nft_open(d->pin_dir, toe_netns_cookie()) >= 0 &&
	     ep_add(d->epfd, nft_fd(), SRC_NFT))) {
		toe_err("cannot set up the event loop: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The configuration, the kernel module, rtnetlink, the datapath (if it is
 * there: else toed waits for it), the control socket.
 */
static int start_sources(struct toed *d)
{
	char err[1200];

	d->start_ns = toe_now_ns();
	d->start_unix_ns = toe_unix_ns();
	if (config_load(&d->ap, err, sizeof(err))) {
		toe_err("%s", err);
		return -1;
	}
	/* The kernel module: optional.  Without it toed runs as it always did. */
	if (toe_genl_open(&d->gl, err, sizeof(err)))
		logm(LOG_WARN, "%s: the kernel module's devices are not used",
		     err);
	else
		d->gl_open = true;
	if (d->gl_open && !toe_genl_up(&d->gl))
		logm(LOG_INFO,
		     "kernel module not loaded: configuration devices only");
	d->nl.ctx = d;
	d->nl.neigh_cb = on_neigh;
	d->nl.link_cb = on_link;
	d->nl.route_cb = nft_on_route;
	if (toe_nl_open(&d->nl, -1, -1, d->rcvbuf, err, sizeof(err))) {
		toe_err("%s", err);
		return -1;
	}
	if (ep_add(d->epfd, d->nl.ev_fd, SRC_NETLINK) ||
	    (d->gl_open && ep_add(d->epfd, d->gl.ev_fd, SRC_GENL))) {
		toe_err("cannot set up the event loop: %s", strerror(errno));
		return -1;
	}
	/* the first apply, and adopting the TIDs a previous toed held */
	if (!dp_check(d) && d->dp.pin_err) {
		toe_err("cannot read the datapath at %s: %s", d->pin_dir,
			strerror(d->dp.pin_err));
		return -1;
	}
	if (!d->dp.loaded && d->dp.pinned) {
		/* pinned, but not opened: why is logged above */
		logm(LOG_WARN,
		     "opentoe at %s cannot be opened: trying again on the timer",
		     d->pin_dir);
		retrack(d, true);
	} else if (!d->dp.loaded) {
		logm(LOG_WARN,
		     "opentoe is not loaded at %s: waiting for it (toe-loader load)",
		     d->pin_dir);
		retrack(d, true);
	}
	if (toe_genl_up(&d->gl))
		logm(LOG_INFO, "kernel module loaded: %d device%s",
		     d->kmod.nkdevs, d->kmod.nkdevs == 1 ? "" : "s");
	return open_listen(d) || metrics_open(d) ? -1 : 0;
}

/* SIGHUP reloads; SIGTERM and SIGINT stop toed.  True: stop. */
static bool on_signals(struct toed *d)
{
	struct signalfd_siginfo si;
	char err[1200];
	bool stop = false;

	while (read(d->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			logm(LOG_INFO, "SIGHUP: reloading %s", d->config);
			do_apply(d, err, sizeof(err));
		} else {
			logm(LOG_INFO,
			     "signal %d: stopping (the datapath keeps running)",
			     si.ssi_signo);
			stop = true;
		}
	}
	return stop;
}

/* One ready source.  True: stop. */
static bool dispatch(struct toed *d, const struct epoll_event *ev)
{
	char err[1200];
	__u64 ticks;

	switch ((enum src)(ev->data.u64 >> 32)) {
	case SRC_SIGNAL:
		return on_signals(d);
	case SRC_NETLINK:
		if (toe_nl_process(&d->nl, err, sizeof(err)))
			logm(LOG_ERR, "%s", err);
		if (d->retrack)
			retrack(d, false);
		break;
	case SRC_RING:
		events_consume(&d->evs);
		reconcile_soon(&d->rcl); /* events lost on the way? */
		break;
	case SRC_LISTEN:
		ctl_accept(&d->ctl);
		break;
	case SRC_CLIENT:
		ctl_event(d, ev->data.u64 & 0xffffffff, ev->events);
		break;
	case SRC_TIMER:
		if (read(d->tfd, &ticks, sizeof(ticks)) < 0)
			break;
		dp_check(d); /* reloaded or unloaded under toed? */
		if (d->kmod.kmod_dirty)
			kmod_changed(d); /* an apply that failed: again */
		else if (d->dp.loaded && toe_genl_up(&d->gl))
			pool_fill_all(
				&d->kmod); /* TIDs a device released late */
		retrack(d, false);
		fwd_evict_check(d); /* toe_fwd's evictions (fwdev.c) */
		log_rl_flush(); /* what a rate-limited log held back */
		break;
	case SRC_NFT:
		nft_process(&d->fwd);
		break;
	case SRC_GENL:
		if (toe_genl_process(&d->gl, on_genl, &d->kmod))
			logm(LOG_ERR, "kernel module events: %s",
			     strerror(errno));
		if (d->kmod.kmod_dirty)
			kmod_changed(d);
		if (d->retrack)
			retrack(d, false);
		break;
	case SRC_MON:
		mon_input(&d->mon, ev->data.u64 & 0xffffffff, ev->events);
		break;
	case SRC_METRICS:
		break; /* loop(d) runs MHD after every wake-up */
	}
	return false;
}

/* Until a signal stops toed (or epoll fails). */
static void loop(struct toed *d)
{
	bool stop = false;
	int i;

	while (!stop) {
		struct epoll_event evs[16];
		int n = epoll_wait(
			d->epfd, evs, 16,
			reconcile_timeout_ms(kmod_retry_timeout_ms(
				&d->kmod,
				pool_refill_timeout_ms(
					&d->kmod,
					metrics_timeout_ms(
						&d->met,
						ctl_timeout_ms(&d->ctl))))));

		if (n < 0 && errno != EINTR) {
			toe_err("epoll: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n; i++)
			if (dispatch(d, &evs[i]))
				stop = true;
		ctl_expire(&d->ctl);
		metrics_run(d);
		reconcile_tick(d); /* events lost: made good */
		pool_refill_tick(
			&d->kmod); /* TIDs a device released after a close */
		kmod_retry_tick(d); /* a take was in progress at a reconcile */
	}
}

/*
 * The one teardown, for wherever start-up got to: toed's own state goes;
 * the datapath keeps running, the module keeps its TIDs for the next toed
 * (kmod_exit forgets toed's copy only), the lock goes with the process.
 * The pools' TIDs go back to the module: with nobody to bind them, new
 * connections stay on the host until toed is back (a toed killed with
 * SIGKILL leaves them; the next one binds what was taken meanwhile).
 */
static void toed_teardown(struct toed *d)
{
	__u32 i;

	metrics_close(&d->met);
	mon_exit(&d->mon);
	ctl_close_all(&d->ctl);
	nft_close();
	if (d->lsock >= 0) {
		unlink(d->sock_path);
		close(d->lsock);
	}
	if (d->dp.loaded && toe_genl_up(&d->gl))
		for (i = 0; i < TOE_MAX_DEVS; i++)
			pool_drain(&d->kmod, i);
	dp_detach(d);
	toe_nl_close(&d->nl);
	if (d->gl_open)
		toe_genl_close(&d->gl);
	kmod_exit(&d->kmod);
	listen_exit(&d->lis);
	fwd_exit(&d->fwd);
	apply_exit(&d->ap);
	change_unlock(&d->ap);
}

int daemon_run(struct toed *d)
{
	int ret = 1;

	if (preflight(d))
		return 1;
	if (start_loop(d) == 0 && start_sources(d) == 0) {
		logm(LOG_INFO, "running (pid %d): datapath %s, control %s",
		     getpid(), d->pin_dir, d->sock_path);
		sd_ready();
		loop(d);
		ret = 0;
	}
	toed_teardown(d);
	return ret;
}
