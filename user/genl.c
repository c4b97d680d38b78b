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
#include "genl.h"

#define RECV_BUF	(64 * 1024)
#define REQ_TIMEOUT_S	5
#define EV_RCVBUF	(1 << 20)

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

static int errf(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int errf(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return -1;
}

__u32 toe_genl_dev_type(__u32 ttid)
{
	switch (ttid) {
	case OPENTOE_ID_CHELSIO_T1: return TOE_DEV_CHELSIO_T1;
	case OPENTOE_ID_CHELSIO_T1C: return TOE_DEV_CHELSIO_T1C;
	case OPENTOE_ID_CHELSIO_T3: return TOE_DEV_CHELSIO_T3;
	default: return TOE_DEV_SOFTWARE;
	}
}

/* ------------------------------------------------------- messages */

struct req {
	union {
		struct nlmsghdr nh;
		char buf[512];
	};
};

static void req_init(struct req *r, __u16 type, __u16 flags, __u8 cmd, __u8 version)
{
	struct genlmsghdr *gh;

	memset(r, 0, sizeof(*r));
	r->nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->nh.nlmsg_type = type;
	r->nh.nlmsg_flags = NLM_F_REQUEST | flags;
	gh = NLMSG_DATA(&r->nh);
	gh->cmd = cmd;
	gh->version = version;
}

static void put(struct req *r, __u16 type, const void *data, __u16 len)
{
	struct nlattr *a = (struct nlattr *)(r->buf + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static void put_u32(struct req *r, __u16 type, __u32 v)
{
	put(r, type, &v, sizeof(v));
}

static void put_be16(struct req *r, __u16 type, __u16 host)
{
	__u16 v = htons(host);

	put(r, type, &v, sizeof(v));
}

/* tb[type] = the attribute, for types up to max; the last one of a type wins. */
static void parse_attrs(struct nlattr **tb, int max, const void *data, int len)
{
	const struct nlattr *a = data;

	memset(tb, 0, sizeof(*tb) * (max + 1));
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		int t = a->nla_type & NLA_TYPE_MASK;

		if (t <= max)
			tb[t] = (struct nlattr *)a;
		len -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
}

static const void *nla_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

static int nla_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

static bool get_u32(const struct nlattr *a, __u32 *v)
{
	if (!a || nla_len(a) < 4)
		return false;
	memcpy(v, nla_data(a), 4);
	return true;
}

static bool get_u16(const struct nlattr *a, __u16 *v)
{
	if (!a || nla_len(a) < 2)
		return false;
	memcpy(v, nla_data(a), 2);
	return true;
}

static void get_str(const struct nlattr *a, char *buf, size_t len)
{
	size_t n;

	buf[0] = 0;
	if (!a || nla_len(a) <= 0)
		return;
	n = strnlen(nla_data(a), nla_len(a));
	if (n >= len)
		n = len - 1;
	memcpy(buf, nla_data(a), n);
	buf[n] = 0;
}

/* The extended ACK's message of an NLMSG_ERROR, if the kernel gave one. */
static const char *ext_ack_msg(const struct nlmsghdr *nh)
{
	const struct nlmsgerr *e = NLMSG_DATA(nh);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t payload = sizeof(*e);
	size_t off;

	if (!(nh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NULL;
	if (!(nh->nlmsg_flags & NLM_F_CAPPED))
		payload += e->msg.nlmsg_len - NLMSG_HDRLEN;
	off = NLMSG_ALIGN(NLMSG_HDRLEN + payload);
	if (off >= nh->nlmsg_len)
		return NULL;
	parse_attrs(tb, NLMSGERR_ATTR_MAX, (const char *)nh + off, nh->nlmsg_len - off);
	if (!tb[NLMSGERR_ATTR_MSG] || nla_len(tb[NLMSGERR_ATTR_MSG]) < 2 ||
	    ((const char *)nla_data(tb[NLMSGERR_ATTR_MSG]))[nla_len(tb[NLMSGERR_ATTR_MSG]) - 1])
		return NULL;
	return nla_data(tb[NLMSGERR_ATTR_MSG]);
}

typedef int (*msg_cb)(const struct nlmsghdr *nh, struct nlattr **tb, void *ctx);

/*
 * Send r and read its replies up to the ACK (a request) or NLMSG_DONE (a
 * dump), calling cb for each data message.  0 or -errno; err names what
 * failed, with the kernel's extended ACK message when there is one.
 */
static int call(struct toe_genl *g, struct req *r, int maxattr, msg_cb cb, void *ctx,
		const char *what, char *err, size_t errlen)
{
	static char buf[RECV_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlattr *tb[OPENTOE_A_MAX + CTRL_ATTR_MAX + 2];
	bool dump = r->nh.nlmsg_flags & NLM_F_DUMP;
	int ret = 0;

	if (maxattr > (int)(sizeof(tb) / sizeof(tb[0])) - 1)
		maxattr = sizeof(tb) / sizeof(tb[0]) - 1;
	r->nh.nlmsg_seq = ++g->seq;
	if (!dump)
		r->nh.nlmsg_flags |= NLM_F_ACK;
	if (send(g->fd, r, r->nh.nlmsg_len, 0) < 0) {
		ret = -errno;
		errf(err, errlen, "%s: netlink send: %s", what, strerror(errno));
		return ret;
	}
	for (;;) {
		ssize_t n = recv(g->fd, buf, sizeof(buf), 0);
		struct nlmsghdr *nh;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
			errf(err, errlen, "%s: no answer from the module: %s", what, strerror(-ret));
			return ret;
		}
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_seq != r->nh.nlmsg_seq)
				continue;	/* the answer to an earlier, timed-out request */
			if (nh->nlmsg_type == NLMSG_DONE) {
				int e = 0;

				if (nh->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
					memcpy(&e, NLMSG_DATA(nh), sizeof(int));
				if (e < 0 && !ret) {
					ret = e;
					errf(err, errlen, "%s: %s", what, strerror(-e));
				}
				goto out;
			}
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);
				const char *m;

				if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e))) {
					ret = -EPROTO;
					errf(err, errlen, "%s: short netlink error message", what);
					goto out;
				}
				if (e->error && !ret) {
					ret = e->error;
					m = ext_ack_msg(nh);
					errf(err, errlen, "%s: %s%s%s", what, strerror(-ret),
					     m ? ": " : "", m ? m : "");
				}
				goto out;
			}
			if (nh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
				continue;
			parse_attrs(tb, maxattr, (const char *)NLMSG_DATA(nh) + GENL_HDRLEN,
				    nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN));
			if (cb && !ret) {
				int e = cb(nh, tb, ctx);

				if (e < 0) {
					ret = e;	/* keep reading to the end */
					errf(err, errlen, "%s: %s", what, strerror(-e));
				}
			}
		}
	}
