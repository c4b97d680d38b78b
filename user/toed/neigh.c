// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * opentoe neighbour and address propagation: rtnetlink -> BPF maps.
 *
 * Two NETLINK_ROUTE sockets: one subscribed to the neighbour, IPv4/IPv6
 * address and link groups (and route, rule and netconf, which only make
 * the forward path's cached routes stale), one for dump requests, so that a dump's replies
 * never interleave with events.  If the event socket overruns (ENOBUFS),
 * updates were lost: its queue is drained (those messages predate the dump
 * that follows, so applying them after it could roll an entry back) and
 * the maps are rebuilt from a full dump, with a sweep of whatever the dump
 * did not show.  Events read after the drain are newer than or as new as
 * the dump, and are applied in order after it, so the maps converge to the
 * kernel's tables.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/sdt.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>
#include "lib/knob.h"
#include "opentoe_common.h"
#include "opentoe_forward.h"
#include "neigh.h"
#include "lib/err.h"
#include "lib/pinned.h"
#include "lib/clock.h"

#define NL_BUF (64 * 1024)
#define DUMP_TRIES 8

#define errf toe_errf

/* ------------------------------------------------ a set of map keys */

/* Open addressing, linear probing; keys are compared bytewise. */
struct kset {
	unsigned char *keys;
	unsigned char *used;
	size_t ksz, cap, n;
};

static __u64 khash(const void *k, size_t n)
{
	const unsigned char *p = k;
	__u64 h = 1469598103934665603ULL;

	while (n--)
		h = (h ^ *p++) * 1099511628211ULL;
	return h;
}

static int kset_init(struct kset *s, size_t ksz)
{
	s->ksz = ksz;
	s->cap = 1024;
	s->n = 0;
	s->keys = calloc(s->cap, ksz);
	s->used = calloc(s->cap, 1);
	return s->keys && s->used ? 0 : -1;
}

static void kset_free(struct kset *s)
{
	free(s->keys);
	free(s->used);
	s->keys = s->used = NULL;
}

static bool kset_has(const struct kset *s, const void *k)
{
	size_t i = khash(k, s->ksz) & (s->cap - 1);

	while (s->used[i]) {
		if (!memcmp(s->keys + i * s->ksz, k, s->ksz))
			return true;
		i = (i + 1) & (s->cap - 1);
	}
	return false;
}

static int kset_add(struct kset *s, const void *k);

static int kset_grow(struct kset *s)
{
	struct kset n = { .ksz = s->ksz, .cap = s->cap * 2 };
	size_t i;

	n.keys = calloc(n.cap, n.ksz);
	n.used = calloc(n.cap, 1);
	if (!n.keys || !n.used) {
		kset_free(&n);
		return -1;
	}
	for (i = 0; i < s->cap; i++)
		if (s->used[i])
			kset_add(&n, s->keys + i * s->ksz);
	kset_free(s);
	*s = n;
	return 0;
}

static int kset_add(struct kset *s, const void *k)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap && kset_grow(s))
		return -1;
	i = khash(k, s->ksz) & (s->cap - 1);
	while (s->used[i]) {
		if (!memcmp(s->keys + i * s->ksz, k, s->ksz))
			return 0;
		i = (i + 1) & (s->cap - 1);
	}
	memcpy(s->keys + i * s->ksz, k, s->ksz);
	s->used[i] = 1;
	s->n++;
	return 0;
}

/* ------------------------------------------------------ formatting */

const char *toe_nl_addr_str(__u8 family, const __u32 *addr, char *buf,
			    size_t len)
{
	if (!inet_ntop(family == TOE_AF_INET6 ? AF_INET6 : AF_INET, addr, buf,
		       len))
		snprintf(buf, len, "?");
	return buf;
}

const char *toe_nl_mac_str(const __u8 *mac, char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1],
		 mac[2], mac[3], mac[4], mac[5]);
	return buf;
}

