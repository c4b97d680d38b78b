/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: the one generic-netlink message builder and request loop, shared
 * by toed's client of the kernel module (user/toed/genl.c) and the module's test
 * program (selftests/kmod/toe_kmod_test.c, built static for the guest).
 *
 * It owns: a request buffer and its header (toe_nlmsg_init), attributes put
 * into it (toe_nla_put*), attributes parsed out of an answer
 * (toe_nla_parse, toe_nla_get_*), a NETLINK_GENERIC socket
 * (toe_nlmsg_socket), sending a request and reading its answers up to the ACK
 * or NLMSG_DONE (toe_nlmsg_call), and resolving a family and one of its
 * multicast groups through nlctrl (toe_nlmsg_resolve).  Raw sockets, no libnl;
 * only libc and the UAPI headers, so that it compiles alone.
 */
#ifndef __TOE_NLMSG_H
#define __TOE_NLMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/types.h>

/* A request: the netlink and genetlink headers, then attributes. */
struct toe_nlmsg {
	union {
		struct nlmsghdr nh;
		char buf[4096];
	};
};

void toe_nlmsg_init(struct toe_nlmsg *m, __u16 type, __u16 flags, __u8 cmd,
		    __u8 version);
/* Attributes appended to m; -EMSGSIZE (m unchanged) when it is full. */
int toe_nla_put(struct toe_nlmsg *m, __u16 type, const void *data, __u16 len);
int toe_nla_put_u32(struct toe_nlmsg *m, __u16 type, __u32 v);
int toe_nla_put_u16(struct toe_nlmsg *m, __u16 type, __u16 v);
int toe_nla_put_u8(struct toe_nlmsg *m, __u16 type, __u8 v);

static inline void *toe_nla_data(const struct nlattr *a)
{
	return (char *)a + NLA_HDRLEN;
}

static inline int toe_nla_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

/* tb[type] = the attribute, for types up to max; the last one of a type wins. */
void toe_nla_parse(struct nlattr **tb, int max, const void *data, int len);
/* false (v untouched) when a is absent or too short. */
bool toe_nla_get_u32(const struct nlattr *a, __u32 *v);
bool toe_nla_get_u16(const struct nlattr *a, __u16 *v);
/* The string, cut to len - 1; "" when a is absent. */
void toe_nla_get_str(const struct nlattr *a, char *buf, size_t len);

/*
 * A bound NETLINK_GENERIC socket with extended and capped ACKs: its fd, or
 * -1 with errno set.
 */
int toe_nlmsg_socket(bool nonblock);

/* Called for each data message of an answer; a negative -errno stops it. */
typedef int (*toe_nlmsg_cb)(const struct nlmsghdr *nh, struct nlattr **tb,
			    void *ctx);

/*
 * Send m on fd (sequence number ++*seq; NLM_F_ACK unless a dump) and read
 * its answers up to the ACK or NLMSG_DONE, calling cb (may be NULL) for each
 * data message with its attributes up to maxattr parsed.  0 or -errno: the
 * kernel's error, -ETIMEDOUT when the socket's receive timeout ran out.  On
 * error, err (may be NULL) says "WHAT: ...", with the kernel's extended ACK
 * message when it gave one.
 */
int toe_nlmsg_call(int fd, __u32 *seq, struct toe_nlmsg *m, int maxattr,
		   toe_nlmsg_cb cb, void *ctx, const char *what, char *err,
		   size_t errlen);

/*
 * The id of genetlink family name and (group not NULL) the id of its
 * multicast group of that name, 0 if it has none.  0, -ENOENT when there is
 * no such family, or another -errno (err set as for toe_nlmsg_call).
 */
int toe_nlmsg_resolve(int fd, __u32 *seq, const char *name, const char *group,
		      __u16 *id, __u32 *grp, char *err, size_t errlen);

#endif /* __TOE_NLMSG_H */
