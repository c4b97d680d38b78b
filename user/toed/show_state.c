// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * What toectl status, stats and devices show: toed's own state (the
 * policy in force, its counters, the kernel module's devices and TIDs) as
 * a text table or one JSON document.  toectl flows and neigh, read from
 * the maps alone, are show_maps.c's; toectl policy is config_show.c's.
 */
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/json.h"
#include "lib/clock.h"
#include "opentoe_common.h"
#include "opentoe_policy.h"
#include "opentoe_stats.h"
#include "opentoe_events.h"
#include "opentoe_forward.h"
#include "nft.h"
#include "show_state.h"
#include "fwdev.h"
#include "kmod.h"
#include "tidpool.h"
#include "listen.h"
#include "attached.h"
#include "metrics.h"
#include "config.h"
#include "genl.h"
#include "log.h"
#include "neigh.h"
#include "show_maps.h"
#include "srcrec.h"
#include "state.h"
#include "fields.h"
#include "view.h"

static __u64 map_count(int fd, size_t ksz)
{
	unsigned char k[64], next[64];
	void *prev = NULL;
	__u64 n = 0;

	if (ksz > sizeof(k))
		return 0;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(k, next, ksz);
		prev = k;
		n++;
	}
	return n;
}

/*
 * What toed knows of the kernel module's devices, by toe_devs index (kv:
 * TOE_MAX_DEVS entries, zeroed; valid where the module has the device):
 * for toectl devices and the metrics.
 */
void kmod_view(struct toed *d, struct toe_view_kmod *kv)
{
	struct toe_genl_dev *kd = NULL;
	char err[256];
	int n = 0, i;
	__u32 dev;

	memset(kv, 0, TOE_MAX_DEVS * sizeof(*kv));
	if (toe_genl_up(&d->gl)) {
		kd = calloc(TOE_MAX_DEVS, sizeof(*kd));
		if (kd && toe_genl_devs(&d->gl, kd, TOE_MAX_DEVS, &n, err,
					sizeof(err)))
			logm(LOG_WARN, "%s", err);
	}
	for (dev = 0; dev < TOE_MAX_DEVS; dev++) {
		for (i = 0; i < n && (!d->kmod.kmod_idx[dev] ||
				      kd[i].index != d->kmod.kmod_idx[dev]);
		     i++)
			;
		if (i == n)
			continue;
		kv[dev].valid = true;
		snprintf(kv[dev].tom, sizeof(kv[dev].tom), "%s", kd[i].tom);
		kv[dev].index = kd[i].index;
		kv[dev].tids_used = kd[i].tids_used;
		kv[dev].tids_held = tids_held(&d->kmod, kd[i].index);
		kv[dev].tids_reserved = kd[i].tids_reserved;
		kv[dev].l2t_used = kd[i].l2t_used;
		kv[dev].l2t_size = kd[i].l2t_size;
		kv[dev].listeners = kd[i].listeners;
		kv[dev].listeners_held = listeners_held(&d->lis, kd[i].index);
		kv[dev].tids_host = kd[i].tids_host;
		acct_view(&d->kmod, dev, &kv[dev].tid_pool,
			  &kv[dev].tid_in_flight);
		kv[dev].tid_seq = d->gl.changes;
		kv[dev].tid_changed_ms = d->gl.changed_ns / 1000000;
		kv[dev].tid_event_ms = d->kmod.tid_event_ns / 1000000;
		kv[dev].tid_settled_ms = d->kmod.tid_settled_ns / 1000000;
		kv[dev].stids_reserved = kd[i].stids_reserved;
		acct_sview(&d->kmod, dev, &kv[dev].stid_pool,
			   &kv[dev].stid_in_flight);
		kv[dev].stid_seq = d->gl.schanges;
	}
	free(kd);
}

/* toectl devices: the datapath's devices, with the module's counts for its own. */
void view_devices(struct toed *d, FILE *f, bool json)
{
	struct toe_view_kmod kv[TOE_MAX_DEVS];

	kmod_view(d, kv);
	toe_view_devices(f, json, &d->m, kv);
}

void view_neigh(struct toed *d, FILE *f, bool json)
{
	toe_view_neigh(f, json, &d->m);
}

/*
 * Where the policy in force came from: toed's own apply (d->config), or
 * another's (toed --apply elsewhere), recorded with the datapath; *rec is
 * filled (to free) when it is another's.  NULL: unknown.
 */
