// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * opentoe: a small generic-netlink client of the kernel module's "opentoe"
 * family, for toed.  Raw netlink sockets (no libnl): one for requests, one
 * for the family's "events" group and the controller's "notify" group.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include "opentoe_common.h"
#include "opentoe_policy.h"
#include "opentoe_flows.h"
#include "opentoe_tid.h"
#include "genl.h"
#include "lib/nlmsg.h"
#include "lib/err.h"
#include "lib/pinned.h"
#include "lib/clock.h"

#define RECV_BUF (64 * 1024) /* events */
#define REQ_TIMEOUT_S 5
#define EV_RCVBUF (1 << 20)

#define errf toe_errf

__u32 toe_genl_dev_type(__u32 ttid)
{
	switch (ttid) {
	case OPENTOE_ID_CHELSIO_T1:
		return TOE_DEV_CHELSIO_T1;
	case OPENTOE_ID_CHELSIO_T1C:
		return TOE_DEV_CHELSIO_T1C;
	case OPENTOE_ID_CHELSIO_T3:
		return TOE_DEV_CHELSIO_T3;
	default:
		return TOE_DEV_SOFTWARE;
	}
}

/* ------------------------------------------------------- messages */

static int put_be16(struct toe_nlmsg *r, __u16 type, __u16 host)
{
	return toe_nla_put_u16(r, type, htons(host));
}

/* A request to the module (or nlctrl) on g's request socket: toe_nlmsg_call. */
static int call(struct toe_genl *g, struct toe_nlmsg *r, toe_nlmsg_cb cb,
		void *ctx, const char *what, char *err, size_t errlen)
{
	return toe_nlmsg_call(g->fd, &g->seq, r, OPENTOE_A_MAX, cb, ctx, what,
			      err, errlen);
}

/* ------------------------------------------------------ the family */

/* What resolve() found. */
enum family_found {
	FAMILY_ERROR = -1, /* netlink failed: err says how */
	FAMILY_ABSENT = 0, /* no such family: an answer, not a failure */
	FAMILY_FOUND = 1,
};

/* The family name and its multicast group group: *id and *grp. */
static enum family_found resolve(struct toe_genl *g, const char *name,
				 const char *group, __u16 *id, __u32 *grp,
				 char *err, size_t errlen)
{
	int ret = toe_nlmsg_resolve(g->fd, &g->seq, name, group, id, grp, err,
				    errlen);

	if (ret == -ENOENT)
		return FAMILY_ABSENT;
	return ret ? FAMILY_ERROR : FAMILY_FOUND;
}

static int join(int fd, __u32 grp)
{
	return setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp,
			  sizeof(grp));
}

/* Look the family up again; subscribes to its events when it is there. */
static enum family_found resolve_opentoe(struct toe_genl *g, char *err,
					 size_t errlen)
{
	__u16 id;
	__u32 grp;
	enum family_found ret = resolve(g, OPENTOE_GENL_NAME,
					OPENTOE_GENL_MCGRP_EVENTS, &id, &grp,
					err, errlen);

	g->family = 0;
	g->mcgrp = 0;
	if (ret != FAMILY_FOUND)
		return ret;
	if (!grp) {
		errf(err, errlen,
		     "the module's family '%s' has no '%s' group (an older module?)",
		     OPENTOE_GENL_NAME, OPENTOE_GENL_MCGRP_EVENTS);
		return FAMILY_ERROR;
	}
	if (join(g->ev_fd, grp)) {
		errf(err, errlen, "cannot subscribe to the module's events: %s",
		     strerror(errno));
		return FAMILY_ERROR;
	}
	g->family = id;
	g->mcgrp = grp;
	return FAMILY_FOUND;
}

