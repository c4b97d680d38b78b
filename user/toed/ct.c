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
#include <errno.h>
#include <stdio.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <bpf/bpf.h>
#include "lib/clock.h"
#include "opentoe_common.h"
#include "opentoe_flows.h"
#include "opentoe_events.h"
#include "opentoe_forward.h"
#include "ct.h"
#include "opentoe_events.h"
#include "log.h"
#include "show_maps.h"

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

/*
 * The canonical key of the original tuple tu of family fam: 0 if TCP or
 * UDP (the fast path's two protocols; toe_flow_key.proto says which).
 */
static int tuple_key(const struct nlattr *tu, int fam, struct toe_flow_key *k)
{
	const struct nlattr *ip, *pr, *num;
	int six = fam == AF_INET6, alen = six ? 16 : 4;
	__u32 a[4] = { 0 }, b[4] = { 0 };
	__u16 ap, bp;
	__u8 l4;

	ip = attr_find(NLA_DATA(tu), NLA_LEN(tu), CTA_TUPLE_IP);
	pr = attr_find(NLA_DATA(tu), NLA_LEN(tu), CTA_TUPLE_PROTO);
	num = pr ? attr_find(NLA_DATA(pr), NLA_LEN(pr), CTA_PROTO_NUM) : NULL;
	l4 = num && NLA_LEN(num) >= 1 ? *(const __u8 *)NLA_DATA(num) : 0;
	if (!ip || (l4 != IPPROTO_TCP && l4 != IPPROTO_UDP) ||
	    tuple_addr(ip, six ? CTA_IP_V6_SRC : CTA_IP_V4_SRC, alen, a) ||
	    tuple_addr(ip, six ? CTA_IP_V6_DST : CTA_IP_V4_DST, alen, b) ||
	    tuple_port(pr, CTA_PROTO_SRC_PORT, &ap) ||
	    tuple_port(pr, CTA_PROTO_DST_PORT, &bp))
		return -1;
	memset(k, 0, sizeof(*k));
	k->family = six ? TOE_AF_INET6 : TOE_AF_INET;
	k->proto = l4 == IPPROTO_UDP ? IPPROTO_UDP : 0;
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

/* A map pinned next to toe_fwd (fwd_path), opened: its fd, or -1. */
static int fwd_sibling(const char *fwd_path, const char *name)
{
	const char *slash = strrchr(fwd_path, '/');
	char path[4096];

	if (!slash ||
	    snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - fwd_path),
		     fwd_path, name) >= (int)sizeof(path))
		return -1;
	return bpf_obj_get(path);
}

/*
 * A NATed flow's toe_fwd_nat entry (key k, its reply tuple's; the map is
 * pinned next to toe_fwd) goes with its toe_fwd entry.
 */
static void nat_alias_delete(const char *fwd_path, const struct toe_flow_key *k)
{
	int fd = fwd_sibling(fwd_path, TOE_MAP(FWD_NAT));

	if (fd < 0)
		return;
	bpf_map_delete_elem(fd, k);
	close(fd);
}

bool ct_destroyed(struct fwdev *fw, const char *fwd_path,
		  const struct nlmsghdr *h)
{
	const struct nfgenmsg *g = NLMSG_DATA(h);
	const struct nlattr *tu, *z;
	struct toe_flow_key k;
	struct toe_fwd v;
	__u16 zone = 0;
	int len, fd;
	bool gone, have;

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
	z = attr_find((const char *)g + NLMSG_ALIGN(sizeof(*g)), len, CTA_ZONE);
	if (z && NLA_LEN(z) >= 2)
		zone = ntohs(*(const __u16 *)NLA_DATA(z));
	fd = bpf_obj_get(fwd_path);
	if (fd < 0)
		return false;
	/* its counters first, for its fwd_ended event (fwdev.c) */
	have = bpf_map_lookup_elem(fd, &k, &v) == 0;
	if (have && v.ct_zone != zone) {
		close(fd); /* another zone's entry of the same tuple */
		return false;
	}
	gone = bpf_map_delete_elem(fd, &k) == 0;
	close(fd);
	if (gone && have)
		fwd_ct_gone(fw, &k, &v);
	tu = attr_find((const char *)g + NLMSG_ALIGN(sizeof(*g)), len,
		       CTA_TUPLE_REPLY);
	if (gone && tu && !tuple_key(tu, g->nfgen_family, &k))
		nat_alias_delete(fwd_path, &k);
	if (gone)
		logm(LOG_DEBUG,
		     "conntrack entry destroyed: its flow's fast path ended (ports %u, %u)",
		     k.lport, k.rport);
	return gone;
}

