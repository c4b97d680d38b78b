// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * opentoe configuration parser.  Small on purpose (a line, a statement,
 * whitespace-separated words), so that every error can name its file, line
 * and column and say what was expected; fuzzed by selftests/config.
 *
 *   default ACTION [dev NAME]
 *   device NAME type TYPE [dev IFACE] nconn N [steer account|cpu N|forward]
 *   device NAME kmod [steer account|cpu N|forward]
 *   rule ACTION [dev NAME] [family inet|inet6] [local PREFIX] [remote PREFIX]
 *        [lport P[-Q]] [rport P[-Q]] [cgroup PATH|ID] [keepalive IDLE INTVL CNT]
 *        [netns NAME[,NAME...]|host|any]
 *   (and the rest of config_stmts.h's table)
 *
 * ACTION is offload (needs dev NAME), bypass or host.  '#' starts a comment.
 *
 * Each statement's show, beside its parse, writes it back: toectl policy
 * (toe_cfg_show) renders every statement of the table, as text the parser
 * takes back to the same configuration, or as JSON.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/json.h"
#include "lib/netns.h"
#include "opentoe_common.h"
#include "opentoe_policy.h"
#include "config.h"
#include "config_limits.h"
#include "config_stmts.h"

#define MAX_LINE TOE_CFG_MAX_LINE
#define MAX_WORDS TOE_CFG_MAX_WORDS
#define MAX_FILE (64 << 20)

struct word {
	const char *s;
	int col;
};

struct ctx {
	const char *name;
	int line;
	char *err;
	size_t errlen;
	struct toe_cfg *c;
};

static int perr(struct ctx *x, int col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr(struct ctx *x, int col, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(x->err, x->errlen, "%s:%d:%d: %s", x->name, x->line, col, msg);
	return -1;
}

const char *toe_action_name(__u32 a)
{
	switch (a) {
	case TOE_ACT_HOST:
		return "host";
	case TOE_ACT_OFFLOAD:
		return "offload";
	case TOE_ACT_BYPASS:
		return "bypass";
	default:
		return "?";
	}
}

static const char *const dev_types[] = {
	[TOE_DEV_SOFTWARE] = "software",
	[TOE_DEV_CHELSIO_T1] = "chelsio-t1",
	[TOE_DEV_CHELSIO_T1C] = "chelsio-t1c",
	[TOE_DEV_CHELSIO_T3] = "chelsio-t3",
};

const char *toe_dev_type_name(__u32 t)
{
	return t < sizeof(dev_types) / sizeof(dev_types[0]) ? dev_types[t] :
							      "?";
}

/* Shown in messages: a word, cut to a readable length. */
static const char *shown(const char *s)
{
	static char buf[48];
	size_t i;

	for (i = 0; s[i] && i < 40; i++)
		buf[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
	buf[i] = '\0';
	if (s[i])
		strcpy(buf + i, "...");
	return buf;
}

static int parse_u32(struct ctx *x, const struct word *w, __u32 lo, __u32 hi,
		     const char *what, __u32 *out)
{
	unsigned long long v = 0;
	const char *p = w->s;

	if (!*p)
		return perr(x, w->col, "expected %s (%u to %u), got nothing",
			    what, lo, hi);
	for (; *p; p++) {
		if (!isdigit((unsigned char)*p) || v > 0xffffffffULL)
			return perr(x, w->col,
				    "expected %s (%u to %u), got '%s'", what,
				    lo, hi, shown(w->s));
		v = v * 10 + (*p - '0');
	}
	if (v < lo || v > hi)
		return perr(x, w->col, "%s %s is out of range (%u to %u)", what,
			    shown(w->s), lo, hi);
	*out = v;
	return 0;
}

static int parse_action(struct ctx *x, const struct word *w, __u32 *a)
{
	if (!strcmp(w->s, "offload"))
		*a = TOE_ACT_OFFLOAD;
	else if (!strcmp(w->s, "bypass"))
		*a = TOE_ACT_BYPASS;
	else if (!strcmp(w->s, "host"))
		*a = TOE_ACT_HOST;
	else
		return perr(
			x, w->col,
			"expected an action (offload, bypass or host), got '%s'",
			shown(w->s));
	return 0;
}

/*
 * find_dev's answer for a name no 'device' declared (the error is written);
 * not -1, which is "no device" in toe_cfg.
 */
#define DEV_UNDECLARED (-2)

/* The index of the device named w, or DEV_UNDECLARED. */
static int find_dev(struct ctx *x, const struct word *w)
{
	int i;

	for (i = 0; i < x->c->ndevs; i++)
		if (!strcmp(x->c->devs[i].name, w->s))
			return i;
	return perr(x, w->col,
		    "unknown device '%s' (declare it with 'device' before using it)",
		    shown(w->s)),
	       DEV_UNDECLARED;
}

static int parse_range(struct ctx *x, const struct word *w, __u16 *lo,
		       __u16 *hi)
{
	char a[16], *dash;
	struct word part = { a, w->col };
	__u32 l, h;

	if (strlen(w->s) >= sizeof(a))
		return perr(
			x, w->col,
			"expected a port or port range (P or P-Q), got '%s'",
			shown(w->s));
	strcpy(a, w->s);
	dash = strchr(a, '-');
	if (dash)
		*dash = '\0';
	if (parse_u32(x, &part, LIM_LO(PORT), LIM_HI(PORT), "a port", &l))
		return -1;
	h = l;
	if (dash) {
		part.s = dash + 1;
		part.col = w->col + (int)(dash + 1 - a);
		if (parse_u32(x, &part, LIM_LO(PORT), LIM_HI(PORT), "a port",
			      &h))
			return -1;
		if (h < l)
			return perr(
				x, w->col,
				"port range %s is reversed (expected P-Q with P <= Q)",
				shown(w->s));
	}
	*lo = l;
	*hi = h;
	return 0;
}

void toe_prefix_mask(__u8 family, __u8 plen, __u32 *mask)
{
	int i, bits = plen;

	memset(mask, 0, 16);
	for (i = 0; i < (family == TOE_AF_INET ? 1 : 4) && bits > 0; i++) {
		int b = bits > 32 ? 32 : bits;

		mask[i] = htonl(b == 32 ? 0xffffffffU : ~(0xffffffffU >> b));
		bits -= b;
	}
}

static int parse_prefix(struct ctx *x, const struct word *w, __u8 *family,
			__u32 *addr, __u8 *plen)
{
	char a[INET6_ADDRSTRLEN + 8], *slash;
	struct word part;
	__u32 mask[4], l, max;
	__u8 fam;
	int i;

	if (strlen(w->s) >= sizeof(a))
		return perr(
			x, w->col,
			"expected an address prefix (A.B.C.D/N or X::Y/N), got '%s'",
			shown(w->s));
	strcpy(a, w->s);
	slash = strchr(a, '/');
	if (slash)
		*slash = '\0';
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, a, addr) == 1)
		fam = TOE_AF_INET;
	else if (inet_pton(AF_INET6, a, addr) == 1)
		fam = TOE_AF_INET6;
	else
		return perr(
			x, w->col,
			"expected an address prefix (A.B.C.D/N or X::Y/N), got '%s'",
			shown(w->s));
	max = fam == TOE_AF_INET ? LIM_HI(PREFIX4) : LIM_HI(PREFIX6);
	l = max;
	if (slash) {
		part.s = slash + 1;
		part.col = w->col + (int)(slash + 1 - a);
		if (parse_u32(x, &part, 0, max, "a prefix length", &l))
			return -1;
	}
	toe_prefix_mask(fam, l, mask);
	for (i = 0; i < 4; i++) {
		if (addr[i] & ~mask[i])
			return perr(x, w->col,
				    "prefix %s has host bits set beyond /%u",
				    shown(w->s), l);
	}
	if (*family && *family != fam)
		return perr(x, w->col, "prefix %s is %s, but the rule is %s",
			    shown(w->s), fam == TOE_AF_INET ? "IPv4" : "IPv6",
			    *family == TOE_AF_INET ? "IPv4" : "IPv6");
	*family = fam;
	*plen = l;
	return 0;
}

static int parse_cgroup(struct ctx *x, const struct word *w, __u64 *id)
{
	struct stat st;
	__u32 v;

	if (w->s[0] == '/') {
		if (stat(w->s, &st) || !S_ISDIR(st.st_mode))
			return perr(x, w->col, "cgroup %s: %s", shown(w->s),
				    errno ? strerror(errno) : "not a folder");
		/* A cgroup v2 id is the inode number of its folder. */
		*id = st.st_ino;
		return 0;
	}
	if (parse_u32(x, w, LIM_LO(CGROUP_ID), LIM_HI(CGROUP_ID),
		      "a cgroup path or id", &v))
		return -1;
	*id = v;
	return 0;
}

/*
 * The cookie of the network namespace /run/netns/NAME: this thread enters
 * it for as long as it takes one socket's SO_NETNS_COOKIE, then comes back
 * (toed is single-threaded; nothing else runs in between).
 */
static int netns_cookie_of(struct ctx *x, const struct word *w, const char *n,
			   __u64 *cookie)
{
	char path[64];
	int e;

	if (!*n || strlen(n) > LIM_HI(NETNS_NAME) || strchr(n, '/') ||
	    !strcmp(n, ".") || !strcmp(n, ".."))
		return perr(
			x, w->col,
			"netns '%s': expected a name under /run/netns, host or any",
			shown(n));
	snprintf(path, sizeof(path), "/run/netns/%s", n);
	e = toe_netns_cookie_at(path, cookie);
	if (e == ENOENT || e == ENOTDIR)
		return perr(x, w->col,
			    "netns %s: no such network namespace (%s: %s)", n,
			    path, strerror(e));
	if (e)
		return perr(x, w->col, "netns %s: cannot read its cookie (%s)",
			    n, e == ENOTSUP ? "SO_NETNS_COOKIE" : strerror(e));
	return 0;
}

/* "netns NAME[,NAME...]|host|any", w being its value. */
static int parse_netns(struct ctx *x, struct toe_cfg_rule *r,
		       const struct word *w)
{
	char buf[MAX_LINE + 1], *save = NULL, *n;

	if (!strcmp(w->s, "any")) {
		r->netns_any = true;
		strcpy(r->netns_text, "any");
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", w->s);
	for (n = strtok_r(buf, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
		__u64 ck = 0;

		if (r->nnetns == TOE_CFG_MAX_NETNS)
			return perr(x, w->col,
				    "netns: at most %d namespaces in one rule",
				    TOE_CFG_MAX_NETNS);
		if (!strcmp(n, "any"))
			return perr(x, w->col,
				    "netns: 'any' goes alone, not in a list");
		if (!strcmp(n, "host"))
			ck = x->c->host_netns;
		else if (netns_cookie_of(x, w, n, &ck))
			return -1;
		/* (at most 8 names of at most 32, so it fits) */
		snprintf(r->netns_text + strlen(r->netns_text),
			 sizeof(r->netns_text) - strlen(r->netns_text), "%s%s",
			 r->nnetns ? "," : "", n);
		r->netns[r->nnetns++] = ck;
	}
	if (!r->nnetns)
		return perr(
			x, w->col,
			"netns '%s': expected a name under /run/netns, host or any",
			shown(w->s));
	return 0;
}

static bool valid_name(const char *s)
{
	size_t n = strlen(s), i;

	if (n < LIM_LO(DEV_NAME) || n > LIM_HI(DEV_NAME))
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i]))
			return false;
	return true;
}

