// SPDX-License-Identifier: GPL-2.0
/*
 * opentoe module test, run inside the guest as root (see init.sh): drives
 * the module through its sysfs bus, debugfs knobs, /proc/net/toe/devices and
 * the "opentoe" generic netlink family (raw netlink sockets), and prints TAP.
 *
 * Setup expected from init.sh: opentoe.ko loaded, veth0 (10.1.0.1/24,
 * 2001:db8:1::1/64) up, its peer veth1 up, a route 10.9.0.0/16 via
 * 10.1.0.254, and a spare veth pair veth2/veth3.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/genetlink.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <sys/wait.h>

#include "lib/nlmsg.h"
#include "opentoe.h"
#include "opentoe_genl.h"
#include "toe_maps.h"

/* <net/neighbour.h>'s NUD_VALID, not in the UAPI header */
#define NUD_VALID                                                            \
	(NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | NUD_PROBE | NUD_STALE | \
	 NUD_DELAY)

#define MODULE_PATH "/lib/modules/opentoe.ko"
#define BUS "/sys/bus/opentoe_sim"
#define DBG "/sys/kernel/debug/opentoe_sim"

static int ntest, nfail;

static void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++ntest);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		nfail++;
}

static void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* ---- files ---- */

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n, off = 0;

	if (fd < 0)
		return -errno;
	while (off < (ssize_t)len - 1 &&
	       (n = read(fd, buf + off, len - 1 - off)) > 0)
		off += n;
	buf[off] = 0;
	close(fd);
	return off;
}

static long read_num(const char *fmt, unsigned int id, const char *name)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), fmt, id, name);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtol(buf, NULL, 0);
}

static int sim_new(unsigned int id, const char *ifname, unsigned int ttid,
		   unsigned int nconn, const char *template)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "%u %s %u %u%s%s", id, ifname, ttid, nconn,
		 template ? " " : "", template ? template : "");
	return write_file(BUS "/new_device", buf);
}

static int sim_del(unsigned int id)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%u", id);
	return write_file(BUS "/del_device", buf);
}

static int sim_index(unsigned int id)
{
	return read_num(BUS "/devices/opentoe_sim%u/%s", id, "toe_index");
}

static int sim_knob(unsigned int id, const char *knob, unsigned int val)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), DBG "/opentoe_sim%u/%s", id, knob);
	snprintf(buf, sizeof(buf), "%u", val);
	return write_file(path, buf);
}

static long sim_counter(unsigned int id, const char *name)
{
	return read_num(DBG "/opentoe_sim%u/%s", id, name);
}

static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- raw generic netlink (user/lib/nlmsg.c) ---- */

struct nl {
	int fd;
	uint32_t seq;
};

static uint16_t fam_id;
static uint32_t mcgrp_events;

static void msg_init(struct toe_nlmsg *m, uint16_t type, uint16_t flags,
		     uint8_t cmd)
{
	toe_nlmsg_init(m, type, flags, cmd, OPENTOE_GENL_VERSION);
}

static int nl_open(struct nl *nl)
{
	struct timeval tv = { .tv_sec = 10 };

	nl->fd = toe_nlmsg_socket(false);
	if (nl->fd < 0)
		return -errno;
	setsockopt(nl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	nl->seq = time(NULL);
	return 0;
}

static uint32_t nla_u32(struct nlattr *a)
{
	uint32_t v;

	memcpy(&v, toe_nla_data(a), 4);
	return v;
}

/* Sends @m (with ACK) and collects replies; 0 or -errno from the kernel. */
static int nl_call(struct nl *nl, struct toe_nlmsg *m, toe_nlmsg_cb cb,
		   void *arg)
{
	return toe_nlmsg_call(nl->fd, &nl->seq, m, OPENTOE_A_MAX, cb, arg, NULL,
			      NULL, 0);
}

static int resolve_family(struct nl *nl)
{
	return toe_nlmsg_resolve(nl->fd, &nl->seq, OPENTOE_GENL_NAME,
				 OPENTOE_GENL_MCGRP_EVENTS, &fam_id,
				 &mcgrp_events, NULL, 0);
}

/* ---- devices ---- */

struct devinfo {
	int index;
	char name[OPENTOE_NAMSIZ];
	unsigned int ttid, nconn, tids_used, listeners, l2t_used;
	unsigned int tids_reserved, stids_reserved, tids_host;
	char tom[OPENTOE_TOM_NAMSIZ];
	char ifname[32];
	uint64_t stats[OPENTOE_STAT_MAX + 1];
};

struct devlist {
	int n;
	struct devinfo d[256];
};

static void fill_devinfo(struct devinfo *d, struct nlattr **tb)
{
	memset(d, 0, sizeof(*d));
	if (tb[OPENTOE_A_DEV_INDEX])
		d->index = nla_u32(tb[OPENTOE_A_DEV_INDEX]);
	if (tb[OPENTOE_A_DEV_NAME])
		snprintf(d->name, sizeof(d->name), "%s",
			 (char *)toe_nla_data(tb[OPENTOE_A_DEV_NAME]));
	if (tb[OPENTOE_A_DEV_TOM])
		snprintf(d->tom, sizeof(d->tom), "%s",
			 (char *)toe_nla_data(tb[OPENTOE_A_DEV_TOM]));
	if (tb[OPENTOE_A_DEV_IFNAME])
		snprintf(d->ifname, sizeof(d->ifname), "%s",
			 (char *)toe_nla_data(tb[OPENTOE_A_DEV_IFNAME]));
	if (tb[OPENTOE_A_DEV_TTID])
		d->ttid = nla_u32(tb[OPENTOE_A_DEV_TTID]);
	if (tb[OPENTOE_A_DEV_NCONN])
		d->nconn = nla_u32(tb[OPENTOE_A_DEV_NCONN]);
	if (tb[OPENTOE_A_DEV_TIDS_USED])
		d->tids_used = nla_u32(tb[OPENTOE_A_DEV_TIDS_USED]);
	if (tb[OPENTOE_A_DEV_TIDS_RESERVED])
		d->tids_reserved = nla_u32(tb[OPENTOE_A_DEV_TIDS_RESERVED]);
	if (tb[OPENTOE_A_DEV_TIDS_HOST])
		d->tids_host = nla_u32(tb[OPENTOE_A_DEV_TIDS_HOST]);
	if (tb[OPENTOE_A_DEV_LISTENERS])
		d->listeners = nla_u32(tb[OPENTOE_A_DEV_LISTENERS]);
	if (tb[OPENTOE_A_DEV_STIDS_RESERVED])
		d->stids_reserved = nla_u32(tb[OPENTOE_A_DEV_STIDS_RESERVED]);
	if (tb[OPENTOE_A_DEV_L2T_USED])
		d->l2t_used = nla_u32(tb[OPENTOE_A_DEV_L2T_USED]);
	if (tb[OPENTOE_A_DEV_STATS]) {
		struct nlattr *s[OPENTOE_STAT_MAX + 1];
		int i;

		toe_nla_parse(s, OPENTOE_STAT_MAX,
			      toe_nla_data(tb[OPENTOE_A_DEV_STATS]),
			      tb[OPENTOE_A_DEV_STATS]->nla_len - NLA_HDRLEN);
		for (i = 0; i <= OPENTOE_STAT_MAX; i++)
			if (s[i] && s[i]->nla_len == NLA_HDRLEN + 8)
				memcpy(&d->stats[i], toe_nla_data(s[i]), 8);
	}
}

static int dev_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *arg)
{
	struct devlist *l = arg;

	if (l->n < 256)
		fill_devinfo(&l->d[l->n++], tb);
	return 0;
}

static int dev_dump(struct nl *nl, struct devlist *l)
{
	struct toe_nlmsg m;

	l->n = 0;
	msg_init(&m, fam_id, NLM_F_DUMP, OPENTOE_CMD_DEV_GET);
	return nl_call(nl, &m, dev_cb, l);
}

static int dev_get(struct nl *nl, int index, struct devinfo *d)
{
	struct devlist *l = calloc(1, sizeof(*l));
	struct toe_nlmsg m;
	int ret;

	msg_init(&m, fam_id, 0, OPENTOE_CMD_DEV_GET);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, index);
	ret = nl_call(nl, &m, dev_cb, l);
	if (!ret && l->n != 1)
		ret = -EPROTO;
	if (!ret)
		*d = l->d[0];
	free(l);
	return ret;
}

static int dev_cmd(struct nl *nl, uint8_t cmd, int index)
{
	struct toe_nlmsg m;

	msg_init(&m, fam_id, 0, cmd);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, index);
	return nl_call(nl, &m, NULL, NULL);
}

struct tidreply {
	int tid, l2t;
};

static int tid_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *arg)
{
	struct tidreply *r = arg;

	if (tb[OPENTOE_A_TID])
		r->tid = nla_u32(tb[OPENTOE_A_TID]);
	if (tb[OPENTOE_A_L2T_INDEX])
		r->l2t = nla_u32(tb[OPENTOE_A_L2T_INDEX]);
	return 0;
}

/* A TID for 10.1.0.1:sport -> daddr:80, or -errno. */
static int tid_alloc4(struct nl *nl, int index, const char *daddr,
		      uint16_t sport, int *l2t)
{
	struct tidreply r = { -1, -1 };
	struct toe_nlmsg m;
	int ret;

	msg_init(&m, fam_id, 0, OPENTOE_CMD_TID_ALLOC);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, index);
	toe_nla_put_u32(&m, OPENTOE_A_FLOW_SADDR4, inet_addr("10.1.0.1"));
	toe_nla_put_u32(&m, OPENTOE_A_FLOW_DADDR4, inet_addr(daddr));
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_SPORT, htons(sport));
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_DPORT, htons(80));
	ret = nl_call(nl, &m, tid_cb, &r);
	if (ret)
		return ret;
	if (l2t)
		*l2t = r.l2t;
	return r.tid;
}

static int tid_alloc6(struct nl *nl, int index, const char *daddr,
		      uint16_t sport, int *l2t)
{
	struct tidreply r = { -1, -1 };
	struct in6_addr s, d;
	struct toe_nlmsg m;
	int ret;

	inet_pton(AF_INET6, "2001:db8:1::1", &s);
	inet_pton(AF_INET6, daddr, &d);
	msg_init(&m, fam_id, 0, OPENTOE_CMD_TID_ALLOC);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, index);
	toe_nla_put(&m, OPENTOE_A_FLOW_SADDR6, &s, 16);
	toe_nla_put(&m, OPENTOE_A_FLOW_DADDR6, &d, 16);
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_SPORT, htons(sport));
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_DPORT, htons(443));
	ret = nl_call(nl, &m, tid_cb, &r);
	if (ret)
		return ret;
	if (l2t)
		*l2t = r.l2t;
	return r.tid;
}

/* A reserved TID, or -errno. */
static int tid_reserve(struct nl *nl, int index)
{
	struct tidreply r = { -1, -1 };
	struct toe_nlmsg m;
	int ret;

	msg_init(&m, fam_id, 0, OPENTOE_CMD_TID_RESERVE);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, index);
	ret = nl_call(nl, &m, tid_cb, &r);
	return ret ? ret : r.tid;
}

/* Reserved TID tid bound to 10.1.0.1:sport -> daddr:80: 0 or -errno. */
static int tid_bind4(struct nl *nl, int index, int tid, const char *daddr,
		     uint16_t sport)
{
	struct tidreply r = { -1, -1 };
	struct toe_nlmsg m;
	int ret;

	msg_init(&m, fam_id, 0, OPENTOE_CMD_TID_ALLOC);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, index);
	toe_nla_put_u32(&m, OPENTOE_A_TID, tid);
	toe_nla_put_u32(&m, OPENTOE_A_FLOW_SADDR4, inet_addr("10.1.0.1"));
	toe_nla_put_u32(&m, OPENTOE_A_FLOW_DADDR4, inet_addr(daddr));
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_SPORT, htons(sport));
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_DPORT, htons(80));
	ret = nl_call(nl, &m, tid_cb, &r);
	if (!ret && r.tid != tid)
		ret = -EPROTO;
	return ret;
}

static int tid_free(struct nl *nl, int index, int tid)
{
	struct toe_nlmsg m;

	msg_init(&m, fam_id, 0, OPENTOE_CMD_TID_FREE);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, index);
	toe_nla_put_u32(&m, OPENTOE_A_TID, tid);
	return nl_call(nl, &m, NULL, NULL);
}

struct tidinfo {
	int tid, state, l2t, sport;
};

struct tidlist {
	int n;
	struct tidinfo t[64];
};

static int tidlist_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *arg)
{
	struct tidlist *l = arg;
	struct tidinfo *t;

	if (l->n >= 64 || !tb[OPENTOE_A_TID])
		return 0;
	t = &l->t[l->n++];
	t->tid = nla_u32(tb[OPENTOE_A_TID]);
	t->state = tb[OPENTOE_A_TID_STATE] ?
			   (int)nla_u32(tb[OPENTOE_A_TID_STATE]) :
			   -1;
	t->l2t = tb[OPENTOE_A_L2T_INDEX] ?
			 (int)nla_u32(tb[OPENTOE_A_L2T_INDEX]) :
			 -1;
	t->sport = tb[OPENTOE_A_FLOW_SPORT] && tb[OPENTOE_A_FLOW_DADDR4] ?
			   ntohs(*(uint16_t *)toe_nla_data(
				   tb[OPENTOE_A_FLOW_SPORT])) :
			   -1;
	return 0;
}