int toe_genl_open(struct toe_genl *g, char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = REQ_TIMEOUT_S };
	__u16 ctrl_id;
	__u32 ctrl_grp;
	int rcvbuf = EV_RCVBUF;

	memset(g, 0, sizeof(*g));
	g->ev_fd = -1;
	g->seq = (__u32)time(NULL);
	g->fd = toe_nlmsg_socket(false);
	if (g->fd < 0)
		return errf(err, errlen,
			    "cannot open a generic netlink socket: %s",
			    strerror(errno));
	setsockopt(g->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	g->ev_fd = toe_nlmsg_socket(true);
	if (g->ev_fd < 0) {
		errf(err, errlen, "cannot open a generic netlink socket: %s",
		     strerror(errno));
		goto fail;
	}
	if (setsockopt(g->ev_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)))
		setsockopt(g->ev_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
			   sizeof(rcvbuf));
	/* The controller's notifications first: a module loaded from now on is seen. */
	if (resolve(g, "nlctrl", "notify", &ctrl_id, &ctrl_grp, err, errlen) !=
	    FAMILY_FOUND) {
		if (!ctrl_id)
			errf(err, errlen,
			     "no genetlink controller (nlctrl) in this kernel");
		goto fail;
	}
	if (!ctrl_grp) {
		errf(err, errlen,
		     "the genetlink controller has no 'notify' group");
		goto fail;
	}
	if (join(g->ev_fd, ctrl_grp)) {
		errf(err, errlen, "cannot follow the genetlink controller: %s",
		     strerror(errno));
		goto fail;
	}
	g->ctrl_grp = ctrl_grp;
	if (resolve_opentoe(g, err, errlen) == FAMILY_ERROR)
		goto fail;
	return 0;
fail:
	toe_genl_close(g);
	return -1;
}

void toe_genl_close(struct toe_genl *g)
{
	toe_close_fds(&g->fd, 1);
	toe_close_fds(&g->ev_fd, 1);
	g->family = 0;
}

static int need_family(const struct toe_genl *g, const char *what, char *err,
		       size_t errlen)
{
	if (g->family)
		return 0;
	errf(err, errlen, "%s: the kernel module is not loaded", what);
	return -ENOENT;
}

/* -------------------------------------------------------- devices */

struct devs {
	struct toe_genl_dev *out;
	int max, n;
};

static int dev_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *ctx)
{
	struct devs *l = ctx;
	struct toe_genl_dev *d;

	(void)nh;
	if (l->n >= l->max || !tb[OPENTOE_A_DEV_INDEX])
		return 0;
	d = &l->out[l->n];
	memset(d, 0, sizeof(*d));
	toe_nla_get_u32(tb[OPENTOE_A_DEV_INDEX], &d->index);
	toe_nla_get_str(tb[OPENTOE_A_DEV_NAME], d->name, sizeof(d->name));
	toe_nla_get_u32(tb[OPENTOE_A_DEV_TTID], &d->ttid);
	toe_nla_get_u32(tb[OPENTOE_A_DEV_NCONN], &d->nconn);
	toe_nla_get_u32(tb[OPENTOE_A_DEV_IFINDEX], &d->ifindex);
	toe_nla_get_str(tb[OPENTOE_A_DEV_IFNAME], d->ifname, sizeof(d->ifname));
	toe_nla_get_str(tb[OPENTOE_A_DEV_TOM], d->tom, sizeof(d->tom));
	toe_nla_get_u32(tb[OPENTOE_A_DEV_TIDS_USED], &d->tids_used);
	toe_nla_get_u32(tb[OPENTOE_A_DEV_TIDS_RESERVED], &d->tids_reserved);
	toe_nla_get_u32(tb[OPENTOE_A_DEV_TIDS_HOST], &d->tids_host);
	toe_nla_get_u32(tb[OPENTOE_A_DEV_LISTENERS], &d->listeners);
	toe_nla_get_u32(tb[OPENTOE_A_DEV_STIDS_RESERVED], &d->stids_reserved);
	toe_nla_get_u32(tb[OPENTOE_A_DEV_L2T_SIZE], &d->l2t_size);
	toe_nla_get_u32(tb[OPENTOE_A_DEV_L2T_USED], &d->l2t_used);
	if (d->name[0])
		l->n++;
	return 0;
}