const char *toe_nl_nud_str(__u16 state)
{
	switch (state) {
	case NUD_NONE:
		return "NONE";
	case NUD_INCOMPLETE:
		return "INCOMPLETE";
	case NUD_REACHABLE:
		return "REACHABLE";
	case NUD_STALE:
		return "STALE";
	case NUD_DELAY:
		return "DELAY";
	case NUD_PROBE:
		return "PROBE";
	case NUD_FAILED:
		return "FAILED";
	case NUD_NOARP:
		return "NOARP";
	case NUD_PERMANENT:
		return "PERMANENT";
	default:
		return "MIXED";
	}
}

/* ------------------------------------------------------- tracking */

bool toe_nl_is_tracked(const struct toe_nl *nl, __u32 ifindex)
{
	int i;

	for (i = 0; i < nl->ntracked; i++)
		if (nl->tracked[i] == ifindex)
			return true;
	return false;
}

bool toe_nl_set_tracked(struct toe_nl *nl, const __u32 *ifindex, int n)
{
	bool changed = n != nl->ntracked;
	int i;

	if (n > TOE_NL_MAX_TRACKED)
		n = TOE_NL_MAX_TRACKED;
	for (i = 0; i < n && !changed; i++)
		if (!toe_nl_is_tracked(nl, ifindex[i]))
			changed = true;
	memcpy(nl->tracked, ifindex, n * sizeof(*ifindex));
	nl->ntracked = n;
	return changed;
}

/* ----------------------------------------------------------- sockets */

static int nl_socket(unsigned int groups, int rcvbuf)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
				  .nl_groups = groups };
	int fd, one = 1;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    NETLINK_ROUTE);
	if (fd < 0)
		return -1;
	if (rcvbuf > 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)) &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)))
		goto fail;
	/* Tell us about truncated messages instead of silently cutting. */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

int toe_nl_open(struct toe_nl *nl, int neigh_map, int local_map, int rcvbuf,
		char *err, size_t errlen)
{
	unsigned int groups = RTMGRP_NEIGH | RTMGRP_LINK | RTMGRP_IPV4_IFADDR |
			      RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE |
			      RTMGRP_IPV6_ROUTE | RTMGRP_IPV4_RULE |
			      (1U << (RTNLGRP_IPV6_RULE - 1)) |
			      (1U << (RTNLGRP_IPV4_NETCONF - 1)) |
			      (1U << (RTNLGRP_IPV6_NETCONF - 1));

	nl->neigh_map = neigh_map;
	nl->local_map = local_map;
	nl->ev_fd = nl_socket(groups, rcvbuf);
	if (nl->ev_fd < 0)
		return errf(err, errlen,
			    "cannot open the rtnetlink event socket: %s",
			    strerror(errno));
	nl->dump_fd = nl_socket(0, 0);
	if (nl->dump_fd < 0) {
		errf(err, errlen, "cannot open the rtnetlink dump socket: %s",
		     strerror(errno));
		close(nl->ev_fd);
		nl->ev_fd = -1;
		return -1;
	}
	return 0;
}

void toe_nl_close(struct toe_nl *nl)
{
	toe_close_fds(&nl->ev_fd, 1);
	toe_close_fds(&nl->dump_fd, 1);
}

/* ------------------------------------------------------ map writers */

static void copy_addr(__u32 *dst, int family, const void *src, size_t srclen)
{
	memset(dst, 0, 16);
	memcpy(dst, src,
	       family == AF_INET6 ? (srclen < 16 ? srclen : 16) :
				    (srclen < 4 ? srclen : 4));
}

/*
 * Parse a neighbour message into a key and value.  Returns 1 if it is one
 * opentoe mirrors (IPv4/IPv6, not a proxy entry), 0 to ignore it, -1 if it
 * is malformed.
 */