out:
	return ret;
}

/* ------------------------------------------------------ the family */

struct fam {
	const char *group;	/* the multicast group wanted */
	__u16 id;
	__u32 grp;
};

static int fam_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *ctx)
{
	struct fam *f = ctx;
	const struct nlattr *a;
	int len;

	(void)nh;
	get_u16(tb[CTRL_ATTR_FAMILY_ID], &f->id);
	if (!tb[CTRL_ATTR_MCAST_GROUPS])
		return 0;
	a = nla_data(tb[CTRL_ATTR_MCAST_GROUPS]);
	len = nla_len(tb[CTRL_ATTR_MCAST_GROUPS]);
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		struct nlattr *gb[CTRL_ATTR_MCAST_GRP_MAX + 1];
		char name[GENL_NAMSIZ];

		parse_attrs(gb, CTRL_ATTR_MCAST_GRP_MAX, nla_data(a), nla_len(a));
		get_str(gb[CTRL_ATTR_MCAST_GRP_NAME], name, sizeof(name));
		if (!strcmp(name, f->group))
			get_u32(gb[CTRL_ATTR_MCAST_GRP_ID], &f->grp);
		len -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
	return 0;
}

/* 1: found, 0: no such family, -1: error. */
static int resolve(struct toe_genl *g, const char *name, struct fam *f, char *err, size_t errlen)
{
	struct req r;
	char what[64];
	int ret;

	f->id = 0;
	f->grp = 0;
	req_init(&r, GENL_ID_CTRL, 0, CTRL_CMD_GETFAMILY, 1);
	put(&r, CTRL_ATTR_FAMILY_NAME, name, strlen(name) + 1);
	snprintf(what, sizeof(what), "resolving the genetlink family '%s'", name);
	ret = call(g, &r, CTRL_ATTR_MAX, fam_cb, f, what, err, errlen);
	if (ret == -ENOENT)
		return 0;	/* absent is an answer, not a failure */
	if (ret)
		return -1;
	if (!f->id)
		return errf(err, errlen, "%s: no family id in the answer", what);
	return 1;
}

static int join(int fd, __u32 grp)
{
	return setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp));
}