static int tid_dump(struct nl *nl, int index, struct tidlist *l)
{
	struct toe_nlmsg m;

	l->n = 0;
	msg_init(&m, fam_id, NLM_F_DUMP, OPENTOE_CMD_TID_GET);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, index);
	return nl_call(nl, &m, tidlist_cb, l);
}

static struct tidinfo *tid_find(struct tidlist *l, int tid)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (l->t[i].tid == tid)
			return &l->t[i];
	return NULL;
}

static int listen_cmd(struct nl *nl, uint8_t cmd, uint8_t family, uint16_t port)
{
	struct toe_nlmsg m;

	msg_init(&m, fam_id, 0, cmd);
	toe_nla_put_u8(&m, OPENTOE_A_LISTEN_FAMILY, family);
	toe_nla_put_u16(&m, OPENTOE_A_LISTEN_PORT, htons(port));
	return nl_call(nl, &m, NULL, NULL);
}

/*
 * LISTEN_START/STOP of addr:port (IPv4; NULL: the wildcard) on device
 * index (0: none given, every device); err gets the extended ACK.
 */
static int listen_dev_cmd(struct nl *nl, uint8_t cmd, int index,
			  const char *addr, uint16_t port, char *err,
			  size_t errlen)
{
	struct toe_nlmsg m;

	msg_init(&m, fam_id, 0, cmd);
	if (addr)
		toe_nla_put_u32(&m, OPENTOE_A_LISTEN_ADDR4, inet_addr(addr));
	else
		toe_nla_put_u8(&m, OPENTOE_A_LISTEN_FAMILY, AF_INET);
	toe_nla_put_u16(&m, OPENTOE_A_LISTEN_PORT, htons(port));
	if (index >= 0)
		toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, index);
	if (err)
		err[0] = 0;
	return toe_nlmsg_call(nl->fd, &nl->seq, &m, OPENTOE_A_MAX, NULL, NULL,
			      "listen", err, errlen);
}

struct lsn {
	int dev, tid, family, port;
	char addr[INET6_ADDRSTRLEN];
};

struct lsnlist {
	int n;
	struct lsn l[80];
};

static int lsn_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *arg)
{
	struct lsnlist *l = arg;
	struct lsn *e;

	(void)nh;
	if (l->n >= 80 || !tb[OPENTOE_A_TID])
		return 0;
	e = &l->l[l->n++];
	e->dev = tb[OPENTOE_A_DEV_INDEX] ?
			 (int)nla_u32(tb[OPENTOE_A_DEV_INDEX]) :
			 -1;
	e->tid = nla_u32(tb[OPENTOE_A_TID]);
	e->family =
		tb[OPENTOE_A_LISTEN_FAMILY] ?
			*(uint8_t *)toe_nla_data(tb[OPENTOE_A_LISTEN_FAMILY]) :
			-1;
	e->port = tb[OPENTOE_A_LISTEN_PORT] ?
			  ntohs(*(uint16_t *)toe_nla_data(
				  tb[OPENTOE_A_LISTEN_PORT])) :
			  -1;
	strcpy(e->addr, "?");
	if (tb[OPENTOE_A_LISTEN_ADDR4])
		inet_ntop(AF_INET, toe_nla_data(tb[OPENTOE_A_LISTEN_ADDR4]),
			  e->addr, sizeof(e->addr));
	else if (tb[OPENTOE_A_LISTEN_ADDR6])
		inet_ntop(AF_INET6, toe_nla_data(tb[OPENTOE_A_LISTEN_ADDR6]),
			  e->addr, sizeof(e->addr));
	return 0;
}

/* LISTEN_GET of device index (0: every device). */
static int lsn_dump(struct nl *nl, int index, struct lsnlist *l)
{
	struct toe_nlmsg m;

	l->n = 0;
	msg_init(&m, fam_id, NLM_F_DUMP, OPENTOE_CMD_LISTEN_GET);
	if (index)
		toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, index);
	return nl_call(nl, &m, lsn_cb, l);
}

struct l2e {
	int dev, idx, family, state, refcnt, has_ll;
	unsigned char addr[16], ll[6];
};

struct l2tlist {
	int n;
	struct l2e e[512];
};

static int l2t_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *arg)
{
	struct l2tlist *l = arg;
	struct l2e *e;

	if (l->n >= 512)
		return 0;
	e = &l->e[l->n++];
	memset(e, 0, sizeof(*e));
	if (tb[OPENTOE_A_DEV_INDEX])
		e->dev = nla_u32(tb[OPENTOE_A_DEV_INDEX]);
	if (tb[OPENTOE_A_L2T_INDEX])
		e->idx = nla_u32(tb[OPENTOE_A_L2T_INDEX]);
	if (tb[OPENTOE_A_L2T_ADDR4]) {
		e->family = AF_INET;
		memcpy(e->addr, toe_nla_data(tb[OPENTOE_A_L2T_ADDR4]), 4);
	}
	if (tb[OPENTOE_A_L2T_ADDR6]) {
		e->family = AF_INET6;
		memcpy(e->addr, toe_nla_data(tb[OPENTOE_A_L2T_ADDR6]), 16);
	}
	if (tb[OPENTOE_A_L2T_LLADDR]) {
		e->has_ll = 1;
		memcpy(e->ll, toe_nla_data(tb[OPENTOE_A_L2T_LLADDR]), 6);
	}
	if (tb[OPENTOE_A_L2T_STATE])
		e->state = *(uint16_t *)toe_nla_data(tb[OPENTOE_A_L2T_STATE]);
	if (tb[OPENTOE_A_L2T_REFCNT])
		e->refcnt = nla_u32(tb[OPENTOE_A_L2T_REFCNT]);
	return 0;
}

static int l2t_dump(struct nl *nl, int index, struct l2tlist *l)
{
	struct toe_nlmsg m;

	l->n = 0;
	msg_init(&m, fam_id, NLM_F_DUMP, OPENTOE_CMD_L2T_GET);
	if (index)
		toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, index);
	return nl_call(nl, &m, l2t_cb, l);
}

static struct l2e *l2t_find4(struct l2tlist *l, int dev, const char *addr)
{
	uint32_t a = inet_addr(addr);
	int i;

	for (i = 0; i < l->n; i++)
		if (l->e[i].dev == dev && l->e[i].family == AF_INET &&
		    !memcmp(l->e[i].addr, &a, 4))
			return &l->e[i];
	return NULL;
}

static bool ll_is(struct l2e *e, unsigned char last)
{
	static const unsigned char base[5] = { 2, 0, 0, 0, 0 };

	return e && e->has_ll && !memcmp(e->ll, base, 5) && e->ll[5] == last;
}

/* ---- events ---- */

static int ev_open(struct nl *ev)
{
	int ret = nl_open(ev);
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };

	if (ret)
		return ret;
	setsockopt(ev->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (setsockopt(ev->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
		       &mcgrp_events, sizeof(mcgrp_events)) < 0) {
		ret = -errno;
		close(ev->fd);
	}
	return ret;
}

/* Waits (2 s at most) for a notification @cmd, optionally for @index. */
static bool ev_wait(struct nl *ev, uint8_t cmd, int index, struct nlattr **want,
		    void *out, size_t outlen)
{
	static __thread char buf[65536];
	double end = now() + 2;

	while (now() < end) {
		ssize_t n = recv(ev->fd, buf, sizeof(buf), 0);
		struct nlmsghdr *nh;

		if (n < 0)
			continue;
		for (nh = (void *)buf; NLMSG_OK(nh, n);
		     nh = NLMSG_NEXT(nh, n)) {
			struct genlmsghdr *g = NLMSG_DATA(nh);
			struct nlattr *tb[OPENTOE_A_MAX + 1];

			if (nh->nlmsg_type != fam_id || g->cmd != cmd)
				continue;
			toe_nla_parse(
				tb, OPENTOE_A_MAX, (char *)g + GENL_HDRLEN,
				nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN));
			if (index &&
			    (!tb[OPENTOE_A_DEV_INDEX] ||
			     (int)nla_u32(tb[OPENTOE_A_DEV_INDEX]) != index))
				continue;
			if (out && outlen)
				memcpy(out, nh,
				       nh->nlmsg_len < outlen ? nh->nlmsg_len :
								outlen);
			(void)want;
			return true;
		}
	}
	return false;
}

/* ---- tests ---- */

static struct nl nl;

static void test_family(void)
{
	int ret = resolve_family(&nl);

	tap(!ret && fam_id && mcgrp_events,
	    "genl family \"%s\" and group \"%s\" resolve (id %u, group %u)",
	    OPENTOE_GENL_NAME, OPENTOE_GENL_MCGRP_EVENTS, fam_id, mcgrp_events);
}

struct tomlist {
	int n;
	char name[4][OPENTOE_TOM_NAMSIZ];
	uint32_t ids[4][8];
	int nids[4];
};

static int tom_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *arg)
{
	struct tomlist *l = arg;
	struct nlattr *a;
	int len, k;

	if (l->n >= 4 || !tb[OPENTOE_A_TOM_NAME])
		return 0;
	k = l->n++;
	snprintf(l->name[k], sizeof(l->name[k]), "%s",
		 (char *)toe_nla_data(tb[OPENTOE_A_TOM_NAME]));
	if (!tb[OPENTOE_A_TOM_IDS])
		return 0;
	a = toe_nla_data(tb[OPENTOE_A_TOM_IDS]);
	len = tb[OPENTOE_A_TOM_IDS]->nla_len - NLA_HDRLEN;
	for (; len >= NLA_HDRLEN && l->nids[k] < 8;
	     len -= NLA_ALIGN(a->nla_len),
	     a = (void *)((char *)a + NLA_ALIGN(a->nla_len)))
		if (a->nla_type == OPENTOE_A_TOM_ID)
			l->ids[k][l->nids[k]++] = nla_u32(a);
	return 0;
}

static void test_tom_dump(void)
{
	struct tomlist l = { 0 };
	struct toe_nlmsg m;
	int ret;

	msg_init(&m, fam_id, NLM_F_DUMP, OPENTOE_CMD_TOM_GET);
	ret = nl_call(&nl, &m, tom_cb, &l);
	tap(!ret && l.n == 1 && !strcmp(l.name[0], "chelsio_tom") &&
		    l.nids[0] == 3 && l.ids[0][0] == OPENTOE_ID_CHELSIO_T1 &&
		    l.ids[0][1] == OPENTOE_ID_CHELSIO_T1C &&
		    l.ids[0][2] == OPENTOE_ID_CHELSIO_T3,
	    "TOM dump: chelsio_tom with ids T1, T1C, T3 (ret %d, n %d)", ret,
	    l.n);
}

static void test_create_basic(void)
{
	char proc[4096], line[64];
	struct devinfo d = { 0 };
	int idx, ret;
	struct nl ev;
	bool evok = false;

	ret = ev_open(&ev);
	tap(!ret, "subscribe to the events group (%d)", ret);

	ret = sim_new(1, "veth0", OPENTOE_ID_CHELSIO_T3, 4, NULL);
	idx = sim_index(1);
	tap(!ret && idx > 0,
	    "new_device 1 on veth0, T3, nconn 4 (ret %d, index %d)", ret, idx);
	ret = dev_get(&nl, idx, &d);
	tap(!ret && !strcmp(d.name, "toe0") && !strcmp(d.tom, "chelsio_tom") &&
		    !strcmp(d.ifname, "veth0") && d.nconn == 4 &&
		    d.ttid == OPENTOE_ID_CHELSIO_T3 && d.tids_used == 0,
	    "DEV_GET: toe0 attached to chelsio_tom on veth0 (ret %d, %s, %s)",
	    ret, d.name, d.tom);
	read_file("/proc/net/toe/devices", proc, sizeof(proc));
	snprintf(line, sizeof(line), "%-16s %-20s %s\n", "toe0", "chelsio_tom",
		 "veth0");
	tap(strstr(proc,
		   "Device           Offload Module       Interfaces\n") &&
		    strstr(proc, line),
	    "/proc/net/toe/devices in the patch's format");
	if (!ret)
		evok = ev_wait(&ev, OPENTOE_CMD_DEV_NEW_NTF, idx, NULL, NULL,
			       0);
	tap(evok, "DEV_NEW_NTF event for the new device");
	close(ev.fd);
}

