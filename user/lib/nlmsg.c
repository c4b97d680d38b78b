// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * opentoe: generic-netlink requests over raw sockets (see nlmsg.h), for
 * toed's module client and the module's test program.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "lib/nlmsg.h"

#define RECV_BUF (64 * 1024)

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

static void say(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------- building */

void toe_nlmsg_init(struct toe_nlmsg *m, __u16 type, __u16 flags, __u8 cmd,
		    __u8 version)
{
	struct genlmsghdr *gh;

	memset(m, 0, sizeof(*m));
	m->nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m->nh.nlmsg_type = type;
	m->nh.nlmsg_flags = NLM_F_REQUEST | flags;
	gh = NLMSG_DATA(&m->nh);
	gh->cmd = cmd;
	gh->version = version;
}

int toe_nla_put(struct toe_nlmsg *m, __u16 type, const void *data, __u16 len)
{
	size_t off = NLMSG_ALIGN(m->nh.nlmsg_len);
	struct nlattr *a = (struct nlattr *)(m->buf + off);

	if (off + NLA_ALIGN(NLA_HDRLEN + (size_t)len) > sizeof(m->buf))
		return -EMSGSIZE;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	m->nh.nlmsg_len = off + NLA_ALIGN(a->nla_len);
	return 0;
}

int toe_nla_put_u32(struct toe_nlmsg *m, __u16 type, __u32 v)
{
	return toe_nla_put(m, type, &v, sizeof(v));
}

int toe_nla_put_u16(struct toe_nlmsg *m, __u16 type, __u16 v)
{
	return toe_nla_put(m, type, &v, sizeof(v));
}

int toe_nla_put_u8(struct toe_nlmsg *m, __u16 type, __u8 v)
{
	return toe_nla_put(m, type, &v, sizeof(v));
}

/* -------------------------------------------------------- parsing */

void toe_nla_parse(struct nlattr **tb, int max, const void *data, int len)
{
	const struct nlattr *a = data;

	memset(tb, 0, sizeof(*tb) * (max + 1));
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= len) {
		int t = a->nla_type & NLA_TYPE_MASK;

		if (t <= max)
			tb[t] = (struct nlattr *)a;
		len -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a +
					    NLA_ALIGN(a->nla_len));
	}
}

bool toe_nla_get_u32(const struct nlattr *a, __u32 *v)
{
	if (!a || toe_nla_len(a) < 4)
		return false;
	memcpy(v, toe_nla_data(a), 4);
	return true;
}

bool toe_nla_get_u16(const struct nlattr *a, __u16 *v)
{
	if (!a || toe_nla_len(a) < 2)
		return false;
	memcpy(v, toe_nla_data(a), 2);
	return true;
}

void toe_nla_get_str(const struct nlattr *a, char *buf, size_t len)
{
	size_t n;

	buf[0] = 0;
	if (!a || toe_nla_len(a) <= 0)
		return;
	n = strnlen(toe_nla_data(a), toe_nla_len(a));
	if (n >= len)
		n = len - 1;
	memcpy(buf, toe_nla_data(a), n);
	buf[n] = 0;
}

/* The extended ACK's message of an NLMSG_ERROR, if the kernel gave one. */
static const char *ext_ack_msg(const struct nlmsghdr *nh)
{
	const struct nlmsgerr *e = NLMSG_DATA(nh);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t payload = sizeof(*e);
	const struct nlattr *msg;
	size_t off;

	if (!(nh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NULL;
	if (!(nh->nlmsg_flags & NLM_F_CAPPED))
		payload += e->msg.nlmsg_len - NLMSG_HDRLEN;
	off = NLMSG_ALIGN(NLMSG_HDRLEN + payload);
	if (off >= nh->nlmsg_len)
		return NULL;
	toe_nla_parse(tb, NLMSGERR_ATTR_MAX, (const char *)nh + off,
		      nh->nlmsg_len - off);
	msg = tb[NLMSGERR_ATTR_MSG];
	if (!msg || toe_nla_len(msg) < 2 ||
	    ((const char *)toe_nla_data(msg))[toe_nla_len(msg) - 1])
		return NULL;
	return toe_nla_data(msg);
}

/* ------------------------------------------------------- requests */

int toe_nlmsg_socket(bool nonblock)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int one = 1, fd, e;

	fd = socket(AF_NETLINK,
		    SOCK_RAW | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0),
		    NETLINK_GENERIC);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/*
 * One answer to request seq: 1 when it ends the request (ACK, error or
 * NLMSG_DONE), 0 to read on.  *ret keeps the first error.
 */
static int answer(const struct nlmsghdr *nh, int maxattr, toe_nlmsg_cb cb,
		  void *ctx, int *ret, const char *what, char *err,
		  size_t errlen)
{
	struct nlattr *tb[256];
	int e = 0;

	if (nh->nlmsg_type == NLMSG_DONE) {
		if (nh->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
			memcpy(&e, NLMSG_DATA(nh), sizeof(int));
		if (e < 0 && !*ret) {
			*ret = e;
			say(err, errlen, "%s: %s", what, strerror(-e));
		}
		return 1;
	}
	if (nh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *ne = NLMSG_DATA(nh);
		const char *m;

		if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ne))) {
			*ret = -EPROTO;
			say(err, errlen, "%s: short netlink error message",
			    what);
			return 1;
		}
		if (ne->error && !*ret) {
			*ret = ne->error;
			m = ext_ack_msg(nh);
			say(err, errlen, "%s: %s%s%s", what, strerror(-*ret),
			    m ? ": " : "", m ? m : "");
		}
		return 1;
	}
	if (nh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN) || !cb || *ret)
		return 0;
	if (maxattr > (int)(sizeof(tb) / sizeof(tb[0])) - 1)
		maxattr = sizeof(tb) / sizeof(tb[0]) - 1;
	toe_nla_parse(tb, maxattr, (const char *)NLMSG_DATA(nh) + GENL_HDRLEN,
		      nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN));
	e = cb(nh, tb, ctx);
	if (e < 0) {
		*ret = e; /* keep reading to the end */
		say(err, errlen, "%s: %s", what, strerror(-e));
	}
	return 0;
}

