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

static void datapath_text(struct toed *d, FILE *f, const struct status *s)
{
	const struct dp_ids *i = &d->dp.ids;

	if (!d->dp.loaded) {
		fprintf(f,
			"datapath:   %s: not loaded (toe-loader load); waiting for it\n",
			d->pin_dir);
		return;
	}
	fprintf(f,
		"datapath:   %s: loaded since %s (stats map id %u, events map id %u, neigh map id %u, sockops prog id %u; %llu reloads seen)\n",
		d->pin_dir, s->since, i->stats, i->events, i->neigh,
		i->sockops_prog, (unsigned long long)d->dp.reloads);
}

static void datapath_json(struct toed *d, struct toe_json *j,
			  const struct status *s)
{
	tj_key(j, "datapath");
	tj_obj(j);
	tj_kstr(j, "pin_dir", d->pin_dir);
	tj_key(j, "loaded");
	tj_bool(j, d->dp.loaded);
	if (d->dp.loaded) {
		tj_ku64(j, "stats_map_id", d->dp.ids.stats);
		tj_ku64(j, "events_map_id", d->dp.ids.events);
		tj_ku64(j, "neigh_map_id", d->dp.ids.neigh);
		tj_ku64(j, "sockops_link_id", d->dp.ids.sockops_link);
		tj_ku64(j, "sockops_prog_id", d->dp.ids.sockops_prog);
		tj_kstr(j, "since", s->since);
	}
	tj_ku64(j, "reloads", d->dp.reloads);
	tj_ku64(j, "unloads", d->dp.unloads);
	tj_obj_end(j);
}

static void metrics_text(struct metrics *mt, FILE *f);

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

static void status_text(struct toed *d, FILE *f, const struct status *s)
{
	char age[16], up[16];
	int i;

	toe_age_str(s->now - d->start_ns, up, sizeof(up));
	toe_age_str(s->now - s->h.applied_ns, age, sizeof(age));
	fprintf(f, "toed:       running, pid %d, up %s\n", getpid(), up);
	datapath_text(d, f, s);
	fprintf(f, "config:     %s\n", d->config);
	if (s->h.serial)
		fprintf(f,
			"policy:     %llu (generation %u), applied %s ago by %s from %s: %u rules, default %s, track %s\n",
			(unsigned long long)s->h.serial, s->gen, age,
			s->own ? "this toed" : "another program",
			s->source ? s->source : "(unknown)", s->h.nrules,
			toe_action_name(s->h.default_action),
			toe_track_name(s->h.track));
	else
		fprintf(f, "policy:     none in force\n");
	fprintf(f, "interfaces:");
	for (i = 0; i < s->nif; i++)
		iface_text(f, &s->ifs[i], i ? "," : "");
	fprintf(f, "%s\n", s->nif ? "" : " none");
	fprintf(f, "neighbours: %llu mirrored, %llu resyncs, %llu overruns\n",
		(unsigned long long)s->nn, (unsigned long long)d->nl.st.resyncs,
		(unsigned long long)d->nl.st.enobufs);
	fprintf(f, "addresses:  %llu local\n", (unsigned long long)s->na);
	if (toe_genl_up(&d->gl))
		fprintf(f,
			"module:     loaded (genetlink family %s, id %u): %d device%s, %zu TID%s held\n",
			OPENTOE_GENL_NAME, d->gl.family, d->kmod.nkdevs,
			d->kmod.nkdevs == 1 ? "" : "s", tids_held_all(&d->kmod),
			tids_held_all(&d->kmod) == 1 ? "" : "s");
	else
		fprintf(f,
			"module:     not loaded (configuration devices only)\n");
	fprintf(f,
		"events:     %llu offloaded, %llu refused, %llu closed, %llu listen\n",
		(unsigned long long)d->evs.ev[TOE_EV_FLOW_OFFLOADED],
		(unsigned long long)d->evs.ev[TOE_EV_FLOW_REFUSED],
		(unsigned long long)d->evs.ev[TOE_EV_FLOW_CLOSED],
		(unsigned long long)d->evs.ev[TOE_EV_LISTEN_START]);
	metrics_text(&d->met, f);
	fprintf(f, "log:        %llu repeated lines suppressed\n",
		log_suppressed());
	fprintf(f,
		"reconcile:  %llu runs (%llu for lost events), %llu put right\n",
		(unsigned long long)d->rec.runs,
		(unsigned long long)d->rec.event_loss,
		(unsigned long long)d->rec.fixed);
}

/* The metrics endpoint: serving, retrying a bind (and why), or off. */
static void metrics_text(struct metrics *mt, FILE *f)
{
	const struct metrics_stats *st = metrics_stats(mt);
	const char *addr, *err, *state;
	long long retry;

	state = metrics_state(mt, &addr, &err, &retry);
	if (!addr)
		fprintf(f, "metrics:    off\n");
	else if (!strcmp(state, "serving"))
		fprintf(f,
			"metrics:    serving http://%s/metrics: %llu connections; %llu past the deadline, %llu evicted, %llu refused\n",
			addr, (unsigned long long)st->connections,
			(unsigned long long)st->deadline,
			(unsigned long long)st->evicted,
			(unsigned long long)st->refused);
	else
		fprintf(f,
			"metrics:    retrying %s: %s (%llu failed binds; next in %.1f s)\n",
			addr, err, (unsigned long long)st->bind_failed,
			retry / 1e3);
}

