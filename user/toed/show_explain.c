// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toectl explain LOCAL REMOTE [proto tcp|udp] [netns NAME|host]
 * [cgroup PATH|ID]: what the policy in force decides for a connection of
 * that tuple, and why: the rule (its index, its line, its text) or the
 * default, the device, and whether sock_ops keeps a record of it (track).
 * The answer is the datapath's own search on the maps in force
 * (classify_lookup, bpf/policy.h's decide_ns), so it holds for a
 * connection "track policy" left without a record in toectl flows: the
 * question that record answered (why is this on the host?) has its answer
 * here.  What is decided at connect time beyond the rule (a device full,
 * a tenant's quota) is not: toectl flows and toectl reasons say those.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "lib/json.h"
#include "lib/netns.h"
#include "opentoe_common.h"
#include "opentoe_flows.h"
#include "opentoe_policy.h"
#include "classify.h"
#include "config.h"
#include "ctl_parse.h"
#include "policy.h"
#include "show_maps.h"
#include "show_state.h"
#include "state.h"

/* What the request asked about. */
struct ask {
	struct toe_flow_key k;
	__u64 cgid;
	char netns[40]; /* as given, "host" without a clause */
	char local[64], remote[64]; /* as keyed */
};

/* "ADDR:PORT" or "[ADDR6]:PORT" into family, address and port. */
static int endpoint(const char *s, __u8 *family, __u32 *addr, __u16 *port)
{
	char a[INET6_ADDRSTRLEN + 2], *end;
	const char *colon;
	unsigned long p;
	size_t n;

	if (*s == '[') {
		colon = strstr(s, "]:");
		if (!colon)
			return -1;
		n = colon - s - 1;
		colon++;
	} else {
		colon = strrchr(s, ':');
		if (!colon || strchr(s, ':') != colon)
			return -1;
		n = colon - s;
	}
	if (n == 0 || n >= sizeof(a))
		return -1;
	memcpy(a, s + (*s == '['), n);
	a[n] = '\0';
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || p > 65535 || colon[1] == '-' ||
	    colon[1] == '+')
		return -1;
	*port = p;
	memset(addr, 0, 16);
	if (*s != '[' && inet_pton(AF_INET, a, addr) == 1) {
		*family = TOE_AF_INET;
		return 0;
	}
	if (*s == '[' && inet_pton(AF_INET6, a, addr) == 1) {
		*family = TOE_AF_INET6;
		return 0;
	}
	return -1;
}

/* A v4-mapped address (::ffff:a.b.c.d), keyed as IPv4 as sock_ops keys it. */
static bool v4mapped(const __u32 *a)
{
	return !a[0] && !a[1] && a[2] == htonl(0xffff);
}

/* "netns NAME|host" into q; false with an "error ..." line written. */
static bool opt_netns(struct ask *q, const char *v, FILE *out)
{
	char path[sizeof(TOE_NETNS_RUN_DIR) + 40];
	int e;

	snprintf(q->netns, sizeof(q->netns), "%.32s", v);
	if (!strcmp(v, "host"))
		return true;
	if (!*v || strlen(v) > 32 || strchr(v, '/') || !strcmp(v, ".") ||
	    !strcmp(v, "..")) {
		fprintf(out,
			"error explain: netns '%.64s': expected a name under %s or host\n",
			v, TOE_NETNS_RUN_DIR);
		return false;
	}
	snprintf(path, sizeof(path), "%s/%s", TOE_NETNS_RUN_DIR, v);
	e = toe_netns_cookie_at(path, &q->k.netns);
	if (e)
		fprintf(out, "error explain: netns %.32s: %s (%s)\n", v,
			e == ENOENT ? "no such network namespace" :
				      "cannot read its cookie",
			e == ENOENT ? path : strerror(e));
	return !e;
}

/* "cgroup PATH|ID" into q; false with an "error ..." line written. */
static bool opt_cgroup(struct ask *q, const char *v, FILE *out)
{
	struct stat st;
	char *end;

	if (v[0] == '/') {
		if (stat(v, &st) || !S_ISDIR(st.st_mode)) {
			fprintf(out, "error explain: cgroup %.64s: %s\n", v,
				errno ? strerror(errno) : "not a folder");
			return false;
		}
		q->cgid = st.st_ino; /* a cgroup v2 id */
		return true;
	}
	errno = 0;
	q->cgid = strtoull(v, &end, 10);
	if (!*v || *end || errno || v[0] == '-' || !q->cgid) {
		fprintf(out,
			"error explain: cgroup: expected a path or an id, got '%.64s'\n",
			v);
		return false;
	}
	return true;
}

/* Option w with its value v (NULL: none) into q; false with an error. */
static bool opt(struct ask *q, const char *w, const char *v, FILE *out)
{
	if (!v) {
		fprintf(out, "error explain: '%s' needs %s\n", w,
			!strcmp(w, "proto") ?
				"tcp or udp" :
			!strcmp(w, "netns") ?
				"a name under /run/netns or host" :
				"a cgroup path or id");
		return false;
	}
	if (!strcmp(w, "netns"))
		return opt_netns(q, v, out);
	if (!strcmp(w, "cgroup"))
		return opt_cgroup(q, v, out);
	if (strcmp(v, "tcp") && strcmp(v, "udp")) {
		fprintf(out,
			"error explain: proto: expected tcp or udp, got '%.64s'\n",
			v);
		return false;
	}
	q->k.proto = strcmp(v, "udp") ? 0 : IPPROTO_UDP;
	return true;
}

/* LOCAL and REMOTE into q's key; false with an "error ..." line written. */
static bool ends(struct ask *q, const char *const *e, FILE *out)
{
	__u8 fam[2] = { 0, 0 };
	int i;

	for (i = 0; i < 2; i++) {
		__u16 *port = i ? &q->k.rport : &q->k.lport;
		__u32 *addr = i ? q->k.raddr : q->k.laddr;

		if (endpoint(e[i], &fam[i], addr, port)) {
			fprintf(out,
				"error explain: %s '%.64s': expected ADDR:PORT or [ADDR6]:PORT\n",
				i ? "remote" : "local", e[i]);
			return false;
		}
	}
	if (fam[0] != fam[1]) {
		fprintf(out,
			"error explain: '%.64s' and '%.64s' are not of one family\n",
			e[0], e[1]);
		return false;
	}
	q->k.family = fam[0];
	if (fam[0] == TOE_AF_INET6 && v4mapped(q->k.laddr) &&
	    v4mapped(q->k.raddr)) {
		q->k.family = TOE_AF_INET;
		q->k.laddr[0] = q->k.laddr[3];
		q->k.raddr[0] = q->k.raddr[3];
		q->k.laddr[1] = q->k.laddr[2] = q->k.laddr[3] = 0;
		q->k.raddr[1] = q->k.raddr[2] = q->k.raddr[3] = 0;
	}
	toe_endpoint_str(q->k.family, q->k.laddr, q->k.lport, q->local,
			 sizeof(q->local));
	toe_endpoint_str(q->k.family, q->k.raddr, q->k.rport, q->remote,
			 sizeof(q->remote));
	return true;
}

/* The request's words into *q; false with an "error ..." line written. */
static bool parse_ask(const struct ctl_request *r, struct ask *q, FILE *out)
{
	const char *e[2] = { NULL, NULL };
	int i, ne = 0;

	memset(q, 0, sizeof(*q));
	snprintf(q->netns, sizeof(q->netns), "host");
	for (i = 0; i < r->argc; i++) {
		const char *w = r->argv[i];

		if (!strcmp(w, "proto") || !strcmp(w, "netns") ||
		    !strcmp(w, "cgroup")) {
			if (!opt(q, w, i + 1 < r->argc ? r->argv[i + 1] : NULL,
				 out))
				return false;
			i++;
		} else if (ne < 2) {
			e[ne++] = w;
		} else {
			fprintf(out,
				"error explain: unexpected '%.64s' (expected proto, netns or cgroup)\n",
				w);
			return false;
		}
	}
	if (ne < 2) {
		fprintf(out,
			"error explain needs LOCAL REMOTE: ADDR:PORT or [ADDR6]:PORT each (this host's end first)\n");
		return false;
	}
	return ends(q, e, out);
}

/* Whether sock_ops keeps a record of it: bpf/flows.h's untracked(). */
static bool tracked(const struct toe_pol_answer *a)
{
	return !(a->hdr.track == TOE_TRACK_POLICY &&
		 a->reason == TOE_R_DEFAULT && a->action == TOE_ACT_HOST);
}

static void show(FILE *out, bool json, const struct ask *q,
		 const struct toe_pol_answer *a, const struct toe_cfg *c,
		 const char *dev)
{
	const char *proto = q->k.proto ? "udp" : "tcp";
	bool have_rule = a->rule != TOE_RULE_NONE && c &&
			 a->rule < (__u32)c->nrules;
	struct toe_json j;

	if (json) {
		tj_start(&j, out);
		tj_obj(&j);
		tj_kstr(&j, "local", q->local);
		tj_kstr(&j, "remote", q->remote);
		tj_kstr(&j, "proto", proto);
		tj_kstr(&j, "netns", q->netns);
		tj_ku64(&j, "netns_cookie",
			q->k.netns ? q->k.netns : a->hdr.host_netns);
		tj_ku64(&j, "cgroup", q->cgid);
		tj_ku64(&j, "serial", a->hdr.serial);
		tj_ku64(&j, "generation", a->gen);
		tj_kstr(&j, "track", toe_track_name(a->hdr.track));
		tj_kstr(&j, "decision", toe_action_name(a->action));
		tj_kstr_or_null(&j, "device", strcmp(dev, "-") ? dev : NULL);
		tj_kstr(&j, "reason", toe_reason_str(a->reason));
		tj_ku64_or_null(&j, "rule_index", a->rule != TOE_RULE_NONE,
				a->rule);
		tj_key(&j, "rule");
		if (have_rule)
			toe_cfg_show_rule(c, a->rule, out, &j);
		else
			tj_null(&j);
		tj_key(&j, "tracked");
		tj_bool(&j, tracked(a));
		tj_ku64(&j, "shapes", a->hdr.ntuples);
		tj_ku64(&j, "cells_probed", a->probes);
		tj_obj_end(&j);
		tj_end(&j);
		return;
	}
	fprintf(out, "flow      %s -> %s %s, netns %s\n", q->local, q->remote,
		proto, q->netns);
	if (q->cgid)
		fprintf(out, "cgroup    %llu\n", (unsigned long long)q->cgid);
	fprintf(out, "policy    serial %llu, generation %u, track %s\n",
		(unsigned long long)a->hdr.serial, a->gen,
		toe_track_name(a->hdr.track));
	fprintf(out, "decision  %s%s%s\n", toe_action_name(a->action),
		strcmp(dev, "-") ? " dev " : "", strcmp(dev, "-") ? dev : "");
	if (a->rule == TOE_RULE_NONE) {
		fprintf(out, "reason    %s: no rule matched; %s\n",
			toe_reason_str(a->reason),
			q->k.proto ?
				"the default is TCP's, a UDP flow stays on the host" :
				"the policy's default");
	} else {
		fprintf(out, "reason    %s %u: the first rule that matches\n",
			toe_reason_str(a->reason), a->rule);
		fprintf(out, "rule      ");
		if (have_rule)
			toe_cfg_show_rule(c, a->rule, out, NULL);
		else
			fprintf(out,
				"(its text is not known: applied by another, unrecorded)\n");
	}
	if (tracked(a))
		fprintf(out,
			"tracked   yes: a record in toectl flows, its events\n");
	else
		fprintf(out,
			"tracked   no: track policy, and no rule names it (counted in toectl stats' untracked)\n");
	fprintf(out, "searched  %u of %u rule shapes (a cell lookup each)\n",
		a->probes, a->hdr.ntuples);
}

/* toectl explain (lib/ctl_cmds.h's handler: ctl.c declares it). */
bool cmd_explain(struct toed *d, struct client *cl, const struct ctl_request *r,
		 FILE *out)
{
	struct toe_pol_hdr h = {};
	struct toe_pol_answer a;
	const struct toe_cfg *c;
	struct toe_cfg other;
	const char *src;
	char err[256], dev[20];
	struct ask q;
	__u32 gen = 0;

	(void)cl;
	if (!parse_ask(r, &q, out))
		return true;
	if (toe_policy_explain(d->pin_dir, &q.k, q.cgid, &a, err,
			       sizeof(err))) {
		fprintf(out, "error explain: %s\n", err);
		return true;
	}
	toe_dev_name(&d->m, a.dev, dev);
	toe_policy_hdr(&d->m, &gen, &h);
	c = policy_in_force(d, &h, &other, &src);
	/* the rule's text only from the policy the search read */
	if (h.serial != a.hdr.serial)
		c = NULL;
	fprintf(out, "ok\n");
	show(out, r->json, &q, &a, c, dev);
	toe_cfg_free(&other);
	return true;
}