static void test_templates(void)
{
	int i1, i2, i3, ret, ok;
	struct devinfo d1, d2;
	char name[32];

	ret = sim_new(2, "veth0", 3, 4, "chtoe%d");
	ret |= sim_new(3, "veth0", 3, 4, "chtoe%d");
	i1 = sim_index(2);
	i2 = sim_index(3);
	ok = !ret && !dev_get(&nl, i1, &d1) && !dev_get(&nl, i2, &d2);
	tap(ok && !strcmp(d1.name, "chtoe0") && !strcmp(d2.name, "chtoe1"),
	    "template chtoe%%d expands to chtoe0, chtoe1");
	tap(i1 > 0 && i2 > i1 && i1 != sim_index(1), "indexes unique (%d %d)",
	    i1, i2);
	ret = sim_new(4, "veth0", 3, 4, "fixedname");
	tap(!ret, "template without %%d: fixedname");
	ret = sim_new(5, "veth0", 3, 4, "fixedname");
	tap(ret == -EEXIST, "same fixed name again refused: EEXIST (%d)", ret);
	ret = sim_new(5, "veth0", 3, 4, "bad%s");
	tap(ret == -EINVAL, "template bad%%s refused (%d)", ret);
	ret = sim_new(5, "veth0", 3, 4, "two%d%d");
	tap(ret == -EINVAL, "template with two %%d refused (%d)", ret);
	ret = sim_new(5, "veth0", 3, 4, "abcdefghijklmnopq%d");
	tap(ret == -EINVAL, "template longer than TOENAMSIZ refused (%d)", ret);
	ret = sim_new(5, "veth0", 3, 4, "a/%d");
	tap(ret == -EINVAL, "template with / refused (%d)", ret);
	ret = sim_new(5, "abcdefghij%d", 3, 4, "zz%d");
	tap(ret == -ENODEV, "unknown net_device refused: ENODEV (%d)", ret);
	ret = sim_new(5, "veth0", 0, 4, NULL);
	tap(ret == -EINVAL, "type id 0 refused (%d)", ret);
	ret = sim_new(5, "veth0", 3, 0, NULL);
	tap(ret == -EINVAL, "nconn 0 refused (%d)", ret);
	ret = sim_new(2, "veth0", 3, 4, NULL);
	tap(ret == -EEXIST, "duplicate sim id refused (%d)", ret);
	tap(sim_index(5) < 0, "no device left behind by the refusals");

	/* chtoe0 is freed and reused as a name, not as an index */
	ret = sim_del(2);
	ret |= sim_new(2, "veth0", 3, 4, "chtoe%d");
	i3 = sim_index(2);
	ok = !ret && !dev_get(&nl, i3, &d1);
	snprintf(name, sizeof(name), "%s", ok ? d1.name : "");
	tap(ok && !strcmp(name, "chtoe0") && i3 > i2,
	    "after delete: name chtoe0 reused, index not (%d > %d)", i3, i2);
	ret = sim_del(2) | sim_del(3) | sim_del(4);
	tap(!ret, "del_device 2, 3, 4");
	tap(sim_del(4) == -ENOENT, "del_device of a gone id: ENOENT");
}

static void test_attach(void)
{
	int i, idx, ret, bad = 0;
	struct devinfo d = { 0 };

	ret = sim_new(10, "veth0", 99, 4, "unk%d");
	idx = sim_index(10);
	tap(!ret && !dev_get(&nl, idx, &d) && !d.tom[0],
	    "unknown type id 99: registered, no TOM attached");
	ret = dev_cmd(&nl, OPENTOE_CMD_DEV_ATTACH, idx);
	tap(ret == -ENOPROTOOPT,
	    "attach with unknown type id: ENOPROTOOPT (%d)", ret);
	ret = tid_alloc4(&nl, idx, "10.1.0.2", 1000, NULL);
	tap(ret == -ENOPROTOOPT, "TID_ALLOC without TOM: ENOPROTOOPT (%d)",
	    ret);
	tap(dev_cmd(&nl, OPENTOE_CMD_DEV_DETACH, idx) == -ENOTCONN,
	    "detach without TOM: ENOTCONN");
	sim_del(10);

	for (i = OPENTOE_ID_CHELSIO_T1; i <= OPENTOE_ID_CHELSIO_T3; i++) {
		ret = sim_new(10 + i, "veth0", i, 4, "id%d");
		idx = sim_index(10 + i);
		tap(!ret && !dev_get(&nl, idx, &d) &&
			    !strcmp(d.tom, "chelsio_tom"),
		    "type id %d attaches", i);
		sim_del(10 + i);
	}

	ret = sim_new(20, "veth0", 3, 4, NULL);
	idx = sim_index(20);
	for (i = 0; i < 50; i++) {
		if (dev_cmd(&nl, OPENTOE_CMD_DEV_DETACH, idx) ||
		    dev_get(&nl, idx, &d) || d.tom[0] ||
		    dev_cmd(&nl, OPENTOE_CMD_DEV_DETACH, idx) != -ENOTCONN ||
		    dev_cmd(&nl, OPENTOE_CMD_DEV_ATTACH, idx) ||
		    dev_cmd(&nl, OPENTOE_CMD_DEV_ATTACH, idx) != -EALREADY ||
		    dev_get(&nl, idx, &d) || strcmp(d.tom, "chelsio_tom"))
			bad++;
	}
	tap(!ret && !bad, "50 detach/attach cycles (%d bad)", bad);

	dev_cmd(&nl, OPENTOE_CMD_DEV_DETACH, idx);
	sim_knob(20, "fail_attach", 1);
	ret = dev_cmd(&nl, OPENTOE_CMD_DEV_ATTACH, idx);
	tap(ret == -EIO && !dev_get(&nl, idx, &d) && !d.tom[0],
	    "fail_attach: attach fails with EIO, device stays detached (%d)",
	    ret);
	sim_knob(20, "fail_attach", 0);
	ret = dev_cmd(&nl, OPENTOE_CMD_DEV_ATTACH, idx);
	tap(!ret, "fail_attach cleared: attach succeeds (%d)", ret);
	sim_del(20);

	for (i = 0, bad = 0; i < 20; i++) {
		if (sim_new(21, "veth0", 3, 8, NULL) || sim_del(21))
			bad++;
	}
	tap(!bad, "20 register/unregister cycles (%d bad)", bad);
}

static void test_tids(void)
{
	int idx, t[5], i, ret, l2t, both;
	struct tidlist tl;
	bool distinct = true;
	struct devinfo d = { 0 };
	double t0;

	sh("/usr/sbin/ip neigh replace 10.1.0.2 lladdr 02:00:00:00:00:02 nud permanent dev veth0");
	idx = sim_index(1);
	for (i = 0; i < 4; i++)
		t[i] = tid_alloc4(&nl, idx, "10.1.0.2", 2000 + i, &l2t);
	for (i = 0; i < 4; i++)
		if (t[i] < 0 || t[i] >= 4 || (i && t[i] == t[i - 1]))
			distinct = false;
	tap(distinct, "4 TIDs on nconn 4: %d %d %d %d", t[0], t[1], t[2], t[3]);
	ret = tid_alloc4(&nl, idx, "10.1.0.2", 2010, NULL);
	tap(ret == -ENOSPC, "5th TID: ENOSPC (%d)", ret);
	ret = dev_get(&nl, idx, &d);
	tap(!ret && d.tids_used == 4 && d.stats[OPENTOE_STAT_NO_TID] == 1 &&
		    d.stats[OPENTOE_STAT_CONNECTS] == 4 && d.l2t_used == 1 &&
		    sim_counter(1, "conns") == 4,
	    "counters: tids_used 4, connects 4, no_tid 1, l2t_used 1");

	ret = tid_dump(&nl, idx, &tl);
	for (i = 0, both = 0; i < 4; i++) {
		struct tidinfo *ti = tid_find(&tl, t[i]);

		both += ti && ti->sport == 2000 + i && ti->l2t == l2t &&
			ti->state ==
				(OPENTOE_TID_F_HOST | OPENTOE_TID_F_DEVICE);
	}
	tap(!ret && tl.n == 4 && both == 4,
	    "TID_GET dump: 4 TIDs with their flows, held by host and device");

	ret = dev_cmd(&nl, OPENTOE_CMD_DEV_DETACH, idx);
	tap(ret == -EBUSY, "detach with connections: EBUSY (%d)", ret);

	/* immediate release */
	ret = tid_free(&nl, idx, t[0]);
	tap(!ret, "TID_FREE %d (%d)", t[0], ret);
	ret = tid_free(&nl, idx, t[0]);
	tap(ret == -ENOENT, "TID_FREE twice: ENOENT (%d)", ret);
	t0 = now();
	do {
		ret = tid_alloc4(&nl, idx, "10.1.0.2", 2020, NULL);
		if (ret == -ENOSPC)
			msleep(20);
	} while (ret == -ENOSPC && now() - t0 < 2);
	tap(ret >= 0, "TID reused once the device released it (%d)", ret);
	t[0] = ret;

	/* delayed release: the TID stays the device's meanwhile */
	sim_knob(1, "release_delay_ms", 600);
	ret = tid_free(&nl, idx, t[1]);
	ret |= tid_alloc4(&nl, idx, "10.1.0.2", 2030, NULL) != -ENOSPC;
	tap(!ret && !dev_get(&nl, idx, &d) && d.tids_used == 4,
	    "release_delay_ms 600: freed TID still held by the device");
	ret = tid_dump(&nl, idx, &tl);
	tap(!ret && tid_find(&tl, t[1]) &&
		    tid_find(&tl, t[1])->state == OPENTOE_TID_F_DEVICE,
	    "TID_GET shows it held by the device only");
	t0 = now();
	do {
		ret = tid_alloc4(&nl, idx, "10.1.0.2", 2040, NULL);
		if (ret == -ENOSPC)
			msleep(50);
	} while (ret == -ENOSPC && now() - t0 < 3);
	tap(ret >= 0 && now() - t0 > 0.3,
	    "TID free again after the device's delayed release (%.2f s)",
	    now() - t0);
	t[1] = ret;
	sim_knob(1, "release_delay_ms", 0);

	for (i = 0; i < 4; i++)
		tid_free(&nl, idx, t[i]);
	t0 = now();
	while (!dev_get(&nl, idx, &d) && d.tids_used && now() - t0 < 2)
		msleep(20);
	tap(d.tids_used == 0 && d.l2t_used == 0 &&
		    d.stats[OPENTOE_STAT_RELEASES] ==
			    d.stats[OPENTOE_STAT_CONNECTS],
	    "all TIDs and the L2T entry released (releases %llu)",
	    (unsigned long long)d.stats[OPENTOE_STAT_RELEASES]);

	sim_knob(1, "fail_connect", 1);
	ret = tid_alloc4(&nl, idx, "10.1.0.2", 2050, NULL);
	tap(ret == -EIO && !dev_get(&nl, idx, &d) && d.tids_used == 0 &&
		    d.l2t_used == 0 && d.stats[OPENTOE_STAT_CONNECT_FAILS] == 1,
	    "fail_connect: EIO, TID and L2T entry rolled back (%d)", ret);
	sim_knob(1, "fail_connect", 0);

	ret = tid_alloc4(&nl, idx, "10.2.0.9", 2060, NULL);
	tap(ret == -ENETUNREACH, "no route through veth0: ENETUNREACH (%d)",
	    ret);
	ret = tid_alloc4(&nl, idx, "10.1.0.1", 2070, NULL);
	tap(ret == -ENETUNREACH, "local destination: ENETUNREACH (%d)", ret);
}

/*
 * TID_RESERVE (the datapath's pools): reserved TIDs count apart from used
 * ones, bind to a flow with TID_ALLOC + TID, stay reserved when the device
 * refuses, free at once, and leave a non-forced detach free to go.
 */
static void test_reserve(void)
{
	int idx = sim_index(1), t[5], i, ret, st = -1;
	struct devinfo d = { 0 };
	struct tidlist tl;
	bool distinct = true;
	double t0;

	/* what test_tids left: every TID released */
	t0 = now();
	while (!dev_get(&nl, idx, &d) && d.tids_used && now() - t0 < 2)
		msleep(20);
	for (i = 0; i < 4; i++) {
		t[i] = tid_reserve(&nl, idx);
		if (t[i] < 0 || t[i] >= 4 || (i && t[i] == t[i - 1]))
			distinct = false;
	}
	tap(distinct, "TID_RESERVE: 4 TIDs on nconn 4: %d %d %d %d", t[0], t[1],
	    t[2], t[3]);
	ret = tid_reserve(&nl, idx);
	tap(ret == -ENOSPC, "5th TID_RESERVE: ENOSPC (%d)", ret);
	ret = tid_alloc4(&nl, idx, "10.1.0.2", 2100, NULL);
	tap(ret == -ENOSPC, "TID_ALLOC without TID: ENOSPC, all reserved (%d)",
	    ret);
	ret = dev_get(&nl, idx, &d);
	tap(!ret && d.tids_used == 0 && d.tids_reserved == 4 &&
		    d.stats[OPENTOE_STAT_RESERVES] >= 4,
	    "DEV_GET: tids_used 0, tids_reserved 4 (%u, %u)", d.tids_used,
	    d.tids_reserved);
	ret = tid_dump(&nl, idx, &tl);
	if (!ret && tid_find(&tl, t[0]))
		st = tid_find(&tl, t[0])->state;
	tap(!ret && tl.n == 4 &&
		    st == (OPENTOE_TID_F_HOST | OPENTOE_TID_F_RESERVED) &&
		    tid_find(&tl, t[0])->sport == -1,
	    "TID_GET: reserved TIDs are HOST|RESERVED, with no flow (state %d)",
	    st);

	ret = tid_bind4(&nl, idx, t[0], "10.1.0.2", 2101);
	tap(!ret && !dev_get(&nl, idx, &d) && d.tids_used == 1 &&
		    d.tids_reserved == 3 && d.l2t_used == 1,
	    "TID_ALLOC + TID binds reserved TID %d: used 1, reserved 3 (%d)",
	    t[0], ret);
	ret = tid_bind4(&nl, idx, t[0], "10.1.0.2", 2102);
	tap(ret == -ENOENT, "binding it again: ENOENT (%d)", ret);
	ret = tid_bind4(&nl, idx, 77, "10.1.0.2", 2103);
	tap(ret == -ENOENT, "binding a TID never reserved: ENOENT (%d)", ret);
	ret = tid_bind4(&nl, idx, t[1], "10.2.0.9", 2104);
	tap(ret == -ENETUNREACH && !dev_get(&nl, idx, &d) &&
		    d.tids_reserved == 3,
	    "bound to a flow routed elsewhere: ENETUNREACH, TID %d still reserved (%d)",
	    t[1], ret);
	sim_knob(1, "fail_connect", 1);
	ret = tid_bind4(&nl, idx, t[1], "10.1.0.2", 2105);
	sim_knob(1, "fail_connect", 0);
	tap(ret == -EIO && !dev_get(&nl, idx, &d) && d.tids_used == 1 &&
		    d.tids_reserved == 3 && d.l2t_used == 1,
	    "the device refuses: EIO, still reserved, no L2T entry taken (%d)",
	    ret);
	ret = tid_bind4(&nl, idx, t[1], "10.1.0.2", 2106);
	tap(!ret, "... and it binds afterwards (%d)", ret);

	ret = tid_free(&nl, idx, t[2]);
	if (!ret)
		ret = dev_get(&nl, idx, &d);
	tap(!ret && d.tids_reserved == 1 && d.tids_used == 2 &&
		    d.tids_host == 3,
	    "TID_FREE of a reserved TID: free at once (reserved 1, used 2, the host's 3: %u)",
	    d.tids_host);
	ret = tid_reserve(&nl, idx);
	tap(ret == t[2], "reserved again at once: TID %d (%d)", t[2], ret);
	t[2] = ret;

	ret = dev_cmd(&nl, OPENTOE_CMD_DEV_DETACH, idx);
	tap(ret == -EBUSY, "detach with bound TIDs: EBUSY (%d)", ret);
	tid_free(&nl, idx, t[0]);
	tid_free(&nl, idx, t[1]);
	ret = dev_get(&nl, idx, &d);
	tap(!ret && d.tids_host == 2,
	    "TID_FREE of the bound ones: the host's TIDs 2 (the reserved ones) at once, whatever the device still holds (%u)",
	    d.tids_host);
	t0 = now();
	while (!dev_get(&nl, idx, &d) && d.tids_used && now() - t0 < 2)
		msleep(20);
	ret = dev_cmd(&nl, OPENTOE_CMD_DEV_DETACH, idx);
	tap(!ret, "detach with reserved TIDs only: they go with it (%d)", ret);
	ret = dev_cmd(&nl, OPENTOE_CMD_DEV_ATTACH, idx);
	tap(!ret && !dev_get(&nl, idx, &d) && d.tids_used == 0 &&
		    d.tids_reserved == 0 && d.l2t_used == 0,
	    "attached again: no TID used or reserved, no L2T entry (%d)", ret);
}

