// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed: the opentoe daemon.  It owns offload policy (the configuration file,
 * compiled into the datapath's maps), mirrors the kernel's neighbour and
 * address tables into BPF maps (the patch's neighbour.c hooks), consumes
 * the datapath's events, and answers toectl on a unix socket (the patch's
 * /proc/net/toe).
 *
 * toed is the control plane only.  The datapath (programs, links, maps) is
 * pinned by toe-loader and keeps running while toed is stopped, killed or
 * restarted; a new toed adopts the pinned state as it finds it and resets
 * no counter and no flow.
 *
 * One thread, one epoll loop: signals (signalfd), rtnetlink, the ring
 * buffer, the control socket, its monitor clients and a 2 s timer.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/sdt.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "config.h"
#include "genl.h"
#include "neigh.h"
#include "policy.h"
#include "util.h"
#include "views.h"

#define DEFAULT_CONFIG	"/etc/opentoe/opentoe.conf"
#define DEFAULT_RUN_DIR	"/run/opentoe"
#define SOCK_NAME	"toed.sock"
#define LOCK_NAME	"toed.lock"
#define MAX_MON		32
#define MAX_IFACES	32
#define REQ_MAX		512
#define MAX_WORDS	16

enum { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };
static const char *const log_names[] = { "error", "warning", "info", "debug" };

enum src { SRC_SIGNAL = 1, SRC_NETLINK, SRC_RING, SRC_LISTEN, SRC_TIMER, SRC_MON, SRC_GENL };

struct mon {
	int fd;			/* -1: free slot */
	bool json;
	__u64 lost;		/* lines dropped because the client was slow */
};

struct toed {
	const char *config;
	const char *pin_dir;
	const char *run_dir;
	const char *ifaces[MAX_IFACES];	/* --interface */
	int nifaces;
	int rcvbuf;
	int log_level;

	struct toe_cfg cfg;		/* the configuration in force */
	struct toe_apply_stats ast;
	__u64 applied_ns;

	struct toe_maps m;
	struct ring_buffer *rb;
	struct toe_nl nl;
	bool retrack;			/* a link changed: recompute tracked */
	int epfd, sigfd, lsock, tfd, lockfd;
	char sock_path[108];
	struct mon mon[MAX_MON];
	__u64 start_ns;
	unsigned long netns_ino;

	/* The kernel module (user/genl.c); gl.family 0 while it is not loaded. */
	struct toe_genl gl;
	bool gl_open;
	struct toe_genl_dev kdevs[TOE_MAX_DEVS];	/* its devices here */
	int nkdevs;
	__u32 kmod_idx[TOE_MAX_DEVS];	/* toe_devs index -> module index, 0 */
	struct tident **tids;		/* TIDs held, by flow key */
	size_t tid_nb, tid_n;
	bool kmod_dirty;		/* a module device changed: re-apply */
	struct {
		__u64 alloc, alloc_nospc, alloc_unreach, alloc_failed;
		__u64 no_tid;		/* offloaded by the datapath, no TID */
		__u64 freed, free_failed, adopted, orphans, lost;
	} kst;

	/* Counters (toectl stats). */
	__u64 ev[TOE_EV_FLOW_CLOSED + 1];
	__u64 ev_bad;
	__u64 reload_ok, reload_failed;
	__u64 requests, refused_clients, mon_lost;
};

static struct toed *D;