const char *policy_source(struct toed *d, const struct toe_pol_hdr *h,
			  struct toe_policy_src *rec, bool *own)
{
	memset(rec, 0, sizeof(*rec));
	*own = d->ap.ast.serial && h->serial == d->ap.ast.serial;
	if (*own)
		return d->config;
	if (h->serial && toe_policy_src_read(d->pin_dir, rec) == 0 &&
	    rec->serial == h->serial)
		return rec->config;
	toe_policy_src_free(rec);
	return NULL;
}

/* What toectl status shows, read once. */
struct status {
	__u64 now;
	__u64 nn; /* neighbours mirrored */
	__u64 na; /* local addresses */
	struct toe_pol_hdr h;
	__u32 gen;
	const char *source; /* the policy's file, NULL: unknown */
	bool own; /* applied by this toed */
	char since[32]; /* the datapath's load time, UTC */
	/* where opentoe is attached, then the other interfaces mirrored */
	struct toe_attached ifs[TOE_NL_MAX_TRACKED];
	int nif;
};

/* toectl status' fields and lines (fields.h). */
static const struct tv_field status_fields[SF__N] = {
#define STATUS_FIELD(id, key, type, unit) [SF_##id] = { key, TV_##type, unit },
	TOE_STATUS_FIELDS(STATUS_FIELD)
#undef STATUS_FIELD
};

static const struct tv_line status_lines[] = {
#define STATUS_LINE(label, when, template) { label, when, template },
	TOE_STATUS_LINES(STATUS_LINE)
#undef STATUS_LINE
};

/*
 * One interface of status's line: NAME (HOOK MODE[, dispatcher][, egress
 * MODE][, neighbours mirrored]), or (not attached, neighbours mirrored)
 * for one toed mirrors the neighbours of without opentoe on it.
 */
static void iface_text(FILE *f, const struct toe_attached *a, const char *sep)
{
	char ifn[IF_NAMESIZE];
	const char *next = "";

	fprintf(f, "%s %s (", sep, if_indextoname(a->ifindex, ifn) ? ifn : "?");
	if (a->hook) {
		fprintf(f, "%s %s%s", a->hook, a->mode,
			a->dispatcher ? ", dispatcher" : "");
		next = ", ";
	} else if (!a->egress) {
		fprintf(f, "not attached");
		next = ", ";
	}
	if (a->egress) {
		fprintf(f, "%segress %s", next, a->egress);
		next = ", ";
	}
	fprintf(f, "%s)", a->mirrored ? ", neighbours mirrored" : "");
}

/* The interfaces, as the text's ifaces form writes them. */
static void ifaces_text(FILE *f, const struct tv_cell *c)
{
	const struct status *s = c->ctx;
	int i;

	for (i = 0; i < s->nif; i++)
		iface_text(f, &s->ifs[i], i ? "," : "");
	fprintf(f, "%s", s->nif ? "" : " none");
}

static void ifaces_json(struct toe_json *j, const struct tv_cell *c)
{
	const struct status *s = c->ctx;
	char ifn[IF_NAMESIZE];
	int i;

	tj_arr(j);
	for (i = 0; i < s->nif; i++) {
		const struct toe_attached *a = &s->ifs[i];

		tj_obj(j);
		tj_kstr(j, "name", if_indextoname(a->ifindex, ifn) ? ifn : "?");
		tj_ku64(j, "ifindex", a->ifindex);
		tj_kstr_or_null(j, "hook", a->hook);
		tj_kstr_or_null(j, "mode", a->mode);
		tj_key(j, "dispatcher");
		tj_bool(j, a->dispatcher);
		tj_kstr_or_null(j, "egress", a->egress);
		tj_key(j, "neighbours_mirrored");
		tj_bool(j, a->mirrored);
		tj_obj_end(j);
	}
	tj_arr_end(j);
}

/* The datapath's cells: its ids only while it is loaded. */
static void status_dp_cells(struct toed *d, const struct status *s,
			    struct tv_cell *c)
{
	int i;

	c[SF_DP_PIN_DIR].s = d->pin_dir;
	c[SF_DP_LOADED].u = d->dp.loaded;
	c[SF_DP_STATS].u = d->dp.ids.stats;
	c[SF_DP_EVENTS].u = d->dp.ids.events;
	c[SF_DP_NEIGH].u = d->dp.ids.neigh;
	c[SF_DP_LINK].u = d->dp.ids.sockops_link;
	c[SF_DP_PROG].u = d->dp.ids.sockops_prog;
	c[SF_DP_SINCE].s = s->since;
	for (i = SF_DP_STATS; i <= SF_DP_SINCE; i++)
		c[i].absent = !d->dp.loaded;
	c[SF_DP_RELOADS].u = d->dp.reloads;
	c[SF_DP_UNLOADS].u = d->dp.unloads;
}