static int parse_neigh(const struct nlmsghdr *h, struct toe_neigh_key *k,
		       struct toe_neigh *v)
{
	const struct ndmsg *nd = NLMSG_DATA(h);
	int len = h->nlmsg_len - NLMSG_LENGTH(sizeof(*nd));
	const struct rtattr *a;
	bool have_dst = false;

	if (len < 0)
		return -1;
	if (nd->ndm_family != AF_INET && nd->ndm_family != AF_INET6)
		return 0;
	if (nd->ndm_flags & NTF_PROXY)
		return 0;
	memset(k, 0, sizeof(*k));
	memset(v, 0, sizeof(*v));
	k->ifindex = nd->ndm_ifindex;
	k->family = nd->ndm_family == AF_INET6 ? TOE_AF_INET6 : TOE_AF_INET;
	v->state = nd->ndm_state;
	v->flags = nd->ndm_flags;
	for (a = (const struct rtattr *)((const char *)nd +
					 NLMSG_ALIGN(sizeof(*nd)));
	     RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		size_t plen = RTA_PAYLOAD(a);

		if (a->rta_type == NDA_DST) {
			if (plen != (nd->ndm_family == AF_INET6 ? 16u : 4u))
				return -1;
			copy_addr(k->addr, nd->ndm_family, RTA_DATA(a), plen);
			have_dst = true;
		} else if (a->rta_type == NDA_LLADDR) {
			if (plen == 6) {
				memcpy(v->mac, RTA_DATA(a), 6);
				v->has_mac = 1;
			}
		}
	}
	return have_dst && k->ifindex ? 1 : -1;
}

static void neigh_apply(struct toe_nl *nl, const struct nlmsghdr *h,
			struct kset *seen)
{
	struct toe_neigh_key k;
	struct toe_neigh v;
	int r = parse_neigh(h, &k, &v);

	if (r < 0) {
		nl->st.malformed++;
		return;
	}
	/* no datapath (toed waits for one): nothing to mirror into */
	if (!r || !toe_nl_is_tracked(nl, k.ifindex) || nl->neigh_map < 0)
		return;
	/*
	 * NOARP entries are the kernel's multicast, broadcast and point-to-
	 * point pseudo-neighbours: their MAC is computed from the address,
	 * their creation is not announced, `ip neigh show` hides them, and no
	 * unicast TCP next hop is one.  Not mirrored (removed if one was).
	 */
	if (h->nlmsg_type == RTM_DELNEIGH || (v.state & NUD_NOARP)) {
		/*
		 * Only a mirrored entry's removal is a change: a NOARP entry
		 * (every multicast group a link joins, at each dump) or the
		 * deletion of one never mirrored is neither told to a
		 * monitor nor timed.
		 */
		if (bpf_map_delete_elem(nl->neigh_map, &k))
			return;
		nl->st.neigh_del++;
		DTRACE_PROBE5(toed, neigh_applied, 0, k.ifindex, k.family,
			      k.addr, nl->last_recv_ns);
		if (nl->neigh_cb)
			nl->neigh_cb(nl, TOE_NL_DEL, &k, NULL);
		return;
	}
	v.updated_ns = toe_now_ns();
	if (bpf_map_update_elem(nl->neigh_map, &k, &v, BPF_ANY)) {
		nl->st.map_errors++;
		return;
	}
	nl->st.neigh_set++;
	if (seen) {
		kset_add(seen, &k);
		return;
	}
	DTRACE_PROBE5(toed, neigh_applied, 1, k.ifindex, k.family, k.addr,
		      nl->last_recv_ns);
	if (nl->neigh_cb)
		nl->neigh_cb(nl, TOE_NL_SET, &k, &v);
}