static void logm(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void logm(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > D->log_level)
		return;
	fprintf(stderr, "toed: %s: ", log_names[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---------------------------------------------------------- monitor */

static void mon_close(struct mon *c)
{
	epoll_ctl(D->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
}

/* Send one line to every monitor client: text and JSON versions. */
static void mon_send(const char *text, const char *json)
{
	int i;

	for (i = 0; i < MAX_MON; i++) {
		struct mon *c = &D->mon[i];
		const char *s = c->json ? json : text;
		char lost[96];
		ssize_t n;

		if (c->fd < 0)
			continue;
		if (c->lost) {
			int l = c->json ? snprintf(lost, sizeof(lost), "{\"event\":\"lost\",\"count\":%llu}\n",
						   (unsigned long long)c->lost)
					: snprintf(lost, sizeof(lost), "[lost] %llu events (client too slow)\n",
						   (unsigned long long)c->lost);

			if (send(c->fd, lost, l, MSG_DONTWAIT | MSG_NOSIGNAL) != l) {
				c->lost++;
				D->mon_lost++;
				continue;
			}
			c->lost = 0;
		}
		n = send(c->fd, s, strlen(s), MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
			mon_close(c);
		} else if (n != (ssize_t)strlen(s)) {
			/* A partial line would corrupt the stream: close it. */
			if (n > 0) {
				mon_close(c);
				continue;
			}
			c->lost++;
			D->mon_lost++;
		}
	}
}

static bool mon_any(void)
{
	int i;

	for (i = 0; i < MAX_MON; i++)
		if (D->mon[i].fd >= 0)
			return true;
	return false;
}

/* ----------------------------------------------------------- events */

static void kmod_offload(const struct toe_flow_key *k, __u32 dev);
static void kmod_close(const struct toe_flow_key *k);
static long long tid_of(const struct toe_flow_key *k, void *ctx);

static int on_event(void *ctx, void *data, size_t len)
{
	const struct toe_event *e = data;
	char l[64], r[64], dn[17] = "-", text[512], json[768], tids[32] = "";
	long long tid;
	struct toe_dev d;
	int level;

	(void)ctx;
	if (len < sizeof(*e) || e->type < TOE_EV_LISTEN_START || e->type > TOE_EV_FLOW_CLOSED) {
		D->ev_bad++;
		return 0;
	}
	D->ev[e->type]++;
	DTRACE_PROBE5(toed, event, e->type, e->dev, e->key.lport, e->key.rport, e->decision);
	/* A device of the kernel module: the flow takes a TID there, and gives it back. */
	if (e->type == TOE_EV_FLOW_OFFLOADED && e->dev < TOE_MAX_DEVS && D->kmod_idx[e->dev])
		kmod_offload(&e->key, e->dev);
	tid = tid_of(&e->key, NULL);
	if (e->type == TOE_EV_FLOW_CLOSED && D->tid_n)
		kmod_close(&e->key);
	if (tid >= 0)
		snprintf(tids, sizeof(tids), " tid %lld", tid);
	if (e->dev != TOE_DEV_NONE && bpf_map_lookup_elem(D->m.devs, &e->dev, &d) == 0 &&
	    d.name[0]) {
		memcpy(dn, d.name, 16);
		dn[16] = 0;
	}
	toe_endpoint_str(e->key.family, e->key.laddr, e->key.lport, l, sizeof(l));
	toe_endpoint_str(e->key.family, e->key.raddr, e->key.rport, r, sizeof(r));
	switch (e->type) {
	case TOE_EV_LISTEN_START:
	case TOE_EV_LISTEN_STOP:
		snprintf(text, sizeof(text), "[%s] %s\n", toe_event_name(e->type), l);
		level = LOG_DEBUG;
		break;
	case TOE_EV_FLOW_CLOSED:
		snprintf(text, sizeof(text), "[%s] %s %s %s dev %s out %llu in %llu retrans %u%s\n",
			 toe_event_name(e->type), l, e->direction == TOE_DIR_PASSIVE ? "<-" : "->",
			 r, dn, (unsigned long long)e->bytes_acked,
			 (unsigned long long)e->bytes_received, e->total_retrans, tids);
		level = LOG_DEBUG;
		break;
	default:
		snprintf(text, sizeof(text), "[%s] %s %s %s %s dev %s reason %s rule %d policy %u%s\n",
			 toe_event_name(e->type), l, e->direction == TOE_DIR_PASSIVE ? "<-" : "->",
			 r, toe_action_name(e->decision), dn, toe_reason_name(e->reason),
			 (int)e->rule, e->policy, tids);
		level = e->type == TOE_EV_FLOW_REFUSED ? LOG_WARN : LOG_INFO;
		break;
	}
	if (level <= D->log_level)
		logm(level, "%.*s", (int)strlen(text) - 1, text);
	if (!mon_any())
		return 0;
	{
		char la[48], ra[48];

		toe_nl_addr_str(e->key.family, e->key.laddr, la, sizeof(la));
		toe_nl_addr_str(e->key.family, e->key.raddr, ra, sizeof(ra));
		snprintf(json, sizeof(json),
			 "{\"event\":\"%s\",\"laddr\":\"%s\",\"lport\":%u,\"raddr\":\"%s\",\"rport\":%u,"
			 "\"direction\":\"%s\",\"decision\":\"%s\",\"reason\":\"%s\",\"device\":%s%s%s,"
			 "\"rule\":%d,\"policy\":%u,\"bytes_acked\":%llu,\"bytes_received\":%llu,"
			 "\"total_retrans\":%u,\"tid\":%s}\n",
			 toe_event_name(e->type), la, e->key.lport, ra, e->key.rport,
			 e->direction == TOE_DIR_PASSIVE ? "passive" : "active",
			 toe_action_name(e->decision), toe_reason_name(e->reason),
			 e->dev == TOE_DEV_NONE ? "" : "\"", e->dev == TOE_DEV_NONE ? "null" : dn,
			 e->dev == TOE_DEV_NONE ? "" : "\"", (int)e->rule, e->policy,
			 (unsigned long long)e->bytes_acked, (unsigned long long)e->bytes_received,
			 e->total_retrans, tid >= 0 ? tids + 5 : "null");
	}
	mon_send(text, json);
	return 0;
}

static void on_neigh(struct toe_nl *nl, enum toe_nl_op op, const struct toe_neigh_key *k,
		     const struct toe_neigh *v)
{
	char a[48], mac[18], ifn[IF_NAMESIZE], text[256], json[384];

	(void)nl;
	if (!mon_any() && D->log_level < LOG_DEBUG)
		return;
	toe_nl_addr_str(k->family, k->addr, a, sizeof(a));
	if (!if_indextoname(k->ifindex, ifn))
		snprintf(ifn, sizeof(ifn), "if%u", k->ifindex);
	if (op == TOE_NL_DEL) {
		snprintf(text, sizeof(text), "[neigh] delete %s dev %s\n", a, ifn);
		snprintf(json, sizeof(json),
			 "{\"event\":\"neigh\",\"op\":\"delete\",\"dst\":\"%s\",\"dev\":\"%s\",\"ifindex\":%u}\n",
			 a, ifn, k->ifindex);
	} else {
		toe_nl_mac_str(v->mac, mac, sizeof(mac));
		snprintf(text, sizeof(text), "[neigh] set %s dev %s lladdr %s %s\n", a, ifn,
			 v->has_mac ? mac : "-", toe_nl_nud_str(v->state));
		snprintf(json, sizeof(json),
			 "{\"event\":\"neigh\",\"op\":\"set\",\"dst\":\"%s\",\"dev\":\"%s\",\"ifindex\":%u,"
			 "\"lladdr\":%s%s%s,\"state\":\"%s\"}\n", a, ifn, k->ifindex,
			 v->has_mac ? "\"" : "", v->has_mac ? mac : "null", v->has_mac ? "\"" : "",
			 toe_nl_nud_str(v->state));
	}
	logm(LOG_DEBUG, "%.*s", (int)strlen(text) - 1, text);
	mon_send(text, json);
}

static void on_link(struct toe_nl *nl, int ifindex, bool gone)
{
	(void)nl;
	(void)ifindex;
	(void)gone;
	D->retrack = true;
}

/* --------------------------------------------------------- tracking */

/*
 * The interfaces whose neighbours are mirrored: those toe-loader attached
 * opentoe's XDP to in this network namespace (pins link_xdp_n<NS>_if<N>),
 * those the configuration's devices name, and --interface.
 */
static int tracked_set(__u32 *out, int max)
{
	struct dirent *de;
	int n = 0, i, k;
	DIR *dir;

	dir = opendir(D->pin_dir);
	while (dir && (de = readdir(dir)) && n < max) {
		unsigned long ns;
		unsigned int ifindex;
		char tail;

		if (sscanf(de->d_name, TOE_PIN_LINK_XDP "%c", &ns, &ifindex, &tail) == 2 &&
		    ns == D->netns_ino)
			out[n++] = ifindex;
	}
	if (dir)
		closedir(dir);
	for (i = 0; i < D->cfg.ndevs + D->nifaces + D->nkdevs && n < max; i++) {
		const char *name = i < D->cfg.ndevs ? D->cfg.devs[i].ifname :
				   i < D->cfg.ndevs + D->nifaces ? D->ifaces[i - D->cfg.ndevs] : "";
		__u32 idx = name[0] ? if_nametoindex(name) : 0;

		/* the lower interfaces of the kernel module's devices too */
		if (i >= D->cfg.ndevs + D->nifaces)
			idx = D->kdevs[i - D->cfg.ndevs - D->nifaces].ifindex;
		if (!idx)
			continue;
		for (k = 0; k < n && out[k] != idx; k++)
			;
		if (k == n)
			out[n++] = idx;
	}
	return n;
}

static void retrack(bool force)
{
	__u32 set[TOE_NL_MAX_TRACKED];
	int n = tracked_set(set, TOE_NL_MAX_TRACKED);
	char err[256];

	D->retrack = false;
	if (!toe_nl_set_tracked(&D->nl, set, n) && !force)
		return;
	logm(LOG_INFO, "mirroring the neighbours of %d interface%s", n, n == 1 ? "" : "s");
	if (toe_nl_resync(&D->nl, err, sizeof(err)))
		logm(LOG_ERR, "neighbour resync: %s", err);
}

/* --------------------------------------------------- kernel module */

/*
 * The TIDs toed holds in the kernel module for its offloaded flows, by
 * flow key: a chained hash table that doubles as it fills.
 */
struct tident {
	struct toe_flow_key k;
	__u32 mdev;		/* the module's device index */
	__u32 tid, l2t;
	bool refused;		/* the module refused it: no TID, do not ask again */
	bool seen;		/* in the last TID_GET dump */
	struct tident *next;
};

static __u64 key_hash(const struct toe_flow_key *k)
{
	__u64 h = 1469598103934665603ULL;
	const unsigned char *p;
	size_t i;

#define MIX(field) for (p = (const unsigned char *)&k->field, i = 0; i < sizeof(k->field); i++) \
			h = (h ^ p[i]) * 1099511628211ULL
	MIX(laddr);
	MIX(raddr);
	MIX(lport);
	MIX(rport);
	MIX(family);
#undef MIX
	return h;
}

static bool key_eq(const struct toe_flow_key *a, const struct toe_flow_key *b)
{
	return a->family == b->family && a->lport == b->lport && a->rport == b->rport &&
	       !memcmp(a->laddr, b->laddr, sizeof(a->laddr)) &&
	       !memcmp(a->raddr, b->raddr, sizeof(a->raddr));
}

static struct tident **tid_slot(const struct toe_flow_key *k)
{
	struct tident **p;

	if (!D->tid_nb)
		return NULL;
	for (p = &D->tids[key_hash(k) & (D->tid_nb - 1)]; *p; p = &(*p)->next)
		if (key_eq(&(*p)->k, k))
			break;
	return p;
}

static struct tident *tid_find(const struct toe_flow_key *k)
{
	struct tident **p = tid_slot(k);

	return p ? *p : NULL;
}

static long long tid_of(const struct toe_flow_key *k, void *ctx)
{
	struct tident *t = tid_find(k);

	(void)ctx;
	return t && !t->refused ? (long long)t->tid : -1;
}

static int tid_add(const struct toe_flow_key *k, __u32 mdev, __u32 tid, __u32 l2t, bool refused)
{
	struct tident *t, **p;
	size_t i;

	if (D->tid_n + 1 > D->tid_nb * 2) {
		size_t nb = D->tid_nb ? D->tid_nb * 2 : 1024;
		struct tident **b = calloc(nb, sizeof(*b));

		if (!b)
			return -1;
		for (i = 0; i < D->tid_nb; i++) {
			while ((t = D->tids[i])) {
				D->tids[i] = t->next;
				t->next = b[key_hash(&t->k) & (nb - 1)];
				b[key_hash(&t->k) & (nb - 1)] = t;
			}
		}
		free(D->tids);
		D->tids = b;
		D->tid_nb = nb;
	}
	p = tid_slot(k);
	t = *p;
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return -1;
		t->k = *k;
		*p = t;
		D->tid_n++;
	}
	t->mdev = mdev;
	t->tid = tid;
	t->l2t = l2t;
	t->refused = refused;
	t->seen = true;
	return 0;
}

static void tid_del(const struct toe_flow_key *k)
{
	struct tident **p = tid_slot(k), *t;

	if (!p || !(t = *p))
		return;
	*p = t->next;
	free(t);
	D->tid_n--;
}

/* The module went away (its TIDs with it), or toed stops: forget them all. */
static void tid_clear(void)
{
	struct tident *t;
	size_t i;

	for (i = 0; i < D->tid_nb; i++) {
		while ((t = D->tids[i])) {
			D->tids[i] = t->next;
			free(t);
		}
	}
	free(D->tids);
	D->tids = NULL;
	D->tid_nb = D->tid_n = 0;
}

static __u32 tids_held(__u32 mdev)
{
	struct tident *t;
	__u32 n = 0;
	size_t i;

	for (i = 0; i < D->tid_nb; i++)
		for (t = D->tids[i]; t; t = t->next)
			n += t->mdev == mdev && !t->refused;
	return n;
}

static const struct toe_genl_dev *kdev_by_name(const char *name)
{
	int i;

	for (i = 0; i < D->nkdevs; i++)
		if (!strncmp(D->kdevs[i].name, name, OPENTOE_NAMSIZ))
			return &D->kdevs[i];
	return NULL;
}

/* Read the module's devices again; false (and none) if it cannot be asked. */
static bool kmod_read_devs(void)
{
	char err[512];
	int ret;

	D->nkdevs = 0;
	if (!toe_genl_up(&D->gl))
		return false;
	ret = toe_genl_devs(&D->gl, D->kdevs, TOE_MAX_DEVS, &D->nkdevs, err, sizeof(err));
	if (ret) {
		/* ENOENT: the family is being unregistered; its event follows. */
		logm(ret == -ENOENT ? LOG_DEBUG : LOG_ERR, "%s", err);
		D->nkdevs = 0;
		return false;
	}
	return true;
}

/*
 * The configuration toed applies: the file's, with its 'kmod' devices
 * filled in from the module, and every other device of the module (with a
 * TOM attached) added, so that toe_devs shows all of them.  Shallow: the
 * rules are the file's.
 */
static void kmod_merge(const struct toe_cfg *file, struct toe_cfg *out)
{
	const struct toe_genl_dev *k;
	int i, j;

	*out = *file;
	for (i = 0; i < out->ndevs; i++) {
		struct toe_cfg_dev *d = &out->devs[i];

		if (!d->kmod)
			continue;
		k = kdev_by_name(d->name);
		if (!k || !k->tom[0]) {
			d->absent = true;
			logm(LOG_WARN, "device %s (line %d): %s; rules naming it leave connections on the host until it %s",
			     d->name, d->line,
			     !toe_genl_up(&D->gl) ? "the kernel module is not loaded" :
			     !k ? "the kernel module has no such device" :
				  "the kernel module has it, but no TOM attached",
			     !k ? "appears" : "is attached");
			continue;
		}
		d->type = toe_genl_dev_type(k->ttid);
		d->nconn = k->nconn ? k->nconn : 1;
		d->ifindex = k->ifindex;
		d->absent = false;
	}
	for (j = 0; j < D->nkdevs; j++) {
		struct toe_cfg_dev *d;

		k = &D->kdevs[j];
		if (!k->tom[0])
			continue;	/* registered, no TOM: it cannot take a connection */
		for (i = 0; i < out->ndevs && strncmp(out->devs[i].name, k->name, 16); i++)
			;
		if (i < out->ndevs) {
			if (!out->devs[i].kmod)
				logm(LOG_WARN, "the kernel module's device %s is hidden by the configuration's device of the same name (line %d); declare it 'device %s kmod' to use the module's",
				     k->name, out->devs[i].line, k->name);
			continue;
		}
		if (out->ndevs == TOE_MAX_DEVS) {
			logm(LOG_WARN, "the kernel module's device %s left out: %d devices already",
			     k->name, TOE_MAX_DEVS);
			continue;
		}
		d = &out->devs[out->ndevs++];
		memset(d, 0, sizeof(*d));
		snprintf(d->name, sizeof(d->name), "%s", k->name);
		d->kmod = true;
		d->type = toe_genl_dev_type(k->ttid);
		d->nconn = k->nconn ? k->nconn : 1;
		d->ifindex = k->ifindex;
	}
}

/* After an apply: which toe_devs index is which device of the module. */
static void kmod_map_refresh(void)
{
	const struct toe_genl_dev *k;
	struct toe_dev v;
	__u32 i;

	for (i = 0; i < TOE_MAX_DEVS; i++) {
		D->kmod_idx[i] = 0;
		if (bpf_map_lookup_elem(D->m.devs, &i, &v) || (v.flags & (TOE_DEVF_KMOD | TOE_DEVF_PRESENT)) !=
		    (TOE_DEVF_KMOD | TOE_DEVF_PRESENT))
			continue;
		k = kdev_by_name(v.name);
		if (k && k->tom[0])
			D->kmod_idx[i] = k->index;
	}
}

/* The toe_devs index of a module device, or TOE_DEV_NONE. */
static __u32 kmod_toe_index(__u32 mdev)
{
	__u32 i;

	for (i = 0; i < TOE_MAX_DEVS; i++)
		if (D->kmod_idx[i] == mdev)
			return i;
	return TOE_DEV_NONE;
}

/* A flow the datapath offloaded on a device of the module: take its TID. */
static void kmod_offload(const struct toe_flow_key *k, __u32 dev)
{
	char err[512], l[64], r[64];
	__u32 mdev = D->kmod_idx[dev], tid, l2t;
	int ret;

	if (tid_find(k))
		return;		/* already held (adopted, or a replayed event) */
	ret = toe_genl_tid_alloc(&D->gl, mdev, k, &tid, &l2t, err, sizeof(err));
	if (!ret) {
		if (tid_add(k, mdev, tid, l2t, false)) {
			/* Cannot remember it: give it back rather than leak it. */
			toe_genl_tid_free(&D->gl, mdev, tid, err, sizeof(err));
			D->kst.alloc_failed++;
			D->kst.no_tid++;
			logm(LOG_ERR, "out of memory for the TID table");
			return;
		}
		D->kst.alloc++;
		logm(LOG_DEBUG, "TID %u (L2T %u) on module device %u", tid, l2t, mdev);
		return;
	}
	D->kst.no_tid++;
	tid_add(k, mdev, 0, 0, true);	/* not asked again for this flow */
	if (ret == -ENOSPC)
		D->kst.alloc_nospc++;
	else if (ret == -ENETUNREACH)
		D->kst.alloc_unreach++;
	else
		D->kst.alloc_failed++;
	toe_endpoint_str(k->family, k->laddr, k->lport, l, sizeof(l));
	toe_endpoint_str(k->family, k->raddr, k->rport, r, sizeof(r));
	logm(LOG_WARN, "flow %s -> %s: offloaded by the datapath, refused by the kernel module (%s%s)",
	     l, r, err, ret == -ENOSPC ? "; no TID or L2T entry free" :
			ret == -ENETUNREACH ? "; its route does not leave through the device's interface" : "");
}

static void kmod_close(const struct toe_flow_key *k)
{
	struct tident *t = tid_find(k);
	char err[512];

	if (!t)
		return;
	if (t->refused) {
		tid_del(k);
		return;
	}
	if (toe_genl_tid_free(&D->gl, t->mdev, t->tid, err, sizeof(err))) {
		D->kst.free_failed++;
		logm(LOG_WARN, "%s", err);
	} else {
		D->kst.freed++;
		logm(LOG_DEBUG, "TID %u on module device %u freed", t->tid, t->mdev);
	}
	tid_del(k);
}

/*
 * Make toed's TID table and the module agree: TIDs the module says the host
 * holds are adopted when their flow is still offloaded on that device in
 * toe_flows (toed restarted), freed when it is gone; entries the module no
 * longer has are forgotten (the device went); offloaded flows on a module
 * device without a TID (offloaded while toed was away) get one.
 */
static void kmod_reconcile(void)
{
	struct toe_flow_key k, next, *prev = NULL;
	struct toe_genl_tid *tl = NULL;
	struct tident *t, **pp;
	char err[512];
	size_t b;
	int n = 0, i;

	if (!toe_genl_up(&D->gl))
		return;
	i = toe_genl_tids(&D->gl, 0, &tl, &n, err, sizeof(err));
	if (i) {
		logm(i == -ENOENT ? LOG_DEBUG : LOG_ERR, "%s", err);
		return;
	}
	for (b = 0; b < D->tid_nb; b++)
		for (t = D->tids[b]; t; t = t->next)
			t->seen = t->refused;
	for (i = 0; i < n; i++) {
		struct toe_flow f;
		__u32 dev;

		if (!(tl[i].state & OPENTOE_TID_F_HOST))
			continue;	/* the host let go; the device has yet to */
		t = tid_find(&tl[i].key);
		if (t && !t->refused && t->mdev == tl[i].dev && t->tid == tl[i].tid) {
			t->seen = true;
			continue;
		}
		dev = kmod_toe_index(tl[i].dev);
		if (!t && dev != TOE_DEV_NONE &&
		    bpf_map_lookup_elem(D->m.flows, &tl[i].key, &f) == 0 &&
		    f.decision == TOE_ACT_OFFLOAD && f.dev == dev &&
		    !tid_add(&tl[i].key, tl[i].dev, tl[i].tid, tl[i].l2t, false)) {
			D->kst.adopted++;
			continue;
		}
		/* Its flow is gone (or holds another TID): give it back. */
		if (toe_genl_tid_free(&D->gl, tl[i].dev, tl[i].tid, err, sizeof(err))) {
			D->kst.free_failed++;
			logm(LOG_WARN, "%s", err);
		} else {
			D->kst.orphans++;
			logm(LOG_INFO, "freed TID %u on module device %u: no offloaded flow holds it",
			     tl[i].tid, tl[i].dev);
		}
	}
	free(tl);
	for (b = 0; b < D->tid_nb; b++) {
		pp = &D->tids[b];
		while ((t = *pp)) {
			struct toe_flow f;

			if (t->refused ? bpf_map_lookup_elem(D->m.flows, &t->k, &f) == 0 : t->seen) {
				pp = &t->next;
				continue;
			}
			/* Held TIDs the module dropped (its device went), closed refusals. */
			*pp = t->next;
			D->kst.lost += !t->refused;
			free(t);
			D->tid_n--;
		}
	}
	/* Offloaded flows that never got a TID. */
	while (bpf_map_get_next_key(D->m.flows, prev, &next) == 0) {
		struct toe_flow f;

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(D->m.flows, &k, &f) || f.decision != TOE_ACT_OFFLOAD ||
		    f.dev >= TOE_MAX_DEVS || !D->kmod_idx[f.dev] || tid_find(&k))
			continue;
		kmod_offload(&k, f.dev);
	}
}

/* ----------------------------------------------------------- policy */

/*
 * Apply the configuration: the file read again (reload), or the one in
 * force (a device of the kernel module appeared, changed or went), merged
 * with the module's devices.
 */
static int apply(bool reload, char *err, size_t errlen)
{
	struct toe_apply_stats st;
	struct toe_cfg cfg, merged;
	char e[1024];

	if (reload && toe_cfg_load(D->config, &cfg, e, sizeof(e))) {
		toe_cfg_free(&cfg);
		snprintf(err, errlen, "%s; the policy in force is unchanged", e);
		goto fail;
	}
	kmod_merge(reload ? &cfg : &D->cfg, &merged);
	if (toe_policy_apply(D->pin_dir, &merged, &st, e, sizeof(e))) {
		if (reload)
			toe_cfg_free(&cfg);
		snprintf(err, errlen, "%s: %s; the policy in force is unchanged", D->config, e);
		goto fail;
	}
	if (reload) {
		toe_cfg_free(&D->cfg);
		D->cfg = cfg;
	}
	D->kmod_dirty = false;
	kmod_map_refresh();
	D->ast = st;
	D->applied_ns = toe_now_ns();
	D->reload_ok++;
	DTRACE_PROBE4(toed, policy_applied, st.serial, st.rules, st.cells,
		      (unsigned long long)(st.ms * 1000));
	logm(LOG_INFO, "%s: applied policy %llu%s: %u rules, %u shapes, %u cells, %d devices (%d added from the kernel module) in %.1f ms",
	     D->config, (unsigned long long)st.serial,
	     reload ? "" : " (the kernel module's devices changed)", st.rules, st.tuples,
	     st.cells, merged.ndevs, merged.ndevs - D->cfg.ndevs, st.ms);
	if (mon_any()) {
		char text[256], json[256];

		snprintf(text, sizeof(text), "[policy] applied %llu: %u rules from %s\n",
			 (unsigned long long)st.serial, st.rules, D->config);
		snprintf(json, sizeof(json), "{\"event\":\"policy\",\"serial\":%llu,\"rules\":%u}\n",
			 (unsigned long long)st.serial, st.rules);
		mon_send(text, json);
	}
	D->retrack = true;
	return 0;
fail:
	D->reload_failed++;
	DTRACE_PROBE1(toed, policy_failed, D->reload_failed);
	logm(LOG_ERR, "%s", err);
	return -1;
}

static int do_apply(char *err, size_t errlen)
{
	kmod_read_devs();
	return apply(true, err, errlen);
}

/* The module's devices changed (or the module came or went). */
static void kmod_changed(void)
{
	char err[1200];

	kmod_read_devs();
	if (apply(false, err, sizeof(err)) == 0)
		kmod_reconcile();
}

static void on_genl(struct toe_genl *g, enum toe_genl_ev ev, __u32 dev, void *ctx)
{
	(void)g;
	(void)ctx;
	switch (ev) {
	case TOE_GENL_EV_UP:
		logm(LOG_INFO, "kernel module loaded: its devices join the configuration's");
		D->kmod_dirty = true;
		break;
	case TOE_GENL_EV_DOWN:
		logm(LOG_INFO, "kernel module unloaded: configuration devices only");
		tid_clear();
		D->kmod_dirty = true;
		break;
	case TOE_GENL_EV_DEV:
		logm(LOG_DEBUG, "kernel module: device %u changed", dev);
		D->kmod_dirty = true;
		break;
	case TOE_GENL_EV_LOST:
		logm(LOG_WARN, "kernel module events lost (receive queue overrun): reading its devices and TIDs again");
		D->kmod_dirty = true;
		break;
	case TOE_GENL_EV_L2T:
		/* The module keeps its L2T from the kernel's neighbours itself: counted only. */
		break;
	}
}

/* ------------------------------------------------------------ views */

static __u64 map_count(int fd, size_t ksz)
{
	unsigned char k[64], next[64];
	void *prev = NULL;
	__u64 n = 0;

	if (ksz > sizeof(k))
		return 0;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(k, next, ksz);
		prev = k;
		n++;
	}
	return n;
}

static size_t tids_held_all(void)
{
	struct tident *t;
	size_t i, n = 0;

	for (i = 0; i < D->tid_nb; i++)
		for (t = D->tids[i]; t; t = t->next)
			n += !t->refused;
	return n;
}

/* toectl devices: the datapath's devices, with the module's counts for its own. */
static void view_devices(FILE *f, bool json)
{
	struct toe_view_kmod kv[TOE_MAX_DEVS];
	struct toe_genl_dev *kd = NULL;
	char err[256];
	int n = 0, i;
	__u32 d;

	memset(kv, 0, sizeof(kv));
	if (toe_genl_up(&D->gl)) {
		kd = calloc(TOE_MAX_DEVS, sizeof(*kd));
		if (kd && toe_genl_devs(&D->gl, kd, TOE_MAX_DEVS, &n, err, sizeof(err)))
			logm(LOG_WARN, "%s", err);
	}
	for (d = 0; d < TOE_MAX_DEVS; d++) {
		for (i = 0; i < n && (!D->kmod_idx[d] || kd[i].index != D->kmod_idx[d]); i++)
			;
		if (i == n)
			continue;
		kv[d].valid = true;
		snprintf(kv[d].tom, sizeof(kv[d].tom), "%s", kd[i].tom);
		kv[d].index = kd[i].index;
		kv[d].tids_used = kd[i].tids_used;
		kv[d].tids_held = tids_held(kd[i].index);
		kv[d].l2t_used = kd[i].l2t_used;
		kv[d].l2t_size = kd[i].l2t_size;
		kv[d].listeners = kd[i].listeners;
	}
	free(kd);
	toe_view_devices(f, json, &D->m, kv);
}

static void view_status(FILE *f, bool json)
{
	__u64 now = toe_now_ns(), nn, na;
	struct toe_pol_hdr h = {};
	struct toe_json j;
	char age[16], up[16], ifn[IF_NAMESIZE];
	__u32 gen = 0;
	int i;

	toe_policy_hdr(&D->m, &gen, &h);
	nn = map_count(D->m.neigh, sizeof(struct toe_neigh_key));
	na = map_count(D->m.local, sizeof(struct toe_local_key));
	toe_age_str(now - D->start_ns, up, sizeof(up));
	toe_age_str(now - D->applied_ns, age, sizeof(age));
	if (!json) {
		fprintf(f, "toed:       running, pid %d, up %s\n", getpid(), up);
		fprintf(f, "datapath:   %s\n", D->pin_dir);
		fprintf(f, "config:     %s\n", D->config);
		fprintf(f, "policy:     %llu (generation %u), applied %s ago: %u rules, %d devices, default %s\n",
			(unsigned long long)h.serial, gen, age, h.nrules, D->cfg.ndevs,
			toe_action_name(h.default_action));
		fprintf(f, "interfaces:");
		for (i = 0; i < D->nl.ntracked; i++)
			fprintf(f, " %s", if_indextoname(D->nl.tracked[i], ifn) ? ifn : "?");
		fprintf(f, "%s\n", D->nl.ntracked ? "" : " none");
		fprintf(f, "neighbours: %llu mirrored, %llu resyncs, %llu overruns\n",
			(unsigned long long)nn, (unsigned long long)D->nl.st.resyncs,
			(unsigned long long)D->nl.st.enobufs);
		fprintf(f, "addresses:  %llu local\n", (unsigned long long)na);
		if (toe_genl_up(&D->gl))
			fprintf(f, "module:     loaded (genetlink family %s, id %u): %d device%s, %zu TID%s held\n",
				OPENTOE_GENL_NAME, D->gl.family, D->nkdevs, D->nkdevs == 1 ? "" : "s",
				tids_held_all(), tids_held_all() == 1 ? "" : "s");
		else
			fprintf(f, "module:     not loaded (configuration devices only)\n");
		fprintf(f, "events:     %llu offloaded, %llu refused, %llu closed, %llu listen\n",
			(unsigned long long)D->ev[TOE_EV_FLOW_OFFLOADED],
			(unsigned long long)D->ev[TOE_EV_FLOW_REFUSED],
			(unsigned long long)D->ev[TOE_EV_FLOW_CLOSED],
			(unsigned long long)D->ev[TOE_EV_LISTEN_START]);
		return;
	}
	tj_start(&j, f);
	tj_obj(&j);
	tj_ku64(&j, "pid", getpid());
	tj_key(&j, "uptime_s");
	tj_f64(&j, (now - D->start_ns) / 1e9);
	tj_kstr(&j, "pin_dir", D->pin_dir);
	tj_kstr(&j, "config", D->config);
	tj_key(&j, "policy");
	tj_obj(&j);
	tj_ku64(&j, "serial", h.serial);
	tj_ku64(&j, "generation", gen);
	tj_ku64(&j, "rules", h.nrules);
	tj_ku64(&j, "devices", D->cfg.ndevs);
	tj_kstr(&j, "default", toe_action_name(h.default_action));
	tj_key(&j, "applied_s_ago");
	tj_f64(&j, (now - D->applied_ns) / 1e9);
	tj_obj_end(&j);
	tj_key(&j, "interfaces");
	tj_arr(&j);
	for (i = 0; i < D->nl.ntracked; i++) {
		tj_obj(&j);
		tj_kstr(&j, "name", if_indextoname(D->nl.tracked[i], ifn) ? ifn : "?");
		tj_ku64(&j, "ifindex", D->nl.tracked[i]);
		tj_obj_end(&j);
	}
	tj_arr_end(&j);
	tj_ku64(&j, "neighbours", nn);
	tj_ku64(&j, "local_addresses", na);
	tj_key(&j, "kmod");
	tj_obj(&j);
	tj_key(&j, "loaded");
	tj_bool(&j, toe_genl_up(&D->gl));
	tj_ku64(&j, "devices", D->nkdevs);
	tj_ku64(&j, "tids_held", tids_held_all());
	tj_obj_end(&j);
	tj_key(&j, "events");
	tj_obj(&j);
	for (i = TOE_EV_LISTEN_START; i <= TOE_EV_FLOW_CLOSED; i++)
		tj_ku64(&j, toe_event_name(i), D->ev[i]);
	tj_obj_end(&j);
	tj_obj_end(&j);
	tj_end(&j);
}

/*
 * The module's own counts of TIDs and L2T entries in use, summed, and how
 * many of its L2T entries agree with toe_neigh (the neighbour toed mirrored
 * for the same interface and address): same MAC, or neither has a usable
 * one.  A snapshot: the module follows the kernel's neighbours through
 * netevents, toed through rtnetlink, so a change in flight may differ.
 */
static struct kuse {
	__u64 tids, l2t, l2t_agree, l2t_differ;
} kmod_usage(void)
{
	struct toe_genl_dev *kd = calloc(TOE_MAX_DEVS, sizeof(*kd));
	struct kuse u = { 0, 0, 0, 0 };
	struct toe_genl_l2t *l2t = NULL;
	char err[256];
	int n = 0, i;

	if (kd && toe_genl_up(&D->gl) &&
	    toe_genl_devs(&D->gl, kd, TOE_MAX_DEVS, &n, err, sizeof(err)) == 0) {
		for (i = 0; i < n; i++) {
			u.tids += kd[i].tids_used;
			u.l2t += kd[i].l2t_used;
		}
	}
	free(kd);
	if (!toe_genl_up(&D->gl) || toe_genl_l2t(&D->gl, 0, &l2t, &n, err, sizeof(err)))
		return u;
	for (i = 0; i < n; i++) {
		struct toe_neigh_key k = { .ifindex = l2t[i].ifindex, .family = l2t[i].family };
		bool kvalid = l2t[i].has_mac && (l2t[i].state & TOE_NUD_VALID);
		struct toe_neigh v;
		bool nvalid;

		memcpy(k.addr, l2t[i].addr, sizeof(k.addr));
		nvalid = bpf_map_lookup_elem(D->m.neigh, &k, &v) == 0 && v.has_mac &&
			 (v.state & TOE_NUD_VALID);
		if (kvalid == nvalid && (!kvalid || !memcmp(v.mac, l2t[i].mac, 6)))
			u.l2t_agree++;
		else
			u.l2t_differ++;
	}
	free(l2t);
	return u;
}

static void view_stats(FILE *f, bool json)
{
	const struct toe_nl_stats *s = &D->nl.st;
	struct kuse ku = kmod_usage();
	struct {
		const char *name;
		__u64 v;
	} dm[] = {
		{ "events_listen_start", D->ev[TOE_EV_LISTEN_START] },
		{ "events_listen_stop", D->ev[TOE_EV_LISTEN_STOP] },
		{ "events_flow_offloaded", D->ev[TOE_EV_FLOW_OFFLOADED] },
		{ "events_flow_refused", D->ev[TOE_EV_FLOW_REFUSED] },
		{ "events_flow_closed", D->ev[TOE_EV_FLOW_CLOSED] },
		{ "events_malformed", D->ev_bad },
		{ "policy_applied", D->reload_ok },
		{ "policy_failed", D->reload_failed },
		{ "neigh_set", s->neigh_set },
		{ "neigh_del", s->neigh_del },
		{ "addr_set", s->addr_set },
		{ "addr_del", s->addr_del },
		{ "link_events", s->link_events },
		{ "netlink_messages", s->messages },
		{ "netlink_malformed", s->malformed },
		{ "netlink_overruns", s->enobufs },
		{ "resyncs", s->resyncs },
		{ "dump_restarts", s->dump_restarts },
		{ "map_errors", s->map_errors },
		{ "requests", D->requests },
		{ "clients_refused", D->refused_clients },
		{ "monitor_lost", D->mon_lost },
		{ "kmod_loaded", toe_genl_up(&D->gl) },
		{ "kmod_devices", (__u64)D->nkdevs },
		{ "kmod_tids_held", tids_held_all() },
		{ "kmod_tids_used", ku.tids },
		{ "kmod_l2t_used", ku.l2t },
		{ "kmod_l2t_agree", ku.l2t_agree },
		{ "kmod_l2t_differ", ku.l2t_differ },
		{ "kmod_tid_alloc", D->kst.alloc },
		{ "kmod_tid_alloc_nospc", D->kst.alloc_nospc },
		{ "kmod_tid_alloc_unreach", D->kst.alloc_unreach },
		{ "kmod_tid_alloc_failed", D->kst.alloc_failed },
		{ "kmod_offloaded_no_tid", D->kst.no_tid },
		{ "kmod_tid_free", D->kst.freed },
		{ "kmod_tid_free_failed", D->kst.free_failed },
		{ "kmod_tids_adopted", D->kst.adopted },
		{ "kmod_tids_orphaned", D->kst.orphans },
		{ "kmod_tids_lost", D->kst.lost },
		{ "kmod_dev_events", D->gl.st.dev_events },
		{ "kmod_l2t_events", D->gl.st.l2t_events },
		{ "kmod_family_events", D->gl.st.family_events },
		{ "kmod_overruns", D->gl.st.overruns },
	};
	__u64 v[TOE_STATS_MAX];
	struct toe_json j;
	unsigned int i;

	toe_stats_read(&D->m, v, TOE_STATS_MAX);
	if (json) {
		tj_start(&j, f);
		tj_obj(&j);
		tj_key(&j, "datapath");
		tj_obj(&j);
	} else {
		fprintf(f, "datapath:\n");
	}
	for (i = 0; i < TOE_STATS_MAX; i++) {
		const char *n = toe_stat_name(i);
		char name[64];

		if (!n)
			continue;
		snprintf(name, sizeof(name), "%s%s", i < TOE_S_BASE ? "xdp_parse_" : "", n);
		if (json)
			tj_ku64(&j, name, v[i]);
		else
			fprintf(f, "  %-24s %llu\n", name, (unsigned long long)v[i]);
	}
	if (json) {
		tj_obj_end(&j);
		tj_key(&j, "daemon");
		tj_obj(&j);
	} else {
		fprintf(f, "daemon:\n");
	}
	for (i = 0; i < sizeof(dm) / sizeof(dm[0]); i++) {
		if (json)
			tj_ku64(&j, dm[i].name, dm[i].v);
		else
			fprintf(f, "  %-24s %llu\n", dm[i].name, (unsigned long long)dm[i].v);
	}
	if (json) {
		tj_obj_end(&j);
		tj_obj_end(&j);
		tj_end(&j);
	}
}

static void fmt_prefix(const __u32 *a, __u8 family, __u8 plen, char *buf, size_t len)
{
	char s[48];

	toe_nl_addr_str(family, a, s, sizeof(s));
	snprintf(buf, len, "%s/%u", s, plen);
}

static void fmt_ports(__u16 lo, __u16 hi, char *buf, size_t len)
{
	if (lo == hi)
		snprintf(buf, len, "%u", lo);
	else
		snprintf(buf, len, "%u-%u", lo, hi);
}

/* One rule field: "KEY VALUE" in the text, "KEY": "VALUE" in JSON. */
static void put_kv(FILE *f, struct toe_json *j, bool json, const char *k, const char *v)
{
	if (json)
		tj_kstr(j, k, v);
	else
		fprintf(f, " %s %s", k, v);
}

/* The configuration in force, written back in the file's own syntax. */
static void view_policy(FILE *f, bool json)
{
	const struct toe_cfg *c = &D->cfg;
	struct toe_pol_hdr h = {};
	struct toe_json j;
	__u32 gen = 0;
	char b[128];
	int i;

	toe_policy_hdr(&D->m, &gen, &h);
	if (!json) {
		fprintf(f, "# policy %llu (generation %u) from %s\n", (unsigned long long)h.serial,
			gen, D->config);
		for (i = 0; i < c->ndevs; i++) {
			const struct toe_cfg_dev *d = &c->devs[i];

			if (d->kmod)
				fprintf(f, "device %s kmod", d->name);
			else
				fprintf(f, "device %s type %s nconn %u", d->name,
					toe_dev_type_name(d->type), d->nconn);
			if (d->ifname[0])
				fprintf(f, " dev %s", d->ifname);
			if (d->steer == TOE_STEER_CPU)
				fprintf(f, " steer cpu %u", d->steer_cpu);
			else if (d->steer == TOE_STEER_FORWARD)
				fprintf(f, " steer forward");
			fputc('\n', f);
		}
		fprintf(f, "default %s", toe_action_name(c->default_action));
		if (c->default_dev >= 0)
			fprintf(f, " dev %s", c->devs[c->default_dev].name);
		fputc('\n', f);
	} else {
		tj_start(&j, f);
		tj_obj(&j);
		tj_ku64(&j, "serial", h.serial);
		tj_ku64(&j, "generation", gen);
		tj_kstr(&j, "config", D->config);
		tj_key(&j, "devices");
		tj_arr(&j);
		for (i = 0; i < c->ndevs; i++) {
			tj_obj(&j);
			tj_kstr(&j, "name", c->devs[i].name);
			tj_key(&j, "kmod");
			tj_bool(&j, c->devs[i].kmod);
			if (!c->devs[i].kmod) {
				tj_kstr(&j, "type", toe_dev_type_name(c->devs[i].type));
				tj_ku64(&j, "nconn", c->devs[i].nconn);
				tj_kstr(&j, "dev", c->devs[i].ifname);
			}
			tj_obj_end(&j);
		}
		tj_arr_end(&j);
		tj_kstr(&j, "default", toe_action_name(c->default_action));
		tj_key(&j, "rules");
		tj_arr(&j);
	}
	for (i = 0; i < c->nrules; i++) {
		const struct toe_cfg_rule *r = &c->rules[i];

		if (json) {
			tj_obj(&j);
			tj_ku64(&j, "index", i);
			tj_ku64(&j, "line", r->line);
			tj_kstr(&j, "action", toe_action_name(r->action));
			if (r->dev >= 0)
				tj_kstr(&j, "dev", c->devs[r->dev].name);
			if (r->family)
				tj_kstr(&j, "family", r->family == TOE_AF_INET6 ? "inet6" : "inet");
		} else {
			fprintf(f, "rule %s", toe_action_name(r->action));
			if (r->dev >= 0)
				fprintf(f, " dev %s", c->devs[r->dev].name);
			if (r->family && !r->lplen && !r->rplen)
				fprintf(f, " family %s", r->family == TOE_AF_INET6 ? "inet6" : "inet");
		}
		if (r->lplen) {
			fmt_prefix(r->laddr, r->family, r->lplen, b, sizeof(b));
			put_kv(f, &j, json, "local", b);
		}
		if (r->rplen) {
			fmt_prefix(r->raddr, r->family, r->rplen, b, sizeof(b));
			put_kv(f, &j, json, "remote", b);
		}
		if (!(r->lport_lo == 0 && r->lport_hi == 65535)) {
			fmt_ports(r->lport_lo, r->lport_hi, b, sizeof(b));
			put_kv(f, &j, json, "lport", b);
		}
		if (!(r->rport_lo == 0 && r->rport_hi == 65535)) {
			fmt_ports(r->rport_lo, r->rport_hi, b, sizeof(b));
			put_kv(f, &j, json, "rport", b);
		}
		if (r->cgroup) {
			if (json)
				tj_ku64(&j, "cgroup", r->cgroup);
			else
				fprintf(f, " cgroup %llu", (unsigned long long)r->cgroup);
		}
		if (r->ka_idle) {
			if (json) {
				tj_key(&j, "keepalive");
				tj_arr(&j);
				tj_u64(&j, r->ka_idle);
				tj_u64(&j, r->ka_intvl);
				tj_u64(&j, r->ka_cnt);
				tj_arr_end(&j);
			} else {
				fprintf(f, " keepalive %u %u %u", r->ka_idle, r->ka_intvl, r->ka_cnt);
			}
		}
		if (json)
			tj_obj_end(&j);
		else
			fprintf(f, "    # line %d\n", r->line);
	}
	if (json) {
		tj_arr_end(&j);
		tj_obj_end(&j);
		tj_end(&j);
	}
}

/* ---------------------------------------------------- control socket */

static bool is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/*
 * One request: "<command> [-j] [args]" on one line.  The reply is "ok\n"
 * then the output, or "error <message>\n"; the connection is then closed,
 * except for monitor, which streams until the client goes away.
 */
static void serve(int fd)
{
	char req[REQ_MAX + 1], *w[MAX_WORDS], *save = NULL, *tok, *body = NULL;
	struct timeval tv = { .tv_sec = 2 };
	struct toe_flow_filter flt = { .dev = NULL, .port = -1 };
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	size_t blen = 0, off = 0, got = 0;
	bool json = false;
	int nw = 0, i;
	FILE *out;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	out = open_memstream(&body, &blen);
	if (!out)
		goto done;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) || cred.uid != 0) {
		D->refused_clients++;
		logm(LOG_WARN, "refused a control client: uid %d pid %d is not root",
		     (int)cred.uid, (int)cred.pid);
		fprintf(out, "error permission denied: toectl must be run as root (you are uid %d)\n",
			(int)cred.uid);
		goto reply;
	}
	while (got < REQ_MAX) {
		ssize_t n = recv(fd, req + got, REQ_MAX - got, 0);

		if (n <= 0)
			break;
		got += n;
		if (memchr(req, '\n', got))
			break;
	}
	req[got] = 0;
	if (!memchr(req, '\n', got)) {
		fprintf(out, "error request too long or incomplete\n");
		goto reply;
	}
	*strchr(req, '\n') = 0;
	D->requests++;
	for (tok = strtok_r(req, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (!strcmp(tok, "-j")) {
			json = true;
			continue;
		}
		if (nw == MAX_WORDS) {
			fprintf(out, "error too many arguments\n");
			goto reply;
		}
		w[nw++] = tok;
	}
	if (!nw) {
		fprintf(out, "error empty request\n");
		goto reply;
	}
	logm(LOG_DEBUG, "request '%s' from pid %d", w[0], (int)cred.pid);
	if (strcmp(w[0], "flows") && nw > 1) {
		fprintf(out, "error '%s' takes no argument (got '%.64s')\n", w[0], w[1]);
		goto reply;
	}
	if (!strcmp(w[0], "status")) {
		fprintf(out, "ok\n");
		view_status(out, json);
	} else if (!strcmp(w[0], "devices")) {
		fprintf(out, "ok\n");
		view_devices(out, json);
	} else if (!strcmp(w[0], "flows")) {
		for (i = 1; i < nw; i += 2) {
			if (i + 1 >= nw) {
				fprintf(out, "error '%.64s' needs a value\n", w[i]);
				goto reply;
			}
			if (!strcmp(w[i], "dev")) {
				flt.dev = w[i + 1];
			} else if (!strcmp(w[i], "port")) {
				if (!is_number(w[i + 1]) || atoi(w[i + 1]) > 65535) {
					fprintf(out, "error bad port '%.64s' (expected 0-65535)\n", w[i + 1]);
					goto reply;
				}
				flt.port = atoi(w[i + 1]);
			} else {
				fprintf(out, "error unknown filter '%.64s' (expected dev NAME or port N)\n",
					w[i]);
				goto reply;
			}
		}
		fprintf(out, "ok\n");
		toe_view_flows(out, json, &D->m, &flt, tid_of, NULL);
	} else if (!strcmp(w[0], "neigh")) {
		fprintf(out, "ok\n");
		toe_view_neigh(out, json, &D->m);
	} else if (!strcmp(w[0], "policy")) {
		fprintf(out, "ok\n");
		view_policy(out, json);
	} else if (!strcmp(w[0], "stats")) {
		fprintf(out, "ok\n");
		view_stats(out, json);
	} else if (!strcmp(w[0], "reload")) {
		char err[1200];

		if (do_apply(err, sizeof(err))) {
			fprintf(out, "error %s\n", err);
		} else if (json) {
			fprintf(out, "ok\n{\"serial\":%llu,\"rules\":%u,\"ms\":%.3f}\n",
				(unsigned long long)D->ast.serial, D->ast.rules, D->ast.ms);
		} else {
			fprintf(out, "ok\napplied policy %llu: %u rules from %s in %.1f ms\n",
				(unsigned long long)D->ast.serial, D->ast.rules, D->config, D->ast.ms);
		}
	} else if (!strcmp(w[0], "monitor")) {
		for (i = 0; i < MAX_MON && D->mon[i].fd >= 0; i++)
			;
		if (i == MAX_MON) {
			fprintf(out, "error too many monitors (%d)\n", MAX_MON);
			goto reply;
		}
		fclose(out);
		free(body);
		if (send(fd, "ok\n", 3, MSG_NOSIGNAL) != 3) {
			close(fd);
			return;
		}
		{
			struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP,
						  .data.u64 = ((__u64)SRC_MON << 32) | i };

			D->mon[i].fd = fd;
			D->mon[i].json = json;
			D->mon[i].lost = 0;
			if (epoll_ctl(D->epfd, EPOLL_CTL_ADD, fd, &ev)) {
				close(fd);
				D->mon[i].fd = -1;
			}
		}
		return;
	} else {
		fprintf(out, "error unknown command '%.64s' (expected status, devices, flows, neigh, policy, stats, reload or monitor)\n",
			w[0]);
	}