static void status_policy_cells(struct toed *d, const struct status *s,
				struct tv_cell *c)
{
	c[SF_POL_SERIAL].u = s->h.serial;
	c[SF_POL_GEN].u = s->gen;
	c[SF_POL_RULES].u = s->h.nrules;
	c[SF_POL_DEVICES].u = d->ap.cfg.ndevs;
	c[SF_POL_DEFAULT].s = toe_action_name(s->h.default_action);
	c[SF_POL_TRACK].s = toe_track_name(s->h.track);
	c[SF_POL_SOURCE].s = s->source;
	c[SF_POL_SOURCE].null = !s->source;
	c[SF_POL_BY].s = s->own ? "toed" : s->source ? "other" : "unknown";
	c[SF_POL_AGO].f = s->h.serial ? (s->now - s->h.applied_ns) / 1e9 : 0;
}

/* The module's, the events' and the metrics endpoint's cells. */
static void status_more_cells(struct toed *d, struct tv_cell *c)
{
	const struct metrics_stats *st = metrics_stats(&d->met);
	const char *addr, *err;
	long long retry;
	int i;

	c[SF_KMOD_LOADED].u = toe_genl_up(&d->gl);
	c[SF_KMOD_FAMILY].s = OPENTOE_GENL_NAME;
	c[SF_KMOD_ID].u = d->gl.family;
	c[SF_KMOD_FAMILY].absent = c[SF_KMOD_ID].absent = !toe_genl_up(&d->gl);
	c[SF_KMOD_DEVICES].u = d->kmod.nkdevs;
	c[SF_KMOD_TIDS].u = tids_held_all(&d->kmod);
	for (i = TOE_EV_LISTEN_START; i <= TOE_EV_FLOW_CLOSED; i++)
		c[SF_EV_LISTEN_START + i - TOE_EV_LISTEN_START].u =
			d->evs.ev[i];
	c[SF_MET_STATE].s = metrics_state(&d->met, &addr, &err, &retry);
	c[SF_MET_ADDR].s = addr;
	c[SF_MET_ADDR].null = !addr;
	c[SF_MET_ERROR].s = err;
	c[SF_MET_ERROR].null = !err || !*err;
	c[SF_MET_BIND].u = st->bind_failed;
	c[SF_MET_RETRY].f = retry / 1e3;
	c[SF_MET_CONN].u = st->connections;
	c[SF_MET_DEADLINE].u = st->deadline;
	c[SF_MET_EVICTED].u = st->evicted;
	c[SF_MET_REFUSED].u = st->refused;
	c[SF_LOG].u = log_suppressed();
	c[SF_REC_RUNS].u = d->rec.runs;
	c[SF_REC_LOSS].u = d->rec.event_loss;
	c[SF_REC_FIXED].u = d->rec.fixed;
	c[SF_REC_LAST].u = d->rec.last_ns / 1000000;
	c[SF_REC_READ].u = d->rec.last_read_ns / 1000000;
	c[SF_REC_TOOK].u = d->rec.last_took_ns / 1000000;
}

/* toectl status' cells (c: SF__N), from s read once. */
static void status_cells(struct toed *d, const struct status *s,
			 struct tv_cell *c)
{
	memset(c, 0, SF__N * sizeof(*c));
	c[SF_PID].u = getpid();
	c[SF_UPTIME].f = (s->now - d->start_ns) / 1e9;
	c[SF_PIN_DIR].s = d->pin_dir;
	status_dp_cells(d, s, c);
	c[SF_CONFIG].s = d->config;
	status_policy_cells(d, s, c);
	c[SF_IFACES].json = ifaces_json;
	c[SF_IFACES].text = ifaces_text;
	c[SF_IFACES].ctx = s;
	c[SF_NEIGHBOURS].u = s->nn;
	c[SF_NEIGH_RESYNCS].u = d->nl.st.resyncs;
	c[SF_NL_OVERRUNS].u = d->nl.st.enobufs;
	c[SF_LOCAL].u = s->na;
	status_more_cells(d, c);
}

static int by_ifindex(const void *a, const void *b)
{
	const struct toe_attached *x = a, *y = b;

	return x->ifindex < y->ifindex ? -1 : x->ifindex > y->ifindex;
}

/*
 * The interfaces of toectl status: every one opentoe is attached to (the
 * loader's pins, checked against the kernel's links), then those toed
 * mirrors the neighbours of without opentoe on them (configuration, -i,
 * the module's devices); by ifindex.
 */