int toe_genl_devs(struct toe_genl *g, struct toe_genl_dev *out, int max, int *n,
		  char *err, size_t errlen)
{
	struct devs l = { .out = out, .max = max };
	struct toe_nlmsg r;
	int ret;

	*n = 0;
	ret = need_family(g, "listing the module's devices", err, errlen);
	if (ret)
		return ret;
	toe_nlmsg_init(&r, g->family, NLM_F_DUMP, OPENTOE_CMD_DEV_GET,
		       OPENTOE_GENL_VERSION);
	ret = call(g, &r, dev_cb, &l, "listing the module's devices", err,
		   errlen);
	*n = l.n;
	return ret;
}

/* ----------------------------------------------------------- TIDs */

struct tid_reply {
	__u32 tid, l2t;
	bool got;
};

static int tid_reply_cb(const struct nlmsghdr *nh, struct nlattr **tb,
			void *ctx)
{
	struct tid_reply *t = ctx;

	(void)nh;
	t->got = toe_nla_get_u32(tb[OPENTOE_A_TID], &t->tid);
	toe_nla_get_u32(tb[OPENTOE_A_L2T_INDEX], &t->l2t);
	return 0;
}

static void put_tuple(struct toe_nlmsg *r, const struct toe_flow_key *k)
{
	if (k->family == TOE_AF_INET6) {
		toe_nla_put(r, OPENTOE_A_FLOW_SADDR6, k->laddr, 16);
		toe_nla_put(r, OPENTOE_A_FLOW_DADDR6, k->raddr, 16);
	} else {
		toe_nla_put(r, OPENTOE_A_FLOW_SADDR4, k->laddr, 4);
		toe_nla_put(r, OPENTOE_A_FLOW_DADDR4, k->raddr, 4);
	}
	put_be16(r, OPENTOE_A_FLOW_SPORT, k->lport);
	put_be16(r, OPENTOE_A_FLOW_DPORT, k->rport);
}

/* A request that may change the module's TIDs goes out: counted, timed. */
static void changed(struct toe_genl *g)
{
	g->changes++;
	g->changed_ns = toe_now_ns();
}

/* TID_ALLOC; bind: of reserved TID *tid, else a new one. */
static int tid_alloc(struct toe_genl *g, __u32 dev,
		     const struct toe_flow_key *k, bool bind, __u32 *tid,
		     __u32 *l2t, char *err, size_t errlen)
{
	struct tid_reply t = { 0 };
	struct toe_nlmsg r;
	char what[80];
	int ret;

	if (bind)
		snprintf(what, sizeof(what),
			 "TID_ALLOC of reserved TID %u on module device %u",
			 *tid, dev);
	else
		snprintf(what, sizeof(what), "TID_ALLOC on module device %u",
			 dev);
	ret = need_family(g, what, err, errlen);
	if (ret)
		return ret;
	toe_nlmsg_init(&r, g->family, 0, OPENTOE_CMD_TID_ALLOC,
		       OPENTOE_GENL_VERSION);
	toe_nla_put_u32(&r, OPENTOE_A_DEV_INDEX, dev);
	if (bind)
		toe_nla_put_u32(&r, OPENTOE_A_TID, *tid);
	put_tuple(&r, k);
	changed(g);
	ret = call(g, &r, tid_reply_cb, &t, what, err, errlen);
	if (ret)
		return ret;
	if (!t.got) {
		errf(err, errlen, "%s: no TID in the answer", what);
		return -EPROTO;
	}
	*tid = t.tid;
	if (l2t)
		*l2t = t.l2t;
	return 0;
}

int toe_genl_tid_alloc(struct toe_genl *g, __u32 dev,
		       const struct toe_flow_key *k, __u32 *tid, __u32 *l2t,
		       char *err, size_t errlen)
{
	return tid_alloc(g, dev, k, false, tid, l2t, err, errlen);
}

int toe_genl_tid_bind(struct toe_genl *g, __u32 dev,
		      const struct toe_flow_key *k, __u32 tid, __u32 *l2t,
		      char *err, size_t errlen)
{
	return tid_alloc(g, dev, k, true, &tid, l2t, err, errlen);
}