/* ------------------------------------------- conntrack kept true (issue 33) */

/* A request being built: header, then attributes (nested ones by hand). */
struct ctreq {
	char buf[512];
	int len;
};

/* Attribute t of n bytes at the end of r; its start (for nesting). */
static struct nlattr *put(struct ctreq *r, int t, const void *v, int n)
{
	struct nlattr *na = (void *)(r->buf + r->len);

	if (r->len + NLA_HDRLEN + NLA_ALIGN(n) > (int)sizeof(r->buf))
		return NULL;
	na->nla_type = t;
	na->nla_len = NLA_HDRLEN + n;
	if (n)
		memcpy(r->buf + r->len + NLA_HDRLEN, v, n);
	r->len += NLA_HDRLEN + NLA_ALIGN(n);
	return na;
}

/* Close nested attribute na (opened by put(r, t | NLA_F_NESTED, 0, 0)). */
static void end(struct ctreq *r, struct nlattr *na)
{
	if (na)
		na->nla_len = (char *)r->buf + r->len - (char *)na;
}

/* The original tuple of the flow e names: the client's end first. */
static void put_tuple(struct ctreq *r, const struct toe_event *e)
{
	const struct toe_flow_key *k = &e->key;
	int six = k->family == TOE_AF_INET6, alen = six ? 16 : 4;
	const __u32 *src = e->direction ? k->raddr : k->laddr;
	const __u32 *dst = e->direction ? k->laddr : k->raddr;
	__u16 sp = htons(e->direction ? k->rport : k->lport);
	__u16 dp = htons(e->direction ? k->lport : k->rport);
	__u8 l4 = k->proto == IPPROTO_UDP ? IPPROTO_UDP : IPPROTO_TCP;
	struct nlattr *tu, *ip, *pr;

	tu = put(r, CTA_TUPLE_ORIG | NLA_F_NESTED, NULL, 0);
	ip = put(r, CTA_TUPLE_IP | NLA_F_NESTED, NULL, 0);
	put(r, six ? CTA_IP_V6_SRC : CTA_IP_V4_SRC, src, alen);
	put(r, six ? CTA_IP_V6_DST : CTA_IP_V4_DST, dst, alen);
	end(r, ip);
	pr = put(r, CTA_TUPLE_PROTO | NLA_F_NESTED, NULL, 0);
	put(r, CTA_PROTO_NUM, &l4, 1);
	put(r, CTA_PROTO_SRC_PORT, &sp, 2);
	put(r, CTA_PROTO_DST_PORT, &dp, 2);
	end(r, pr);
	end(r, tu);
}

/*
 * The established timeout of protocol proto (toe_flow_key's), seconds:
 * net.netfilter.nf_conntrack_tcp_timeout_established (5 days), or for UDP
 * nf_conntrack_udp_timeout_stream (120 s: a flow that has seen its reply).
 */
static __u32 est_timeout(__u8 proto)
{
	bool udp = proto == IPPROTO_UDP;
	unsigned int dflt = udp ? 120 : 432000, v = dflt;
	FILE *f = fopen(udp ? "/proc/sys/net/netfilter/"
			      "nf_conntrack_udp_timeout_stream" :
			      "/proc/sys/net/netfilter/"
			      "nf_conntrack_tcp_timeout_established",
			"r");

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

/* One request on a socket of its own, its answer read: 0 or -errno. */
static int ct_send(struct ctreq *r)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 1 };
	char ans[1024];
	int fd, n, rc = -EIO;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sendto(fd, r->buf, r->len, 0, (struct sockaddr *)&sa, sizeof(sa)) ==
	    r->len) {
		n = recv(fd, ans, sizeof(ans), 0);
		if (n >= (int)NLMSG_LENGTH(sizeof(struct nlmsgerr)) &&
		    ((struct nlmsghdr *)ans)->nlmsg_type == NLMSG_ERROR)
			rc = ((struct nlmsgerr *)NLMSG_DATA(ans))->error;
	}
	close(fd);
	return rc;
}