static void status_ifaces(struct toed *d, struct status *s)
{
	const int max = sizeof(s->ifs) / sizeof(s->ifs[0]);
	int i, k;

	if (d->dp.loaded) {
		struct toe_netns_id ns_id = { .cookie = d->netns_cookie,
					      .ino = d->netns_ino };

		s->nif = attached_read(&ns_id, d->pin_dir, s->ifs, max);
	} else {
		s->nif = 0;
	}
	for (i = 0; i < d->nl.ntracked; i++) {
		for (k = 0; k < s->nif && s->ifs[k].ifindex != d->nl.tracked[i];
		     k++)
			;
		if (k == s->nif) {
			if (k == max)
				break;
			memset(&s->ifs[k], 0, sizeof(s->ifs[k]));
			s->ifs[k].ifindex = d->nl.tracked[i];
			s->nif++;
		}
		s->ifs[k].mirrored = true;
	}
	qsort(s->ifs, s->nif, sizeof(s->ifs[0]), by_ifindex);
}

void view_status(struct toed *d, FILE *f, bool json)
{
	struct status s = { .now = toe_now_ns() };
	struct tv_cell c[SF__N];
	struct toe_policy_src rec;
	struct toe_json j;
	time_t since = d->dp.since;
	struct tm tm;

	memset(&s.h, 0, sizeof(s.h));
	if (d->dp.loaded)
		toe_policy_hdr(&d->m, &s.gen, &s.h);
	s.source = policy_source(d, &s.h, &rec, &s.own);
	if (gmtime_r(&since, &tm))
		strftime(s.since, sizeof(s.since), "%Y-%m-%dT%H:%M:%SZ", &tm);
	s.nn = d->dp.loaded ?
		       map_count(d->m.neigh, sizeof(struct toe_neigh_key)) :
		       0;
	s.na = d->dp.loaded ?
		       map_count(d->m.local, sizeof(struct toe_local_key)) :
		       0;
	status_ifaces(d, &s);
	status_cells(d, &s, c);
	if (json) {
		tj_start(&j, f);
		tv_json_doc(&j, status_fields, c, SF__N);
		tj_end(&j);
	} else {
		tv_text_lines(f, status_lines,
			      sizeof(status_lines) / sizeof(status_lines[0]),
			      status_fields, c, SF__N);
	}
	toe_policy_src_free(&rec);
}

/*
 * The module's own counts of TIDs and L2T entries in use, summed, and how
 * many of its L2T entries agree with toe_neigh (the neighbour toed mirrored
 * for the same interface and address): same MAC, or neither has a usable
 * one.  A snapshot: the module follows the kernel's neighbours through
 * netevents, toed through rtnetlink, so a change in flight may differ.
 */
struct kuse {
	__u64 tids, l2t, l2t_agree, l2t_differ;
};

static struct kuse kmod_usage(struct toed *d)
{
	struct toe_genl_dev *kd = calloc(TOE_MAX_DEVS, sizeof(*kd));
	struct kuse u = { 0, 0, 0, 0 };
	struct toe_genl_l2t *l2t = NULL;
	char err[256];
	int n = 0, i;

	if (kd && toe_genl_up(&d->gl) &&
	    toe_genl_devs(&d->gl, kd, TOE_MAX_DEVS, &n, err, sizeof(err)) ==
		    0) {
		for (i = 0; i < n; i++) {
			u.tids += kd[i].tids_used;
			u.l2t += kd[i].l2t_used;
		}
	}
	free(kd);
	if (!toe_genl_up(&d->gl) ||
	    toe_genl_l2t(&d->gl, 0, &l2t, &n, err, sizeof(err)))
		return u;
	for (i = 0; i < n; i++) {
		struct toe_neigh_key k = { .ifindex = l2t[i].ifindex,
					   .family = l2t[i].family };
		bool kvalid = l2t[i].has_mac && (l2t[i].state & TOE_NUD_VALID);
		struct toe_neigh v;
		bool nvalid;

		memcpy(k.addr, l2t[i].addr, sizeof(k.addr));
		nvalid = bpf_map_lookup_elem(d->m.neigh, &k, &v) == 0 &&
			 v.has_mac && (v.state & TOE_NUD_VALID);
		if (kvalid == nvalid &&
		    (!kvalid || !memcmp(v.mac, l2t[i].mac, 6)))
			u.l2t_agree++;
		else
			u.l2t_differ++;
	}
	free(l2t);
	return u;
}

/* The description of toectl stats' counters (fields.h), in its order. */
#define COUNTER_DESC(name, fam, labels, value) { name, F_##fam, labels },
const struct counter_desc daemon_desc[] = { TOE_DAEMON_COUNTERS(COUNTER_DESC) };
const struct counter_desc control_desc[] = { TOE_CONTROL_COUNTERS(
	COUNTER_DESC) };