/* The SERVER flag attribute: a server TID's (a listener's). */
static void put_server(struct toe_nlmsg *r, bool server)
{
	static const char none;

	if (server)
		toe_nla_put(r, OPENTOE_A_SERVER, &none, 0);
}

static int tid_reserve(struct toe_genl *g, __u32 dev, bool server, __u32 *tid,
		       char *err, size_t errlen)
{
	struct tid_reply t = { 0 };
	struct toe_nlmsg r;
	char what[64];
	int ret;

	snprintf(what, sizeof(what), "TID_RESERVE%s on module device %u",
		 server ? " + SERVER" : "", dev);
	ret = need_family(g, what, err, errlen);
	if (ret)
		return ret;
	toe_nlmsg_init(&r, g->family, 0, OPENTOE_CMD_TID_RESERVE,
		       OPENTOE_GENL_VERSION);
	toe_nla_put_u32(&r, OPENTOE_A_DEV_INDEX, dev);
	put_server(&r, server);
	if (!server) /* a server TID is not in the TID invariant */
		changed(g);
	else
		g->schanges++; /* but in the server TIDs' */
	ret = call(g, &r, tid_reply_cb, &t, what, err, errlen);
	if (ret)
		return ret;
	if (!t.got) {
		errf(err, errlen, "%s: no TID in the answer", what);
		return -EPROTO;
	}
	*tid = t.tid;
	return 0;
}

int toe_genl_tid_reserve(struct toe_genl *g, __u32 dev, __u32 *tid, char *err,
			 size_t errlen)
{
	return tid_reserve(g, dev, false, tid, err, errlen);
}

int toe_genl_stid_reserve(struct toe_genl *g, __u32 dev, __u32 *stid, char *err,
			  size_t errlen)
{
	return tid_reserve(g, dev, true, stid, err, errlen);
}

static int tid_free(struct toe_genl *g, __u32 dev, bool server, __u32 tid,
		    char *err, size_t errlen)
{
	struct toe_nlmsg r;
	char what[80];
	int ret;

	snprintf(what, sizeof(what), "TID_FREE of %sTID %u on module device %u",
		 server ? "server " : "", tid, dev);
	ret = need_family(g, what, err, errlen);
	if (ret)
		return ret;
	toe_nlmsg_init(&r, g->family, 0, OPENTOE_CMD_TID_FREE,
		       OPENTOE_GENL_VERSION);
	toe_nla_put_u32(&r, OPENTOE_A_DEV_INDEX, dev);
	toe_nla_put_u32(&r, OPENTOE_A_TID, tid);
	put_server(&r, server);
	if (!server) /* a server TID is not in the TID invariant */
		changed(g);
	else
		g->schanges++; /* but in the server TIDs' */
	return call(g, &r, NULL, NULL, what, err, errlen);
}

int toe_genl_tid_free(struct toe_genl *g, __u32 dev, __u32 tid, char *err,
		      size_t errlen)
{
	return tid_free(g, dev, false, tid, err, errlen);
}

int toe_genl_stid_free(struct toe_genl *g, __u32 dev, __u32 stid, char *err,
		       size_t errlen)
{
	return tid_free(g, dev, true, stid, err, errlen);
}

/* A growing array of fixed-size records. */
struct vec {
	void *v;
	size_t sz;
	int n, cap;
};

static void *vec_add(struct vec *a)
{
	if (a->n == a->cap) {
		int ncap = a->cap ? 2 * a->cap : 64;
		void *p = realloc(a->v, ncap * a->sz);

		if (!p)
			return NULL;
		a->v = p;
		a->cap = ncap;
	}
	return memset((char *)a->v + a->n++ * a->sz, 0, a->sz);
}

static void get_addr(const struct nlattr *a4, const struct nlattr *a6,
		     __u8 *family, __u32 *addr)
{
	if (a4 && toe_nla_len(a4) == 4) {
		*family = TOE_AF_INET;
		memcpy(addr, toe_nla_data(a4), 4);
	} else if (a6 && toe_nla_len(a6) == 16) {
		*family = TOE_AF_INET6;
		memcpy(addr, toe_nla_data(a6), 16);
	}
}