static void test_l2t(void)
{
	struct l2tlist *l = calloc(1, sizeof(*l));
	int idx = sim_index(1), tid, tid6, tidgw, l2t, ret;
	long writes;
	struct devinfo d = { 0 };
	struct l2e *e;
	struct nl ev;
	double t0;
	bool got;

	ev_open(&ev);
	tid = tid_alloc4(&nl, idx, "10.1.0.2", 3000, &l2t);
	ret = l2t_dump(&nl, idx, l);
	e = l2t_find4(l, idx, "10.1.0.2");
	tap(tid >= 0 && !ret && e && e->idx == l2t && ll_is(e, 2) &&
		    (e->state & NUD_PERMANENT) && e->refcnt == 1,
	    "L2T entry for 10.1.0.2 with 02:00:00:00:00:02 from the neighbour table");

	writes = sim_counter(1, "l2t_writes");
	sh("/usr/sbin/ip neigh replace 10.1.0.2 lladdr 02:00:00:00:00:03 nud permanent dev veth0");
	t0 = now();
	do {
		l2t_dump(&nl, idx, l);
		e = l2t_find4(l, idx, "10.1.0.2");
		if (!ll_is(e, 3))
			msleep(20);
	} while (!ll_is(e, 3) && now() - t0 < 2);
	tap(ll_is(e, 3), "neighbour change reflected in the L2T (netevent)");
	got = ev_wait(&ev, OPENTOE_CMD_L2T_CHANGE_NTF, idx, NULL, NULL, 0);
	tap(got, "L2T_CHANGE_NTF event");
	ret = dev_get(&nl, idx, &d);
	tap(sim_counter(1, "l2t_writes") > writes && !ret &&
		    d.stats[OPENTOE_STAT_L2T_UPDATES] >= 1,
	    "L2T write reached the device; l2t_updates %llu",
	    (unsigned long long)d.stats[OPENTOE_STAT_L2T_UPDATES]);

	sh("/usr/sbin/ip neigh del 10.1.0.2 dev veth0");
	t0 = now();
	do {
		l2t_dump(&nl, idx, l);
		e = l2t_find4(l, idx, "10.1.0.2");
		if (e && (e->state & NUD_VALID))
			msleep(20);
	} while (e && (e->state & NUD_VALID) && now() - t0 < 2);
	tap(e && !(e->state & NUD_VALID) && !e->has_ll,
	    "neighbour deleted: L2T entry invalid (state 0x%x)",
	    e ? e->state : -1);
	sh("/usr/sbin/ip neigh replace 10.1.0.2 lladdr 02:00:00:00:00:02 nud permanent dev veth0");

	sh("/usr/sbin/ip neigh replace 10.1.0.254 lladdr 02:00:00:00:00:fe nud permanent dev veth0");
	tidgw = tid_alloc4(&nl, idx, "10.9.1.1", 3001, NULL);
	l2t_dump(&nl, idx, l);
	e = l2t_find4(l, idx, "10.1.0.254");
	tap(tidgw >= 0 && ll_is(e, 0xfe),
	    "routed flow uses the gateway's L2T entry (10.1.0.254)");

	sh("/usr/sbin/ip -6 neigh replace 2001:db8:1::2 lladdr 02:00:00:00:00:62 nud permanent dev veth0");
	tid6 = tid_alloc6(&nl, idx, "2001:db8:1::2", 3002, &l2t);
	l2t_dump(&nl, idx, l);
	e = NULL;
	for (ret = 0; ret < l->n; ret++)
		if (l->e[ret].family == AF_INET6 && l->e[ret].idx == l2t)
			e = &l->e[ret];
	tap(tid6 >= 0 && ll_is(e, 0x62),
	    "IPv6 flow: TID %d, L2T entry with 02:00:00:00:00:62", tid6);

	tid_free(&nl, idx, tid);
	tid_free(&nl, idx, tidgw);
	tid_free(&nl, idx, tid6);
	t0 = now();
	do {
		l2t_dump(&nl, idx, l);
		if (l->n)
			msleep(20);
	} while (l->n && now() - t0 < 2);
	tap(l->n == 0, "L2T empty once its TIDs are gone (%d left)", l->n);
	close(ev.fd);
	free(l);
}

/* T1: 64 L2T entries; unresolved next hops take one each. */
static void test_l2t_full(void)
{
	struct l2tlist *l = calloc(1, sizeof(*l));
	int idx, i, ok = 0, tids[66], ret, shared;
	struct devinfo d = { 0 };
	char addr[32];
	struct l2e *e;

	ret = sim_new(80, "veth0", OPENTOE_ID_CHELSIO_T1, 128, "full%d");
	idx = sim_index(80);
	for (i = 0; i < 64; i++) {
		snprintf(addr, sizeof(addr), "10.1.0.%d", 100 + i);
		tids[i] = tid_alloc4(&nl, idx, addr, 10000 + i, NULL);
		ok += tids[i] >= 0;
	}
	tap(!ret && ok == 64, "T1: 64 flows to 64 next hops (%d ok)", ok);
	ret = tid_alloc4(&nl, idx, "10.1.0.200", 10100, NULL);
	tap(ret == -ENOSPC && !dev_get(&nl, idx, &d) &&
		    d.stats[OPENTOE_STAT_NO_L2T] == 1 && d.tids_used == 64,
	    "65th next hop: L2T full, ENOSPC, TID given back (%d)", ret);
	shared = tid_alloc4(&nl, idx, "10.1.0.100", 10101, NULL);
	l2t_dump(&nl, idx, l);
	e = l2t_find4(l, idx, "10.1.0.100");
	tap(shared >= 0 && e && e->refcnt == 2 && !e->has_ll &&
		    !(e->state & NUD_VALID),
	    "known next hop shares its entry (refcnt %d), unresolved (state 0x%x)",
	    e ? e->refcnt : -1, e ? e->state : -1);
	for (i = 0; i < 64; i++)
		tid_free(&nl, idx, tids[i]);
	tid_free(&nl, idx, shared);
	sim_del(80);
	free(l);
}

static void test_listeners(void)
{
	int idx = sim_index(1), idx2, idx3, ret;
	struct devinfo d = { 0 };

	/* a device that is detached when the listener starts */
	ret = sim_new(30, "veth0", 1, 4, "late%d");
	idx2 = sim_index(30);
	ret |= dev_cmd(&nl, OPENTOE_CMD_DEV_DETACH, idx2);
	tap(!ret, "second device, detached (%d)", ret);

	ret = listen_cmd(&nl, OPENTOE_CMD_LISTEN_START, AF_INET, 8080);
	tap(!ret && !dev_get(&nl, idx, &d) && d.listeners == 1 &&
		    sim_counter(1, "listens") == 1,
	    "LISTEN_START *:8080 reaches toe0");
	ret = listen_cmd(&nl, OPENTOE_CMD_LISTEN_START, AF_INET, 8080);
	tap(ret == -EEXIST, "same listener again: EEXIST (%d)", ret);
	ret = dev_cmd(&nl, OPENTOE_CMD_DEV_DETACH, idx);
	tap(ret == -EBUSY, "detach with a listener: EBUSY (%d)", ret);
	/* one asked of toe0 alone: never replayed on another device */
	ret = listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_START, idx, NULL, 8081,
			     NULL, 0);
	ret |= dev_get(&nl, idx, &d);
	tap(!ret && d.listeners == 2,
	    "LISTEN_START *:8081 on toe0 alone (%d, toe0 has %d)", ret,
	    d.listeners);

	ret = dev_cmd(&nl, OPENTOE_CMD_DEV_ATTACH, idx2);
	ret |= dev_get(&nl, idx2, &d);
	tap(!ret && d.listeners == 1 && sim_counter(30, "listens") == 1,
	    "a device attached late gets the listener for every device replayed, not toe0's own (%d, it has %d)",
	    ret, d.listeners);
	ret = sim_new(31, "veth0", 2, 4, "late%d");
	idx3 = sim_index(31);
	ret |= dev_get(&nl, idx3, &d);
	tap(!ret && d.listeners == 1,
	    "a device registered late gets the listener replayed, not toe0's own (%d, it has %d)",
	    ret, d.listeners);
	ret = listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_STOP, idx, NULL, 8081,
			     NULL, 0);
	ret |= dev_get(&nl, idx, &d);
	tap(!ret && d.listeners == 1,
	    "LISTEN_STOP *:8081 on toe0 (%d, toe0 has %d)", ret, d.listeners);

	ret = listen_cmd(&nl, OPENTOE_CMD_LISTEN_STOP, AF_INET, 8080);
	tap(!ret && !dev_get(&nl, idx, &d) && d.listeners == 0 &&
		    !dev_get(&nl, idx2, &d) && d.listeners == 0 &&
		    sim_counter(1, "listens") == 0 &&
		    sim_counter(30, "listens") == 0,
	    "LISTEN_STOP reaches every device");
	ret = listen_cmd(&nl, OPENTOE_CMD_LISTEN_STOP, AF_INET, 8080);
	tap(ret == -ENOENT, "stop an unknown listener: ENOENT (%d)", ret);
	ret = dev_cmd(&nl, OPENTOE_CMD_DEV_DETACH, idx2);
	tap(!ret, "detach once the listener is gone (%d)", ret);
	sim_del(30);
	sim_del(31);
}

