// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed --metrics ADDR:PORT: GET /metrics in Prometheus' text exposition
 * format (version 0.0.4), served by libmicrohttpd.
 *
 * The design: MHD runs in toed's one thread, driven by the epoll loop.
 * It is started with MHD_USE_EPOLL and no thread of its own; its epoll fd
 * is one more source in toed's epoll set (SRC_METRICS), loop.c calls
 * metrics_run after every wake-up and bounds epoll_wait by MHD's own
 * timeout.  MHD's sockets are non-blocking: a slow or stalled scraper (half
 * a request, then nothing) is only an entry in MHD's connection table until
 * MHD_OPTION_CONNECTION_TIMEOUT closes it, and never holds the loop.  The
 * answer is rendered in the request's callback from toed's state as it is,
 * through the gathering functions toectl stats and devices use (show_state.c:
 * daemon_counters, control_counters, kmod_view; show_maps.c:
 * toe_stats_read, toe_devs_read, toe_device_cells): no second thread, no
 * lock, no snapshot to go stale.  A scrape reads the per-CPU stats map, the device maps and
 * the policy header (never toe_flows), so its cost does not grow with the
 * number of flows.
 *
 * Every metric's name is written once: in fields.h's TOE_METRIC_FAMILIES
 * for toed's own, or made from toe_stat_name for the datapath's toe_stats
 * counters.  The counters of toectl stats' daemon and control sections
 * go out in the family and with the labels their rows of fields.h give.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <microhttpd.h>
#include "lib/err.h"
#include "lib/clock.h"
#include "opentoe_common.h"
#include "opentoe_policy.h"
#include "opentoe_stats.h"
#include "opentoe_bypass.h"
#include "opentoe_reasons.h"
#include "ep.h"
#include "fwdev.h"
#include "show_state.h"
#include "metrics.h"
#include "config.h"
#include "genl.h"
#include "log.h"
#include "show_maps.h"
#include "state.h"
#include "nlat.h"
#include "fields.h"

#ifndef TOE_VERSION
#define TOE_VERSION "unknown"
#endif

#define CONN_TIMEOUT_S 10 /* MHD's idle timeout: a backstop */
#define PER_IP_MAX 16 /* MHD's limit per address: a backstop */
#define CONN_LIMIT 48 /* ours: beyond it the stalest connection goes */
#define PER_IP_LIMIT 4 /* ours, per client address, likewise */
#define REQ_DEADLINE_MS 3000 /* a whole request, from accept or last answer */
#define RETRY_MIN_MS 1000 /* binding again after a failure: backoff */
#define RETRY_MAX_MS 8000
#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* ------------------------------------------------------------ families */

static const struct family {
	const char *name, *type, *help;
} fams[F__MAX] = {
#define FAM_ROW(id, name, type, help) [F_##id] = { name, type, help },
	TOE_METRIC_FAMILIES(FAM_ROW)
#undef FAM_ROW
};

/* HELP text of the datapath's toe_stats counters (index >= TOE_S_BASE). */
static const char *const stat_help[TOE_S__MAX - TOE_S_BASE] = {
#define STAT_HELP(id, name, help) [TOE_S_##id - TOE_S_BASE] = help,
	TOE_STAT_TABLE(STAT_HELP)
#undef STAT_HELP
};

/* ----------------------------------------------------------- rendering */