static void addr_apply(struct toe_nl *nl, const struct nlmsghdr *h,
		       struct kset *seen)
{
	const struct ifaddrmsg *ifa = NLMSG_DATA(h);
	int len = h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa));
	const void *local = NULL, *address = NULL;
	struct toe_local_key k = {};
	struct toe_local v = {};
	const struct rtattr *a;
	size_t need;

	if (len < 0) {
		nl->st.malformed++;
		return;
	}
	if ((ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6) ||
	    nl->local_map < 0)
		return;
	need = ifa->ifa_family == AF_INET6 ? 16 : 4;
	for (a = IFA_RTA(ifa); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (RTA_PAYLOAD(a) != need)
			continue;
		if (a->rta_type == IFA_LOCAL)
			local = RTA_DATA(a);
		else if (a->rta_type == IFA_ADDRESS)
			address = RTA_DATA(a);
	}
	/* IPv4: IFA_LOCAL is ours, IFA_ADDRESS may be a point-to-point peer. */
	if (!local)
		local = address;
	if (!local) {
		nl->st.malformed++;
		return;
	}
	k.family = ifa->ifa_family == AF_INET6 ? TOE_AF_INET6 : TOE_AF_INET;
	copy_addr(k.addr, ifa->ifa_family, local, need);
	if (h->nlmsg_type == RTM_DELADDR) {
		if (bpf_map_delete_elem(nl->local_map, &k) == 0)
			nl->st.addr_del++;
		return;
	}
	v.ifindex = ifa->ifa_index;
	v.prefixlen = ifa->ifa_prefixlen;
	v.scope = ifa->ifa_scope;
	if (bpf_map_update_elem(nl->local_map, &k, &v, BPF_ANY)) {
		nl->st.map_errors++;
		return;
	}
	nl->st.addr_set++;
	if (seen)
		kset_add(seen, &k);
}

/*
 * Delete every toe_neigh entry keep() refuses (keys are collected first:
 * deleting while walking a hash map restarts the walk).  With notify, each
 * deletion is reported to neigh_cb.
 */
typedef bool (*keep_fn)(const struct toe_nl *nl, const struct toe_neigh_key *k,
			const void *arg);

static void neigh_delete_unless(struct toe_nl *nl, keep_fn keep,
				const void *arg, bool notify)
{
	struct toe_neigh_key k, next, *del = NULL;
	size_t n = 0, cap = 0, i;
	void *prev = NULL;

	while (bpf_map_get_next_key(nl->neigh_map, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (keep(nl, &k, arg))
			continue;
		if (n == cap) {
			struct toe_neigh_key *d = realloc(
				del, (cap = cap ? cap * 2 : 64) * sizeof(*d));

			if (!d)
				break;
			del = d;
		}
		del[n++] = k;
	}
	for (i = 0; i < n; i++) {
		if (bpf_map_delete_elem(nl->neigh_map, &del[i]) == 0)
			nl->st.neigh_del++;
		if (notify && nl->neigh_cb)
			nl->neigh_cb(nl, TOE_NL_DEL, &del[i], NULL);
	}
	free(del);
}

static bool keep_other_if(const struct toe_nl *nl,
			  const struct toe_neigh_key *k, const void *arg)
{
	(void)nl;
	return k->ifindex != *(const __u32 *)arg;
}

/* Delete every neighbour of ifindex. */
static void purge_ifindex(struct toe_nl *nl, __u32 ifindex)
{
	neigh_delete_unless(nl, keep_other_if, &ifindex, false);
}

static void link_apply(struct toe_nl *nl, const struct nlmsghdr *h)
{
	const struct ifinfomsg *ifi = NLMSG_DATA(h);
	bool gone = h->nlmsg_type == RTM_DELLINK;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi))) {
		nl->st.malformed++;
		return;
	}
	nl->st.link_events++;
	if (gone && toe_nl_is_tracked(nl, ifi->ifi_index))
		purge_ifindex(nl, ifi->ifi_index);
	if (nl->link_cb)
		nl->link_cb(nl, ifi->ifi_index, gone);
}