/* LISTEN_START/STOP with DEV_INDEX: one device's server TIDs; LISTEN_GET. */
static void test_listeners_dev(void)
{
	int idx = sim_index(1), idx2, i, ret, tids;
	struct devinfo d = { 0 };
	struct lsnlist *l = calloc(1, sizeof(*l));
	char err[512];

	ret = listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_START, idx, "10.1.0.1",
			     9000, err, sizeof(err));
	ret = ret ? ret : lsn_dump(&nl, 0, l);
	tap(!ret && l->n == 1 && l->l[0].dev == idx &&
		    l->l[0].family == AF_INET &&
		    !strcmp(l->l[0].addr, "10.1.0.1") && l->l[0].port == 9000 &&
		    l->l[0].tid >= 0 && !dev_get(&nl, idx, &d) &&
		    d.listeners == 1 && sim_counter(1, "listens") == 1,
	    "LISTEN_START 10.1.0.1:9000 DEV_INDEX %d: LISTEN_GET shows it with server TID %d (%d)",
	    idx, l->n ? l->l[0].tid : -1, ret);
	ret = listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_START, idx, "10.1.0.1",
			     9000, err, sizeof(err));
	tap(ret == -EEXIST && strstr(err, "already reaches"),
	    "same listener on the same device: EEXIST with extack (%d: %s)",
	    ret, err);
	ret = listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_START, -1, "10.1.0.1",
			     9000, err, sizeof(err));
	tap(ret == -EEXIST && strstr(err, "already reaches"),
	    "the same address for every device: EEXIST (%d: %s)", ret, err);
	ret = listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_START, 0, "10.1.0.1", 9001,
			     err, sizeof(err));
	tap(ret == -ERANGE && strstr(err, "out of range"),
	    "DEV_INDEX 0: ERANGE with extack (%d: %s)", ret, err);
	ret = listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_START, 999999, "10.1.0.1",
			     9001, err, sizeof(err));
	tap(ret == -ENODEV && strstr(err, "no such TOE device"),
	    "unknown DEV_INDEX: ENODEV with extack (%d: %s)", ret, err);
	ret = listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_START, idx, "10.1.0.1", 0,
			     err, sizeof(err));
	tap(ret == -EINVAL && strstr(err, "port 0"),
	    "port 0 with DEV_INDEX: EINVAL with extack (%d: %s)", ret, err);
	ret = listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_STOP, idx + 1000,
			     "10.1.0.1", 9000, err, sizeof(err));
	tap(ret == -ENOENT && strstr(err, "no such listener"),
	    "LISTEN_STOP on another DEV_INDEX: ENOENT with extack (%d: %s)",
	    ret, err);
	ret = listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_STOP, -1, "10.1.0.1", 9000,
			     err, sizeof(err));
	tap(ret == -ENOENT, "LISTEN_STOP without its DEV_INDEX: ENOENT (%d)",
	    ret);
	ret = listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_STOP, idx, "10.1.0.1",
			     9000, err, sizeof(err));
	tap(!ret && !lsn_dump(&nl, 0, l) && l->n == 0 &&
		    !dev_get(&nl, idx, &d) && d.listeners == 0 &&
		    sim_counter(1, "listens") == 0,
	    "LISTEN_STOP with its DEV_INDEX: the server TID is gone (%d)", ret);

	/* a T1: 16 server TIDs */
	ret = sim_new(32, "veth0", 1, 4, "lsn%d");
	idx2 = sim_index(32);
	for (i = 0; !ret && i < 16; i++)
		ret = listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_START, idx2, NULL,
				     9100 + i, err, sizeof(err));
	tids = 0;
	if (!lsn_dump(&nl, idx2, l))
		for (i = 0; i < l->n; i++)
			tids |= l->l[i].dev == idx2 && l->l[i].tid < 16 ?
					1 << l->l[i].tid :
					0;
	tap(!ret && l->n == 16 && tids == 0xffff && !lsn_dump(&nl, idx, l) &&
		    l->n == 0,
	    "16 listeners on a T1: server TIDs 0-15, LISTEN_GET's filter (%d)",
	    ret);
	ret = listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_START, idx2, NULL, 9116,
			     err, sizeof(err));
	tap(ret == -ENOSPC && strstr(err, "no server TID free"),
	    "a 17th: ENOSPC with extack (%d: %s)", ret, err);
	ret = dev_cmd(&nl, OPENTOE_CMD_DEV_DETACH, idx2);
	tap(ret == -EBUSY, "detach with listeners: EBUSY (%d)", ret);
	for (i = 0; i < 8; i++)
		listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_STOP, idx2, NULL,
			       9100 + i, err, sizeof(err));
	ret = sim_del(32);
	ret |= listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_STOP, idx2, NULL, 9110,
			      NULL, 0) != -ENOENT;
	tap(!ret, "a device deleted with 8 listeners: they go with it (%d)",
	    ret);
	ret = sim_new(33, "veth0", 3, 4, "lsn%d");
	idx2 = sim_index(33);
	ret |= dev_cmd(&nl, OPENTOE_CMD_DEV_DETACH, idx2);
	ret = ret ? ret :
		    listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_START, idx2, NULL,
				   9200, err, sizeof(err));
	tap(ret == -ENOPROTOOPT && strstr(err, "no TOM"),
	    "a detached device: ENOPROTOOPT with extack (%d: %s)", ret, err);
	sim_del(33);
	free(l);
}

/* TID_RESERVE + SERVER: a server TID, or -errno; err gets the extack. */
static int stid_reserve(int index, char *err, size_t errlen)
{
	struct tidreply r = { -1, -1 };
	struct toe_nlmsg m;
	int ret;

	msg_init(&m, fam_id, 0, OPENTOE_CMD_TID_RESERVE);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, index);
	toe_nla_put(&m, OPENTOE_A_SERVER, NULL, 0);
	err[0] = 0;
	ret = toe_nlmsg_call(nl.fd, &nl.seq, &m, OPENTOE_A_MAX, tid_cb, &r,
			     "reserve", err, errlen);
	return ret ? ret : r.tid;
}

static int stid_free(int index, int stid, char *err, size_t errlen)
{
	struct toe_nlmsg m;

	msg_init(&m, fam_id, 0, OPENTOE_CMD_TID_FREE);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, index);
	toe_nla_put_u32(&m, OPENTOE_A_TID, stid);
	toe_nla_put(&m, OPENTOE_A_SERVER, NULL, 0);
	err[0] = 0;
	return toe_nlmsg_call(nl.fd, &nl.seq, &m, OPENTOE_A_MAX, NULL, NULL,
			      "free", err, errlen);
}

/* LISTEN_START of 10.1.0.1:port with server TID stid (index < 0: none). */
static int listen_stid(int index, int stid, uint16_t port, char *err,
		       size_t errlen)
{
	struct toe_nlmsg m;

	msg_init(&m, fam_id, 0, OPENTOE_CMD_LISTEN_START);
	toe_nla_put_u32(&m, OPENTOE_A_LISTEN_ADDR4, inet_addr("10.1.0.1"));
	toe_nla_put_u16(&m, OPENTOE_A_LISTEN_PORT, htons(port));
	if (index >= 0)
		toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, index);
	toe_nla_put_u32(&m, OPENTOE_A_TID, stid);
	err[0] = 0;
	return toe_nlmsg_call(nl.fd, &nl.seq, &m, OPENTOE_A_MAX, NULL, NULL,
			      "listen", err, errlen);
}

/* DEV_GET's server TIDs: listeners and reserved, as "L/R". */
static bool stids_are(int index, unsigned int lsn, unsigned int rsv)
{
	struct devinfo d = { 0 };

	return !dev_get(&nl, index, &d) && d.listeners == lsn &&
	       d.stids_reserved == rsv;
}

/*
 * Server TIDs reserved ahead of their listeners (the datapath's server-TID
 * pool): on a T1's 16, taken by LISTEN_START + TID, given back unused.
 */
static void test_stids(void)
{
	int idx, i, ret, got = 0, s;
	struct lsnlist *l = calloc(1, sizeof(*l));
	char err[512];

	ret = sim_new(34, "veth0", 1, 4, "stid%d");
	idx = sim_index(34);
	for (i = 0; !ret && i < 16; i++) {
		s = stid_reserve(idx, err, sizeof(err));
		if (s < 0 || s > 15)
			ret = s < 0 ? s : -ERANGE;
		else
			got |= 1 << s;
	}
	tap(!ret && got == 0xffff && stids_are(idx, 0, 16) &&
		    !lsn_dump(&nl, idx, l) && l->n == 0,
	    "16 server TIDs reserved on a T1: 0-15, DEV_STIDS_RESERVED 16, none in LISTEN_GET (%d)",
	    ret);
	ret = stid_reserve(idx, err, sizeof(err));
	tap(ret == -ENOSPC && strstr(err, "no server TID free"),
	    "a 17th: ENOSPC with extack (%d: %s)", ret, err);
	ret = listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_START, idx, "10.1.0.1",
			     9300, err, sizeof(err));
	tap(ret == -ENOSPC,
	    "LISTEN_START without a TID while all are reserved: ENOSPC (%d)",
	    ret);
	ret = listen_stid(idx, 5, 9300, err, sizeof(err));
	ret = ret ? ret : lsn_dump(&nl, idx, l);
	tap(!ret && l->n == 1 && l->l[0].tid == 5 && l->l[0].port == 9300 &&
		    stids_are(idx, 1, 15) && sim_counter(34, "listens") == 1,
	    "LISTEN_START + TID 5: the listener on server TID 5, 1 listener, 15 reserved (%d)",
	    ret);
	sim_knob(34, "fail_listen", 1);
	ret = listen_stid(idx, 7, 9301, err, sizeof(err));
	sim_knob(34, "fail_listen", 0);
	i = listen_stid(idx, 7, 9301, err, sizeof(err));
	i = i ? i :
		listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_STOP, idx, "10.1.0.1",
			       9301, err, sizeof(err));
	tap(ret == -EIO && !i && stids_are(idx, 1, 14),
	    "the device refuses LISTEN_START + TID 7 (fail_listen): it stays reserved, taken next time (%d, then %d)",
	    ret, i);
	ret = listen_stid(idx, 5, 9301, err, sizeof(err));
	tap(ret == -ENOENT && strstr(err, "not reserved"),
	    "LISTEN_START + TID 5 again: ENOENT with extack (%d: %s)", ret,
	    err);
	ret = listen_stid(-1, 6, 9301, err, sizeof(err));
	tap(ret == -EINVAL && strstr(err, "DEV_INDEX"),
	    "LISTEN_START + TID without DEV_INDEX: EINVAL with extack (%d: %s)",
	    ret, err);
	ret = stid_free(idx, 5, err, sizeof(err));
	tap(ret == -ENOENT && strstr(err, "not reserved") &&
		    stids_are(idx, 1, 14),
	    "TID_FREE + SERVER of a listener's server TID: ENOENT, it stays (%d: %s)",
	    ret, err);
	ret = stid_free(idx, 6, err, sizeof(err));
	i = stid_free(idx, 6, err, sizeof(err));
	tap(!ret && i == -ENOENT && stids_are(idx, 1, 13),
	    "TID_FREE + SERVER of reserved 6: given back once (%d, then %d)",
	    ret, i);
	ret = listen_dev_cmd(&nl, OPENTOE_CMD_LISTEN_STOP, idx, "10.1.0.1",
			     9300, err, sizeof(err));
	s = stid_reserve(idx, err, sizeof(err));
	i = stid_reserve(idx, err, sizeof(err));
	tap(!ret && (s == 5 || s == 6) && (i == 5 || i == 6) && s != i &&
		    stids_are(idx, 0, 15) && sim_counter(34, "listens") == 0,
	    "LISTEN_STOP frees server TID 5: 5 and 6 reserved again (%d, %d, %d)",
	    ret, s, i);
	ret = dev_cmd(&nl, OPENTOE_CMD_DEV_DETACH, idx);
	ret = ret ? ret : dev_cmd(&nl, OPENTOE_CMD_DEV_ATTACH, idx);
	tap(!ret && stids_are(idx, 0, 0),
	    "detach with only reserved server TIDs: not EBUSY, they go with the TOM (%d)",
	    ret);
	sim_del(34);
	free(l);
}