static void fam_head(FILE *f, const char *name, const char *type,
		     const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void head(FILE *f, int x)
{
	fam_head(f, fams[x].name, fams[x].type, fams[x].help);
}

/* NAME{LABELS} V (labels: "k=\"v\"" pairs, or NULL) */
static void sample(FILE *f, int x, const char *labels, __u64 v)
{
	if (labels)
		fprintf(f, "%s{%s} %llu\n", fams[x].name, labels,
			(unsigned long long)v);
	else
		fprintf(f, "%s %llu\n", fams[x].name, (unsigned long long)v);
}

/* A label value as the format wants it: \, " and newline escaped. */
static void label_value(char *out, size_t len, const char *v)
{
	size_t o = 0;

	for (; *v && o + 3 < len; v++) {
		if (*v == '\\' || *v == '"' || *v == '\n')
			out[o++] = '\\';
		out[o++] = *v == '\n' ? 'n' : *v;
	}
	out[o] = 0;
}

static void render_toed(struct toed *d, FILE *f)
{
	char v[128];

	label_value(v, sizeof(v), TOE_VERSION);
	head(f, F_BUILD);
	fprintf(f, "%s{version=\"%s\"} 1\n", fams[F_BUILD].name, v);
	head(f, F_START);
	fprintf(f, "%s %.3f\n", fams[F_START].name, d->start_unix_ns / 1e9);
	head(f, F_DP_LOADED);
	sample(f, F_DP_LOADED, NULL, d->dp.loaded);
}

/* Every toe_stats counter, per-CPU summed (toe_stats_read). */
static void render_datapath(struct toed *d, FILE *f)
{
	__u64 v[TOE_STATS_MAX];
	char name[96], l[64];
	int i;

	if (!d->dp.loaded)
		return; /* absent, not zero: no counter seems to reset */
	toe_stats_read(&d->m, v, TOE_STATS_MAX);
	head(f, F_PARSE);
	for (i = 0; i < TOE_S_BASE; i++) {
		if (!toe_stat_name(i))
			continue;
		snprintf(l, sizeof(l), "result=\"%s\"", toe_stat_name(i));
		sample(f, F_PARSE, l, v[i]);
	}
	for (i = TOE_S_BASE; i < TOE_S__MAX; i++) {
		if (!toe_stat_name(i))
			continue;
		snprintf(name, sizeof(name), "opentoe_datapath_%s_total",
			 toe_stat_name(i));
		fam_head(f, name, "counter",
			 stat_help[i - TOE_S_BASE] ? stat_help[i - TOE_S_BASE] :
						     toe_stat_name(i));
		fprintf(f, "%s %llu\n", name, (unsigned long long)v[i]);
	}
}

/*
 * toectl devices' fields that fields.h exports (a family each, in its
 * order), a sample a device (toe_devs_read, kmod_view: toe_device_cells);
 * the module's only while it is loaded, and for the devices it has.
 */
static void render_devices(struct toed *d, FILE *f)
{
	struct toe_dev_row *rows = calloc(TOE_MAX_DEVS, sizeof(*rows));
	struct toe_view_kmod kv[TOE_MAX_DEVS];
	char l[128], dn[40], ifn[IF_NAMESIZE], st[16];
	struct tv_cell c[DF__N];
	int n = 0, x, i;

	if (!rows)
		return;
	if (d->dp.loaded)
		n = toe_devs_read(&d->m, rows);
	kmod_view(d, kv);
	for (x = 0; x < DF__N; x++) {
		const struct tv_field *fl = &toe_device_fields[x];

		if (fl->fam == F_NONE ||
		    (x >= DF_KMOD_INDEX && !toe_genl_up(&d->gl)))
			continue;
		head(f, fl->fam);
		for (i = 0; i < n; i++) {
			toe_device_cells(c, &rows[i], kv, &d->m.ifaces, ifn,
					 st);
			if (c[x].absent)
				continue;
			label_value(dn, sizeof(dn), rows[i].name);
			snprintf(l, sizeof(l), "device=\"%s\"%s%s", dn,
				 fl->labels ? "," : "",
				 fl->labels ? fl->labels : "");
			sample(f, fl->fam, l, c[x].u);
		}
	}
	free(rows);
}

/* The policy in force, toed's applies, the flows' decisions and refusals. */
static void render_policy(struct toed *d, FILE *f)
{
	struct toe_pol_hdr h = {};
	char l[64];
	__u32 gen;
	int i;

	if (d->dp.loaded)
		toe_policy_hdr(&d->m, &gen, &h);
	head(f, F_POL_SERIAL);
	sample(f, F_POL_SERIAL, NULL, h.serial);
	head(f, F_POL_RULES);
	sample(f, F_POL_RULES, NULL, h.nrules);
	if (d->ap.ast.serial) {
		head(f, F_POL_DUR);
		fprintf(f, "%s %.6f\n", fams[F_POL_DUR].name,
			d->ap.ast.ms / 1e3);
	}
	head(f, F_CLOSED);
	for (i = TOE_ACT_HOST; i <= TOE_ACT_BYPASS; i++) {
		snprintf(l, sizeof(l), "decision=\"%s\"", toe_action_name(i));
		sample(f, F_CLOSED, l, d->evs.closed_by[i]);
	}
	head(f, F_REFUSED);
	for (i = 0; i < TOE_R__MAX; i++) {
		snprintf(l, sizeof(l), "reason=\"%s\"", toe_reason_name(i));
		sample(f, F_REFUSED, l, d->evs.refused_by[i]);
	}
}

/* The fast path's open flows by device, hook, protocol and state (fwdev.c). */
static void render_fwd_open(struct toed *d, FILE *f)
{
	static const char *const st[TOE_FWD_OPEN__N] = { "fast", "readmit",
							 "ct_wait" };
	static const char *const pr[TOE_FWD_OPEN_PROTO__N] = { "tcp", "udp" };
	static toe_fwd_open_t n[TOE_MAX_DEVS];
	struct toe_dev_row *rows = calloc(TOE_MAX_DEVS, sizeof(*rows));
	char l[160], dn[40];
	int i, nr;
	__u32 h, p, s;

	if (!rows)
		return;
	head(f, F_FWD_OPEN);
	fwd_open_count(&d->fwd, n);
	nr = toe_devs_read(&d->m, rows);
	for (i = 0; i < nr; i++) {
		if (rows[i].d.steer != TOE_STEER_FORWARD ||
		    rows[i].index >= TOE_MAX_DEVS)
			continue;
		label_value(dn, sizeof(dn), rows[i].name);
		for (h = 0; h < TOE_FH__MAX; h++)
			for (p = 0; p < TOE_FWD_OPEN_PROTO__N; p++)
				for (s = 0; s < TOE_FWD_OPEN__N; s++) {
					snprintf(
						l, sizeof(l),
						"device=\"%s\",hook=\"%s\",proto=\"%s\",state=\"%s\"",
						dn, toe_fwd_hook_name(h), pr[p],
						st[s]);
					sample(f, F_FWD_OPEN, l,
					       n[rows[i].index][h][p][s]);
				}
	}
	free(rows);
}

/* toe_reasons (fwdev.c), family by family, with a reason label. */
static void render_reasons(struct toed *d, FILE *f)
{
	__u64 v[TOE_RSN_MAX];
	char l[96];
	__u32 h, r;
	int x;

	if (!d->dp.loaded)
		return;
	render_fwd_open(d, f);
	fwd_reasons_read(&d->fwd, v);
	for (x = F_FWD_RET; x <= F_FWD_RET_PKTS; x++) {
		head(f, x);
		for (h = 0; h < TOE_FH__MAX; h++)
			for (r = 1; r < TOE_FR__MAX; r++) {
				bool ended = toe_fwd_reason_ended(r);

				if ((x == F_FWD_RET && ended) ||
				    (x == F_FWD_END && !ended) ||
				    (x == F_FWD_RET_PKTS &&
				     !toe_fwd_reason_has_pkts(r)))
					continue;
				snprintf(l, sizeof(l),
					 "hook=\"%s\",reason=\"%s\"",
					 toe_fwd_hook_name(h),
					 toe_fwd_reason_name(r));
				sample(f, x, l,
				       v[x == F_FWD_RET_PKTS ?
						 TOE_RSN_FWD_PKTS(h, r) :
						 TOE_RSN_FWD_FLOWS(h, r)]);
			}
	}
	head(f, F_BYP_TCP);
	for (r = 1; r <= TOE_BYP_WHY_N; r++) {
		snprintf(l, sizeof(l), "reason=\"%s\"", toe_byp_why_name(r));
		sample(f, F_BYP_TCP, l, v[TOE_RSN_BYP(r)]);
	}
	head(f, F_DP_REFUSED);
	for (r = 0; r < TOE_R__MAX; r++) {
		if (!toe_reason_refusal(r))
			continue;
		snprintf(l, sizeof(l), "reason=\"%s\"", toe_reason_name(r));
		sample(f, F_DP_REFUSED, l, v[TOE_RSN_REFUSED(r)]);
	}
}

static void render_nlat(struct toed *d, FILE *f)
{
	__u64 cum = 0;
	int i;

	head(f, F_NLAT);
	for (i = 0; i < NLAT_BUCKETS; i++) {
		cum += d->evs.nlat.bucket[i];
		fprintf(f, "%s_bucket{le=\"%g\"} %llu\n", fams[F_NLAT].name,
			nlat_le_ns[i] / 1e9, (unsigned long long)cum);
	}
	fprintf(f, "%s_bucket{le=\"+Inf\"} %llu\n", fams[F_NLAT].name,
		(unsigned long long)d->evs.nlat.count);
	fprintf(f, "%s_sum %.9f\n", fams[F_NLAT].name,
		d->evs.nlat.sum_ns / 1e9);
	fprintf(f, "%s_count %llu\n", fams[F_NLAT].name,
		(unsigned long long)d->evs.nlat.count);
}

/* Does a row of toectl stats' counters (fields.h) export into family x? */
static bool fam_mapped(int x)
{
	size_t k;

	for (k = 0; k < n_daemon_desc; k++)
		if (daemon_desc[k].fam == x)
			return true;
	for (k = 0; k < n_control_desc; k++)
		if (control_desc[k].fam == x)
			return true;
	return false;
}

/*
 * toectl stats' daemon and control counters (one list, c: daemon_desc's
 * rows, then control_desc's), family by family, each row in the family
 * and with the labels its description gives.
 */
static void render_counters(struct toed *d, FILE *f, const struct counter *c)
{
	bool kmod = toe_genl_up(&d->gl);
	size_t k;
	int x;

	for (x = 0; x < F__MAX; x++) {
		/* the module's TID and L2T gauges: only while it is loaded */
		if (!fam_mapped(x) ||
		    (!kmod && (x == F_KMOD_TIDS_USED || x == F_KMOD_L2T_USED ||
			       x == F_KMOD_L2T)))
			continue;
		head(f, x);
		for (k = 0; k < n_daemon_desc; k++)
			if (daemon_desc[k].fam == x)
				sample(f, x, daemon_desc[k].labels, c[k].v);
		for (k = 0; k < n_control_desc; k++)
			if (control_desc[k].fam == x)
				sample(f, x, control_desc[k].labels,
				       c[n_daemon_desc + k].v);
	}
}

/* The whole exposition, into a malloc'd buffer; its length, or -1. */
static ssize_t render(struct toed *d, char **buf)
{
	struct counter c[2 * MAX_COUNTERS];
	size_t len = 0, n;
	FILE *f;

	f = open_memstream(buf, &len);
	if (!f)
		return -1;
	n = daemon_counters(d, c);
	control_counters(d, c + n);
	render_toed(d, f);
	render_datapath(d, f);
	render_devices(d, f);
	render_policy(d, f);
	render_nlat(d, f);
	render_reasons(d, f);
	render_counters(d, f, c);
	if (fclose(f)) {
		free(*buf);
		return -1;
	}
	return (ssize_t)len;
}

/* ------------------------------------------------------------- serving */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code,
			     char *body, size_t len,
			     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				code == MHD_HTTP_OK ?
					CONTENT_TYPE :
					"text/plain; charset=utf-8");
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int code,
				  const char *t)
{
	return reply(c, code, (char *)t, strlen(t), MHD_RESPMEM_PERSISTENT);
}