/* "key value" words after the statement's fixed part. */
#define NEED(n, what)                                                     \
	do {                                                              \
		if (i + (n) >= nw)                                        \
			return perr(x, w[i].col, "'%s' needs %s", w[i].s, \
				    what);                                \
	} while (0)

static int st_default(struct ctx *x, struct word *w, int nw)
{
	struct toe_cfg *c = x->c;
	int i;

	if (nw < 2)
		return perr(
			x, w[0].col,
			"'default' needs an action (offload, bypass or host)");
	if (parse_action(x, &w[1], &c->default_action))
		return -1;
	c->default_dev = -1;
	for (i = 2; i < nw; i++) {
		if (!strcmp(w[i].s, "dev")) {
			NEED(1, "a device name");
			c->default_dev = find_dev(x, &w[++i]);
			if (c->default_dev < 0)
				return -1;
		} else {
			return perr(
				x, w[i].col,
				"expected 'dev' or the end of the line, got '%s'",
				shown(w[i].s));
		}
	}
	if (c->default_action == TOE_ACT_OFFLOAD && c->default_dev < 0)
		return perr(x, w[1].col, "'default offload' needs 'dev NAME'");
	if (c->default_action != TOE_ACT_OFFLOAD && c->default_dev >= 0)
		return perr(x, w[2].col, "'dev' goes only with 'offload'");
	return 0;
}

