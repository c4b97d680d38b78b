// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed: the firewall watch (nft.h).  A netlink socket in nftables' event
 * group: every commit of a ruleset change ends with NFT_MSG_NEWGEN, and at
 * each one (or when the kernel says messages were lost, ENOBUFS) the
 * generation in toe_fwd_gen goes up by one.  XDP compares it with the one
 * each fast-path flow was admitted under: every flow goes back through the
 * stack, where the new ruleset judges its packets, and toe_egress admits it
 * again only if the stack forwards it both ways (bpf/egress.h).
 *
 * The watch and the lease run in a thread of their own, the warden: the
 * rest of toed (a /metrics scrape over 65,536 flows, a reconcile, a dump)
 * can take hundreds of milliseconds, and neither a ruleset change nor the
 * lease may wait for it.  The warden owns the nftables socket, the two
 * timers (the lease's beat, the second bump) and the mapping of
 * toe_fwd_gen; the main thread owns conntrack's destroy socket (ct.c).  The
 * main thread asks the warden for work through an eventfd and flags read
 * with atomics (a route changed, stop); nothing else is shared.
 *
 * toe_fwd_gen is written through mmap with atomic stores (XDP reads it on
 * every packet of a fast-path flow; a whole-value map update could be seen
 * half-done).  Its pin is looked up again every 2 s and at each change, so
 * a datapath unloaded and loaded anew under a running toed gets the lease
 * and the changes too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <bpf/bpf.h>
#include "lib/knob.h"
#include "lib/path.h"
#include "lib/clock.h"
#include "opentoe_forward.h"
#include "ct.h"
#include "log.h"
#include "nft.h"
#include "show_maps.h" /* toe_now_ns */

/* Reads per readable event: the loop comes back (level-triggered) for more. */
#define NFT_READS_MAX 64
/* The warden renews the lease this often; every this many beats (2 s) it
 * looks the pin up again (a datapath loaded anew). */
#define NFT_REMAP_BEATS (2000 / TOE_FWD_RT_RENEW_MS)

static struct {
	/* Set before the warden starts, read-only after. */
	char path[4096]; /* toe_fwd_gen's pin */
	char fwd_path[4096]; /* toe_fwd's: conntrack's destroy events (ct.c) */
	__u64 netns; /* toed's network namespace (cookie): whose routes it follows */
	bool no_route_cache; /* --no-route-cache: rt_gen stays 0 */
	/* The main thread's. */
	int ct_fd; /* conntrack's destroy group, -1 if none */
	pthread_t warden;
	bool warden_on; /* started (and not yet joined) */
	/* The warden's (the main thread's before it starts and after the join). */
	int fd; /* nftables' group, -1 if none */
	int again_fd; /* timerfd: the second bump after a change, -1 if none */
	int beat_fd; /* timerfd: the lease, every TOE_FWD_RT_RENEW_MS */
	__u32 map_id; /* the map mapped, 0 if none */
	struct toe_fwd_gen *g; /* its one value, mapped */
	__u64 renewed_ns; /* the lease last written (0: toed vouches for none) */
	unsigned int beats; /* since the pin was last looked up */
	/* Both: the main thread asks (eventfd), flags and counts are atomics. */
	int wake_fd; /* eventfd: the main thread has asked for something */
	int route_asked; /* a route changed: bump rt_gen */
	int bump_asked; /* conntrack's events lost: bump gen */
	__u64 ct_lost; /* ENOBUFS on the destroy socket (main thread's) */
	int stop_asked; /* toed stops: give the lease back and end */
	__u64 route_changes; /* rtnetlink changes that made cached routes stale */
} N = { .fd = -1, .ct_fd = -1, .again_fd = -1, .beat_fd = -1, .wake_fd = -1 };

static void unmap(void)
{
	if (N.g)
		munmap(N.g, sizeof(*N.g));
	N.g = NULL;
	N.map_id = 0;
}

/*
 * toe_fwd_gen, mapped, as the pin is now (a reload makes a new map).  False
 * if there is none: a datapath without the forward path's admission.
 */
static bool map_gen(void)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	void *p;
	int fd;

	N.beats = 0;
	fd = bpf_obj_get(N.path);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &mi, &len) ||
	    mi.value_size != sizeof(*N.g)) {
		if (fd >= 0)
			close(fd);
		unmap();
		return false;
	}
	if (mi.id == N.map_id) {
		close(fd);
		return true;
	}
	unmap();
	p = mmap(NULL, sizeof(*N.g), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		logm(LOG_WARN, "cannot map %s: %s", N.path, strerror(errno));
		return false;
	}
	N.g = p;
	N.map_id = mi.id;
	return true;
}