static void metrics_json(struct metrics *mt, struct toe_json *j)
{
	const struct metrics_stats *st = metrics_stats(mt);
	const char *addr, *err, *state;
	long long retry;

	state = metrics_state(mt, &addr, &err, &retry);
	tj_key(j, "metrics");
	tj_obj(j);
	tj_kstr(j, "state", state);
	tj_kstr_or_null(j, "address", addr);
	tj_kstr_or_null(j, "error", err && *err ? err : NULL);
	tj_ku64(j, "bind_failed", st->bind_failed);
	tj_key(j, "retry_in_s");
	tj_f64(j, retry / 1e3);
	tj_ku64(j, "connections", st->connections);
	tj_ku64(j, "deadline", st->deadline);
	tj_ku64(j, "evicted", st->evicted);
	tj_ku64(j, "refused", st->refused);
	tj_obj_end(j);
}

static void status_json_policy(struct toed *d, struct toe_json *j,
			       const struct status *s)
{
	tj_key(j, "policy");
	tj_obj(j);
	tj_ku64(j, "serial", s->h.serial);
	tj_ku64(j, "generation", s->gen);
	tj_ku64(j, "rules", s->h.nrules);
	tj_ku64(j, "devices", d->ap.cfg.ndevs);
	tj_kstr(j, "default", toe_action_name(s->h.default_action));
	tj_kstr(j, "track", toe_track_name(s->h.track));
	tj_kstr_or_null(j, "source", s->source);
	tj_kstr(j, "applied_by",
		s->own	  ? "toed" :
		s->source ? "other" :
			    "unknown");
	tj_key(j, "applied_s_ago");
	tj_f64(j, s->h.serial ? (s->now - s->h.applied_ns) / 1e9 : 0);
	tj_obj_end(j);
}

static void status_json(struct toed *d, FILE *f, const struct status *s)
{
	char ifn[IF_NAMESIZE];
	struct toe_json j;
	int i;

	tj_start(&j, f);
	tj_obj(&j);
	tj_ku64(&j, "pid", getpid());
	tj_key(&j, "uptime_s");
	tj_f64(&j, (s->now - d->start_ns) / 1e9);
	tj_kstr(&j, "pin_dir", d->pin_dir);
	datapath_json(d, &j, s);
	tj_kstr(&j, "config", d->config);
	status_json_policy(d, &j, s);
	tj_key(&j, "interfaces");
	tj_arr(&j);
	for (i = 0; i < s->nif; i++) {
		const struct toe_attached *a = &s->ifs[i];

		tj_obj(&j);
		tj_kstr(&j, "name",
			if_indextoname(a->ifindex, ifn) ? ifn : "?");
		tj_ku64(&j, "ifindex", a->ifindex);
		tj_kstr_or_null(&j, "hook", a->hook);
		tj_kstr_or_null(&j, "mode", a->mode);
		tj_key(&j, "dispatcher");
		tj_bool(&j, a->dispatcher);
		tj_kstr_or_null(&j, "egress", a->egress);
		tj_key(&j, "neighbours_mirrored");
		tj_bool(&j, a->mirrored);
		tj_obj_end(&j);
	}
	tj_arr_end(&j);
	tj_ku64(&j, "neighbours", s->nn);
	tj_ku64(&j, "local_addresses", s->na);
	tj_key(&j, "kmod");
	tj_obj(&j);
	tj_key(&j, "loaded");
	tj_bool(&j, toe_genl_up(&d->gl));
	tj_ku64(&j, "devices", d->kmod.nkdevs);
	tj_ku64(&j, "tids_held", tids_held_all(&d->kmod));
	tj_obj_end(&j);
	tj_key(&j, "events");
	tj_obj(&j);
	for (i = TOE_EV_LISTEN_START; i <= TOE_EV_FLOW_CLOSED; i++)
		tj_ku64(&j, toe_event_name(i), d->evs.ev[i]);
	tj_obj_end(&j);
	metrics_json(&d->met, &j);
	tj_ku64(&j, "log_suppressed", log_suppressed());
	tj_key(&j, "reconcile");
	tj_obj(&j);
	tj_ku64(&j, "runs", d->rec.runs);
	tj_ku64(&j, "event_loss", d->rec.event_loss);
	tj_ku64(&j, "fixed", d->rec.fixed);
	tj_ku64(&j, "last_ms", d->rec.last_ns / 1000000);
	tj_ku64(&j, "last_read_ms", d->rec.last_read_ns / 1000000);
	tj_ku64(&j, "last_took_ms", d->rec.last_took_ns / 1000000);
	tj_obj_end(&j);
	tj_obj_end(&j);
	tj_end(&j);
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
	struct toe_policy_src rec;
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
	if (json)
		status_json(d, f, &s);
	else
		status_text(d, f, &s);
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