reply:
	fclose(out);
	out = NULL;
	while (off < blen) {
		ssize_t n = send(fd, body + off, blen - off, MSG_NOSIGNAL);

		if (n <= 0) {
			logm(LOG_WARN, "control client went away or stalled");
			break;
		}
		off += n;
	}
done:
	if (out)
		fclose(out);
	free(body);
	close(fd);
}

/* ---------------------------------------------------------- startup */

static int take_lock(void)
{
	char path[4096], pid[32];
	int fd, n;

	toe_join(path, sizeof(path), D->run_dir, LOCK_NAME);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		toe_err("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		n = errno == EWOULDBLOCK ? pread(fd, pid, sizeof(pid) - 1, 0) : -1;
		if (n > 0) {
			pid[n] = 0;
			pid[strcspn(pid, "\n")] = 0;
		}
		toe_err("another toed is running (pid %s; lock %s held)", n > 0 ? pid : "?", path);
		close(fd);
		return -1;
	}
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, n, 0) != n)
		toe_err("warning: cannot write the pid into %s", path);
	D->lockfd = fd;
	return 0;
}

static int open_listen(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int fd;

	if (snprintf(D->sock_path, sizeof(D->sock_path), "%s/%s", D->run_dir, SOCK_NAME) >=
	    (int)sizeof(D->sock_path)) {
		toe_err("run folder %s: path too long for a unix socket", D->run_dir);
		return -1;
	}
	memcpy(sa.sun_path, D->sock_path, sizeof(sa.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	unlink(D->sock_path);	/* a stale one: we hold the lock */
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64)) {
		umask(old);
		toe_err("cannot listen on %s: %s", D->sock_path, strerror(errno));
		close(fd);
		return -1;
	}
	umask(old);
	chmod(D->sock_path, 0600);
	D->lsock = fd;
	return 0;
}