/*
 * Whether the datapath's home namespace (rt_netns, toe-loader's) is
 * toed's: the forward path serves only its home, whose firewall, sysctls
 * and routes toed watches where it runs.  None yet (an older loader):
 * toed's own.
 */
static bool home_ok(void)
{
	__u64 home = __atomic_load_n(&N.g->rt_netns, __ATOMIC_ACQUIRE);

	if (!home)
		__atomic_store_n(&N.g->rt_netns, home = N.netns,
				 __ATOMIC_RELEASE);
	return home == N.netns;
}

static void write_lease(void)
{
	N.renewed_ns = toe_now_ns();
	__atomic_store_n(&N.g->lease_ns, N.renewed_ns + TOE_FWD_LEASE_NS,
			 __ATOMIC_RELEASE);
}

/* rt_gen up by one (never 0: "none"): every cached route looked up again. */
static void bump_route(void)
{
	if (N.no_route_cache || !N.g)
		return; /* no lease (no watch): the fast path caches no route */
	if (!__atomic_add_fetch(&N.g->rt_gen, 1, __ATOMIC_RELEASE))
		__atomic_add_fetch(&N.g->rt_gen, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&N.route_changes, 1, __ATOMIC_RELAXED);
}

/* The pin looked up again, and the lease renewed if this is its home. */
static void renew_lease(void)
{
	N.renewed_ns = 0;
	if (!map_gen() || !home_ok())
		return;
	if (N.no_route_cache)
		__atomic_store_n(&N.g->rt_gen, 0, __ATOMIC_RELEASE);
	else if (!__atomic_load_n(&N.g->rt_gen, __ATOMIC_ACQUIRE))
		bump_route();
	write_lease();
}

/*
 * The lease again every TOE_FWD_RT_RENEW_MS: the forward path trusts the
 * generation only while the lease runs (TOE_FWD_LEASE_NS), and uses its
 * route cache only while the lease is younger than TOE_FWD_RT_FRESH_NS, so
 * that a route or neighbour change after toed's death (no rt_gen bump) is
 * followed within that time.  Only the mapped value is written: one store.
 * Every 2 s the pin is looked up again.
 */
static void beat(void)
{
	__u64 ticks;

	if (read(N.beat_fd, &ticks, sizeof(ticks)) < 0)
		return;
	if (++N.beats >= NFT_REMAP_BEATS)
		renew_lease(); /* (map_gen starts the count again) */
	else if (N.g && N.renewed_ns)
		write_lease();
}

/* The ruleset changed: every fast-path flow is admitted again. */
static void bump(void)
{
	__u32 gen;

	if (!map_gen())
		return;
	gen = __atomic_add_fetch(&N.g->gen, 1, __ATOMIC_RELEASE);
	logm(LOG_DEBUG,
	     "firewall ruleset changed: generation %u, fast-path flows go back through the stack",
	     gen);
}

/*
 * A change was seen: bump again TOE_FWD_AGAIN_MS from now (re-armed by
 * each change of a burst, so the last one gets its full delay).  Every
 * admission between the two bumps is undone by the second; one after it
 * needs a packet each way that the stack forwarded after it, so under the
 * new ruleset unless that packet spent TOE_FWD_AGAIN_MS between FORWARD
 * and tc egress (queued on an unresolved neighbour, or by NFQUEUE).
 */
static void arm_again(void)
{
	struct itimerspec its = {
		.it_value.tv_nsec = TOE_FWD_AGAIN_MS * 1000000L,
	};

	if (N.again_fd >= 0)
		timerfd_settime(N.again_fd, 0, &its, NULL);
}

static void again(void)
{
	__u64 ticks;

	if (read(N.again_fd, &ticks, sizeof(ticks)) > 0)
		bump();
}

/* Whether one netlink datagram (n bytes) announces a new generation. */
static bool has_newgen(const void *buf, int n)
{
	const struct nlmsghdr *h;

	for (h = buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n))
		if (h->nlmsg_type ==
		    ((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWGEN))
			return true;
	return false;
}