/* Requests that the attribute policies must refuse. */
static void test_policy(void)
{
	int idx = sim_index(1), ret;
	struct in6_addr a6 = { 0 };
	char big[24] = { 0 };
	struct toe_nlmsg m;

	msg_init(&m, fam_id, 0, OPENTOE_CMD_TID_ALLOC);
	toe_nla_put_u32(&m, OPENTOE_A_FLOW_SADDR4, inet_addr("10.1.0.1"));
	toe_nla_put_u32(&m, OPENTOE_A_FLOW_DADDR4, inet_addr("10.1.0.2"));
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_SPORT, htons(1));
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_DPORT, htons(2));
	ret = nl_call(&nl, &m, NULL, NULL);
	tap(ret == -EINVAL, "TID_ALLOC without DEV_INDEX: EINVAL (%d)", ret);

	msg_init(&m, fam_id, 0, OPENTOE_CMD_TID_ALLOC);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, idx);
	toe_nla_put_u32(&m, OPENTOE_A_FLOW_SADDR4, inet_addr("10.1.0.1"));
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_SPORT, htons(1));
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_DPORT, htons(2));
	ret = nl_call(&nl, &m, NULL, NULL);
	tap(ret == -EINVAL, "TID_ALLOC without destination: EINVAL (%d)", ret);

	msg_init(&m, fam_id, 0, OPENTOE_CMD_TID_FREE);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, idx);
	ret = nl_call(&nl, &m, NULL, NULL);
	tap(ret == -EINVAL, "TID_FREE without TID: EINVAL (%d)", ret);

	msg_init(&m, fam_id, 0, OPENTOE_CMD_DEV_GET);
	toe_nla_put_u8(&m, OPENTOE_A_DEV_INDEX, idx);
	ret = nl_call(&nl, &m, NULL, NULL);
	tap(ret == -EINVAL || ret == -ERANGE,
	    "DEV_INDEX as u8 (wrong type): refused (%d)", ret);

	msg_init(&m, fam_id, 0, OPENTOE_CMD_DEV_GET);
	toe_nla_put(&m, OPENTOE_A_DEV_INDEX, big, 8);
	ret = nl_call(&nl, &m, NULL, NULL);
	tap(ret == -EINVAL || ret == -ERANGE,
	    "DEV_INDEX of 8 bytes (oversized): refused (%d)", ret);

	msg_init(&m, fam_id, 0, OPENTOE_CMD_TID_ALLOC);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, idx);
	toe_nla_put(&m, OPENTOE_A_FLOW_SADDR6, big, 20);
	toe_nla_put(&m, OPENTOE_A_FLOW_DADDR6, &a6, 16);
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_SPORT, htons(1));
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_DPORT, htons(2));
	ret = nl_call(&nl, &m, NULL, NULL);
	tap(ret == -EINVAL || ret == -ERANGE,
	    "IPv6 address of 20 bytes (oversized): refused (%d)", ret);

	msg_init(&m, fam_id, 0, OPENTOE_CMD_TID_ALLOC);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, idx);
	toe_nla_put(&m, OPENTOE_A_FLOW_SADDR6, big, 4);
	toe_nla_put(&m, OPENTOE_A_FLOW_DADDR6, &a6, 16);
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_SPORT, htons(1));
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_DPORT, htons(2));
	ret = nl_call(&nl, &m, NULL, NULL);
	tap(ret == -EINVAL || ret == -ERANGE,
	    "IPv6 address of 4 bytes (short): refused (%d)", ret);

	msg_init(&m, fam_id, 0, OPENTOE_CMD_DEV_GET);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, 0);
	ret = nl_call(&nl, &m, NULL, NULL);
	tap(ret == -ERANGE || ret == -EINVAL, "DEV_INDEX 0 out of range (%d)",
	    ret);

	msg_init(&m, fam_id, 0, OPENTOE_CMD_DEV_GET);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, 0x3fffff00);
	ret = nl_call(&nl, &m, NULL, NULL);
	tap(ret == -ENODEV, "unknown DEV_INDEX: ENODEV (%d)", ret);

	msg_init(&m, fam_id, 0, OPENTOE_CMD_DEV_GET);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, idx);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_TTID, 3);
	ret = nl_call(&nl, &m, NULL, NULL);
	tap(ret == -EINVAL, "reply-only attribute in a request: EINVAL (%d)",
	    ret);

	msg_init(&m, fam_id, 0, OPENTOE_CMD_DEV_GET);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, idx);
	toe_nla_put_u32(&m, 200, 1);
	ret = nl_call(&nl, &m, NULL, NULL);
	tap(ret == -EINVAL, "attribute type above maxattr: EINVAL (%d)", ret);

	msg_init(&m, fam_id, 0, OPENTOE_CMD_TID_ALLOC);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, idx);
	toe_nla_put_u32(&m, OPENTOE_A_FLOW_SADDR4, inet_addr("10.1.0.1"));
	toe_nla_put_u32(&m, OPENTOE_A_FLOW_DADDR4, inet_addr("10.1.0.2"));
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_SPORT, 0);
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_DPORT, htons(2));
	ret = nl_call(&nl, &m, NULL, NULL);
	tap(ret == -EINVAL, "source port 0: EINVAL (%d)", ret);

	msg_init(&m, fam_id, 0, OPENTOE_CMD_TID_ALLOC);
	toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, idx);
	toe_nla_put_u32(&m, OPENTOE_A_FLOW_SADDR4, inet_addr("10.1.0.1"));
	toe_nla_put(&m, OPENTOE_A_FLOW_DADDR6, &a6, 16);
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_SPORT, htons(1));
	toe_nla_put_u16(&m, OPENTOE_A_FLOW_DPORT, htons(2));
	ret = nl_call(&nl, &m, NULL, NULL);
	tap(ret == -EINVAL, "IPv4 source with IPv6 destination: EINVAL (%d)",
	    ret);

	msg_init(&m, fam_id, 0, OPENTOE_CMD_LISTEN_START);
	toe_nla_put_u8(&m, OPENTOE_A_LISTEN_FAMILY, 77);
	toe_nla_put_u16(&m, OPENTOE_A_LISTEN_PORT, htons(1));
	ret = nl_call(&nl, &m, NULL, NULL);
	tap(ret == -EAFNOSUPPORT, "listener of family 77: EAFNOSUPPORT (%d)",
	    ret);

	msg_init(&m, fam_id, 0, OPENTOE_CMD_DEV_NEW_NTF);
	ret = nl_call(&nl, &m, NULL, NULL);
	tap(ret == -EOPNOTSUPP,
	    "notification command as a request: EOPNOTSUPP (%d)", ret);
}

