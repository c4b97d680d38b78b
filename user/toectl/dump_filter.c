// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toectl dump: the filter's words into struct toe_cap_conf (dump.h).
 *   --flow A,B   A and B: ADDR, ADDR:PORT, [IPV6]:PORT or a bare IPv6
 *                address; both directions of the flow between them
 *   --port N     either port
 *   --netns NS   a name of ip netns (/run/netns/NS) or a path to a
 *                namespace file (/proc/PID/ns/net): the namespace the
 *                packet arrived in
 *   --dev IFACE  the interface it came in on (in --netns's namespace, or
 *                toectl's)
 *   --hook H     xdp or tc
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "opentoe_common.h"
#include "dump.h"
#include "lib/err.h"
#include "lib/netns.h"

/* A port: decimal, 1 to 65535.  0, or -1 (no message). */
static int parse_port(const char *s, __u16 *port)
{
	unsigned long v = 0;
	const char *p;

	for (p = s; *p >= '0' && *p <= '9' && v <= 65535; p++)
		v = v * 10 + (unsigned long)(*p - '0');
	if (p == s || *p || v < 1 || v > 65535)
		return -1;
	*port = htons((__u16)v);
	return 0;
}

/* One end, "ADDR", "ADDR:PORT", "[V6]:PORT" or "V6"; its family or 0. */
static int parse_end(char *s, struct toe_cap_end *e)
{
	char *port = NULL, *close;

	if (s[0] == '[') {
		close = strchr(s, ']');
		if (!close || (close[1] && close[1] != ':'))
			return 0;
		*close = '\0';
		port = close[1] ? close + 2 : NULL;
		s++;
	} else if (strchr(s, ':') == strrchr(s, ':') && strchr(s, ':')) {
		port = strchr(s, ':'); /* one colon: IPv4:PORT */
		*port++ = '\0';
	}
	if (port && parse_port(port, &e->port))
		return 0;
	if (inet_pton(AF_INET, s, e->addr) == 1)
		return TOE_AF_INET;
	if (inet_pton(AF_INET6, s, e->addr) == 1)
		return TOE_AF_INET6;
	return 0;
}

int dump_set_flow(struct dump_opts *o, const char *arg)
{
	char buf[128], *comma;
	int fa, fb;

	if (strlen(arg) >= sizeof(buf) || !(comma = strchr(arg, ',')))
		goto bad;
	strcpy(buf, arg);
	comma = buf + (comma - arg);
	*comma = '\0';
	fa = parse_end(buf, &o->conf.a);
	fb = parse_end(comma + 1, &o->conf.b);
	if (!fa || fa != fb)
		goto bad;
	o->conf.family = fa;
	o->conf.match |= TOE_CAP_M_FLOW;
	o->flow = arg;
	return 0;
bad:
	toe_err("bad --flow '%.64s' (expected ADDR[:PORT],ADDR[:PORT], one family; IPv6 with a port: [ADDR]:PORT)",
		arg);
	return -1;
}

int dump_set_port(struct dump_opts *o, const char *arg)
{
	if (parse_port(arg, &o->conf.port)) {
		toe_err("bad --port '%.64s' (expected 1-65535)", arg);
		return -1;
	}
	o->conf.match |= TOE_CAP_M_PORT;
	return 0;
}

int dump_set_hook(struct dump_opts *o, const char *arg)
{
	if (!strcmp(arg, "xdp"))
		o->conf.hooks = 1 << TOE_CAP_XDP_FWD | 1 << TOE_CAP_XDP_LOCAL;
	else if (!strcmp(arg, "tc"))
		o->conf.hooks = 1 << TOE_CAP_TC_FWD | 1 << TOE_CAP_TC_LOCAL;
	else {
		toe_err("bad --hook '%.64s' (expected xdp or tc)", arg);
		return -1;
	}
	o->conf.match |= TOE_CAP_M_HOOK;
	return 0;
}

/* The namespace file of --netns: a path as given, else /run/netns/NAME. */
static int open_netns(const char *arg)
{
	char path[512];

	if (strchr(arg, '/'))
		snprintf(path, sizeof(path), "%s", arg);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", arg);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/*
 * In the namespace of nsfd: its cookie into o->conf.netns and --dev's
 * ifindex; then back to toectl's own (self).  0, or -1 after a message.
 */
static int resolve_in(struct dump_opts *o, int nsfd, int self)
{
	int rc = 0;

	if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET)) {
		toe_err("bad --netns '%.64s': cannot enter it: %s", o->netns,
			strerror(errno));
		return -1;
	}
	o->conf.netns = toe_netns_cookie();
	if (o->dev) {
		o->conf.ifindex = if_nametoindex(o->dev);
		if (!o->conf.ifindex) {
			toe_err("bad --dev '%.64s': no such interface in %s%s",
				o->dev, o->netns ? "namespace " : "",
				o->netns ? o->netns : "toectl's namespace");
			rc = -1;
		}
	}
	if (nsfd >= 0 && setns(self, CLONE_NEWNET)) {
		toe_err("cannot return to toectl's namespace: %s",
			strerror(errno));
		rc = -1;
	}
	return rc;
}

int dump_resolve_where(struct dump_opts *o)
{
	int nsfd = -1, self = -1, rc;

	if (!o->netns && !o->dev)
		return 0;
	if (o->netns) {
		nsfd = open_netns(o->netns);
		self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (nsfd < 0 || self < 0) {
			toe_err("bad --netns '%.64s': no such namespace (a name of 'ip netns' or a path like /proc/PID/ns/net)",
				o->netns);
			rc = -1;
			goto out;
		}
	}
	rc = resolve_in(o, nsfd, self);
	if (!rc && !o->conf.netns) {
		toe_err("this kernel gives no namespace cookie (SO_NETNS_COOKIE): no --netns or --dev filter");
		rc = -1;
	}
	/* a device is one of its namespace: the two together */
	o->conf.match |= TOE_CAP_M_NETNS | (o->dev ? TOE_CAP_M_IFINDEX : 0);
out:
	if (nsfd >= 0)
		close(nsfd);
	if (self >= 0)
		close(self);
	return rc;
}