/* MHD's request callback: GET /metrics, rendered now; 404 and 405 else. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_len, void **state)
{
	static int seen;
	struct toed *d = cls;
	char *buf = NULL;
	ssize_t n;

	(void)version;
	(void)upload;
	if (!*state) { /* the headers: answer once the body (if any) is in */
		*state = &seen;
		return MHD_YES;
	}
	if (*upload_len) {
		*upload_len = 0; /* a body: ignored */
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "only GET and HEAD\n");
	if (strcmp(url, "/metrics"))
		return reply_text(c, MHD_HTTP_NOT_FOUND,
				  "not found: the metrics are at /metrics\n");
	n = render(d, &buf);
	if (n < 0)
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "out of memory\n");
	return reply(c, MHD_HTTP_OK, buf, n, MHD_RESPMEM_MUST_FREE);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct metrics *mt = cls;
	int e = errno;
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	if (e == EMFILE || e == ENFILE || strstr(line, strerror(EMFILE)) ||
	    strstr(line, strerror(ENFILE)) || strstr(line, "resource limit"))
		mt->no_fd = true;
	line[strcspn(line, "\n")] = 0;
	logm(LOG_DEBUG, "metrics: %s", line);
}

/* --------------------------------------------------------- connections */

static long long mono_ms(void)
{
	return (long long)(toe_now_ns() / 1000000ULL);
}