int toe_nlmsg_call(int fd, __u32 *seq, struct toe_nlmsg *m, int maxattr,
		   toe_nlmsg_cb cb, void *ctx, const char *what, char *err,
		   size_t errlen)
{
	static __thread char buf[RECV_BUF]
		__attribute__((aligned(NLMSG_ALIGNTO)));
	int ret = 0;

	m->nh.nlmsg_seq = ++*seq;
	if (!(m->nh.nlmsg_flags & NLM_F_DUMP))
		m->nh.nlmsg_flags |= NLM_F_ACK;
	if (send(fd, m, m->nh.nlmsg_len, 0) < 0) {
		ret = -errno;
		say(err, errlen, "%s: netlink send: %s", what, strerror(errno));
		return ret;
	}
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *nh;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = errno == EAGAIN || errno == EWOULDBLOCK ?
				      -ETIMEDOUT :
				      -errno;
			say(err, errlen, "%s: no answer from the module: %s",
			    what, strerror(-ret));
			return ret;
		}
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_seq != m->nh.nlmsg_seq)
				continue; /* the answer to a timed-out request */
			if (answer(nh, maxattr, cb, ctx, &ret, what, err,
				   errlen))
				return ret;
		}
	}
}

/* ------------------------------------------------------- families */

struct fam {
	const char *group; /* the multicast group wanted, or NULL */
	__u16 id;
	__u32 grp;
};

static int fam_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *ctx)
{
	struct fam *f = ctx;
	const struct nlattr *a;
	int len;

	(void)nh;
	toe_nla_get_u16(tb[CTRL_ATTR_FAMILY_ID], &f->id);
	if (!tb[CTRL_ATTR_MCAST_GROUPS] || !f->group)
		return 0;
	a = toe_nla_data(tb[CTRL_ATTR_MCAST_GROUPS]);
	len = toe_nla_len(tb[CTRL_ATTR_MCAST_GROUPS]);
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= len) {
		struct nlattr *gb[CTRL_ATTR_MCAST_GRP_MAX + 1];
		char name[GENL_NAMSIZ];

		toe_nla_parse(gb, CTRL_ATTR_MCAST_GRP_MAX, toe_nla_data(a),
			      toe_nla_len(a));
		toe_nla_get_str(gb[CTRL_ATTR_MCAST_GRP_NAME], name,
				sizeof(name));
		if (!strcmp(name, f->group))
			toe_nla_get_u32(gb[CTRL_ATTR_MCAST_GRP_ID], &f->grp);
		len -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a +
					    NLA_ALIGN(a->nla_len));
	}
	return 0;
}

int toe_nlmsg_resolve(int fd, __u32 *seq, const char *name, const char *group,
		      __u16 *id, __u32 *grp, char *err, size_t errlen)
{
	struct fam f = { .group = group };
	struct toe_nlmsg m;
	char what[64];
	int ret;

	*id = 0;
	if (grp)
		*grp = 0;
	toe_nlmsg_init(&m, GENL_ID_CTRL, 0, CTRL_CMD_GETFAMILY, 1);
	toe_nla_put(&m, CTRL_ATTR_FAMILY_NAME, name, strlen(name) + 1);
	snprintf(what, sizeof(what), "resolving the genetlink family '%s'",
		 name);
	ret = toe_nlmsg_call(fd, seq, &m, CTRL_ATTR_MAX, fam_cb, &f, what, err,
			     errlen);
	if (ret)
		return ret;
	if (!f.id) {
		say(err, errlen, "%s: no family id in the answer", what);
		return -EPROTO;
	}
	*id = f.id;
	if (grp)
		*grp = f.grp;
	return 0;
}