static void sh_default(const struct toe_cfg *c, FILE *f, struct toe_json *j)
{
	const char *dev = c->default_dev >= 0 ? c->devs[c->default_dev].name :
						NULL;

	if (j) {
		tj_kstr(j, "default", toe_action_name(c->default_action));
		if (dev)
			tj_kstr(j, "default_dev", dev);
		return;
	}
	fprintf(f, "default %s", toe_action_name(c->default_action));
	if (dev)
		fprintf(f, " dev %s", dev);
	fputc('\n', f);
}

/* A share "N%" (1% to 100%), w being it. */
static int parse_share(struct ctx *x, const struct word *w, __u32 *out)
{
	char num[16];
	size_t n = strlen(w->s);
	struct word v = { .s = num, .col = w->col };

	if (n < 2 || n >= sizeof(num) || w->s[n - 1] != '%')
		return perr(x, w->col,
			    "expected a share N%% (1%% to 100%%), got '%s'",
			    shown(w->s));
	memcpy(num, w->s, n - 1);
	num[n - 1] = '\0';
	return parse_u32(x, &v, LIM_LO(SHARE), LIM_HI(SHARE),
			 "a share in percent", out);
}

/*
 * "quota [slots N%] [flows N%] [events N%]": what one namespace other than
 * toed's may hold: a share of each device's nconn (toe_dev.tenant_max), of
 * toe_flows' size (toe_pol_hdr.tenant_flows), of the event ring
 * (toe_pol_hdr.tenant_events).
 */
static int st_quota(struct ctx *x, struct word *w, int nw)
{
	int i;

	if (nw < 3)
		return perr(
			x, w[0].col,
			"'quota' needs 'slots N%%', 'flows N%%' or 'events N%%' (a share, 1%% to 100%%)");
	for (i = 1; i < nw; i += 2) {
		__u32 *v;

		if (!strcmp(w[i].s, "slots"))
			v = &x->c->quota_slots;
		else if (!strcmp(w[i].s, "flows"))
			v = &x->c->quota_flows;
		else if (!strcmp(w[i].s, "events"))
			v = &x->c->quota_events;
		else
			return perr(x, w[i].col,
				    "expected slots, flows or events, got '%s'",
				    shown(w[i].s));
		if (i + 1 >= nw)
			return perr(x, w[i].col, "'%s' needs a share N%%",
				    w[i].s);
		if (parse_share(x, &w[i + 1], v))
			return -1;
	}
	return 0;
}

/* Every share, defaults too: what a tenant may hold, said whole. */
static void sh_quota(const struct toe_cfg *c, FILE *f, struct toe_json *j)
{
	if (!j) {
		fprintf(f, "quota slots %u%% flows %u%% events %u%%\n",
			c->quota_slots, c->quota_flows, c->quota_events);
		return;
	}
	tj_key(j, "quota"); /* percent */
	tj_obj(j);
	tj_ku64(j, "slots", c->quota_slots);
	tj_ku64(j, "flows", c->quota_flows);
	tj_ku64(j, "events", c->quota_events);
	tj_obj_end(j);
}