/* Same client address (the port aside)? */
static bool same_addr(const struct sockaddr_storage *a,
		      const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
}

static void conn_kill(struct mconn *m, __u64 *counter)
{
	shutdown(m->fd, SHUT_RDWR); /* MHD reads the end and closes it */
	m->dead = true;
	(*counter)++;
}

/*
 * A new connection n over a limit (PER_IP_LIMIT of its address, or
 * CONN_LIMIT in all): the stalest live one of the same kind goes (oldest
 * accept or last answer: a scraper's request is answered within
 * milliseconds of its accept, so what is older is slow or idle), never n.
 */
static void conn_admit(struct metrics *mt, struct mconn *n)
{
	struct mconn *old = NULL, *m;
	int same = 0, all = 0;
	bool per_ip;

	for (m = mt->conns; m < mt->conns + CONN_MAX; m++) {
		if (!m->used || m->dead)
			continue;
		all++;
		same += same_addr(&m->peer, &n->peer);
	}
	per_ip = same > PER_IP_LIMIT;
	if (!per_ip && all <= CONN_LIMIT)
		return;
	for (m = mt->conns; m < mt->conns + CONN_MAX; m++)
		if (m != n && m->used && !m->dead &&
		    (!per_ip || same_addr(&m->peer, &n->peer)) &&
		    (!old || m->since < old->since))
			old = m;
	if (old)
		conn_kill(old, &mt->st.evicted);
	else
		conn_kill(n, &mt->st.refused);
}