#undef COUNTER_DESC
const size_t n_daemon_desc = sizeof(daemon_desc) / sizeof(daemon_desc[0]);
const size_t n_control_desc = sizeof(control_desc) / sizeof(control_desc[0]);

/* A table of counters fits in out (MAX_COUNTERS of them): checked at compile time. */
#define COUNTERS_FIT(tbl)                                            \
	_Static_assert(sizeof(tbl) <= MAX_COUNTERS * sizeof(tbl[0]), \
		       "MAX_COUNTERS too small")

/* The values v[0..n) of the counters of desc into out; n. */
static size_t counters_out(struct counter *out, const struct counter_desc *desc,
			   const __u64 *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		out[i].name = desc[i].name;
		out[i].v = v[i];
	}
	return n;
}

#define COUNTER_VALUE(name, fam, labels, value) value,

/* toed's own counters (the "daemon" section), in their order; how many. */
size_t daemon_counters(struct toed *d, struct counter *out)
{
	const struct toe_nl_stats *s = &d->nl.st;
	struct kuse ku = kmod_usage(d);
	const __u64 v[] = { TOE_DAEMON_COUNTERS(COUNTER_VALUE) };

	COUNTERS_FIT(v);
	_Static_assert(sizeof(v) / sizeof(v[0]) ==
			       sizeof(daemon_desc) / sizeof(daemon_desc[0]),
		       "a daemon counter without its value");
	return counters_out(out, daemon_desc, v, sizeof(v) / sizeof(v[0]));
}

/* "  NAME    VALUE" in the text, "NAME": VALUE in JSON. */
static void put_counter(FILE *f, struct toe_json *j, bool json,
			const char *name, __u64 v)
{
	if (json)
		tj_ku64(j, name, v);
	else
		fprintf(f, "  %-24s %llu\n", name, (unsigned long long)v);
}

/* The control socket's counters (ctl.c), and the datapath's reloads; how many. */
size_t control_counters(struct toed *d, struct counter *out)
{
	const struct metrics_stats *ms = metrics_stats(&d->met);
	const __u64 v[] = { TOE_CONTROL_COUNTERS(COUNTER_VALUE) };

	COUNTERS_FIT(v);
	_Static_assert(sizeof(v) / sizeof(v[0]) ==
			       sizeof(control_desc) / sizeof(control_desc[0]),
		       "a control counter without its value");
	return counters_out(out, control_desc, v, sizeof(v) / sizeof(v[0]));
}
#undef COUNTER_VALUE

/* A group of counters begins: a JSON object under name, or a "name:" line. */
static void stats_group(FILE *f, struct toe_json *j, bool json,
			const char *name)
{
	if (json) {
		tj_key(j, name);
		tj_obj(j);
	} else {
		fprintf(f, "%s:\n", name);
	}
}

void view_stats(struct toed *d, FILE *f, bool json)
{
	struct counter dm[MAX_COUNTERS], cc[MAX_COUNTERS], rc[MAX_COUNTERS];
	size_t ndm = daemon_counters(d, dm), ncc = control_counters(d, cc);
	size_t nrc = reason_counters(&d->fwd, rc); /* fwdev.c: toe_reasons */
	const struct {
		const char *name;
		const struct counter *c;
		size_t n;
	} groups[] = { { "daemon", dm, ndm },
		       { "control", cc, ncc },
		       { "reasons", rc, nrc } };
	__u64 v[TOE_STATS_MAX];
	struct toe_json j;
	unsigned int i, g;

	toe_stats_read(&d->m, v, TOE_STATS_MAX);
	if (json) {
		tj_start(&j, f);
		tj_obj(&j);
	}
	stats_group(f, &j, json, "datapath");
	for (i = 0; i < TOE_STATS_MAX; i++) {
		const char *n = toe_stat_name(i);
		char name[64];

		if (!n)
			continue;
		snprintf(name, sizeof(name), "%s%s",
			 i < TOE_S_BASE ? "xdp_parse_" : "", n);
		put_counter(f, &j, json, name, v[i]);
	}
	for (g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		if (json)
			tj_obj_end(&j);
		stats_group(f, &j, json, groups[g].name);
		for (i = 0; i < groups[g].n; i++)
			put_counter(f, &j, json, groups[g].c[i].name,
				    groups[g].c[i].v);
	}
	if (json) {
		tj_obj_end(&j);
		tj_obj_end(&j);
		tj_end(&j);
	}
}