/* device NAME ...: the name checked, *dp a cleared slot for it. */
static int device_new(struct ctx *x, struct word *w, struct toe_cfg_dev **dp)
{
	struct toe_cfg *c = x->c;
	struct toe_cfg_dev *d;
	int i;

	if (!valid_name(w[1].s))
		return perr(
			x, w[1].col,
			"expected a device name (1 to 15 of A-Z a-z 0-9 _ . -), got '%s'",
			shown(w[1].s));
	for (i = 0; i < c->ndevs; i++)
		if (!strcmp(c->devs[i].name, w[1].s))
			return perr(
				x, w[1].col,
				"device '%s' is already declared on line %d",
				w[1].s, c->devs[i].line);
	if (c->ndevs == (int)LIM_HI(DEVS))
		return perr(x, w[1].col, "too many devices (at most %d)",
			    TOE_MAX_DEVS);
	d = &c->devs[c->ndevs];
	memset(d, 0, sizeof(*d));
	strcpy(d->name, w[1].s);
	d->line = x->line;
	*dp = d;
	return 0;
}

/* "steer account|cpu N|forward", w[*ip] being "steer"; *ip on its last word. */
static int device_steer(struct ctx *x, struct toe_cfg_dev *d, struct word *w,
			int nw, int *ip)
{
	int i = *ip;

	NEED(1, "account, cpu N or forward");
	i++;
	if (!strcmp(w[i].s, "account")) {
		d->steer = TOE_STEER_ACCOUNT;
	} else if (!strcmp(w[i].s, "forward")) {
		d->steer = TOE_STEER_FORWARD;
	} else if (!strcmp(w[i].s, "cpu")) {
		NEED(1, "a CPU number");
		if (parse_u32(x, &w[++i], LIM_LO(CPU), LIM_HI(CPU),
			      "a CPU number", &d->steer_cpu))
			return -1;
		d->steer = TOE_STEER_CPU;
	} else {
		return perr(x, w[i].col,
			    "expected account, cpu N or forward, got '%s'",
			    shown(w[i].s));
	}
	*ip = i;
	return 0;
}

/* "type TYPE", w[*ip] being "type"; *ip on TYPE. */
static int device_type(struct ctx *x, struct toe_cfg_dev *d, struct word *w,
		       int nw, int *ip)
{
	int i = *ip;
	unsigned int t;

	NEED(1, "a type (software, chelsio-t1, chelsio-t1c, chelsio-t3)");
	i++;
	for (t = 0; t < sizeof(dev_types) / sizeof(dev_types[0]); t++)
		if (!strcmp(w[i].s, dev_types[t]))
			break;
	if (t == sizeof(dev_types) / sizeof(dev_types[0]))
		return perr(
			x, w[i].col,
			"expected a type (software, chelsio-t1, chelsio-t1c, chelsio-t3), got '%s'",
			shown(w[i].s));
	d->type = t;
	*ip = i;
	return 0;
}

static int st_device(struct ctx *x, struct word *w, int nw)
{
	struct toe_cfg *c = x->c;
	struct toe_cfg_dev *d = NULL;
	bool have_type = false, have_nconn = false;
	int own_col = 0; /* column of the first of type, dev, nconn */
	int i;

	if (nw < 2)
		return perr(x, w[0].col, "'device' needs a name");
	if (device_new(x, w, &d))
		return -1;
	for (i = 2; i < nw; i++) {
		if (!own_col &&
		    (!strcmp(w[i].s, "type") || !strcmp(w[i].s, "dev") ||
		     !strcmp(w[i].s, "nconn")))
			own_col = w[i].col;
		if (!strcmp(w[i].s, "kmod")) {
			if (d->kmod)
				return perr(x, w[i].col, "'kmod' given twice");
			d->kmod = true;
		} else if (!strcmp(w[i].s, "type")) {
			if (device_type(x, d, w, nw, &i))
				return -1;
			have_type = true;
		} else if (!strcmp(w[i].s, "dev")) {
			NEED(1, "an interface name");
			i++;
			if (strlen(w[i].s) < LIM_LO(IF_NAME))
				return perr(
					x, w[i].col,
					"expected an interface name, got '%s'",
					shown(w[i].s));
			/* the kernel's limit: IF_NAMESIZE with its NUL */
			if (strlen(w[i].s) > LIM_HI(IF_NAME))
				return perr(
					x, w[i].col,
					"interface name '%s' is %zu characters long; at most %u",
					shown(w[i].s), strlen(w[i].s),
					LIM_HI(IF_NAME));
			strcpy(d->ifname, w[i].s);
		} else if (!strcmp(w[i].s, "nconn")) {
			NEED(1, "a number");
			if (parse_u32(x, &w[++i], LIM_LO(NCONN), LIM_HI(NCONN),
				      "nconn", &d->nconn))
				return -1;
			have_nconn = true;
		} else if (!strcmp(w[i].s, "steer")) {
			if (device_steer(x, d, w, nw, &i))
				return -1;
		} else {
			return perr(
				x, w[i].col,
				"expected type, dev, nconn, steer or kmod, got '%s'",
				shown(w[i].s));
		}
	}
	if (d->kmod && own_col)
		return perr(
			x, own_col,
			"a kmod device takes no type, dev or nconn: the kernel module gives them");
	if (d->kmod) {
		/* Until toed finds it in the module (and fills type and nconn in). */
		d->absent = true;
		c->ndevs++;
		return 0;
	}
	if (!have_type)
		return perr(
			x, w[0].col,
			"device '%s' needs 'type TYPE' (or 'kmod': a device of the kernel module)",
			d->name);
	if (!have_nconn)
		return perr(x, w[0].col, "device '%s' needs 'nconn N'",
			    d->name);
	c->ndevs++;
	return 0;
}