static void dispatch(struct toe_nl *nl, const struct nlmsghdr *h,
		     struct kset *nseen, struct kset *aseen)
{
	nl->st.messages++;
	switch (h->nlmsg_type) {
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct ndmsg)))
			nl->st.malformed++;
		else
			neigh_apply(nl, h, nseen);
		break;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		addr_apply(nl, h, aseen);
		break;
	case RTM_NEWLINK:
	case RTM_DELLINK:
		if (!nseen)
			link_apply(nl, h);
		break;
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
	case RTM_NEWRULE:
	case RTM_DELRULE:
	case RTM_NEWNETCONF: /* ip_forward, a device's forwarding */
	case RTM_DELNETCONF:
		break; /* only routed: the cache below */
	default:
		return;
	}
	if (nl->route_cb)
		nl->route_cb(nl);
}

/* ------------------------------------------------------------ dumps */

/*
 * Whether this neighbour dump comes back flagged NLM_F_DUMP_INTR by the
 * test knob TOE_TOED_NEIGH_DUMP_INTR=N (the first N do): the kernel's
 * neighbour dump never flags one (only the address dump does, across its
 * parts), so a test cannot make it happen otherwise.  Read once.
 */
static bool neigh_dump_fault(void)
{
	static int left = -1;

	if (left < 0) {
		const char *v = toe_knob("TOE_TOED_NEIGH_DUMP_INTR");

		left = v ? atoi(v) : 0;
		if (left < 0)
			left = 0;
	}
	if (!left)
		return false;
	left--;
	return true;
}

/*
 * One dump request on dump_fd; every reply goes through dispatch() with
 * the seen sets.  Returns 0, 1 if the kernel flagged the dump as
 * inconsistent (to be retried), -1 on error.
 */
static int dump_one(struct toe_nl *nl, int type, struct kset *nseen,
		    struct kset *aseen, char *err, size_t errlen)
{
	struct {
		struct nlmsghdr h;
		union {
			struct ndmsg nd;
			struct ifaddrmsg ifa;
		} u;
	} req = {
		.h.nlmsg_len = NLMSG_LENGTH(type == RTM_GETNEIGH ?
						    sizeof(struct ndmsg) :
						    sizeof(struct ifaddrmsg)),
		.h.nlmsg_type = type,
		.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		.h.nlmsg_seq = ++nl->seq,
	}; /* family AF_UNSPEC (0): both IPv4 and IPv6 */
	static char buf[NL_BUF] __attribute__((aligned(8)));
	bool intr = false, fault = type == RTM_GETNEIGH && neigh_dump_fault();

	if (send(nl->dump_fd, &req, req.h.nlmsg_len, 0) < 0)
		return errf(err, errlen, "rtnetlink dump request: %s",
			    strerror(errno));
	for (;;) {
		struct nlmsghdr *h;
		ssize_t n = recv(nl->dump_fd, buf, sizeof(buf), 0);
		int len;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				/* The kernel fills the next part as we read: wait for it. */
				fd_set r;

				FD_ZERO(&r);
				FD_SET(nl->dump_fd, &r);
				if (select(nl->dump_fd + 1, &r, NULL, NULL,
					   NULL) < 0 &&
				    errno != EINTR)
					return errf(err, errlen,
						    "rtnetlink dump: %s",
						    strerror(errno));
				continue;
			}
			if (errno == ENOBUFS)
				return 1;
			return errf(err, errlen, "rtnetlink dump: %s",
				    strerror(errno));
		}
		/* a dump's messages are timed too (neigh_lat_observe) */
		nl->last_recv_ns = toe_now_ns();
		len = (int)n;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (unsigned int)len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != nl->seq)
				continue; /* a late reply to an older request */
			if (fault) /* as the kernel marks it */
				h->nlmsg_flags |= NLM_F_DUMP_INTR;
			if (h->nlmsg_flags & NLM_F_DUMP_INTR)
				intr = true;
			if (h->nlmsg_type == NLMSG_DONE)
				return intr ? 1 : 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) &&
				    e->error)
					return errf(err, errlen,
						    "rtnetlink dump: %s",
						    strerror(-e->error));
				continue;
			}
			dispatch(nl, h, nseen, aseen);
		}
	}
}

