// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed: a conntrack entry destroyed ends its flow's fast path (ct.h).
 * The firewall watch's socket (nft.c) also joins conntrack's destroy group
 * (NFNLGRP_CONNTRACK_DESTROY): `conntrack -D`, an expiry or a flush sends
 * IPCTNL_MSG_CT_DELETE with the entry's original tuple, which gives the
 * flow's canonical toe_fwd key (both directions map to one entry, as
 * bpf/forward.h's fwd_key makes it: the lower end first).  Deleting the
 * entry sends the flow's next packets through the stack, as a flowtable's
 * teardown does; the stack (and conntrack) judge them from then on, and
 * the proof at FORWARD admits the flow again only if it sees a new
 * handshake.  No state here: the map is opened for each message batch.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <bpf/bpf.h>
#include "opentoe.h"
#include "ct.h"
#include "log.h"

/* The nested attribute of type t in [a, a + len), or NULL. */
static const struct nlattr *attr_find(const void *a, int len, int t)
{
	const struct nlattr *na = a;

	while (len >= (int)NLA_HDRLEN && na->nla_len >= NLA_HDRLEN &&
	       na->nla_len <= len) {
		if ((na->nla_type & NLA_TYPE_MASK) == t)
			return na;
		len -= NLA_ALIGN(na->nla_len);
		na = (const void *)((const char *)na + NLA_ALIGN(na->nla_len));
	}
	return NULL;
}

#define NLA_DATA(na) ((const char *)(na) + NLA_HDRLEN)
#define NLA_LEN(na) ((int)(na)->nla_len - (int)NLA_HDRLEN)

/* The address attribute t of tuple ip (alen bytes) into a; 0 if there. */
static int tuple_addr(const struct nlattr *ip, int t, int alen, __u32 *a)
{
	const struct nlattr *na = attr_find(NLA_DATA(ip), NLA_LEN(ip), t);

	if (!na || NLA_LEN(na) < alen)
		return -1;
	memcpy(a, NLA_DATA(na), alen);
	return 0;
}

/* A tuple's port attribute t (network order in the message), host order. */
static int tuple_port(const struct nlattr *pr, int t, __u16 *port)
{
	const struct nlattr *na = attr_find(NLA_DATA(pr), NLA_LEN(pr), t);
	__u16 v;

	if (!na || NLA_LEN(na) < 2)
		return -1;
	memcpy(&v, NLA_DATA(na), 2);
	*port = ntohs(v);
	return 0;
}

/* The canonical key of the original tuple tu of family fam: 0 if TCP. */
static int tuple_key(const struct nlattr *tu, int fam, struct toe_flow_key *k)
{
	const struct nlattr *ip, *pr, *num;
	int six = fam == AF_INET6, alen = six ? 16 : 4;
	__u32 a[4] = { 0 }, b[4] = { 0 };
	__u16 ap, bp;

	ip = attr_find(NLA_DATA(tu), NLA_LEN(tu), CTA_TUPLE_IP);
	pr = attr_find(NLA_DATA(tu), NLA_LEN(tu), CTA_TUPLE_PROTO);
	num = pr ? attr_find(NLA_DATA(pr), NLA_LEN(pr), CTA_PROTO_NUM) : NULL;
	if (!ip || !num || NLA_LEN(num) < 1 ||
	    *(const __u8 *)NLA_DATA(num) != IPPROTO_TCP ||
	    tuple_addr(ip, six ? CTA_IP_V6_SRC : CTA_IP_V4_SRC, alen, a) ||
	    tuple_addr(ip, six ? CTA_IP_V6_DST : CTA_IP_V4_DST, alen, b) ||
	    tuple_port(pr, CTA_PROTO_SRC_PORT, &ap) ||
	    tuple_port(pr, CTA_PROTO_DST_PORT, &bp))
		return -1;
	memset(k, 0, sizeof(*k));
	k->family = six ? TOE_AF_INET6 : TOE_AF_INET;
	/* lower end first: addresses as bytes (network order), then ports */
	if (memcmp(a, b, 16) < 0 || (!memcmp(a, b, 16) && ap <= bp)) {
		memcpy(k->laddr, a, 16), memcpy(k->raddr, b, 16);
		k->lport = ap, k->rport = bp;
	} else {
		memcpy(k->laddr, b, 16), memcpy(k->raddr, a, 16);
		k->lport = bp, k->rport = ap;
	}
	return 0;
}

bool ct_destroyed(const char *fwd_path, const struct nlmsghdr *h)
{
	const struct nfgenmsg *g = NLMSG_DATA(h);
	const struct nlattr *tu;
	struct toe_flow_key k;
	int len, fd;
	bool gone;

	if (h->nlmsg_type !=
		    ((NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_DELETE) ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*g)) ||
	    (g->nfgen_family != AF_INET && g->nfgen_family != AF_INET6))
		return false;
	len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*g));
	tu = attr_find((const char *)g + NLMSG_ALIGN(sizeof(*g)), len,
		       CTA_TUPLE_ORIG);
	if (!tu || tuple_key(tu, g->nfgen_family, &k))
		return false;
	fd = bpf_obj_get(fwd_path);
	if (fd < 0)
		return false;
	gone = bpf_map_delete_elem(fd, &k) == 0;
	close(fd);
	if (gone)
		logm(LOG_DEBUG,
		     "conntrack entry destroyed: its flow's fast path ended (ports %u, %u)",
		     k.lport, k.rport);
	return gone;
}