/* MHD_OPTION_NOTIFY_CONNECTION: a connection accepted or closed. */
static void on_conn(void *cls, struct MHD_Connection *c, void **sctx,
		    enum MHD_ConnectionNotificationCode code)
{
	struct metrics *mt = cls;
	const union MHD_ConnectionInfo *fd, *addr;
	struct mconn *m = *sctx;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (m)
			m->used = false;
		*sctx = NULL;
		return;
	}
	fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	addr = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	for (m = mt->conns; m < mt->conns + CONN_MAX && m->used; m++)
		;
	if (m == mt->conns + CONN_MAX ||
	    !fd) /* cannot be: MHD's limit is ours */
		return;
	memset(m, 0, sizeof(*m));
	m->used = true;
	m->fd = fd->connect_fd;
	m->since = mono_ms();
	if (addr && addr->client_addr)
		memcpy(&m->peer, addr->client_addr,
		       addr->client_addr->sa_family == AF_INET6 ?
			       sizeof(struct sockaddr_in6) :
			       sizeof(struct sockaddr_in));
	*sctx = m;
	conn_admit(mt, m);
}

/* MHD_OPTION_NOTIFY_COMPLETED: a request answered; the next one's clock. */
static void on_done(void *cls, struct MHD_Connection *c, void **state,
		    enum MHD_RequestTerminationCode code)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct mconn *m = i ? i->socket_context : NULL;

	(void)cls;
	(void)state;
	(void)code;
	if (m)
		m->since = mono_ms();
}

/* Connections past their deadline shut down; ms to the next deadline. */
static long long conn_expire(struct metrics *mt, long long now)
{
	long long next = -1, left;
	struct mconn *m;

	for (m = mt->conns; m < mt->conns + CONN_MAX; m++) {
		if (!m->used || m->dead)
			continue;
		left = m->since + REQ_DEADLINE_MS - now;
		if (left <= 0)
			conn_kill(m, &mt->st.deadline);
		else if (next < 0 || left < next)
			next = left;
	}
	return next;
}

/* ---------------------------------------------------------------- API */