static const char *const steer_names[] = {
	[TOE_STEER_ACCOUNT] = "account",
	[TOE_STEER_CPU] = "cpu",
	[TOE_STEER_FORWARD] = "forward",
};

/* A device's line (a kmod one: what the module gives is not the file's). */
static void device_text(const struct toe_cfg_dev *d, FILE *f)
{
	if (d->kmod) {
		fprintf(f, "device %s kmod", d->name);
	} else {
		fprintf(f, "device %s type %s nconn %u", d->name,
			toe_dev_type_name(d->type), d->nconn);
		if (d->ifname[0])
			fprintf(f, " dev %s", d->ifname);
	}
	if (d->steer == TOE_STEER_CPU)
		fprintf(f, " steer cpu %u", d->steer_cpu);
	else if (d->steer == TOE_STEER_FORWARD)
		fprintf(f, " steer forward");
	fputc('\n', f);
}

static void sh_device(const struct toe_cfg *c, FILE *f, struct toe_json *j)
{
	const struct toe_cfg_dev *d;
	int i;

	if (!j) {
		for (i = 0; i < c->ndevs; i++)
			device_text(&c->devs[i], f);
		return;
	}
	tj_key(j, "devices");
	tj_arr(j);
	for (i = 0; i < c->ndevs; i++) {
		d = &c->devs[i];
		tj_obj(j);
		tj_kstr(j, "name", d->name);
		tj_key(j, "kmod");
		tj_bool(j, d->kmod);
		if (!d->kmod) {
			tj_kstr(j, "type", toe_dev_type_name(d->type));
			tj_ku64(j, "nconn", d->nconn);
			tj_kstr(j, "dev", d->ifname);
		}
		tj_kstr(j, "steer",
			d->steer < sizeof(steer_names) /
						sizeof(steer_names[0]) ?
				steer_names[d->steer] :
				"?");
		if (d->steer == TOE_STEER_CPU)
			tj_ku64(j, "steer_cpu", d->steer_cpu);
		tj_obj_end(j);
	}
	tj_arr_end(j);
}

/* The keys of a rule, in the order of enum rule_key. */
enum rule_key {
	RK_DEV,
	RK_FAMILY,
	RK_LOCAL,
	RK_REMOTE,
	RK_LPORT,
	RK_RPORT,
	RK_CGROUP,
	RK_KEEPALIVE,
	RK_NETNS,
	RK_PROTO,
	RK_N
};

static const char *const rule_keys[RK_N] = {
	"dev",	 "family", "local",	"remote", "lport",
	"rport", "cgroup", "keepalive", "netns",  "proto",
};

/* rule ...: *rp a cleared slot at the end of c->rules (grown). */
static int rule_new(struct ctx *x, struct word *w, struct toe_cfg_rule **rp)
{
	struct toe_cfg *c = x->c;
	struct toe_cfg_rule *r;

	if (c->nrules >= (int)LIM_HI(RULES))
		return perr(x, w[0].col, "too many rules (at most %d)",
			    TOE_POL_MAX_RULES);
	if (c->nrules == c->cap) {
		int ncap = c->cap ? 2 * c->cap : 64;
		void *n = realloc(c->rules, ncap * sizeof(*c->rules));

		if (!n)
			return perr(x, w[0].col, "out of memory");
		c->rules = n;
		c->cap = ncap;
	}
	r = &c->rules[c->nrules];
	memset(r, 0, sizeof(*r));
	r->dev = -1;
	r->protos = TOE_CFG_P_TCP;
	r->lport_hi = r->rport_hi = 65535;
	r->line = x->line;
	*rp = r;
	return 0;
}

/* "family inet|inet6" (or ipv4|ipv6), w being its value. */
static int rule_family(struct ctx *x, struct toe_cfg_rule *r,
		       const struct word *w)
{
	__u8 fam;

	if (!strcmp(w->s, "inet") || !strcmp(w->s, "ipv4"))
		fam = TOE_AF_INET;
	else if (!strcmp(w->s, "inet6") || !strcmp(w->s, "ipv6"))
		fam = TOE_AF_INET6;
	else
		return perr(x, w->col, "expected inet or inet6, got '%s'",
			    shown(w->s));
	if (r->family && r->family != fam)
		return perr(x, w->col,
			    "family %s contradicts the rule's prefixes", w->s);
	r->family = fam;
	return 0;
}

/* The value(s) of key k, w[*ip] being the key; *ip on its last word. */
static int rule_value(struct ctx *x, struct toe_cfg_rule *r, enum rule_key k,
		      struct word *w, int nw, int *ip)
{
	int i = *ip;