/*
 * A dump's entry for a TID on a device (TID_GET, LISTEN_GET): a new element
 * of the vector ctx; NULL when the message names no TID or no device (*ret
 * 0: skipped) or when memory ran out (*ret -ENOMEM).
 */
static void *tid_entry(struct nlattr **tb, void *ctx, int *ret)
{
	void *e;

	*ret = 0;
	if (!tb[OPENTOE_A_TID] || !tb[OPENTOE_A_DEV_INDEX])
		return NULL;
	e = vec_add(ctx);
	if (!e)
		*ret = -ENOMEM;
	return e;
}

static int tids_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *ctx)
{
	struct toe_genl_tid *t;
	__u16 port;
	__u8 fam = 0;
	int ret;

	(void)nh;
	t = tid_entry(tb, ctx, &ret);
	if (!t)
		return ret;
	toe_nla_get_u32(tb[OPENTOE_A_DEV_INDEX], &t->dev);
	toe_nla_get_u32(tb[OPENTOE_A_TID], &t->tid);
	toe_nla_get_u32(tb[OPENTOE_A_TID_STATE], &t->state);
	toe_nla_get_u32(tb[OPENTOE_A_L2T_INDEX], &t->l2t);
	get_addr(tb[OPENTOE_A_FLOW_SADDR4], tb[OPENTOE_A_FLOW_SADDR6], &fam,
		 t->key.laddr);
	get_addr(tb[OPENTOE_A_FLOW_DADDR4], tb[OPENTOE_A_FLOW_DADDR6], &fam,
		 t->key.raddr);
	t->key.family = fam;
	if (toe_nla_get_u16(tb[OPENTOE_A_FLOW_SPORT], &port))
		t->key.lport = ntohs(port);
	if (toe_nla_get_u16(tb[OPENTOE_A_FLOW_DPORT], &port))
		t->key.rport = ntohs(port);
	return 0;
}

/*
 * A dump of one of the module's tables (cmd), of device dev or of all (0):
 * its entries, sz bytes each, into *out (malloc'd) and *n.
 */
static int dump_table(struct toe_genl *g, __u8 cmd, __u32 dev, bool server,
		      toe_nlmsg_cb cb, size_t sz, const char *what, void **out,
		      int *n, char *err, size_t errlen)
{
	struct vec a = { .sz = sz };
	struct toe_nlmsg r;
	int ret;

	*out = NULL;
	*n = 0;
	ret = need_family(g, what, err, errlen);
	if (ret)
		return ret;
	toe_nlmsg_init(&r, g->family, NLM_F_DUMP, cmd, OPENTOE_GENL_VERSION);
	if (dev)
		toe_nla_put_u32(&r, OPENTOE_A_DEV_INDEX, dev);
	put_server(&r, server);
	ret = call(g, &r, cb, &a, what, err, errlen);
	if (ret) {
		free(a.v);
		return ret;
	}
	*out = a.v;
	*n = a.n;
	return 0;
}

int toe_genl_tids(struct toe_genl *g, __u32 dev, struct toe_genl_tid **out,
		  int *n, char *err, size_t errlen)
{
	void *v;
	int ret = dump_table(g, OPENTOE_CMD_TID_GET, dev, false, tids_cb,
			     sizeof(**out), "listing the module's TIDs", &v, n,
			     err, errlen);

	*out = v;
	return ret;
}