static void test_unprivileged(void)
{
	int st = 0;
	pid_t pid = fork();

	if (!pid) {
		struct devlist *l = calloc(1, sizeof(*l));
		int r1, r2, r3;
		struct nl u;

		if (setgid(65534) || setuid(65534) || nl_open(&u))
			_exit(10);
		r1 = dev_dump(&u, l);
		r2 = tid_alloc4(&u, sim_index(1), "10.1.0.2", 4000, NULL);
		r3 = setsockopt(u.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
				&mcgrp_events, sizeof(mcgrp_events)) < 0 ?
			     -errno :
			     0;
		printf("# unprivileged: dump %d, alloc %d, join %d\n", r1, r2,
		       r3);
		fflush(stdout);
		_exit(r1 == -EPERM && r2 == -EPERM && r3 == -EPERM ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	tap(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "unprivileged caller refused (EPERM) for dump, TID_ALLOC and events");
}

static void test_lldev_gone(void)
{
	char proc[4096], line[64];
	int idx, tid, ret;
	struct devinfo d = { 0 };

	sh("/usr/sbin/ip link add veth2 type veth peer name veth3");
	sh("/usr/sbin/ip addr add 10.3.0.1/24 dev veth2; /usr/sbin/ip link set veth2 up; /usr/sbin/ip link set veth3 up");
	sh("/usr/sbin/ip neigh replace 10.3.0.2 lladdr 02:00:00:00:03:02 nud permanent dev veth2");
	ret = sim_new(40, "veth2", 3, 8, "gone%d");
	idx = sim_index(40);
	sim_knob(40, "release_delay_ms", 300);
	{
		struct toe_nlmsg m;
		struct tidreply r = { -1, -1 };

		msg_init(&m, fam_id, 0, OPENTOE_CMD_TID_ALLOC);
		toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, idx);
		toe_nla_put_u32(&m, OPENTOE_A_FLOW_SADDR4,
				inet_addr("10.3.0.1"));
		toe_nla_put_u32(&m, OPENTOE_A_FLOW_DADDR4,
				inet_addr("10.3.0.2"));
		toe_nla_put_u16(&m, OPENTOE_A_FLOW_SPORT, htons(5000));
		toe_nla_put_u16(&m, OPENTOE_A_FLOW_DPORT, htons(80));
		tid = nl_call(&nl, &m, tid_cb, &r);
		tid = tid ? tid : r.tid;
	}
	tap(!ret && tid >= 0, "device on veth2 with a TID (%d)", tid);
	ret = sh("/usr/sbin/ip link del veth2");
	tap(!ret && !dev_get(&nl, idx, &d) && !d.tom[0] && !d.ifname[0],
	    "net_device deleted: device stays, detached, without interface");
	read_file("/proc/net/toe/devices", proc, sizeof(proc));
	snprintf(line, sizeof(line), "%-16s %-20s\n", "gone0", "<None>");
	tap(strstr(proc, line) != NULL,
	    "/proc/net/toe/devices shows it with <None> and no interface");
	ret = sim_del(40);
	tap(!ret, "and it can be deleted (%d)", ret);
}

#define DETACH_TIMEOUT "/sys/module/opentoe/parameters/detach_timeout_ms"

/*
 * A forced detach is bounded (detach_timeout_ms): a device that holds a
 * TID the host closed longer than that does not hold up the netdev
 * notifier (it runs under rtnl), and the device's late release finds no
 * TOM instead of freed memory (slub_debug and the log check catch it).
 */
static void test_detach_bounded(void)
{
	struct devinfo d = { 0 };
	int idx, tid, ret;
	double t0, secs;

	sh("/usr/sbin/ip link add veth4 type veth peer name veth5");
	sh("/usr/sbin/ip addr add 10.4.0.1/24 dev veth4; /usr/sbin/ip link set veth4 up; /usr/sbin/ip link set veth5 up");
	sh("/usr/sbin/ip neigh replace 10.4.0.2 lladdr 02:00:00:00:04:02 nud permanent dev veth4");
	ret = write_file(DETACH_TIMEOUT, "300");
	tap(!ret, "detach_timeout_ms is a module parameter, set to 300 (%d)",
	    ret);
	ret = sim_new(60, "veth4", 3, 8, "late%d");
	idx = sim_index(60);
	sim_knob(60, "release_delay_ms", 3000);
	tid = ret ? ret : tid_alloc4(&nl, idx, "10.4.0.2", 7000, NULL);
	ret = tid < 0 ? tid : tid_free(&nl, idx, tid);
	tap(!ret,
	    "a TID closed by the host, held by the device for 3 s (TID %d, %d)",
	    tid, ret);
	t0 = now();
	ret = sh("/usr/sbin/ip link del veth4");
	secs = now() - t0;
	tap(!ret && secs < 2.0 && !dev_get(&nl, idx, &d) && !d.tom[0],
	    "net_device deleted meanwhile: the forced detach gave up after %.2f s (limit 0.3 s) and let it go",
	    secs);
	msleep(3500); /* the late release comes: no TOM any more */
	ret = sim_del(60);
	tap(!ret, "after the late release the device is deleted (%d)", ret);
	write_file(DETACH_TIMEOUT, "5000");
}

struct race_arg {
	int idx;
	int errors;
	int frees;
};

static volatile int stop_race;

/* TIDs allocated and closed as fast as possible: the device releases them
 * from its worker while the main thread detaches.
 */
static void *race_releases(void *p)
{
	struct race_arg *a = p;
	struct nl n;
	int tid, i = 0;

	if (nl_open(&n)) {
		a->errors++;
		return NULL;
	}
	while (!stop_race) {
		/* in turn: a flow's TID, and a reserved one bound or given back */
		if (i % 2) {
			tid = tid_reserve(&n, a->idx);
			if (tid >= 0 && i % 4 == 1)
				tid_bind4(&n, a->idx, tid, "10.1.0.2",
					  7100 + (i % 64));
		} else {
			tid = tid_alloc4(&n, a->idx, "10.1.0.2",
					 7100 + (i % 64), NULL);
		}
		i++;
		if (tid >= 0 && !tid_free(&n, a->idx, tid))
			a->frees++;
	}
	close(n.fd);
	return NULL;
}

/*
 * 1,000 detaches (not forced: they succeed only when no TID is held) race
 * with the device's releases: a detach that sees the last TID go must not
 * free the TOM's state while that release is still using it.
 */
static void test_detach_race(void)
{
	struct race_arg a = { 0 };
	int i, ret, detached = 0, busy = 0, bad = 0;
	pthread_t th;

	ret = sim_new(61, "veth0", 3, 4, "race%d");
	a.idx = sim_index(61);
	sim_knob(61, "release_delay_ms", 0);
	if (ret || pthread_create(&th, NULL, race_releases, &a)) {
		tap(false, "detach race: set-up (%d)", ret);
		return;
	}
	for (i = 0; i < 1000; i++) {
		ret = dev_cmd(&nl, OPENTOE_CMD_DEV_DETACH, a.idx);
		if (!ret) {
			detached++;
			if (dev_cmd(&nl, OPENTOE_CMD_DEV_ATTACH, a.idx))
				bad++;
		} else if (ret == -EBUSY) {
			busy++;
		} else {
			bad++;
		}
	}
	stop_race = 1;
	pthread_join(th, NULL);
	diag("detach race: %d detached, %d busy, %d TIDs released", detached,
	     busy, a.frees);
	tap(!bad && !a.errors && detached > 0 && a.frees > 0,
	    "1,000 detaches racing with TID releases, reserves and binds: %d detached, %d EBUSY, %d bad",
	    detached, busy, bad);
	ret = sim_del(61);
	tap(!ret, "and the device is deleted (%d)", ret);
}

/* Devices are seen from the namespace of their net_device only. */
static void test_netns(void)
{
	struct devlist *l = calloc(1, sizeof(*l));
	char proc[4096];
	int st = 0, ret, idx;
	struct devinfo d;
	pid_t pid;

	ret = sh(
		"/usr/sbin/ip netns add ns1 && /usr/sbin/ip link add veth4 netns ns1 type veth peer name veth5 && "
		"/usr/sbin/ip -n ns1 addr add 10.4.0.1/24 dev veth4 && /usr/sbin/ip -n ns1 link set veth4 up");
	ret |= sh(
		"/usr/sbin/ip netns exec ns1 /bin/sh -c 'echo 70 veth4 3 4 ns%%d > " BUS
		"/new_device'");
	idx = sim_index(70);
	tap(!ret && idx > 0, "device created from netns ns1 on its veth4 (%d)",
	    idx);
	ret = dev_dump(&nl, l);
	read_file("/proc/net/toe/devices", proc, sizeof(proc));
	tap(!ret && l->n > 0 && !strstr(proc, "ns0 ") &&
		    dev_get(&nl, idx, &d) == -ENODEV,
	    "not seen from the initial namespace (dump, DEV_GET, procfs)");

	pid = fork();
	if (!pid) {
		int fd = open("/run/netns/ns1", O_RDONLY), tid, lret;
		struct nl n;

		if (fd < 0 || setns(fd, CLONE_NEWNET) || nl_open(&n))
			_exit(10);
		if (dev_get(&n, idx, &d) || strcmp(d.name, "ns0") ||
		    strcmp(d.ifname, "veth4"))
			_exit(11);
		sh("/usr/sbin/ip neigh replace 10.4.0.2 lladdr 02:00:00:00:04:02 nud permanent dev veth4");
		{
			struct toe_nlmsg m;
			struct tidreply r = { -1, -1 };

			msg_init(&m, fam_id, 0, OPENTOE_CMD_TID_ALLOC);
			toe_nla_put_u32(&m, OPENTOE_A_DEV_INDEX, idx);
			toe_nla_put_u32(&m, OPENTOE_A_FLOW_SADDR4,
					inet_addr("10.4.0.1"));
			toe_nla_put_u32(&m, OPENTOE_A_FLOW_DADDR4,
					inet_addr("10.4.0.2"));
			toe_nla_put_u16(&m, OPENTOE_A_FLOW_SPORT, htons(9000));
			toe_nla_put_u16(&m, OPENTOE_A_FLOW_DPORT, htons(80));
			tid = nl_call(&n, &m, tid_cb, &r);
			tid = tid ? tid : r.tid;
		}
		/* a listener of this namespace, left for netns exit */
		lret = listen_cmd(&n, OPENTOE_CMD_LISTEN_START, AF_INET, 22);
		if (tid < 0 || lret || dev_get(&n, idx, &d) ||
		    d.listeners != 1 || d.tids_used != 1)
			_exit(12);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	tap(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "seen inside ns1: DEV_GET, TID_ALLOC and a listener (child %d)",
	    WIFEXITED(st) ? WEXITSTATUS(st) : -1);

	ret = sh("/usr/sbin/ip netns del ns1");
	d.tom[0] = 'x';
	for (int i = 0; i < 100 && (dev_get(&nl, idx, &d) || d.tom[0]); i++)
		msleep(50);
	tap(!ret && !d.tom[0] && !d.ifname[0],
	    "netns deleted: device detached and back in the initial namespace");
	tap(!sim_del(70), "and deleted");
	free(l);
}

/* ---- stress: several threads creating and destroying adapters ---- */

static volatile int stop_stress;

struct stress_arg {
	int n;
	unsigned int base;
	long iters, errors;
};

static void *stress_create(void *p)
{
	struct stress_arg *a = p;
	struct nl n;
	unsigned int id;

	if (nl_open(&n)) {
		a->errors++;
		return NULL;
	}
	while (!stop_stress) {
		int k, idx, tid;
		double t0;

		id = a->base + (a->iters % 4);
		k = sim_new(id, "veth0", 1 + a->iters % 3, 4, "st%d");
		if (k) {
			diag("thread %d: new_device %u: %d", a->n, id, k);
			a->errors++;
			continue;
		}
		idx = sim_index(id);
		sim_knob(id, "release_delay_ms", a->iters % 5);
		/*
		 * The chaos thread's TIDs on this device may all be in the
		 * release delay (sim_disconnect): ENOSPC is the right answer
		 * then, and a TID must come free once the releases ran.
		 */
		t0 = now();
		do {
			tid = tid_alloc4(&n, idx, "10.1.0.2", 6000 + a->n,
					 NULL);
			if (tid == -ENOSPC)
				usleep(1000);
		} while (tid == -ENOSPC && now() - t0 < 2);
		if (tid < 0) {
			diag("thread %d: TID_ALLOC on %d: %d", a->n, idx, tid);
			a->errors++;
		} else if (a->iters & 1) {
			tid_free(&n, idx, tid); /* odd: close before delete */
		}
		k = sim_del(id);
		if (k) {
			diag("thread %d: del_device %u: %d", a->n, id, k);
			a->errors++;
		}
		a->iters++;
	}
	close(n.fd);
	return NULL;
}

/* Dump, attach and TID requests on whatever devices exist. */
static void *stress_chaos(void *p)
{
	struct stress_arg *a = p;
	struct devlist *l = calloc(1, sizeof(*l));
	char proc[8192];
	struct nl n;

	if (nl_open(&n)) {
		a->errors++;
		return NULL;
	}
	while (!stop_stress) {
		int i, tid, k;

		k = dev_dump(&n, l);
		if (k) {
			diag("chaos: DEV_GET dump: %d", k);
			a->errors++;
		}
		read_file("/proc/net/toe/devices", proc, sizeof(proc));
		for (i = 0; i < l->n; i++) {
			/* races attach with the device's unregistration */
			dev_cmd(&n, OPENTOE_CMD_DEV_ATTACH, l->d[i].index);
			tid = tid_alloc4(&n, l->d[i].index, "10.1.0.2", 7000,
					 NULL);
			if (tid >= 0)
				tid_free(&n, l->d[i].index, tid);
		}
		a->iters++;
	}
	close(n.fd);
	free(l);
	return NULL;
}

static void test_stress(void)
{
	struct stress_arg a[5];
	pthread_t th[5];
	long iters = 0, errors = 0, chaos;
	struct devlist *l = calloc(1, sizeof(*l));
	int i, left = 0;

	for (i = 0; i < 5; i++) {
		a[i] = (struct stress_arg){ .n = i, .base = 1000 + 100 * i };
		pthread_create(&th[i], NULL,
			       i < 4 ? stress_create : stress_chaos, &a[i]);
	}
	sleep(6);
	stop_stress = 1;
	for (i = 0; i < 5; i++) {
		pthread_join(th[i], NULL);
		if (i < 4)
			iters += a[i].iters;
		errors += a[i].errors;
	}
	chaos = a[4].iters;
	dev_dump(&nl, l);
	for (i = 0; i < l->n; i++)
		if (!strncmp(l->d[i].name, "st", 2))
			left++;
	tap(iters > 20 && !errors && !left,
	    "4 threads x 6 s create/destroy adapters (%ld cycles, %ld chaos rounds, %ld errors, %d left)",
	    iters, chaos, errors, left);
	free(l);
}

static void test_rmmod(void)
{
	int i, ret, idx;
	struct nl probe;

	/* devices with connections, delayed releases and a listener */
	for (i = 0; i < 3; i++) {
		sim_new(50 + i, "veth0", 3, 16, NULL);
		idx = sim_index(50 + i);
		sim_knob(50 + i, "release_delay_ms", 200);
		tid_alloc4(&nl, idx, "10.1.0.2", 8000 + i, NULL);
		tid_alloc4(&nl, idx, "10.9.0.7", 8100 + i, NULL);
	}
	listen_cmd(&nl, OPENTOE_CMD_LISTEN_START, AF_INET6, 443);
	close(nl.fd);

	ret = sh("rmmod opentoe");
	tap(ret == 0, "rmmod with 4 devices, TIDs and a listener (%d)", ret);
	tap(access(BUS, F_OK) != 0, "sysfs bus gone after rmmod");
	nl_open(&probe);
	ret = resolve_family(&probe);
	tap(ret == -ENOENT, "genl family gone after rmmod (%d)", ret);
	close(probe.fd);

	ret = sh("insmod " MODULE_PATH);
	nl_open(&nl);
	tap(!ret && !resolve_family(&nl) && !sim_new(60, "veth0", 3, 4, NULL),
	    "insmod again, family back, new device works");
	ret = sh("rmmod opentoe");
	tap(ret == 0, "rmmod again (%d)", ret);
	close(nl.fd);
}

/* ---- dump modes, for toed_guest.sh (busybox has no genetlink client) ---- */

struct fulltid {
	int dev, tid, state, l2t;
	char src[64], dst[64];
};

static int fulltid_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *arg)
{
	struct fulltid t = { -1, -1, -1, -1, "?", "?" };
	char a[INET6_ADDRSTRLEN];
	uint16_t sp = 0, dp = 0;

	(void)nh;
	(void)arg;
	if (!tb[OPENTOE_A_TID])
		return 0;
	t.dev = tb[OPENTOE_A_DEV_INDEX] ?
			(int)nla_u32(tb[OPENTOE_A_DEV_INDEX]) :
			-1;
	t.tid = nla_u32(tb[OPENTOE_A_TID]);
	t.state = tb[OPENTOE_A_TID_STATE] ?
			  (int)nla_u32(tb[OPENTOE_A_TID_STATE]) :
			  -1;
	t.l2t = tb[OPENTOE_A_L2T_INDEX] ?
			(int)nla_u32(tb[OPENTOE_A_L2T_INDEX]) :
			-1;
	if (tb[OPENTOE_A_FLOW_SPORT])
		sp = ntohs(*(uint16_t *)toe_nla_data(tb[OPENTOE_A_FLOW_SPORT]));
	if (tb[OPENTOE_A_FLOW_DPORT])
		dp = ntohs(*(uint16_t *)toe_nla_data(tb[OPENTOE_A_FLOW_DPORT]));
	if (tb[OPENTOE_A_FLOW_SADDR4] && tb[OPENTOE_A_FLOW_DADDR4]) {
		inet_ntop(AF_INET, toe_nla_data(tb[OPENTOE_A_FLOW_SADDR4]), a,
			  sizeof(a));
		snprintf(t.src, sizeof(t.src), "%s:%u", a, sp);
		inet_ntop(AF_INET, toe_nla_data(tb[OPENTOE_A_FLOW_DADDR4]), a,
			  sizeof(a));
		snprintf(t.dst, sizeof(t.dst), "%s:%u", a, dp);
	} else if (tb[OPENTOE_A_FLOW_SADDR6] && tb[OPENTOE_A_FLOW_DADDR6]) {
		inet_ntop(AF_INET6, toe_nla_data(tb[OPENTOE_A_FLOW_SADDR6]), a,
			  sizeof(a));
		snprintf(t.src, sizeof(t.src), "[%s]:%u", a, sp);
		inet_ntop(AF_INET6, toe_nla_data(tb[OPENTOE_A_FLOW_DADDR6]), a,
			  sizeof(a));
		snprintf(t.dst, sizeof(t.dst), "[%s]:%u", a, dp);
	}
	if (t.state & OPENTOE_TID_F_RESERVED)
		printf("tid %d dev %d state %d reserved\n", t.tid, t.dev,
		       t.state);
	else
		printf("tid %d dev %d state %d l2t %d src %s dst %s\n", t.tid,
		       t.dev, t.state, t.l2t, t.src, t.dst);
	return 0;
}

/*
 * toe_kmod_test tids | l2t: one line per TID in use / L2T entry in use,
 * "key value" words, for grep and sed.
 */
static int dump_mode(const char *what)
{
	struct l2tlist *l;
	struct toe_nlmsg m;
	int i, ret;

	if (nl_open(&nl) || resolve_family(&nl) || !fam_id) {
		fprintf(stderr, "toe_kmod_test: no opentoe family\n");
		return 1;
	}
	if (!strcmp(what, "tids")) {
		msg_init(&m, fam_id, NLM_F_DUMP, OPENTOE_CMD_TID_GET);
		ret = nl_call(&nl, &m, fulltid_cb, NULL);
	} else if (!strcmp(what, "devs")) {
		struct devlist *dl = calloc(1, sizeof(*dl));

		ret = dl ? dev_dump(&nl, dl) : -ENOMEM;
		for (i = 0; !ret && i < dl->n; i++)
			printf("dev %d name %s nconn %u used %u reserved %u host %u listeners %u l2t %u stids %u\n",
			       dl->d[i].index, dl->d[i].name, dl->d[i].nconn,
			       dl->d[i].tids_used, dl->d[i].tids_reserved,
			       dl->d[i].tids_host, dl->d[i].listeners,
			       dl->d[i].l2t_used, dl->d[i].stids_reserved);
		free(dl);
	} else if (!strcmp(what, "l2t")) {
		l = calloc(1, sizeof(*l));
		ret = l ? l2t_dump(&nl, 0, l) : -ENOMEM;
		for (i = 0; !ret && i < l->n; i++) {
			char a[INET6_ADDRSTRLEN] = "?";
			struct l2e *e = &l->e[i];

			inet_ntop(e->family, e->addr, a, sizeof(a));
			printf("l2t %d dev %d addr %s lladdr ", e->idx, e->dev,
			       a);
			if (e->has_ll)
				printf("%02x:%02x:%02x:%02x:%02x:%02x",
				       e->ll[0], e->ll[1], e->ll[2], e->ll[3],
				       e->ll[4], e->ll[5]);
			else
				printf("-");
			printf(" state 0x%x refcnt %d\n", e->state, e->refcnt);
		}
		free(l);
	} else if (!strcmp(what, "listeners")) {
		struct lsnlist *ll = calloc(1, sizeof(*ll));

		ret = ll ? lsn_dump(&nl, 0, ll) : -ENOMEM;
		for (i = 0; !ret && i < ll->n; i++)
			printf("listener dev %d tid %d family %d addr %s port %d\n",
			       ll->l[i].dev, ll->l[i].tid, ll->l[i].family,
			       ll->l[i].addr, ll->l[i].port);
		free(ll);
	} else {
		fprintf(stderr,
			"usage: toe_kmod_test [tids|devs|l2t|listeners|listen-many N PORT|listen-same N PORT|serve PORT|hold ADDR PORT N]\n");
		return 1;
	}
	if (ret)
		fprintf(stderr, "toe_kmod_test: %s dump: %s\n", what,
			strerror(-ret));
	return ret ? 1 : 0;
}

/*
 * toe_kmod_test serve PORT: accept connections on PORT and keep each open
 * until its peer closes (what busybox nc -l cannot: one connection only).
 */
static int serve_mode(const char *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(atoi(port)) };
	struct pollfd p[256];
	int n = 1, i, one = 1;
	char buf[4096];

	p[0].fd = socket(AF_INET, SOCK_STREAM, 0);
	p[0].events = POLLIN;
	setsockopt(p[0].fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (p[0].fd < 0 || bind(p[0].fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(p[0].fd, 128)) {
		perror("toe_kmod_test serve");
		return 1;
	}
	for (;;) {
		if (poll(p, n, -1) < 0)
			return 1;
		if ((p[0].revents & POLLIN) && n < 256) {
			p[n].fd = accept(p[0].fd, NULL, NULL);
			p[n].events = POLLIN;
			n += p[n].fd >= 0;
		}
		for (i = 1; i < n; i++) {
			if (!p[i].revents ||
			    read(p[i].fd, buf, sizeof(buf)) > 0)
				continue;
			close(p[i].fd);
			p[i--] = p[--n];
		}
	}
}

static volatile sig_atomic_t hold_stop;

static void hold_sig(int sig)
{
	(void)sig;
	hold_stop = 1;
}

/*
 * toe_kmod_test hold ADDR PORT N: N connections to ADDR:PORT, each sending
 * a line; "connected N" once they are up; closed at SIGTERM, then exit.
 */
static int hold_mode(const char *addr, const char *port, const char *count)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(atoi(port)) };
	int n = atoi(count), i, fd[256], up = 0;
	struct timespec ts;

	signal(SIGTERM, hold_sig);
	inet_pton(AF_INET, addr, &a.sin_addr);
	for (i = 0; i < n && i < 256; i++) {
		fd[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (fd[i] < 0 ||
		    connect(fd[i], (struct sockaddr *)&a, sizeof(a))) {
			perror("toe_kmod_test hold");
			continue;
		}
		up += write(fd[i], "hello\n", 6) == 6;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* when they were up, as toed's tid_changed_ms counts (ms) */
	printf("connected %d at %lld\n", up,
	       (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	fflush(stdout); /* the test waits for it (toed_guest.sh) */
	while (!hold_stop)
		pause();
	for (i = 0; i < n && i < 256; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return 0;
}

/*
 * toe_kmod_test storm N: N listening sockets on 127.0.0.1 (an ephemeral
 * port each), opened and closed in turn: a listen_start and a listen_stop
 * event each and no packet, to fill the datapath's event ring quickly
 * while toed is stopped.  Prints "stormed N".
 */
static int storm_mode(int n)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd, i, done = 0;

	for (i = 0; i < n; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			break;
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
		    listen(fd, 1)) {
			perror("toe_kmod_test storm");
			close(fd);
			break;
		}
		close(fd);
		done++;
	}
	printf("stormed %d\n", done);
	return done == n ? 0 : 1;
}

/*
 * toe_kmod_test listen-many N PORT: N listening IPv4 sockets on ports
 * PORT..PORT+N-1; "ready" once they listen, closed when stdin closes.
 */
static int listen_many(int n, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int *fds = calloc(n, sizeof(*fds)), i, one = 1;
	char buf[64];

	if (!fds)
		return 1;
	for (i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(fds[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		sa.sin_port = htons(port + i);
		if (fds[i] < 0 ||
		    bind(fds[i], (struct sockaddr *)&sa, sizeof(sa)) ||
		    listen(fds[i], 4)) {
			fprintf(stderr, "toe_kmod_test: listen on %d: %s\n",
				port + i, strerror(errno));
			return 1;
		}
	}
	printf("ready\n");
	while (read(0, buf, sizeof(buf)) > 0)
		;
	for (i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	return 0;
}

/*
 * toe_kmod_test listen-same N PORT: N listening IPv4 sockets on PORT
 * (wildcard), SO_REUSEPORT siblings; "ready" once they listen.  Each line
 * on stdin names one (0..N-1) to close ("closed I" once done); the rest
 * close when stdin closes.
 */
static int listen_same(int n, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	int fds[16], i, one = 1;
	char line[64];

	if (n < 1 || n > 16)
		return 1;
	for (i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(fds[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
		if (fds[i] < 0 ||
		    bind(fds[i], (struct sockaddr *)&sa, sizeof(sa)) ||
		    listen(fds[i], 4)) {
			fprintf(stderr, "toe_kmod_test: listen %d on %d: %s\n",
				i, port, strerror(errno));
			return 1;
		}
	}
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		i = atoi(line);
		if (i < 0 || i >= n || fds[i] < 0)
			continue;
		close(fds[i]);
		fds[i] = -1;
		printf("closed %d\n", i);
	}
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return 0;
}

/* ---- the datapath's pinned maps, for the window tests of toed_guest.sh */

static int bpf_sys(int cmd, union bpf_attr *a)
{
	return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

static int pin_open(const char *name)
{
	char path[128];
	union bpf_attr a;

	snprintf(path, sizeof(path), "/sys/fs/bpf/opentoe/%s", name);
	memset(&a, 0, sizeof(a));
	a.pathname = (uintptr_t)path;
	return bpf_sys(BPF_OBJ_GET, &a);
}

static int map_op(int cmd, int fd, const void *k, void *v, __u64 flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = (uintptr_t)k;
	a.value = (uintptr_t)v;
	a.flags = flags;
	return bpf_sys(cmd, &a);
}

/*
 * toe_kmod_test taking DEV T S: toe_dev_live[DEV]'s takes in progress set
 * to T (tid_taking) and S (stid_taking), as if the datapath were between
 * a pop and its entry; the device must be idle (the value is rewritten).
 */
static int taking_mode(int dev, int t, int st)
{
	int fd = pin_open(TOE_MAP(DEV_LIVE));
	struct toe_dev_live l;
	__u32 k = dev;

	memset(&l, 0, sizeof(l));
	if (fd < 0 || map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, &l, 0)) {
		perror("toe_kmod_test taking");
		return 1;
	}
	l.tid_taking = t;
	l.stid_taking = st;
	if (map_op(BPF_MAP_UPDATE_ELEM, fd, &k, &l, BPF_EXIST)) {
		perror("toe_kmod_test taking");
		return 1;
	}
	printf("taking %u %u\n", l.tid_taking, l.stid_taking);
	return 0;
}

/*
 * toe_kmod_test held-hide FILE: every toe_tid_held entry deleted, kept in
 * FILE (as if their takes had not written them yet); held-show FILE puts
 * them back.  Prints how many.
 */
static int held_mode(bool hide, const char *file)
{
	struct {
		__u64 cookie;
		struct toe_tid_held h;
	} e[64];
	int fd = pin_open(TOE_MAP(TID_HELD)), n = 0, i;
	FILE *f = fopen(file, hide ? "w" : "r");
	__u64 k, next;

	if (fd < 0 || !f) {
		perror("toe_kmod_test held");
		return 1;
	}
	if (!hide) {
		n = fread(e, sizeof(e[0]), 64, f);
		for (i = 0; i < n; i++)
			map_op(BPF_MAP_UPDATE_ELEM, fd, &e[i].cookie, &e[i].h,
			       BPF_NOEXIST);
	} else {
		while (n < 64 && map_op(BPF_MAP_GET_NEXT_KEY, fd, n ? &k : NULL,
					&next, 0) == 0) {
			k = next;
			if (map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, &e[n].h, 0))
				continue;
			e[n++].cookie = k;
		}
		for (i = 0; i < n; i++)
			map_op(BPF_MAP_DELETE_ELEM, fd, &e[i].cookie, NULL, 0);
		fwrite(e, sizeof(e[0]), n, f);
	}
	fclose(f);
	printf("%s %d\n", hide ? "hidden" : "shown", n);
	for (i = 0; i < n; i++)
		printf("tid %u dev %u\n", e[i].h.tid, e[i].h.dev);
	return 0;
}

/*
 * toe_kmod_test pool DEV: the TIDs in toe_tid_pool index DEV's queue, one
 * a line ("pool TID"), taken out and put back in the same order; toed
 * must be stopped and the device idle meanwhile.
 */
static int pool_mode(int dev)
{
	int fd = pin_open(TOE_MAP(TID_POOL)), q, n = 0, i;
	__u32 k = dev, id, tids[1024];
	union bpf_attr a;

	if (fd < 0 || map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, &id, 0)) {
		perror("toe_kmod_test pool");
		return 1;
	}
	memset(&a, 0, sizeof(a));
	a.map_id = id;
	q = bpf_sys(BPF_MAP_GET_FD_BY_ID, &a);
	if (q < 0) {
		perror("toe_kmod_test pool");
		return 1;
	}
	while (n < 1024 && map_op(BPF_MAP_LOOKUP_AND_DELETE_ELEM, q, NULL,
				  &tids[n], 0) == 0)
		n++;
	for (i = 0; i < n; i++) {
		map_op(BPF_MAP_UPDATE_ELEM, q, NULL, &tids[i], BPF_ANY);
		printf("pool %u\n", tids[i]);
	}
	return 0;
}

/*
 * toe_kmod_test mapbatch MAP FILE: the lines of FILE applied to the pinned
 * map MAP, "update K... value V..." or "delete K..." (the bytes in
 * decimal, as bpftool batch takes them), one syscall each: under TCG,
 * bpftool batch spends a minute on 16,384 of them.  Every line is tried;
 * prints "applied N failed M" (M: malformed, or refused: a full map, a
 * key not there), exit 1 if M > 0.
 * toe_kmod_test mapcount MAP: the map's entries ("entries N").
 */
static int map_sizes(int fd, __u32 *ks, __u32 *vs)
{
	struct bpf_map_info mi;
	union bpf_attr a;

	memset(&mi, 0, sizeof(mi));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = fd;
	a.info.info_len = sizeof(mi);
	a.info.info = (uintptr_t)&mi;
	if (bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &a))
		return -1;
	*ks = mi.key_size;
	*vs = mi.value_size;
	return *ks <= 256 && *vs <= 256 ? 0 : -1;
}

/* The decimal bytes of s into b (n of them, exactly); s moved past them. */
static int parse_bytes(char **s, __u8 *b, __u32 n)
{
	__u32 i;
	char *e;

	for (i = 0; i < n; i++) {
		unsigned long v = strtoul(*s, &e, 10);

		if (e == *s || v > 255)
			return -1;
		b[i] = v;
		*s = e;
	}
	return 0;
}

static int mapbatch_mode(const char *map, const char *file)
{
	int fd = pin_open(map), n = 0, bad = 0, rc;
	__u8 k[256], v[256];
	char line[4096], *p;
	__u32 ks, vs;
	FILE *f;

	if (fd < 0 || map_sizes(fd, &ks, &vs)) {
		perror("toe_kmod_test mapbatch");
		return 1;
	}
	f = fopen(file, "r");
	if (!f) {
		perror(file);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		bool upd = !strncmp(line, "update ", 7);

		p = line + 7;
		if ((!upd && strncmp(line, "delete ", 7)) ||
		    parse_bytes(&p, k, ks)) {
			bad++;
			continue;
		}
		if (upd) {
			p += strspn(p, " ");
			if (strncmp(p, "value ", 6) ||
			    (p += 6, parse_bytes(&p, v, vs))) {
				bad++;
				continue;
			}
			rc = map_op(BPF_MAP_UPDATE_ELEM, fd, k, v, BPF_ANY);
		} else {
			rc = map_op(BPF_MAP_DELETE_ELEM, fd, k, NULL, 0);
		}
		if (rc)
			bad++;
		else
			n++;
	}
	fclose(f);
	printf("applied %d failed %d\n", n, bad);
	return bad ? 1 : 0;
}

static int mapcount_mode(const char *map)
{
	int fd = pin_open(map), n = 0;
	__u8 k[256], next[256];
	union bpf_attr a;
	__u32 ks, vs;

	if (fd < 0 || map_sizes(fd, &ks, &vs)) {
		perror("toe_kmod_test mapcount");
		return 1;
	}
	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = 0;
	a.next_key = (uintptr_t)next;
	while (bpf_sys(BPF_MAP_GET_NEXT_KEY, &a) == 0) {
		memcpy(k, next, ks);
		a.key = (uintptr_t)k;
		n++;
	}
	printf("entries %d\n", n);
	return 0;
}

/*
 * toe_kmod_test churn ADDR PORT N: N connections to ADDR:PORT one after
 * the other, each closed with a reset as soon as it is up (SO_LINGER 0:
 * its socket is closed at once).  Prints "churned N".
 */
static int churn_mode(const char *addr, const char *port, int n)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(atoi(port)) };
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int i, fd, done = 0;

	inet_pton(AF_INET, addr, &a.sin_addr);
	for (i = 0; i < n; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			break;
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		done += connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
		close(fd);
	}
	printf("churned %d\n", done);
	return done == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve_mode(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "hold"))
		return hold_mode(argv[2], argv[3], argv[4]);
	if (argc == 3 && !strcmp(argv[1], "storm"))
		return storm_mode(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "listen-many"))
		return listen_many(atoi(argv[2]), atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "pool"))
		return pool_mode(atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "churn"))
		return churn_mode(argv[2], argv[3], atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "taking"))
		return taking_mode(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "held-hide"))
		return held_mode(true, argv[2]);
	if (argc == 3 && !strcmp(argv[1], "held-show"))
		return held_mode(false, argv[2]);
	if (argc == 4 && !strcmp(argv[1], "listen-same"))
		return listen_same(atoi(argv[2]), atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "mapbatch"))
		return mapbatch_mode(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "mapcount"))
		return mapcount_mode(argv[2]);
	if (argc > 1)
		return dump_mode(argv[1]);
	ret = nl_open(&nl);
	if (ret) {
		printf("Bail out! netlink socket: %d\n", ret);
		return 1;
	}
	test_family();
	if (!fam_id) {
		printf("Bail out! no opentoe family\n");
		return 1;
	}
	test_tom_dump();
	test_create_basic();
	test_templates();
	test_attach();
	test_tids();
	test_reserve();
	test_l2t();
	test_l2t_full();
	test_listeners();
	test_listeners_dev();
	test_stids();
	test_policy();
	test_unprivileged();
	test_lldev_gone();
	test_detach_bounded();
	test_detach_race();
	test_netns();
	test_stress();
	test_rmmod();
	printf("1..%d\n", ntest);
	printf("# %d passed, %d failed\n", ntest - nfail, nfail);
	return nfail ? 1 : 0;
}