/* Look the family up again; subscribes to its events when it is there. */
static int resolve_opentoe(struct toe_genl *g, char *err, size_t errlen)
{
	struct fam f = { .group = OPENTOE_GENL_MCGRP_EVENTS };
	int ret = resolve(g, OPENTOE_GENL_NAME, &f, err, errlen);

	g->family = 0;
	g->mcgrp = 0;
	if (ret <= 0)
		return ret;
	if (!f.grp)
		return errf(err, errlen, "the module's family '%s' has no '%s' group (an older module?)",
			    OPENTOE_GENL_NAME, OPENTOE_GENL_MCGRP_EVENTS);
	if (join(g->ev_fd, f.grp))
		return errf(err, errlen, "cannot subscribe to the module's events: %s",
			    strerror(errno));
	g->family = f.id;
	g->mcgrp = f.grp;
	return 1;
}

static int open_sock(bool nonblock)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int one = 1, fd;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0),
		    NETLINK_GENERIC);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

int toe_genl_open(struct toe_genl *g, char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = REQ_TIMEOUT_S };
	struct fam ctrl = { .group = "notify" };
	int rcvbuf = EV_RCVBUF;

	memset(g, 0, sizeof(*g));
	g->ev_fd = -1;
	g->seq = (__u32)time(NULL);
	g->fd = open_sock(false);
	if (g->fd < 0)
		return errf(err, errlen, "cannot open a generic netlink socket: %s", strerror(errno));
	setsockopt(g->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	g->ev_fd = open_sock(true);
	if (g->ev_fd < 0) {
		errf(err, errlen, "cannot open a generic netlink socket: %s", strerror(errno));
		goto fail;
	}
	if (setsockopt(g->ev_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(g->ev_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	/* The controller's notifications first: a module loaded from now on is seen. */
	if (resolve(g, "nlctrl", &ctrl, err, errlen) <= 0) {
		if (!ctrl.id)
			errf(err, errlen, "no genetlink controller (nlctrl) in this kernel");
		goto fail;
	}
	if (!ctrl.grp) {
		errf(err, errlen, "the genetlink controller has no 'notify' group");
		goto fail;
	}
	if (join(g->ev_fd, ctrl.grp)) {
		errf(err, errlen, "cannot follow the genetlink controller: %s", strerror(errno));
		goto fail;
	}
	g->ctrl_grp = ctrl.grp;
	if (resolve_opentoe(g, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	toe_genl_close(g);
	return -1;
}

void toe_genl_close(struct toe_genl *g)
{
	if (g->fd >= 0)
		close(g->fd);
	if (g->ev_fd >= 0)
		close(g->ev_fd);
	g->fd = g->ev_fd = -1;
	g->family = 0;
}

static int need_family(const struct toe_genl *g, const char *what, char *err, size_t errlen)
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
	get_u32(tb[OPENTOE_A_DEV_INDEX], &d->index);
	get_str(tb[OPENTOE_A_DEV_NAME], d->name, sizeof(d->name));
	get_u32(tb[OPENTOE_A_DEV_TTID], &d->ttid);
	get_u32(tb[OPENTOE_A_DEV_NCONN], &d->nconn);
	get_u32(tb[OPENTOE_A_DEV_IFINDEX], &d->ifindex);
	get_str(tb[OPENTOE_A_DEV_IFNAME], d->ifname, sizeof(d->ifname));
	get_str(tb[OPENTOE_A_DEV_TOM], d->tom, sizeof(d->tom));
	get_u32(tb[OPENTOE_A_DEV_TIDS_USED], &d->tids_used);
	get_u32(tb[OPENTOE_A_DEV_LISTENERS], &d->listeners);
	get_u32(tb[OPENTOE_A_DEV_L2T_SIZE], &d->l2t_size);
	get_u32(tb[OPENTOE_A_DEV_L2T_USED], &d->l2t_used);
	if (d->name[0])
		l->n++;
	return 0;
}

int toe_genl_devs(struct toe_genl *g, struct toe_genl_dev *out, int max, int *n,
		  char *err, size_t errlen)
{
	struct devs l = { .out = out, .max = max };
	struct req r;
	int ret;

	*n = 0;
	ret = need_family(g, "listing the module's devices", err, errlen);
	if (ret)
		return ret;
	req_init(&r, g->family, NLM_F_DUMP, OPENTOE_CMD_DEV_GET, OPENTOE_GENL_VERSION);
	ret = call(g, &r, OPENTOE_A_MAX, dev_cb, &l, "listing the module's devices", err, errlen);
	*n = l.n;
	return ret;
}

/* ----------------------------------------------------------- TIDs */

struct tid_reply {
	__u32 tid, l2t;
	bool got;
};

static int tid_reply_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *ctx)
{
	struct tid_reply *t = ctx;

	(void)nh;
	t->got = get_u32(tb[OPENTOE_A_TID], &t->tid);
	get_u32(tb[OPENTOE_A_L2T_INDEX], &t->l2t);
	return 0;
}

static void put_tuple(struct req *r, const struct toe_flow_key *k)
{
	if (k->family == TOE_AF_INET6) {
		put(r, OPENTOE_A_FLOW_SADDR6, k->laddr, 16);
		put(r, OPENTOE_A_FLOW_DADDR6, k->raddr, 16);
	} else {
		put(r, OPENTOE_A_FLOW_SADDR4, k->laddr, 4);
		put(r, OPENTOE_A_FLOW_DADDR4, k->raddr, 4);
	}
	put_be16(r, OPENTOE_A_FLOW_SPORT, k->lport);
	put_be16(r, OPENTOE_A_FLOW_DPORT, k->rport);
}

int toe_genl_tid_alloc(struct toe_genl *g, __u32 dev, const struct toe_flow_key *k,
		       __u32 *tid, __u32 *l2t, char *err, size_t errlen)
{
	struct tid_reply t = { 0 };
	struct req r;
	char what[64];
	int ret;

	snprintf(what, sizeof(what), "TID_ALLOC on module device %u", dev);
	ret = need_family(g, what, err, errlen);
	if (ret)
		return ret;
	req_init(&r, g->family, 0, OPENTOE_CMD_TID_ALLOC, OPENTOE_GENL_VERSION);
	put_u32(&r, OPENTOE_A_DEV_INDEX, dev);
	put_tuple(&r, k);
	ret = call(g, &r, OPENTOE_A_MAX, tid_reply_cb, &t, what, err, errlen);
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

int toe_genl_tid_free(struct toe_genl *g, __u32 dev, __u32 tid, char *err, size_t errlen)
{
	struct req r;
	char what[64];
	int ret;

	snprintf(what, sizeof(what), "TID_FREE of TID %u on module device %u", tid, dev);
	ret = need_family(g, what, err, errlen);
	if (ret)
		return ret;
	req_init(&r, g->family, 0, OPENTOE_CMD_TID_FREE, OPENTOE_GENL_VERSION);
	put_u32(&r, OPENTOE_A_DEV_INDEX, dev);
	put_u32(&r, OPENTOE_A_TID, tid);
	return call(g, &r, OPENTOE_A_MAX, NULL, NULL, what, err, errlen);
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

static void get_addr(const struct nlattr *a4, const struct nlattr *a6, __u8 *family, __u32 *addr)
{
	if (a4 && nla_len(a4) == 4) {
		*family = TOE_AF_INET;
		memcpy(addr, nla_data(a4), 4);
	} else if (a6 && nla_len(a6) == 16) {
		*family = TOE_AF_INET6;
		memcpy(addr, nla_data(a6), 16);
	}
}

static int tids_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *ctx)
{
	struct toe_genl_tid *t;
	__u16 port;
	__u8 fam = 0;

	(void)nh;
	if (!tb[OPENTOE_A_TID] || !tb[OPENTOE_A_DEV_INDEX])
		return 0;
	t = vec_add(ctx);
	if (!t)
		return -ENOMEM;
	get_u32(tb[OPENTOE_A_DEV_INDEX], &t->dev);
	get_u32(tb[OPENTOE_A_TID], &t->tid);
	get_u32(tb[OPENTOE_A_TID_STATE], &t->state);
	get_u32(tb[OPENTOE_A_L2T_INDEX], &t->l2t);
	get_addr(tb[OPENTOE_A_FLOW_SADDR4], tb[OPENTOE_A_FLOW_SADDR6], &fam, t->key.laddr);
	get_addr(tb[OPENTOE_A_FLOW_DADDR4], tb[OPENTOE_A_FLOW_DADDR6], &fam, t->key.raddr);
	t->key.family = fam;
	if (get_u16(tb[OPENTOE_A_FLOW_SPORT], &port))
		t->key.lport = ntohs(port);
	if (get_u16(tb[OPENTOE_A_FLOW_DPORT], &port))
		t->key.rport = ntohs(port);
	return 0;
}

int toe_genl_tids(struct toe_genl *g, __u32 dev, struct toe_genl_tid **out, int *n,
		  char *err, size_t errlen)
{
	struct vec a = { .sz = sizeof(struct toe_genl_tid) };
	struct req r;
	int ret;

	*out = NULL;
	*n = 0;
	ret = need_family(g, "listing the module's TIDs", err, errlen);
	if (ret)
		return ret;
	req_init(&r, g->family, NLM_F_DUMP, OPENTOE_CMD_TID_GET, OPENTOE_GENL_VERSION);
	if (dev)
		put_u32(&r, OPENTOE_A_DEV_INDEX, dev);
	ret = call(g, &r, OPENTOE_A_MAX, tids_cb, &a, "listing the module's TIDs", err, errlen);
	if (ret) {
		free(a.v);
		return ret;
	}
	*out = a.v;
	*n = a.n;
	return 0;
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
	get_u32(tb[OPENTOE_A_DEV_INDEX], &e->dev);
	get_u32(tb[OPENTOE_A_L2T_INDEX], &e->index);
	get_u32(tb[OPENTOE_A_L2T_IFINDEX], &e->ifindex);
	get_u32(tb[OPENTOE_A_L2T_REFCNT], &e->refcnt);
	get_u16(tb[OPENTOE_A_L2T_STATE], &e->state);
	get_addr(tb[OPENTOE_A_L2T_ADDR4], tb[OPENTOE_A_L2T_ADDR6], &e->family, e->addr);
	if (tb[OPENTOE_A_L2T_LLADDR] && nla_len(tb[OPENTOE_A_L2T_LLADDR]) == 6) {
		memcpy(e->mac, nla_data(tb[OPENTOE_A_L2T_LLADDR]), 6);
		e->has_mac = 1;
	}
	return 0;
}

int toe_genl_l2t(struct toe_genl *g, __u32 dev, struct toe_genl_l2t **out, int *n,
		 char *err, size_t errlen)
{
	struct vec a = { .sz = sizeof(struct toe_genl_l2t) };
	struct req r;
	int ret;

	*out = NULL;
	*n = 0;
	ret = need_family(g, "listing the module's L2T", err, errlen);
	if (ret)
		return ret;
	req_init(&r, g->family, NLM_F_DUMP, OPENTOE_CMD_L2T_GET, OPENTOE_GENL_VERSION);
	if (dev)
		put_u32(&r, OPENTOE_A_DEV_INDEX, dev);
	ret = call(g, &r, OPENTOE_A_MAX, l2t_cb, &a, "listing the module's L2T", err, errlen);
	if (ret) {
		free(a.v);
		return ret;
	}
	*out = a.v;
	*n = a.n;
	return 0;
}

/* --------------------------------------------------------- events */

/* After a family event or lost events: look again, say what changed. */
static void refresh_family(struct toe_genl *g, toe_genl_cb cb, void *ctx, bool lost)
{
	__u16 was = g->family;
	char err[256];

	if (resolve_opentoe(g, err, sizeof(err)) < 0)
		g->family = 0;	/* cannot use it: as if absent */
	g->st.family_events += !lost;
	if (!was && g->family)
		cb(g, TOE_GENL_EV_UP, 0, ctx);
	else if (was && !g->family)
		cb(g, TOE_GENL_EV_DOWN, 0, ctx);
	else if (was && g->family && (was != g->family || lost))
		cb(g, lost ? TOE_GENL_EV_LOST : TOE_GENL_EV_UP, 0, ctx);
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
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			const struct genlmsghdr *gh = NLMSG_DATA(nh);
			struct nlattr *tb[OPENTOE_A_MAX + CTRL_ATTR_MAX + 2];
			__u32 dev = 0;

			if (nh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
				continue;
			g->st.events++;
			if (nh->nlmsg_type == GENL_ID_CTRL) {
				char name[GENL_NAMSIZ];

				if (gh->cmd != CTRL_CMD_NEWFAMILY && gh->cmd != CTRL_CMD_DELFAMILY)
					continue;
				parse_attrs(tb, CTRL_ATTR_MAX, (const char *)gh + GENL_HDRLEN,
					    nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN));
				get_str(tb[CTRL_ATTR_FAMILY_NAME], name, sizeof(name));
				if (strcmp(name, OPENTOE_GENL_NAME))
					continue;
				if (gh->cmd == CTRL_CMD_DELFAMILY) {
					g->st.family_events++;
					if (g->family) {
						g->family = 0;
						g->mcgrp = 0;
						cb(g, TOE_GENL_EV_DOWN, 0, ctx);
					}
				} else {
					refresh_family(g, cb, ctx, false);
				}
				continue;
			}
			if (!g->family || nh->nlmsg_type != g->family)
				continue;
			parse_attrs(tb, OPENTOE_A_MAX, (const char *)gh + GENL_HDRLEN,
				    nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN));
			get_u32(tb[OPENTOE_A_DEV_INDEX], &dev);
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