static int l2t_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *ctx)
{
	struct toe_genl_l2t *e;

	(void)nh;
	if (!tb[OPENTOE_A_L2T_INDEX] || !tb[OPENTOE_A_DEV_INDEX])
		return 0;
	e = vec_add(ctx);
	if (!e)
		return -ENOMEM;
	toe_nla_get_u32(tb[OPENTOE_A_DEV_INDEX], &e->dev);
	toe_nla_get_u32(tb[OPENTOE_A_L2T_INDEX], &e->index);
	toe_nla_get_u32(tb[OPENTOE_A_L2T_IFINDEX], &e->ifindex);
	toe_nla_get_u32(tb[OPENTOE_A_L2T_REFCNT], &e->refcnt);
	toe_nla_get_u16(tb[OPENTOE_A_L2T_STATE], &e->state);
	get_addr(tb[OPENTOE_A_L2T_ADDR4], tb[OPENTOE_A_L2T_ADDR6], &e->family,
		 e->addr);
	if (tb[OPENTOE_A_L2T_LLADDR] &&
	    toe_nla_len(tb[OPENTOE_A_L2T_LLADDR]) == 6) {
		memcpy(e->mac, toe_nla_data(tb[OPENTOE_A_L2T_LLADDR]), 6);
		e->has_mac = 1;
	}
	return 0;
}

int toe_genl_l2t(struct toe_genl *g, __u32 dev, struct toe_genl_l2t **out,
		 int *n, char *err, size_t errlen)
{
	void *v;
	int ret = dump_table(g, OPENTOE_CMD_L2T_GET, dev, false, l2t_cb,
			     sizeof(**out), "listing the module's L2T", &v, n,
			     err, errlen);

	*out = v;
	return ret;
}

/* ------------------------------------------------------ listeners */

int toe_genl_listen(struct toe_genl *g, bool start, __u32 dev,
		    const struct toe_flow_key *k, __u32 stid, char *err,
		    size_t errlen)
{
	struct toe_nlmsg r;
	char what[64];
	int ret;

	snprintf(what, sizeof(what), "LISTEN_%s of port %u on module device %u",
		 start ? "START" : "STOP", k->lport, dev);
	ret = need_family(g, what, err, errlen);
	if (ret)
		return ret;
	toe_nlmsg_init(&r, g->family, 0,
		       start ? OPENTOE_CMD_LISTEN_START :
			       OPENTOE_CMD_LISTEN_STOP,
		       OPENTOE_GENL_VERSION);
	g->schanges++; /* the server TIDs' invariant */
	toe_nla_put_u32(&r, OPENTOE_A_DEV_INDEX, dev);
	/* the address always, 0 or :: for a wildcard: it carries the family */
	if (k->family == TOE_AF_INET6)
		toe_nla_put(&r, OPENTOE_A_LISTEN_ADDR6, k->laddr, 16);
	else
		toe_nla_put(&r, OPENTOE_A_LISTEN_ADDR4, k->laddr, 4);
	put_be16(&r, OPENTOE_A_LISTEN_PORT, k->lport);
	if (start && stid != TOE_TID_NONE) /* the reserved one it takes */
		toe_nla_put_u32(&r, OPENTOE_A_TID, stid);
	return call(g, &r, NULL, NULL, what, err, errlen);
}

static int listeners_cb(const struct nlmsghdr *nh, struct nlattr **tb,
			void *ctx)
{
	struct toe_genl_listener *l;
	__u16 port;
	__u8 fam = 0;
	int ret;

	(void)nh;
	l = tid_entry(tb, ctx, &ret);
	if (!l)
		return ret;
	toe_nla_get_u32(tb[OPENTOE_A_DEV_INDEX], &l->dev);
	toe_nla_get_u32(tb[OPENTOE_A_TID], &l->stid);
	get_addr(tb[OPENTOE_A_LISTEN_ADDR4], tb[OPENTOE_A_LISTEN_ADDR6], &fam,
		 l->key.laddr);
	l->key.family = fam;
	if (toe_nla_get_u16(tb[OPENTOE_A_LISTEN_PORT], &port))
		l->key.lport = ntohs(port);
	return 0;
}

int toe_genl_listeners(struct toe_genl *g, __u32 dev, bool reserved,
		       struct toe_genl_listener **out, int *n, char *err,
		       size_t errlen)
{
	void *v;
	int ret = dump_table(
		g, OPENTOE_CMD_LISTEN_GET, dev, reserved, listeners_cb,
		sizeof(**out),
		reserved ? "listing the module's reserved server TIDs" :
			   "listing the module's listeners",
		&v, n, err, errlen);

	*out = v;
	return ret;
}