/*
 * The flow of toe_fwd key k may take the fast path: its conntrack entry is
 * true.  The word goes into toe_fwd_ctok (pinned next to toe_fwd); the
 * fast path's next packet of the flow takes it (bpf/forward.h,
 * fwd_ct_ready).  False if it could not be written.
 */
static bool ctok_put(const char *fwd_path, const struct toe_flow_key *k)
{
	int fd = fwd_sibling(fwd_path, TOE_MAP(FWD_CTOK));
	__u32 one = 1;
	bool ok;

	if (fd < 0)
		return false;
	ok = bpf_map_update_elem(fd, k, &one, BPF_ANY) == 0;
	close(fd);
	return ok;
}

bool ct_admitted(const char *fwd_path, const struct toe_event *e)
{
	struct toe_flow_key k = e->key;

	struct nf_ct_tcp_flags lib = { .flags = IP_CT_TCP_FLAG_BE_LIBERAL,
				       .mask = IP_CT_TCP_FLAG_BE_LIBERAL };
	__u8 st = 3; /* TCP_CONNTRACK_ESTABLISHED */
	__u32 tmo = htonl(est_timeout(e->key.proto));
	struct ctreq r = { .len = NLMSG_LENGTH(sizeof(struct nfgenmsg)) };
	struct nlmsghdr *h = (void *)r.buf;
	struct nfgenmsg *g = NLMSG_DATA(h);
	struct nlattr *pi, *tcp;
	int rc;

	memset(r.buf, 0, sizeof(r.buf));
	h->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK; /* an update: no CREATE */
	g->nfgen_family = e->key.family == TOE_AF_INET6 ? AF_INET6 : AF_INET;
	g->version = NFNETLINK_V0;
	put_tuple(&r, e);
	if (e->ct_zone) {
		__u16 z = htons(e->ct_zone);

		put(&r, CTA_ZONE, &z, 2); /* that zone's entry, no other's */
	}
	put(&r, CTA_TIMEOUT, &tmo, 4);
	/* UDP: no state nor window; its timeout (and that it is there) only */
	if (e->key.proto != IPPROTO_UDP) {
		pi = put(&r, CTA_PROTOINFO | NLA_F_NESTED, NULL, 0);
		tcp = put(&r, CTA_PROTOINFO_TCP | NLA_F_NESTED, NULL, 0);
		put(&r, CTA_PROTOINFO_TCP_STATE, &st, 1);
		put(&r, CTA_PROTOINFO_TCP_FLAGS_ORIGINAL, &lib, sizeof(lib));
		put(&r, CTA_PROTOINFO_TCP_FLAGS_REPLY, &lib, sizeof(lib));
		end(&r, tcp);
		end(&r, pi);
	}
	h->nlmsg_len = r.len;
	rc = ct_send(&r);
	if (rc) {
		logm(LOG_DEBUG,
		     "conntrack entry of an admitted flow (ports %u, %u) not updated: %s",
		     e->key.lport, e->key.rport, strerror(-rc));
		return false;
	}
	k.netns = 0; /* toe_fwd's key: a routed flow's */
	if (!ctok_put(fwd_path, &k))
		logm(LOG_WARN,
		     "flow (ports %u, %u): conntrack made true, but %s not written: it stays in the stack",
		     e->key.lport, e->key.rport, TOE_MAP(FWD_CTOK));
	return true;
}

unsigned int ct_wait_sweep(const char *fwd_path, __u64 min_age_ns)
{
	__u64 now = toe_now_ns();
	struct toe_flow_key k, next, *prev = NULL;
	int fd = bpf_obj_get(fwd_path);
	int ok = fwd_sibling(fwd_path, TOE_MAP(FWD_CTOK));
	unsigned int n = 0;
	struct toe_event e;
	struct toe_fwd v;
	__u32 one;

	while (fd >= 0 && ok >= 0 &&
	       bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		/* waiting, and not for its next packet only (the word there) */
		if (bpf_map_lookup_elem(fd, &k, &v) ||
		    v.state != TOE_FWD_CT_WAIT || v.adm_ns + min_age_ns > now ||
		    bpf_map_lookup_elem(ok, &k, &one) == 0)
			continue;
		memset(&e, 0, sizeof(e));
		e.key = k;
		e.direction = v.client;
		e.ct_zone = v.ct_zone;
		n += ct_admitted(fwd_path, &e);
	}
	if (fd >= 0)
		close(fd);
	if (ok >= 0)
		close(ok);
	return n;
}