/* The nftables socket is readable: a change (or a loss) bumps. */
static void watch(void)
{
	static char buf[65536] __attribute__((aligned(NLMSG_ALIGNTO)));
	bool changed = false;
	int i, n;

	for (i = 0; i < NFT_READS_MAX; i++) {
		n = recv(N.fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS) {
			changed =
				true; /* messages lost: one may have been a change */
			continue;
		}
		if (n <= 0)
			break; /* EAGAIN: all read */
		if (has_newgen(buf, n))
			changed = true;
	}
	if (changed) {
		bump();
		arm_again();
	}
}

/* What the main thread asked for.  True: stop. */
static bool asked(void)
{
	__u64 n;

	if (read(N.wake_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return false;
	if (__atomic_exchange_n(&N.route_asked, 0, __ATOMIC_ACQ_REL) &&
	    (N.g || map_gen()))
		bump_route();
	if (__atomic_exchange_n(&N.bump_asked, 0, __ATOMIC_ACQ_REL)) {
		bump();
		arm_again();
	}
	return __atomic_load_n(&N.stop_asked, __ATOMIC_ACQUIRE);
}

/*
 * The warden: the nftables socket, the second-bump timer, the lease's
 * beat and the main thread's requests, nothing else.  At the end the
 * lease is given back: the fast path stops trusting the generation now.
 */
static void *warden(void *arg)
{
	struct pollfd pf[4] = {
		{ .fd = N.fd, .events = POLLIN },
		{ .fd = N.again_fd, .events = POLLIN },
		{ .fd = N.beat_fd, .events = POLLIN },
		{ .fd = N.wake_fd, .events = POLLIN },
	};

	(void)arg;
	for (;;) {
		if (poll(pf, 4, -1) < 0) {
			if (errno == EINTR)
				continue;
			logm(LOG_ERR,
			     "the firewall watch stops (poll: %s): the fast path holds admissions %llu ms at a time",
			     strerror(errno),
			     TOE_FWD_UNWATCHED_NS / 1000000ULL);
			break;
		}
		if (pf[3].revents && asked())
			break;
		if (pf[0].revents)
			watch();
		if (pf[1].revents)
			again();
		if (pf[2].revents)
			beat();
	}
	if (N.g || map_gen())
		__atomic_store_n(&N.g->lease_ns, 0, __ATOMIC_RELEASE);
	N.renewed_ns = 0;
	unmap();
	return NULL;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* A non-blocking NETLINK_NETFILTER socket in group grp: its fd, or -1. */
static int group_socket(int grp)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
			NETLINK_NETFILTER);

	if (fd >= 0 && (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
			setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
				   &grp, sizeof(grp)))) {
		int e = errno;

		close(fd);
		errno = e;
		fd = -1;
	}
	return fd;
}

/*
 * Conntrack's destroy group, on a socket of the main thread's (ct.c).
 * Without it, the fast path's refresh still ends a flow whose entry went
 * (bpf/fwd_ct.h), up to a second later.  The tests' knob
 * TOE_TOED_NO_CT_EVENTS=1 leaves it closed, to show that.
 */
static void ct_open(void)
{
	const char *k = toe_knob("TOE_TOED_NO_CT_EVENTS");

	N.ct_fd = k && *k == '1' ? (errno = EPERM, -1) :
				   group_socket(NFNLGRP_CONNTRACK_DESTROY);
	if (N.ct_fd < 0)
		logm(LOG_WARN,
		     "cannot follow conntrack's destroy events (%s): a deleted or expired conntrack entry ends its fast path only at the fast path's next refresh (up to 1 s)",
		     strerror(errno));
}