/*
 * --metrics [ADDR:]PORT: ADDR an IPv4 address, [IPv6] or localhost; none:
 * 127.0.0.1.  Only the address named binds: a non-loopback one is served
 * only because the operator wrote it.  0: parsed, -1: refused (err says).
 */
int metrics_parse(struct metrics *mt, const char *arg, char *err, size_t errlen)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&mt->sa;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&mt->sa;
	const char *colon = strrchr(arg, ':'), *port = colon ? colon + 1 : arg;
	char addr[64] = "127.0.0.1", *end;
	unsigned long p;

	errno = 0;
	p = strtoul(port, &end, 10);
	if (!*port || *end || errno || p == 0 || p > 65535 || *port == '-' ||
	    *port == '+' || (colon && (size_t)(colon - arg) >= sizeof(addr)))
		goto bad;
	if (colon && colon > arg)
		snprintf(addr, sizeof(addr), "%.*s", (int)(colon - arg), arg);
	if (!strcmp(addr, "localhost"))
		strcpy(addr, "127.0.0.1");
	memset(&mt->sa, 0, sizeof(mt->sa));
	if (addr[0] == '[' && addr[strlen(addr) - 1] == ']') {
		addr[strlen(addr) - 1] = 0;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(p);
		mt->salen = sizeof(*s6);
		if (inet_pton(AF_INET6, addr + 1, &s6->sin6_addr) != 1)
			goto bad;
	} else {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(p);
		mt->salen = sizeof(*s4);
		if (inet_pton(AF_INET, addr, &s4->sin_addr) != 1)
			goto bad;
	}
	mt->arg = arg;
	return 0;
bad:
	snprintf(
		err, errlen,
		"bad --metrics '%s' (expected [ADDR:]PORT: PORT 1-65535, ADDR an IPv4 address, [IPv6 address] or localhost; without ADDR, 127.0.0.1)",
		arg);
	return -1;
}

