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
 * toe_fwd_gen is written through mmap with atomic stores (XDP reads it on
 * every packet of a fast-path flow; a whole-value map update could be seen
 * half-done).  Its pin is looked up again at each tick and change, so a
 * datapath unloaded and loaded anew under a running toed gets the lease
 * and the changes too.  The state here is this file's own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <bpf/bpf.h>
#include "lib/path.h"
#include "ct.h"
#include "log.h"
#include "nft.h"
#include "show_maps.h" /* toe_now_ns */

/* Reads per readable event: the loop comes back (level-triggered) for more. */
#define NFT_READS_MAX 64

static struct {
	int fd; /* the netlink socket, -1 if none */
	char path[4096]; /* toe_fwd_gen's pin */
	char fwd_path[4096]; /* toe_fwd's: conntrack's destroy events (ct.c) */
	__u32 map_id; /* the map mapped, 0 if none */
	struct toe_fwd_gen *g; /* its one value, mapped */
	__u64 route_changes; /* rtnetlink changes that made cached routes stale */
	bool no_route_cache; /* --no-route-cache: rt_gen stays 0 */
	int again_fd; /* timerfd: the second bump after a change, -1 if none */
	__u64 netns; /* toed's network namespace (cookie): whose routes it follows */
	__u64 renewed_ns; /* the lease last written (0: toed vouches for none) */
} N = { .fd = -1, .again_fd = -1 };

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

static void renew_lease(void)
{
	N.renewed_ns = 0;
	if (!map_gen() || !home_ok())
		return;
	if (N.no_route_cache)
		__atomic_store_n(&N.g->rt_gen, 0, __ATOMIC_RELEASE);
	else if (!__atomic_load_n(&N.g->rt_gen, __ATOMIC_ACQUIRE))
		nft_route_changed();
	write_lease();
}

/*
 * The lease again every TOE_FWD_RT_RENEW_MS between the 2 s ticks (which
 * look the map up again): the forward path uses its route cache only
 * while the lease is younger than TOE_FWD_RT_FRESH_NS, so that a route or
 * neighbour change after toed's death (no rt_gen bump) is followed within
 * that time.  Only the mapped value is written: one store.
 */
void nft_heartbeat(void)
{
	if (N.fd < 0 || !N.g || !N.renewed_ns || N.no_route_cache)
		return;
	if (toe_now_ns() - N.renewed_ns >= TOE_FWD_RT_RENEW_MS * 1000000ULL)
		write_lease();
}

/* epoll_wait's timeout (ms, -1: none) bounded by the next heartbeat. */
int nft_timeout_ms(int ms)
{
	if (N.fd < 0 || !N.g || !N.renewed_ns || N.no_route_cache)
		return ms;
	return ms < 0 || ms > TOE_FWD_RT_RENEW_MS ? TOE_FWD_RT_RENEW_MS : ms;
}

/*
 * A route, rule, address, link or neighbour changed (rtnetlink): every
 * route the forward path cached is looked up again (never 0: "none").
 */
void nft_route_changed(void)
{
	__u32 g;

	if (N.no_route_cache || N.fd < 0 || (!N.g && !map_gen()))
		return; /* no lease (no watch): the fast path caches no route */
	g = __atomic_add_fetch(&N.g->rt_gen, 1, __ATOMIC_RELEASE);
	if (!g)
		__atomic_add_fetch(&N.g->rt_gen, 1, __ATOMIC_RELEASE);
	N.route_changes++;
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

int nft_open(const char *pin_dir, __u64 netns)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int grp = NFNLGRP_NFTABLES, ct = NFNLGRP_CONNTRACK_DESTROY;

	N.netns = netns;
	toe_join(N.path, sizeof(N.path), pin_dir, TOE_MAP(FWD_GEN));
	toe_join(N.fwd_path, sizeof(N.fwd_path), pin_dir, TOE_MAP(FWD));
	N.fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
		      NETLINK_NETFILTER);
	if (N.fd < 0 || bind(N.fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(N.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp,
		       sizeof(grp))) {
		logm(LOG_WARN,
		     "cannot watch nftables (%s): firewall changes reach fast-path flows only by their admission lapsing (%llu ms)",
		     strerror(errno), TOE_FWD_UNWATCHED_NS / 1000000ULL);
		if (N.fd >= 0)
			close(N.fd);
		N.fd = -1;
		return -1;
	}
	/* conntrack entries destroyed end their fast paths (ct.c) */
	if (setsockopt(N.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &ct,
		       sizeof(ct)))
		logm(LOG_WARN,
		     "cannot follow conntrack's destroy events (%s): a deleted or expired conntrack entry does not end its fast path",
		     strerror(errno));
	N.again_fd =
		timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (N.again_fd < 0)
		logm(LOG_WARN,
		     "cannot make the second-bump timer (%s): a packet in flight at a ruleset change may re-admit its flow",
		     strerror(errno));
	if (map_gen() && !home_ok()) {
		logm(LOG_ERR,
		     "the datapath in %s has its home in another network namespace (cookie %llu, toed's is %llu): the forward path serves only its home, so toed neither watches the firewall nor vouches for it here; run toed in that namespace",
		     pin_dir, (unsigned long long)N.g->rt_netns,
		     (unsigned long long)N.netns);
		close(N.fd);
		N.fd = -1;
		return -1;
	}
	bump(); /* what changed while no toed watched */
	if (map_gen())
		nft_route_changed(); /* routes too */
	renew_lease();
	return N.fd;
}

int nft_fd(void)
{
	return N.fd;
}

int nft_again_fd(void)
{
	return N.again_fd;
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

void nft_again(void)
{
	__u64 ticks;

	if (read(N.again_fd, &ticks, sizeof(ticks)) > 0)
		bump();
}

/*
 * Whether one netlink datagram (n bytes) announces a new generation; the
 * conntrack entries it says were destroyed end their fast paths (ct.c).
 */
static bool has_newgen(const void *buf, int n)
{
	const struct nlmsghdr *h;
	bool newgen = false;

	for (h = buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_type ==
		    ((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWGEN))
			newgen = true;
		else
			ct_destroyed(N.fwd_path, h); /* counted by fwdev.c */
	}
	return newgen;
}

void nft_process(void)
{
	char buf[65536] __attribute__((aligned(NLMSG_ALIGNTO)));
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

void nft_route_cache(bool on)
{
	N.no_route_cache = !on;
}

const char *nft_fwd_path(void)
{
	return N.fwd_path;
}

__u64 nft_route_changes(void)
{
	return N.route_changes;
}

void nft_tick(void)
{
	if (N.fd >= 0)
		renew_lease();
}

void nft_close(void)
{
	if (N.fd < 0)
		return;
	if (map_gen())
		__atomic_store_n(&N.g->lease_ns, 0, __ATOMIC_RELEASE);
	N.renewed_ns = 0;
	unmap();
	close(N.fd);
	N.fd = -1;
	if (N.again_fd >= 0)
		close(N.again_fd);
	N.again_fd = -1;
}