/* systemd Type=notify, without libsystemd. */
static void sd_ready(void)
{
	const char *p = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (!p || (p[0] != '/' && p[0] != '@') || strlen(p) >= sizeof(sa.sun_path))
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

static int ep_add(int fd, enum src s)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (__u64)s << 32 };

	return epoll_ctl(D->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int daemon_run(void)
{
	struct itimerspec its = { .it_interval.tv_sec = 2, .it_value.tv_sec = 2 };
	char err[1200];
	sigset_t mask;
	bool stop = false;
	int i, ret = 1;

	if (geteuid() != 0) {
		toe_err("must be run as root");
		return 1;
	}
	if (mkdir(D->run_dir, 0755) && errno != EEXIST) {
		toe_err("cannot create %s: %s", D->run_dir, strerror(errno));
		return 1;
	}
	if (take_lock())
		return 1;
	D->start_ns = toe_now_ns();
	D->netns_ino = toe_netns_ino();
	if (toe_maps_open(D->pin_dir, &D->m, err, sizeof(err))) {
		toe_err("%s", err);
		return 1;
	}
	/* The kernel module: optional.  Without it toed runs as it always did. */
	if (toe_genl_open(&D->gl, err, sizeof(err)))
		logm(LOG_WARN, "%s: the kernel module's devices are not used", err);
	else
		D->gl_open = true;
	if (D->gl_open && !toe_genl_up(&D->gl))
		logm(LOG_INFO, "kernel module not loaded: configuration devices only");
	if (do_apply(err, sizeof(err))) {
		toe_err("%s", err);
		return 1;
	}
	if (toe_genl_up(&D->gl)) {
		logm(LOG_INFO, "kernel module loaded: %d device%s", D->nkdevs, D->nkdevs == 1 ? "" : "s");
		kmod_reconcile();	/* adopt the TIDs a previous toed held */
	}
	D->rb = ring_buffer__new(D->m.events, on_event, NULL, NULL);
	if (!D->rb) {
		toe_err("cannot read the event ring buffer: %s", strerror(errno));
		return 1;
	}
	D->nl.neigh_cb = on_neigh;
	D->nl.link_cb = on_link;
	if (toe_nl_open(&D->nl, D->m.neigh, D->m.local, D->rcvbuf, err, sizeof(err))) {
		toe_err("%s", err);
		return 1;
	}
	retrack(true);
	if (open_listen())
		return 1;

	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	D->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	D->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	D->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (D->sigfd < 0 || D->tfd < 0 || D->epfd < 0 ||
	    timerfd_settime(D->tfd, 0, &its, NULL) ||
	    ep_add(D->sigfd, SRC_SIGNAL) || ep_add(D->nl.ev_fd, SRC_NETLINK) ||
	    ep_add(ring_buffer__epoll_fd(D->rb), SRC_RING) || ep_add(D->lsock, SRC_LISTEN) ||
	    ep_add(D->tfd, SRC_TIMER) || (D->gl_open && ep_add(D->gl.ev_fd, SRC_GENL))) {
		toe_err("cannot set up the event loop: %s", strerror(errno));
		return 1;
	}
	logm(LOG_INFO, "running (pid %d): datapath %s, control %s", getpid(), D->pin_dir,
	     D->sock_path);
	sd_ready();

	while (!stop) {
		struct epoll_event evs[16];
		int n = epoll_wait(D->epfd, evs, 16, -1);

		if (n < 0 && errno != EINTR) {
			toe_err("epoll: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n; i++) {
			enum src s = evs[i].data.u64 >> 32;
			struct signalfd_siginfo si;
			__u64 ticks;
			int c;

			switch (s) {
			case SRC_SIGNAL:
				while (read(D->sigfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGHUP) {
						logm(LOG_INFO, "SIGHUP: reloading %s", D->config);
						do_apply(err, sizeof(err));
					} else {
						logm(LOG_INFO, "signal %d: stopping (the datapath keeps running)",
						     si.ssi_signo);
						stop = true;
					}
				}
				break;
			case SRC_NETLINK:
				if (toe_nl_process(&D->nl, err, sizeof(err)))
					logm(LOG_ERR, "%s", err);
				if (D->retrack)
					retrack(false);
				break;
			case SRC_RING:
				ring_buffer__consume(D->rb);
				break;
			case SRC_LISTEN:
				while ((c = accept4(D->lsock, NULL, NULL, SOCK_CLOEXEC)) >= 0)
					serve(c);
				break;
			case SRC_TIMER:
				if (read(D->tfd, &ticks, sizeof(ticks)) < 0)
					break;
				if (D->kmod_dirty)
					kmod_changed();	/* an apply that failed: again */
				retrack(false);
				break;
			case SRC_GENL:
				if (toe_genl_process(&D->gl, on_genl, NULL))
					logm(LOG_ERR, "kernel module events: %s", strerror(errno));
				if (D->kmod_dirty)
					kmod_changed();
				if (D->retrack)
					retrack(false);
				break;
			case SRC_MON: {
				struct mon *c = &D->mon[evs[i].data.u64 & 0xffffffff];
				char junk[256];

				/* A monitor says nothing: input or hangup means it is gone. */
				if (c->fd >= 0 && (evs[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR) ||
						   recv(c->fd, junk, sizeof(junk), MSG_DONTWAIT) <= 0))
					mon_close(c);
				break;
			}
			}
		}
	}
	ret = 0;
	for (i = 0; i < MAX_MON; i++)
		if (D->mon[i].fd >= 0)
			mon_close(&D->mon[i]);
	unlink(D->sock_path);
	ring_buffer__free(D->rb);
	toe_nl_close(&D->nl);
	if (D->gl_open)
		toe_genl_close(&D->gl);
	tid_clear();	/* toed's copy only: the module keeps them for the next toed */
	toe_maps_close(&D->m);
	toe_cfg_free(&D->cfg);
	return ret;
}

/* -------------------------------------------------------------- main */

static void usage(FILE *f)
{
	fprintf(f,
"Usage: toed [--config FILE] [--pin-dir DIR] [--run-dir DIR] [options]\n"
"       toed --check [FILE]\n"
"       toed --apply [FILE] [--pin-dir DIR] [-j]\n"
"\n"
"The opentoe daemon: offload policy, neighbour propagation into the\n"
"datapath's maps, events, and the control socket toectl talks to.  It runs in\n"
"the foreground (systemd: Type=notify); SIGHUP reloads the configuration,\n"
"SIGTERM stops toed and leaves the datapath running.\n"
"\n"
"  -c, --config FILE     configuration file (default " DEFAULT_CONFIG ")\n"
"  -C, --check           validate the file and exit: 0 valid, 1 not (the error\n"
"                        names file, line and column)\n"
"  -a, --apply           validate, apply it to the loaded datapath atomically and\n"
"                        exit; on error the policy in force stays\n"
"  -p, --pin-dir DIR     bpffs folder of the datapath (default " TOE_PIN_DIR_DEFAULT ")\n"
"  -r, --run-dir DIR     control socket and lock (default " DEFAULT_RUN_DIR ")\n"
"  -i, --interface IFACE also mirror IFACE's neighbours (repeatable); by default\n"
"                        the interfaces opentoe's XDP is attached to in this\n"
"                        network namespace and those the devices name\n"
"      --rcvbuf BYTES    rtnetlink receive buffer (default 4 MiB, set with\n"
"                        SO_RCVBUFFORCE; an overrun costs a full resync)\n"
"  -l, --log-level L     error, warning, info (default) or debug\n"
"  -j, --json            JSON summary (with --apply)\n"
"  -h, --help            this text\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'C' },
		{ "apply", no_argument, NULL, 'a' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "run-dir", required_argument, NULL, 'r' },
		{ "interface", required_argument, NULL, 'i' },
		{ "rcvbuf", required_argument, NULL, 'R' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static struct toed d = {
		.config = DEFAULT_CONFIG, .pin_dir = TOE_PIN_DIR_DEFAULT,
		.run_dir = DEFAULT_RUN_DIR, .log_level = LOG_INFO, .rcvbuf = 4 << 20,
		.epfd = -1, .sigfd = -1, .lsock = -1, .tfd = -1, .lockfd = -1,
		.nl = { .ev_fd = -1, .dump_fd = -1 }, .cfg = { .default_dev = -1 },
		.gl = { .fd = -1, .ev_fd = -1 },
	};
	bool check = false, apply = false, json = false;
	struct toe_apply_stats st;
	struct toe_cfg cfg, merged;
	struct toe_json j;
	char err[1024], *end;
	int c, i;

	D = &d;
	for (i = 0; i < MAX_MON; i++)
		d.mon[i].fd = -1;
	toe_prog = "toed";
	while ((c = getopt_long(argc, argv, "c:Cap:r:i:l:jh", lopts, NULL)) != -1) {
		switch (c) {
		case 'c': d.config = optarg; break;
		case 'C': check = true; break;
		case 'a': apply = true; break;
		case 'p': d.pin_dir = optarg; break;
		case 'r': d.run_dir = optarg; break;
		case 'i':
			if (d.nifaces == MAX_IFACES) {
				toe_err("at most %d --interface", MAX_IFACES);
				return 1;
			}
			if (!if_nametoindex(optarg)) {
				toe_err("unknown interface '%s'", optarg);
				return 1;
			}
			d.ifaces[d.nifaces++] = optarg;
			break;
		case 'R':
			errno = 0;
			d.rcvbuf = (int)strtol(optarg, &end, 10);
			if (errno || *end || d.rcvbuf < 256) {
				toe_err("bad --rcvbuf '%s' (expected a number of bytes, at least 256)",
					optarg);
				return 1;
			}
			break;
		case 'l':
			for (i = 0; i <= LOG_DEBUG && strcmp(optarg, log_names[i]); i++)
				;
			if (i > LOG_DEBUG) {
				toe_err("bad --log-level '%s' (expected error, warning, info or debug)",
					optarg);
				return 1;
			}
			d.log_level = i;
			break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	/* "toed --check FILE": the file may follow the flag. */
	if (optind < argc && (check || apply) && optind == argc - 1)
		d.config = argv[optind++];
	if (optind < argc) {
		toe_err("unexpected argument '%s'", argv[optind]);
		return 1;
	}
	if (!check && !apply)
		return daemon_run();
	if (toe_cfg_load(d.config, &cfg, err, sizeof(err))) {
		fprintf(stderr, "toed: %s\n", err);
		toe_cfg_free(&cfg);
		return 1;
	}
	if (check) {
		printf("%s: valid: %d device%s, %d rule%s, default %s\n", d.config, cfg.ndevs,
		       cfg.ndevs == 1 ? "" : "s", cfg.nrules, cfg.nrules == 1 ? "" : "s",
		       toe_action_name(cfg.default_action));
		toe_cfg_free(&cfg);
		return 0;
	}
	if (geteuid() != 0) {
		toe_err("must be run as root to apply a policy");
		toe_cfg_free(&cfg);
		return 1;
	}
	/* The kernel module's devices, as the daemon merges them. */
	if (toe_genl_open(&d.gl, err, sizeof(err)) == 0) {
		d.gl_open = true;
		kmod_read_devs();
	}
	kmod_merge(&cfg, &merged);
	if (d.gl_open)
		toe_genl_close(&d.gl);
	if (toe_policy_apply(d.pin_dir, &merged, &st, err, sizeof(err))) {
		fprintf(stderr, "toed: %s: %s; the policy in force is unchanged\n", d.config, err);
		toe_cfg_free(&cfg);
		return 1;
	}
	toe_cfg_free(&cfg);
	if (json) {
		tj_start(&j, stdout);
		tj_obj(&j);
		tj_kstr(&j, "config", d.config);
		tj_ku64(&j, "rules", st.rules);
		tj_ku64(&j, "tuples", st.tuples);
		tj_ku64(&j, "cells", st.cells);
		tj_ku64(&j, "generation", st.gen);
		tj_ku64(&j, "serial", st.serial);
		tj_key(&j, "ms");
		tj_f64(&j, st.ms);
		tj_obj_end(&j);
		tj_end(&j);
	} else {
		printf("%s: applied policy %llu: %u rules, %u shapes, %u cells in %.1f ms\n",
		       d.config, (unsigned long long)st.serial, st.rules, st.tuples, st.cells, st.ms);
	}
	return 0;
}