	switch (k) {
	case RK_DEV:
		NEED(1, "a device name");
		r->dev = find_dev(x, &w[++i]);
		if (r->dev < 0)
			return -1;
		break;
	case RK_FAMILY:
		NEED(1, "inet or inet6");
		if (rule_family(x, r, &w[++i]))
			return -1;
		break;
	case RK_LOCAL:
		NEED(1, "a prefix");
		if (parse_prefix(x, &w[++i], &r->family, r->laddr, &r->lplen))
			return -1;
		break;
	case RK_REMOTE:
		NEED(1, "a prefix");
		if (parse_prefix(x, &w[++i], &r->family, r->raddr, &r->rplen))
			return -1;
		break;
	case RK_LPORT:
		NEED(1, "a port or port range");
		if (parse_range(x, &w[++i], &r->lport_lo, &r->lport_hi))
			return -1;
		break;
	case RK_RPORT:
		NEED(1, "a port or port range");
		if (parse_range(x, &w[++i], &r->rport_lo, &r->rport_hi))
			return -1;
		break;
	case RK_CGROUP:
		NEED(1, "a cgroup path or id");
		if (parse_cgroup(x, &w[++i], &r->cgroup))
			return -1;
		break;
	case RK_PROTO:
		NEED(1, "tcp, udp or any");
		i++;
		if (!strcmp(w[i].s, "tcp"))
			r->protos = TOE_CFG_P_TCP;
		else if (!strcmp(w[i].s, "udp"))
			r->protos = TOE_CFG_P_UDP;
		else if (!strcmp(w[i].s, "any"))
			r->protos = TOE_CFG_P_TCP | TOE_CFG_P_UDP;
		else
			return perr(x, w[i].col,
				    "expected tcp, udp or any, got '%s'",
				    shown(w[i].s));
		break;
	case RK_NETNS:
		NEED(1, "a namespace name (under /run/netns), host or any");
		if (parse_netns(x, r, &w[++i]))
			return -1;
		break;
	case RK_KEEPALIVE:
		NEED(3, "IDLE INTVL CNT (seconds, seconds, probes)");
		if (parse_u32(x, &w[i + 1], LIM_LO(KA_IDLE), LIM_HI(KA_IDLE),
			      "keepalive idle seconds", &r->ka_idle) ||
		    parse_u32(x, &w[i + 2], LIM_LO(KA_INTVL), LIM_HI(KA_INTVL),
			      "keepalive interval seconds", &r->ka_intvl) ||
		    parse_u32(x, &w[i + 3], LIM_LO(KA_CNT), LIM_HI(KA_CNT),
			      "keepalive probe count", &r->ka_cnt))
			return -1;
		i += 3;
		break;
	default:
		break;
	}
	*ip = i;
	return 0;
}

static int st_rule(struct ctx *x, struct word *w, int nw)
{
	struct toe_cfg_rule *r = NULL;
	unsigned int seen = 0;
	int i, k;

	if (rule_new(x, w, &r))
		return -1;
	if (nw < 2)
		return perr(x, w[0].col,
			    "'rule' needs an action (offload, bypass or host)");
	if (parse_action(x, &w[1], &r->action))
		return -1;
	for (i = 2; i < nw; i++) {
		for (k = 0; k < RK_N; k++)
			if (!strcmp(w[i].s, rule_keys[k]))
				break;
		if (k == RK_N)
			return perr(
				x, w[i].col,
				"expected dev, family, local, remote, lport, rport, cgroup, keepalive, netns or proto, got '%s'",
				shown(w[i].s));
		if (seen & (1U << k))
			return perr(x, w[i].col, "'%s' given twice",
				    rule_keys[k]);
		seen |= 1U << k;
		if (rule_value(x, r, k, w, nw, &i))
			return -1;
	}
	if (!(seen & (1U << RK_NETNS)))
		r->netns[r->nnetns++] = x->c->host_netns;
	if (r->action == TOE_ACT_OFFLOAD && r->dev < 0)
		return perr(x, w[1].col, "'rule offload' needs 'dev NAME'");
	if (r->action != TOE_ACT_OFFLOAD && r->dev >= 0)
		return perr(x, w[1].col, "'dev' goes only with 'offload'");
	if (r->action != TOE_ACT_OFFLOAD && r->ka_idle)
		return perr(x, w[1].col,
			    "'keepalive' goes only with 'offload'");
	if (r->ka_idle && !(r->protos & TOE_CFG_P_TCP))
		return perr(x, w[1].col, "'keepalive' goes only with TCP");
	x->c->nrules++;
	return 0;
}

/* One rule field: "KEY VALUE" in the text, "KEY": "VALUE" in JSON. */
static void put_kv(FILE *f, struct toe_json *j, const char *k, const char *v)
{
	if (j)
		tj_kstr(j, k, v);
	else
		fprintf(f, " %s %s", k, v);
}

static void put_prefix(FILE *f, struct toe_json *j, const char *k,
		       const __u32 *a, __u8 family, __u8 plen)
{
	char s[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN + 8];

	if (!inet_ntop(family == TOE_AF_INET6 ? AF_INET6 : AF_INET, a, s,
		       sizeof(s)))
		snprintf(s, sizeof(s), "?");
	snprintf(b, sizeof(b), "%s/%u", s, plen);
	put_kv(f, j, k, b);
}

/* A port range other than 0-65535 (any): "P" or "P-Q". */
static void put_ports(FILE *f, struct toe_json *j, const char *k, __u16 lo,
		      __u16 hi)
{
	char b[16];

	if (lo == 0 && hi == 65535)
		return;
	if (lo == hi)
		snprintf(b, sizeof(b), "%u", lo);
	else
		snprintf(b, sizeof(b), "%u-%u", lo, hi);
	put_kv(f, j, k, b);
}

/* A rule's start: "rule ACTION [dev D] [family F]", or its JSON's. */
static void rule_head(FILE *f, struct toe_json *j, const struct toe_cfg *c,
		      int i)
{
	const struct toe_cfg_rule *r = &c->rules[i];
	const char *fam = r->family == TOE_AF_INET6 ? "inet6" : "inet";

	if (j) {
		tj_obj(j);
		tj_ku64(j, "index", i);
		tj_ku64(j, "line", r->line);
		tj_kstr(j, "action", toe_action_name(r->action));
	} else {
		fprintf(f, "rule %s", toe_action_name(r->action));
	}
	if (r->dev >= 0)
		put_kv(f, j, "dev", c->devs[r->dev].name);
	/* (a prefix says the family: the text needs it only without one) */
	if (r->family && (j || (!r->lplen && !r->rplen)))
		put_kv(f, j, "family", fam);
}