/* --------------------------------------------------------- events */

/* After a family event or lost events: look again, say what changed. */
static void refresh_family(struct toe_genl *g, toe_genl_cb cb, void *ctx,
			   bool lost)
{
	__u16 was = g->family;
	char err[256];

	if (resolve_opentoe(g, err, sizeof(err)) == FAMILY_ERROR)
		g->family = 0; /* cannot use it: as if absent */
	g->st.family_events += !lost;
	if (!was && g->family)
		cb(g, TOE_GENL_EV_UP, 0, ctx);
	else if (was && !g->family)
		cb(g, TOE_GENL_EV_DOWN, 0, ctx);
	else if (was && g->family && (was != g->family || lost))
		cb(g, lost ? TOE_GENL_EV_LOST : TOE_GENL_EV_UP, 0, ctx);
}

/* A generic-netlink controller event: our family registered or gone. */
static void ctrl_event(struct toe_genl *g, const struct nlmsghdr *nh,
		       toe_genl_cb cb, void *ctx)
{
	const struct genlmsghdr *gh = NLMSG_DATA(nh);
	struct nlattr *tb[CTRL_ATTR_MAX + 1];
	char name[GENL_NAMSIZ];

	if (gh->cmd != CTRL_CMD_NEWFAMILY && gh->cmd != CTRL_CMD_DELFAMILY)
		return;
	toe_nla_parse(tb, CTRL_ATTR_MAX, (const char *)gh + GENL_HDRLEN,
		      nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN));
	toe_nla_get_str(tb[CTRL_ATTR_FAMILY_NAME], name, sizeof(name));
	if (strcmp(name, OPENTOE_GENL_NAME))
		return;
	if (gh->cmd == CTRL_CMD_NEWFAMILY) {
		refresh_family(g, cb, ctx, false);
		return;
	}
	g->st.family_events++;
	if (g->family) {
		g->family = 0;
		g->mcgrp = 0;
		cb(g, TOE_GENL_EV_DOWN, 0, ctx);
	}
}

int toe_genl_process(struct toe_genl *g, toe_genl_cb cb, void *ctx)
{
	static char buf[RECV_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));

	for (;;) {
		ssize_t n = recv(g->ev_fd, buf, sizeof(buf), MSG_DONTWAIT);
		struct nlmsghdr *nh;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == ENOBUFS) {
				/* Lost events: whatever they said, read it all again. */
				g->st.overruns++;
				refresh_family(g, cb, ctx, true);
				continue;
			}
			return -1;
		}
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n);
		     nh = NLMSG_NEXT(nh, n)) {
			const struct genlmsghdr *gh = NLMSG_DATA(nh);
			struct nlattr *tb[OPENTOE_A_MAX + CTRL_ATTR_MAX + 2];
			__u32 dev = 0;

			if (nh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
				continue;
			g->st.events++;
			if (nh->nlmsg_type == GENL_ID_CTRL) {
				ctrl_event(g, nh, cb, ctx);
				continue;
			}
			if (!g->family || nh->nlmsg_type != g->family)
				continue;
			toe_nla_parse(tb, OPENTOE_A_MAX,
				      (const char *)gh + GENL_HDRLEN,
				      nh->nlmsg_len -
					      NLMSG_LENGTH(GENL_HDRLEN));
			toe_nla_get_u32(tb[OPENTOE_A_DEV_INDEX], &dev);
			switch (gh->cmd) {
			case OPENTOE_CMD_DEV_NEW_NTF:
			case OPENTOE_CMD_DEV_DEL_NTF:
			case OPENTOE_CMD_DEV_CHANGE_NTF:
				g->st.dev_events++;
				cb(g, TOE_GENL_EV_DEV, dev, ctx);
				break;
			case OPENTOE_CMD_L2T_CHANGE_NTF:
				g->st.l2t_events++;
				cb(g, TOE_GENL_EV_L2T, dev, ctx);
				break;
			default:
				break;
			}
		}
	}
}