int nft_open(const char *pin_dir, __u64 netns)
{
	struct itimerspec its = {
		.it_interval.tv_nsec = TOE_FWD_RT_RENEW_MS * 1000000L,
		.it_value.tv_nsec = TOE_FWD_RT_RENEW_MS * 1000000L,
	};
	int err;

	N.netns = netns;
	toe_join(N.path, sizeof(N.path), pin_dir, TOE_MAP(FWD_GEN));
	toe_join(N.fwd_path, sizeof(N.fwd_path), pin_dir, TOE_MAP(FWD));
	N.fd = group_socket(NFNLGRP_NFTABLES);
	if (N.fd < 0) {
		logm(LOG_WARN,
		     "cannot watch nftables (%s): firewall changes reach fast-path flows only by their admission lapsing (%llu ms)",
		     strerror(errno), TOE_FWD_UNWATCHED_NS / 1000000ULL);
		return -1;
	}
	if (map_gen() && !home_ok()) {
		logm(LOG_ERR,
		     "the datapath in %s has its home in another network namespace (cookie %llu, toed's is %llu): the forward path serves only its home, so toed neither watches the firewall nor vouches for it here; run toed in that namespace",
		     pin_dir, (unsigned long long)N.g->rt_netns,
		     (unsigned long long)N.netns);
		unmap();
		close_fd(&N.fd);
		return -1;
	}
	N.again_fd =
		timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (N.again_fd < 0)
		logm(LOG_WARN,
		     "cannot make the second-bump timer (%s): a packet in flight at a ruleset change may re-admit its flow",
		     strerror(errno));
	N.beat_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	N.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (N.beat_fd < 0 || N.wake_fd < 0 ||
	    timerfd_settime(N.beat_fd, 0, &its, NULL)) {
		logm(LOG_WARN,
		     "cannot start the firewall watch (%s): firewall changes reach fast-path flows only by their admission lapsing (%llu ms)",
		     strerror(errno), TOE_FWD_UNWATCHED_NS / 1000000ULL);
		goto fail;
	}
	bump(); /* what changed while no toed watched */
	if (map_gen())
		bump_route(); /* routes too */
	renew_lease();
	err = pthread_create(&N.warden, NULL, warden, NULL);
	if (err) {
		logm(LOG_WARN,
		     "cannot start the firewall watch's thread (%s): firewall changes reach fast-path flows only by their admission lapsing (%llu ms)",
		     strerror(err), TOE_FWD_UNWATCHED_NS / 1000000ULL);
		if (N.g)
			__atomic_store_n(&N.g->lease_ns, 0, __ATOMIC_RELEASE);
		goto fail;
	}
	N.warden_on = true;
	ct_open();
	return N.ct_fd;
fail:
	unmap();
	N.renewed_ns = 0;
	close_fd(&N.wake_fd);
	close_fd(&N.beat_fd);
	close_fd(&N.again_fd);
	close_fd(&N.fd);
	return -1;
}

/* Wake the warden for what was flagged. */
static void ask(void)
{
	__u64 one = 1;

	if (N.wake_fd >= 0 && write(N.wake_fd, &one, sizeof(one)) < 0 &&
	    errno != EAGAIN)
		logm(LOG_WARN, "cannot wake the firewall watch: %s",
		     strerror(errno));
}

int nft_fd(void)
{
	return N.ct_fd;
}

/* Conntrack's destroy events: the fast paths of the entries that went end. */
void nft_process(struct fwdev *fw)
{
	char buf[65536] __attribute__((aligned(NLMSG_ALIGNTO)));
	const struct nlmsghdr *h;
	int i, n;

	for (i = 0; i < NFT_READS_MAX; i++) {
		n = recv(N.ct_fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS) {
			/*
			 * Destroy events lost: every fast-path flow goes back
			 * through the stack (as at a ruleset change) and is
			 * admitted again only if the stack forwards it both
			 * ways.
			 */
			__atomic_store_n(&N.bump_asked, 1, __ATOMIC_RELEASE);
			ask();
			N.ct_lost++;
			continue;
		}
		if (n <= 0)
			break; /* EAGAIN: all read */
		for (h = (void *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n))
			ct_destroyed(fw, N.fwd_path,
				     h); /* counted by fwdev.c */
	}
}

void nft_route_changed(void)
{
	if (!N.warden_on || N.no_route_cache)
		return;
	__atomic_store_n(&N.route_asked, 1, __ATOMIC_RELEASE);
	ask();
}

void nft_route_cache(bool on)
{
	N.no_route_cache = !on;
}

const char *nft_fwd_path(void)
{
	return N.fwd_path;
}

__u64 nft_ct_lost(void)
{
	return N.ct_lost;
}

__u64 nft_route_changes(void)
{
	return __atomic_load_n(&N.route_changes, __ATOMIC_RELAXED);
}

bool nft_watching(void)
{
	return N.warden_on;
}

void nft_close(void)
{
	close_fd(&N.ct_fd);
	if (!N.warden_on)
		return;
	__atomic_store_n(&N.stop_asked, 1, __ATOMIC_RELEASE);
	ask();
	pthread_join(N.warden, NULL); /* it gives the lease back */
	N.warden_on = false;
	close_fd(&N.wake_fd);
	close_fd(&N.beat_fd);
	close_fd(&N.again_fd);
	close_fd(&N.fd);
}

/* A change that may reroute packets: the forward path's cached routes go. */
void nft_on_route(struct toe_nl *nl)
{
	(void)nl;
	nft_route_changed();
}