/* A rule's match fields and options, then its end. */
static void rule_tail(FILE *f, struct toe_json *j, const struct toe_cfg_rule *r)
{
	if (r->lplen)
		put_prefix(f, j, "local", r->laddr, r->family, r->lplen);
	if (r->rplen)
		put_prefix(f, j, "remote", r->raddr, r->family, r->rplen);
	put_ports(f, j, "lport", r->lport_lo, r->lport_hi);
	put_ports(f, j, "rport", r->rport_lo, r->rport_hi);
	if (r->cgroup && j)
		tj_ku64(j, "cgroup", r->cgroup);
	else if (r->cgroup)
		fprintf(f, " cgroup %llu", (unsigned long long)r->cgroup);
	if (r->ka_idle && j) {
		tj_key(j, "keepalive");
		tj_arr(j);
		tj_u64(j, r->ka_idle);
		tj_u64(j, r->ka_intvl);
		tj_u64(j, r->ka_cnt);
		tj_arr_end(j);
	} else if (r->ka_idle) {
		fprintf(f, " keepalive %u %u %u", r->ka_idle, r->ka_intvl,
			r->ka_cnt);
	}
	if (r->netns_text[0])
		put_kv(f, j, "netns", r->netns_text);
	if (r->protos != TOE_CFG_P_TCP) /* none said: TCP */
		put_kv(f, j, "proto",
		       r->protos == TOE_CFG_P_UDP ? "udp" : "any");
	if (j)
		tj_obj_end(j);
	else
		fprintf(f, "    # line %d\n", r->line);
}

void toe_cfg_show_rule(const struct toe_cfg *c, int i, FILE *f,
		       struct toe_json *j)
{
	rule_head(f, j, c, i);
	rule_tail(f, j, &c->rules[i]);
}

static void sh_rule(const struct toe_cfg *c, FILE *f, struct toe_json *j)
{
	int i;

	if (j) {
		tj_key(j, "rules");
		tj_arr(j);
	}
	for (i = 0; i < c->nrules; i++)
		toe_cfg_show_rule(c, i, f, j);
	if (j)
		tj_arr_end(j);
}

/* The statements, by config_stmts.h's IDs: ST_DEVICE, ... */
enum statement_id {
#define X(id, keyword, synopsis, bounds, help, example, parse, show) ST_##id,
#define S(id, keyword, help, field, names, dflt, hook) ST_##id,
	TOE_CFG_STATEMENTS(X, S)
#undef S
#undef X
		N_STATEMENTS
};