/* The listening socket, bound to --metrics' address; -1 (M.error says) if not. */
static int metrics_socket(struct metrics *mt)
{
	int one = 1, fd;

	fd = socket(mt->sa.ss_family,
		    SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&mt->sa, mt->salen) || listen(fd, 64)) {
		snprintf(mt->error, sizeof(mt->error), "cannot listen: %s",
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* MHD on fd, its epoll fd in toed's loop: 0, or -1 (M.error says). */
static int mhd_start(struct toed *d, int fd)
{
	const union MHD_DaemonInfo *info;

	memset(d->met.conns, 0, sizeof(d->met.conns));
	d->met.mhd = MHD_start_daemon(
		MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
			(d->met.sa.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
		0, NULL, NULL, on_request, d, MHD_OPTION_LISTEN_SOCKET, fd,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CONN_TIMEOUT_S,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)CONN_MAX,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)PER_IP_MAX,
		MHD_OPTION_NOTIFY_CONNECTION, on_conn, &d->met,
		MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, &d->met, MHD_OPTION_END);
	info = d->met.mhd ? MHD_get_daemon_info(d->met.mhd,
						MHD_DAEMON_INFO_EPOLL_FD) :
			    NULL;
	if (info && !ep_add(d->epfd, info->epoll_fd, SRC_METRICS)) {
		d->met.mhd_epfd = info->epoll_fd;
		return 0;
	}
	snprintf(d->met.error, sizeof(d->met.error),
		 "cannot start the HTTP server");
	if (d->met.mhd)
		MHD_stop_daemon(d->met.mhd);
	else
		close(fd);
	d->met.mhd = NULL;
	return -1;
}

/*
 * Bind and serve; on failure (the port taken by another program, the
 * address not there yet) say so and try again later, backing off from
 * RETRY_MIN_MS to RETRY_MAX_MS: toed runs on meanwhile.
 */
static void metrics_try(struct toed *d)
{
	int fd = metrics_socket(&d->met);

	if (fd >= 0 && mhd_start(d, fd) == 0) {
		logm(LOG_INFO, "metrics: http://%s/metrics%s", d->met.arg,
		     d->met.st.bind_failed ? " (bound at last)" : "");
		d->met.error[0] = 0;
		return;
	}
	d->met.st.bind_failed++;
	d->met.backoff_ms = d->met.backoff_ms ? d->met.backoff_ms * 2 :
						RETRY_MIN_MS;
	if (d->met.backoff_ms > RETRY_MAX_MS)
		d->met.backoff_ms = RETRY_MAX_MS;
	d->met.next_try_ms = mono_ms() + d->met.backoff_ms;
	logm(LOG_WARN, "--metrics %s: %s; trying again in %d s (toed runs on)",
	     d->met.arg, d->met.error, d->met.backoff_ms / 1000);
}

/* Serve /metrics if --metrics asked for it; never fails toed. */
int metrics_open(struct toed *d)
{
	if (d->met.arg)
		metrics_try(d);
	return 0;
}

/* MHD's epoll fd in toed's epoll set (on), or out of it for a second. */
static void mhd_watch(struct toed *d, bool on)
{
	struct epoll_event ev = { .events = on ? EPOLLIN : 0,
				  .data.u64 = (__u64)SRC_METRICS << 32 };

	d->met.paused_until_ms = on ? 0 : mono_ms() + 1000;
	epoll_ctl(d->epfd, EPOLL_CTL_MOD, d->met.mhd_epfd, &ev);
}

/* After every wake-up of the loop: MHD's ready sockets, deadlines, a retry. */
void metrics_run(struct toed *d)
{
	if (d->met.mhd) {
		if (d->met.paused_until_ms &&
		    mono_ms() >= d->met.paused_until_ms)
			mhd_watch(d, true);
		MHD_run(d->met.mhd);
		conn_expire(&d->met, mono_ms());
		if (d->met.no_fd) {
			d->met.no_fd = false;
			logm_rl(LOG_WARN,
				"metrics: cannot accept a scraper: out of file descriptors; not listening for a second");
			mhd_watch(d, false);
		}
	} else if (d->met.arg && mono_ms() >= d->met.next_try_ms) {
		metrics_try(d);
	}
}

/* epoll_wait's timeout (ms, -1: none) bounded by MHD's, a deadline, a retry. */
int metrics_timeout_ms(struct metrics *mt, int ms)
{
	MHD_UNSIGNED_LONG_LONG t = 60000;
	long long d;

	if (!mt->arg)
		return ms;
	if (!mt->mhd) {
		d = mt->next_try_ms - mono_ms();
		t = d < 0 ? 0 : (MHD_UNSIGNED_LONG_LONG)d;
	} else {
		if (MHD_get_timeout(mt->mhd, &t) != MHD_YES || t > 60000)
			t = 60000;
		d = mt->paused_until_ms ? mt->paused_until_ms - mono_ms() : -1;
		if (mt->paused_until_ms &&
		    (MHD_UNSIGNED_LONG_LONG)(d < 0 ? 0 : d) < t)
			t = d < 0 ? 0 : d;
		d = conn_expire(mt, mono_ms());
		if (d >= 0 && (MHD_UNSIGNED_LONG_LONG)d < t)
			t = d;
	}
	return ms < 0 || (int)t < ms ? (int)t : ms;
}

void metrics_close(struct metrics *mt)
{
	if (mt->mhd)
		MHD_stop_daemon(mt->mhd);
	mt->mhd = NULL;
}

/* What toectl status and stats show of the metrics endpoint. */
const char *metrics_state(struct metrics *mt, const char **addr,
			  const char **error, long long *retry_ms)
{
	*addr = mt->arg;
	*error = mt->error;
	*retry_ms = mt->mhd ? 0 : mt->next_try_ms - mono_ms();
	if (*retry_ms < 0)
		*retry_ms = 0;
	return !mt->arg ? "off" : mt->mhd ? "serving" : "retrying";
}

const struct metrics_stats *metrics_stats(struct metrics *mt)
{
	struct mconn *m;

	mt->st.connections = 0;
	for (m = mt->conns; mt->mhd && m < mt->conns + CONN_MAX; m++)
		mt->st.connections += m->used && !m->dead;
	return &mt->st;
}

void metrics_init(struct metrics *mt)
{
	memset(mt, 0, sizeof(*mt));
}