static bool keep_seen(const struct toe_nl *nl, const struct toe_neigh_key *k,
		      const void *seen)
{
	return toe_nl_is_tracked(nl, k->ifindex) && kset_has(seen, k);
}

/* After a dump: what it did not show, or is on an untracked interface, goes. */
static void sweep_neigh(struct toe_nl *nl, const struct kset *seen)
{
	neigh_delete_unless(nl, keep_seen, seen, true);
}

static void sweep_local(struct toe_nl *nl, const struct kset *seen)
{
	struct toe_local_key k, next, del[TOE_LOCAL_MAX / 16];
	void *prev = NULL;
	size_t n = 0, i;

	while (bpf_map_get_next_key(nl->local_map, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (!kset_has(seen, &k) && n < sizeof(del) / sizeof(del[0]))
			del[n++] = k;
	}
	for (i = 0; i < n; i++)
		if (bpf_map_delete_elem(nl->local_map, &del[i]) == 0)
			nl->st.addr_del++;
}

int toe_nl_resync(struct toe_nl *nl, char *err, size_t errlen)
{
	struct kset nseen, aseen;
	int tries, r = -1;

	if (kset_init(&nseen, sizeof(struct toe_neigh_key)) ||
	    kset_init(&aseen, sizeof(struct toe_local_key))) {
		kset_free(&nseen);
		kset_free(&aseen);
		return errf(err, errlen, "out of memory");
	}
	nl->st.resyncs++;
	for (tries = 0; tries < DUMP_TRIES; tries++) {
		r = dump_one(nl, RTM_GETADDR, NULL, &aseen, err, errlen);
		if (r == 0)
			r = dump_one(nl, RTM_GETNEIGH, &nseen, NULL, err,
				     errlen);
		if (r <= 0)
			break;
		/* Interrupted by a change: start over with empty sets. */
		nl->st.dump_restarts++;
		kset_free(&nseen);
		kset_free(&aseen);
		if (kset_init(&nseen, sizeof(struct toe_neigh_key)) ||
		    kset_init(&aseen, sizeof(struct toe_local_key))) {
			r = errf(err, errlen, "out of memory");
			break;
		}
	}
	if (r > 0)
		r = errf(err, errlen,
			 "rtnetlink dump kept changing under us (%d tries)",
			 tries);
	if (r == 0) {
		sweep_neigh(nl, &nseen);
		sweep_local(nl, &aseen);
	}
	DTRACE_PROBE2(toed, resync, r, nseen.n);
	kset_free(&nseen);
	kset_free(&aseen);
	return r;
}

/* ------------------------------------------------------------ events */

/* Throw away everything queued: it predates the dump about to be made. */
static void drain(struct toe_nl *nl)
{
	static char buf[NL_BUF];

	while (recv(nl->ev_fd, buf, sizeof(buf), MSG_DONTWAIT) > 0 ||
	       errno == ENOBUFS)
		;
}

int toe_nl_process(struct toe_nl *nl, char *err, size_t errlen)
{
	static char buf[NL_BUF] __attribute__((aligned(8)));
	int budget = 256; /* reads per call, so other work is not starved */

	while (budget--) {
		ssize_t n = recv(nl->ev_fd, buf, sizeof(buf), MSG_DONTWAIT);
		struct nlmsghdr *h;
		int len;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			if (errno == ENOBUFS) {
				nl->st.enobufs++;
				DTRACE_PROBE1(toed, enobufs, nl->st.enobufs);
				drain(nl);
				return toe_nl_resync(nl, err, errlen);
			}
			return errf(err, errlen, "rtnetlink: %s",
				    strerror(errno));
		}
		nl->last_recv_ns = toe_now_ns();
		len = (int)n;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (unsigned int)len);
		     h = NLMSG_NEXT(h, len))
			dispatch(nl, h, NULL, NULL);
	}
	return 0;
}