/* config_stmts.h's table: a statement's parse and show, or a setting's. */
static const struct statement {
	const char *keyword;
	int (*parse)(struct ctx *x, struct word *w, int nw); /* NULL: S */
	void (*show)(const struct toe_cfg *c, FILE *f, struct toe_json *j);
	size_t field; /* a setting's: its __u32 in struct toe_cfg */
	const char *names;
	__u32 dflt;
} statements[N_STATEMENTS] = {
#define X(id, keyword, synopsis, bounds, help, example, parse, show) \
	[ST_##id] = { keyword, parse, show, 0, NULL, 0 },
#define S(id, keyword, help, field, names, dflt, hook)                      \
	[ST_##id] = { keyword, NULL, NULL, offsetof(struct toe_cfg, field), \
		      names,   dflt },
	TOE_CFG_STATEMENTS(X, S)
#undef S
#undef X
};

_Static_assert(TOE_TRACK_ALL == 0 && TOE_TRACK_POLICY == 1,
	       "track's names in config_stmts.h are enum toe_track's");

/* Name i of a setting's names ("all policy") into buf; false past the last. */
static bool nth_name(const char *names, __u32 i, char *buf, size_t len)
{
	const char *p = names;
	size_t n = strcspn(p, " ");

	for (; i; i--) {
		if (!p[n])
			return false;
		p += n + 1;
		n = strcspn(p, " ");
	}
	snprintf(buf, len, "%.*s", (int)n, p);
	return n > 0;
}

/* "'all' or 'policy'": a setting's names, for its errors. */
static const char *names_list(const char *names, char *buf, size_t len)
{
	char name[64], next[64];
	size_t n = 0;
	__u32 i;

	buf[0] = '\0';
	for (i = 0; nth_name(names, i, name, sizeof(name)) && n < len; i++)
		n += snprintf(buf + n, len - n, "%s'%s'",
			      !i ? "" :
			      nth_name(names, i + 1, next, sizeof(next)) ?
				   ", " :
				   " or ",
			      name);
	return buf;
}

static __u32 *setting(struct toe_cfg *c, const struct statement *st)
{
	return (__u32 *)((char *)c + st->field);
}

/* "keyword NAME": a setting (an S row), st its row. */
static int st_setting(struct ctx *x, const struct statement *st, struct word *w,
		      int nw)
{
	char name[64], list[256];
	__u32 v;

	if (nw < 2)
		return perr(x, w[0].col, "'%s' needs %s", st->keyword,
			    names_list(st->names, list, sizeof(list)));
	for (v = 0; nth_name(st->names, v, name, sizeof(name)); v++)
		if (!strcmp(w[1].s, name))
			break;
	if (!nth_name(st->names, v, name, sizeof(name)))
		return perr(x, w[1].col, "expected %s, got '%s'",
			    names_list(st->names, list, sizeof(list)),
			    shown(w[1].s));
	if (nw > 2)
		return perr(x, w[2].col,
			    "expected the end of the line, got '%s'",
			    shown(w[2].s));
	*setting(x->c, st) = v;
	return 0;
}

const char *toe_track_name(__u32 t)
{
	static char name[64];

	return nth_name(statements[ST_TRACK].names, t, name, sizeof(name)) ?
		       name :
		       "?";
}

void toe_cfg_show(const struct toe_cfg *c, FILE *f, struct toe_json *j)
{
	const struct statement *st;
	char name[64];

	for (st = statements; st < statements + N_STATEMENTS; st++) {
		if (st->show) {
			st->show(c, f, j);
			continue;
		}
		if (!nth_name(st->names, *setting((struct toe_cfg *)c, st),
			      name, sizeof(name)))
			snprintf(name, sizeof(name), "?");
		if (j)
			tj_kstr(j, st->keyword, name);
		else
			fprintf(f, "%s %s\n", st->keyword, name);
	}
}

/* "device, default, rule, track or quota": the keywords, in table order. */
static const char *statement_list(void)
{
	static char list[128];
	size_t n = 0;
	int i;

	for (i = 0; i < N_STATEMENTS && n < sizeof(list); i++)
		n += snprintf(list + n, sizeof(list) - n, "%s%s",
			      !i		    ? "" :
			      i == N_STATEMENTS - 1 ? " or " :
						      ", ",
			      statements[i].keyword);
	return list;
}

static int parse_line(struct ctx *x, char *line)
{
	struct word w[MAX_WORDS];
	int nw = 0, i;
	char *p = line;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p || *p == '#')
			break;
		if (nw == MAX_WORDS)
			return perr(x, (int)(p - line) + 1,
				    "too many words on one line (at most %d)",
				    MAX_WORDS);
		w[nw].s = p;
		w[nw].col = (int)(p - line) + 1;
		nw++;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '#')
			p++;
		if (*p == '#') {
			*p = '\0';
			break;
		}
		if (*p)
			*p++ = '\0';
	}
	if (!nw)
		return 0;
	for (i = 0; i < N_STATEMENTS; i++)
		if (!strcmp(w[0].s, statements[i].keyword))
			return statements[i].parse ?
				       statements[i].parse(x, w, nw) :
				       st_setting(x, &statements[i], w, nw);
	return perr(x, w[0].col, "expected %s, got '%s'", statement_list(),
		    shown(w[0].s));
}

int toe_cfg_parse(const char *name, const char *buf, size_t len,
		  struct toe_cfg *c, char *err, size_t errlen)
{
	struct ctx x = { .name = name, .err = err, .errlen = errlen, .c = c };
	char line[MAX_LINE + 1];
	size_t pos = 0, n;
	int i;

	memset(c, 0, sizeof(*c));
	c->default_action = TOE_ACT_HOST;
	c->default_dev = -1;
	c->host_netns = toe_netns_cookie();
	c->quota_slots = TOE_QUOTA_SLOTS_DEFAULT;
	c->quota_flows = TOE_QUOTA_FLOWS_DEFAULT;
	c->quota_events = TOE_QUOTA_EVENTS_DEFAULT;
	for (i = 0; i < N_STATEMENTS; i++)
		if (!statements[i].parse)
			*setting(c, &statements[i]) = statements[i].dflt;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);

		n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		x.line++;
		if (n > MAX_LINE)
			return perr(&x, MAX_LINE + 1,
				    "line longer than %d characters", MAX_LINE);
		memcpy(line, buf + pos, n);
		line[n] = '\0';
		if (strlen(line) != n)
			return perr(&x, (int)strlen(line) + 1,
				    "unexpected NUL byte");
		if (parse_line(&x, line))
			return -1;
		pos += n + 1;
	}
	return 0;
}

int toe_cfg_load(const char *path, struct toe_cfg *c, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len;
	int ret = toe_cfg_load_text(path, c, &text, &len, err, errlen);

	free(text);
	return ret;
}

int toe_cfg_load_text(const char *path, struct toe_cfg *c, char **text,
		      size_t *len, char *err, size_t errlen)
{
	struct stat st;
	char *buf;
	ssize_t got;
	size_t off = 0;
	int fd, ret;

	memset(c, 0, sizeof(*c));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	/* As sshd does: a policy file others can write is not trusted. */
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(
			err, errlen,
			"%s: refusing it: it must be owned by root and writable by no one else (owner uid %u, mode %04o)",
			path, st.st_uid, st.st_mode & 07777);
		close(fd);
		return -1;
	}
	if (st.st_size > MAX_FILE) {
		snprintf(err, errlen, "%s: larger than %d MiB", path,
			 MAX_FILE >> 20);
		close(fd);
		return -1;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	while (off < (size_t)st.st_size &&
	       (got = read(fd, buf + off, st.st_size - off)) > 0)
		off += got;
	close(fd);
	ret = toe_cfg_parse(path, buf, off, c, err, errlen);
	if (ret) {
		free(buf);
	} else {
		*text = buf;
		*len = off;
	}
	return ret;
}

void toe_cfg_free(struct toe_cfg *c)
{
	free(c->rules);
	c->rules = NULL;
	c->nrules = c->cap = 0;
}
