// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed: the forward path seen from outside (issue 35).  Its flow events
 * (fwd_admitted, fwd_returned, fwd_ended: bpf/fwd_events.h) for the log
 * and toectl monitor; the fast path ended by conntrack (ct.c: toed's own
 * fwd_ended, reason conntrack_gone); the per-reason counters
 * (toe_reasons, include/opentoe_reasons.h) for toectl stats and
 * /metrics; and the open fast-path flows by device and hook.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <net/if.h>
#include <stdio.h>
#include <sys/sdt.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/json.h"
#include "opentoe_common.h"
#include "opentoe_policy.h"
#include "opentoe_flows.h"
#include "opentoe_events.h"
#include "opentoe_forward.h"
#include "opentoe_bypass.h"
#include "opentoe_reasons.h"
#include "fwdev.h"
#include "events.h"
#include "mon.h"
#include "log.h"
#include "neigh.h"
#include "show_maps.h"
#include "state.h"
#include "ct.h"
#include "nft.h"

/* An interface's name in toed's namespace (the router's), or "ifN". */
static const char *if_name(__u32 ifindex, char *buf)
{
	if (!ifindex || !if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "if%u", ifindex);
	return buf;
}

/* The policy device's name of e (toe_devs), "-" if none. */
static void fwd_dev_name(struct fwdev *fw, const struct toe_event *e,
			 char dn[17])
{
	struct toe_dev dv;

	strcpy(dn, "-");
	if (e->dev != TOE_DEV_NONE && fw->m->devs >= 0 &&
	    bpf_map_lookup_elem(fw->m->devs, &e->dev, &dv) == 0 && dv.name[0]) {
		memcpy(dn, dv.name, 16);
		dn[16] = 0;
	}
}

/*
 * A forward-path event e (TOE_EV_FWD_*, key the toe_fwd key, direction
 * its client's end) to the log and the monitors, client end first.  ct:
 * for fwd_admitted, whether toed made its conntrack entry ESTABLISHED and
 * window-liberal (ct.c).  Logged at info (returned, ended) or debug
 * (admitted), rate-limited.
 */
void fwd_event_show(struct fwdev *fw, const struct toe_event *e, bool ct)
{
	const __u32 *ca = e->direction ? e->key.raddr : e->key.laddr;
	const __u32 *sa = e->direction ? e->key.laddr : e->key.raddr;
	__u16 cp = e->direction ? e->key.rport : e->key.lport;
	__u16 sp = e->direction ? e->key.lport : e->key.rport;
	char c[64], sv[64], cs[48], ss[48], in[IF_NAMESIZE], out[IF_NAMESIZE];
	char text[384], json[768], more[64] = "", dn[17];
	const char *rs = toe_fwd_reason_name(e->reason);
	int level = e->type == TOE_EV_FWD_ADMITTED ? LOG_DEBUG : LOG_INFO;
	bool udp = e->key.proto == IPPROTO_UDP; /* text: TCP not written */

	/* scripts/trace/fwd.bt: event, reason and hook names, client port,
	 * bytes each way (six arguments: bpftrace's limit on x86-64) */
	DTRACE_PROBE6(toed, fwd_event, toe_event_name(e->type), rs,
		      toe_fwd_hook_name(e->hook), cp, e->fwd_bytes[0],
		      e->fwd_bytes[1]);
	if (!mon_any(fw->mon) && !log_on(level))
		return;
	fwd_dev_name(fw, e, dn);
	toe_endpoint_str(e->key.family, ca, cp, c, sizeof(c));
	toe_endpoint_str(e->key.family, sa, sp, sv, sizeof(sv));
	toe_nl_addr_str(e->key.family, ca, cs, sizeof(cs));
	toe_nl_addr_str(e->key.family, sa, ss, sizeof(ss));
	if_name(e->fwd_if[0], in);
	if_name(e->fwd_if[1], out);
	if (e->type == TOE_EV_FWD_ADMITTED)
		snprintf(more, sizeof(more), " conntrack %s",
			 ct ? "established" : "unchanged");
	else
		snprintf(more, sizeof(more), " reason %s", rs);
	snprintf(
		text, sizeof(text),
		"[%s] %s -> %s forward%s%s dev %s hook %s in %s out %s c2s %llu pkts %llu bytes s2c %llu pkts %llu bytes\n",
		toe_event_name(e->type), c, sv, udp ? " udp" : "", more, dn,
		toe_fwd_hook_name(e->hook), in, out,
		(unsigned long long)e->fwd_packets[0],
		(unsigned long long)e->fwd_bytes[0],
		(unsigned long long)e->fwd_packets[1],
		(unsigned long long)e->fwd_bytes[1]);
	if (log_on(level))
		logm_limited(&fw->fwd_rl, level, "%.*s", (int)strlen(text) - 1,
			     text);
	if (!mon_any(fw->mon))
		return;
	if (e->type == TOE_EV_FWD_ADMITTED)
		snprintf(more, sizeof(more), "\"conntrack\":\"%s\"",
			 ct ? "established" : "unchanged");
	else
		snprintf(more, sizeof(more), "\"reason\":\"%s\"", rs);
	snprintf(
		json, sizeof(json),
		"{\"event\":\"%s\",\"proto\":\"%s\",\"laddr\":\"%s\",\"lport\":%u,\"raddr\":\"%s\",\"rport\":%u,"
		"\"direction\":\"routed\",\"decision\":\"forward\",\"device\":\"%s\",\"hook\":\"%s\","
		"\"in\":\"%s\",\"in_ifindex\":%u,\"out\":\"%s\",\"out_ifindex\":%u,%s,"
		"\"packets_c2s\":%llu,\"bytes_c2s\":%llu,\"packets_s2c\":%llu,\"bytes_s2c\":%llu,"
		"\"netns_cookie\":%llu}\n",
		toe_event_name(e->type), udp ? "udp" : "tcp", cs, cp, ss, sp,
		dn, toe_fwd_hook_name(e->hook), in, e->fwd_if[0], out,
		e->fwd_if[1], more, (unsigned long long)e->fwd_packets[0],
		(unsigned long long)e->fwd_bytes[0],
		(unsigned long long)e->fwd_packets[1],
		(unsigned long long)e->fwd_bytes[1],
		(unsigned long long)e->key.netns);
	mon_send(fw->mon, text, json);
}

/*
 * conntrack destroyed flow k's entry and ct.c deleted its toe_fwd entry v:
 * its fwd_ended (reason conntrack_gone), counted by the hook of the
 * client's interface.
 */
void fwd_ct_gone(struct fwdev *fw, const struct toe_flow_key *k,
		 const struct toe_fwd *v)
{
	struct toe_event e = {};
	struct toe_iface i;

	e.type = TOE_EV_FWD_ENDED;
	e.key = *k;
	e.key.netns = v->netns;
	e.dev = v->dev;
	e.rule = v->rule;
	e.policy = v->policy;
	e.reason = TOE_FR_CT_GONE;
	e.direction = v->client;
	e.hook = TOE_FH_XDP;
	if (fw->m->ifaces >= 0 &&
	    bpf_map_lookup_elem(fw->m->ifaces, &v->client_if, &i) == 0 &&
	    (i.flags & TOE_IFACE_TC))
		e.hook = TOE_FH_TC;
	memcpy(e.fwd_packets, v->dir_packets, sizeof(e.fwd_packets));
	memcpy(e.fwd_bytes, v->dir_bytes, sizeof(e.fwd_bytes));
	e.fwd_if[0] = v->client_if;
	e.fwd_if[1] = v->server_if;
	fw->fwd_ct_gone[e.hook]++;
	fwd_track(fw, &e);
	fwd_event_show(fw, &e, false);
}

/*
 * toe_reasons summed over the CPUs into out (TOE_RSN_MAX), toed's own
 * conntrack_gone counts added; zeros without the map (an older datapath).
 */
void fwd_reasons_read(struct fwdev *fw, __u64 *out)
{
	int ncpu = libbpf_num_possible_cpus(), c, h;
	__u64 *v;
	__u32 i;

	memset(out, 0, TOE_RSN_MAX * sizeof(*out));
	v = ncpu > 0 ? calloc(ncpu, sizeof(*v)) : NULL;
	for (i = 0; v && fw->m->reasons >= 0 && i < TOE_RSN_MAX; i++) {
		if (bpf_map_lookup_elem(fw->m->reasons, &i, v))
			continue;
		for (c = 0; c < ncpu; c++)
			out[i] += v[c];
	}
	free(v);
	for (h = 0; h < TOE_FH__MAX; h++) {
		out[TOE_RSN_FWD_FLOWS(h, TOE_FR_CT_GONE)] += fw->fwd_ct_gone[h];
		out[TOE_RSN_FWD_FLOWS(h, TOE_FR_EVICTED)] += fw->fwd_evicted[h];
	}
}

/* The bypass's reasons to switch to TCP (enum toe_byp_why), by name. */
const char *toe_byp_why_name(__u32 why)
{
	return toe_byp_why_str(why); /* TOE_BYP_WHY_TABLE */
}

/* The refusals sock_ops counts (bpf/flows.h: the flow_refused events). */
bool toe_reason_refusal(__u32 r)
{
	return toe_reason_counted(r); /* TOE_REASON_TABLE's counted column */
}

/*
 * toe_reasons as flat counters (toectl stats' "reasons" section, the docs'
 * names): fwd_flows_HOOK_REASON, fwd_packets_HOOK_REASON,
 * bypass_to_tcp_WHY, refused_REASON; how many into out (at most
 * MAX_COUNTERS).  The names live in a static buffer.
 */
size_t reason_counters(struct fwdev *fw, struct counter *out)
{
	static char names[MAX_COUNTERS][40];
	__u64 v[TOE_RSN_MAX];
	size_t n = 0;
	__u32 h, r;

	fwd_reasons_read(fw, v);
	for (h = 0; h < TOE_FH__MAX; h++)
		for (r = 1; r < TOE_FR__MAX && n + 2 <= MAX_COUNTERS; r++) {
			if (!toe_fwd_reason_on_hook(r, h))
				continue;
			snprintf(names[n], sizeof(names[n]), "fwd_flows_%s_%s",
				 toe_fwd_hook_name(h), toe_fwd_reason_name(r));
			out[n].name = names[n];
			out[n++].v = v[TOE_RSN_FWD_FLOWS(h, r)];
			if (!toe_fwd_reason_has_pkts(r))
				continue;
			snprintf(names[n], sizeof(names[n]),
				 "fwd_packets_%s_%s", toe_fwd_hook_name(h),
				 toe_fwd_reason_name(r));
			out[n].name = names[n];
			out[n++].v = v[TOE_RSN_FWD_PKTS(h, r)];
		}
	for (r = 1; r <= TOE_BYP_WHY_N && n < MAX_COUNTERS; r++) {
		snprintf(names[n], sizeof(names[n]), "bypass_to_tcp_%s",
			 toe_byp_why_name(r));
		out[n].name = names[n];
		out[n++].v = v[TOE_RSN_BYP(r)];
	}
	for (r = 0; r < TOE_R__MAX && n < MAX_COUNTERS; r++) {
		if (!toe_reason_refusal(r))
			continue;
		snprintf(names[n], sizeof(names[n]), "refused_%s",
			 toe_reason_name(r));
		out[n].name = names[n];
		out[n++].v = v[TOE_RSN_REFUSED(r)];
	}
	return n;
}

/*
 * The fast path's open flows (toe_fwd entries) by device, hook (of the
 * client's interface) and state (TOE_FWD_OPEN_*) into
 * n[TOE_MAX_DEVS][TOE_FH__MAX][TOE_FWD_OPEN__N].  A walk of toe_fwd in
 * batches (BPF_MAP_LOOKUP_BATCH, FWD_WALK_BATCH entries a call, where one
 * entry at a time took three calls), each interface's hook looked up once
 * a walk: about 20 ms at 65,536 flows, where the walk by entry took 200
 * (docs/operator-guide.md).  A kernel without batch look-ups on the map
 * gets the walk by entry.
 */
#define FWD_WALK_BATCH 1024

/* The hook of the flow's client interface: toe_ifaces, looked up once. */
static int walk_hook(struct fwdev *fw, __u32 ifindex, __u32 *ifs, __u8 *hooks,
		     int *nifs)
{
	struct toe_iface i;
	int j;

	for (j = 0; j < *nifs; j++)
		if (ifs[j] == ifindex)
			return hooks[j];
	/* (an interface not there, or gone, is XDP's, as before: cached too) */
	j = fw->m->ifaces >= 0 &&
	    bpf_map_lookup_elem(fw->m->ifaces, &ifindex, &i) == 0 &&
	    (i.flags & TOE_IFACE_TC);
	if (*nifs < 64) {
		ifs[*nifs] = ifindex;
		hooks[(*nifs)++] = j;
	}
	return j;
}

static void walk_add(struct fwdev *fw, toe_fwd_open_t *n,
		     const struct toe_flow_key *k, const struct toe_fwd *v,
		     __u32 *ifs, __u8 *hooks, int *nifs)
{
	int h, p = k->proto == IPPROTO_UDP ? TOE_FWD_OPEN_UDP :
					     TOE_FWD_OPEN_TCP;

	if (v->dev >= TOE_MAX_DEVS)
		return;
	h = walk_hook(fw, v->client_if, ifs, hooks, nifs);
	n[v->dev][h][p][v->state == TOE_FWD_READMIT ? TOE_FWD_OPEN_READMIT :
			v->state == TOE_FWD_CT_WAIT ? TOE_FWD_OPEN_CT_WAIT :
						      TOE_FWD_OPEN_FAST]++;
}

/* The batched walk; false if the kernel has none for this map (nothing counted). */
static bool walk_batched(struct fwdev *fw, toe_fwd_open_t *n, __u32 *ifs,
			 __u8 *hooks, int *nifs)
{
	static struct toe_flow_key *keys;
	static struct toe_fwd *vals;
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, o);
	__u64 in = 0, out = 0;
	bool first = true;
	__u32 cnt, i;
	int err;

	if (!keys)
		keys = calloc(FWD_WALK_BATCH, sizeof(*keys));
	if (!vals)
		vals = calloc(FWD_WALK_BATCH, sizeof(*vals));
	if (!keys || !vals)
		return false;
	for (;;) {
		cnt = FWD_WALK_BATCH;
		err = bpf_map_lookup_batch(fw->m->fwd, first ? NULL : &in, &out,
					   keys, vals, &cnt, &o);
		if (err && errno != ENOENT)
			return !first; /* EINVAL/ENOTSUPP at once: by entry */
		for (i = 0; i < cnt; i++)
			walk_add(fw, n, &keys[i], &vals[i], ifs, hooks, nifs);
		if (err) /* ENOENT: the map's end */
			return true;
		in = out;
		first = false;
	}
}

void fwd_open_count(struct fwdev *fw, toe_fwd_open_t *n)
{
	struct toe_flow_key k, next, *prev = NULL;
	__u32 ifs[64];
	__u8 hooks[64];
	struct toe_fwd v;
	int nifs = 0;

	memset(n, 0, sizeof(*n) * TOE_MAX_DEVS);
	if (fw->m->fwd < 0 || walk_batched(fw, n, ifs, hooks, &nifs))
		return;
	while (bpf_map_get_next_key(fw->m->fwd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fw->m->fwd, &k, &v) == 0)
			walk_add(fw, n, &k, &v, ifs, hooks, &nifs);
	}
}

/*
 * Evictions.  toe_fwd is an LRU: when it is full, admitting a flow evicts
 * another without a packet of it, so no program sees it go.  toed keeps
 * the keys of the flows it heard admitted (FWD_TRACK_MAX of them, open
 * addressing; beyond that a flow goes untracked) and, every timer tick,
 * after reading the ring (a FIN's or RST's fwd_ended is on the ring before
 * its entry goes), looks each up: one gone without its fwd_ended was
 * evicted (or its event was lost), and gets toed's own fwd_ended, reason
 * evicted, with what its fwd_admitted said (its counters went with the
 * entry: 0).  Tombstones (TRK_GONE) are swept when they fill half the
 * table; a datapath loaded again empties it.
 */
#define FWD_TRACK_MAX 16384 /* a power of two */
enum { TRK_FREE = 0, TRK_USED, TRK_GONE };

struct trk {
	struct toe_flow_key k;
	__u8 st; /* TRK_* */
	__u8 hook, client; /* the admitted event's, for the evicted one */
	__u32 dev, fwd_if[2];
	__u64 netns;
};

static __u32 trk_hash(const struct toe_flow_key *k)
{
	const __u8 *b = (const __u8 *)k;
	__u32 h = 2166136261u;
	size_t i;

	for (i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 16777619u;
	return h & (FWD_TRACK_MAX - 1);
}

/* The slot of k, or (add) a free one for it; NULL if none. */
static struct trk *trk_find(struct fwdev *fw, const struct toe_flow_key *k,
			    bool add)
{
	struct trk *tomb = NULL;
	__u32 i, h = trk_hash(k);

	if (!fw->trk)
		return NULL;
	for (i = 0; i < FWD_TRACK_MAX; i++) {
		struct trk *t = &fw->trk[(h + i) & (FWD_TRACK_MAX - 1)];

		if (t->st == TRK_FREE)
			return add ? (tomb ? tomb : t) : NULL;
		if (t->st == TRK_GONE) {
			if (!tomb)
				tomb = t;
		} else if (!memcmp(&t->k, k, sizeof(*k))) {
			return t;
		}
	}
	return add ? tomb : NULL;
}

static void trk_drop(struct fwdev *fw, struct trk *t)
{
	t->st = TRK_GONE;
	fw->trk_used--;
	fw->trk_gone++;
}

/* Every used slot again into a clean table (the tombstones go). */
static void trk_sweep(struct fwdev *fw)
{
	struct trk *old = fw->trk;
	__u32 i;

	fw->trk = calloc(FWD_TRACK_MAX, sizeof(*fw->trk));
	if (!fw->trk) {
		fw->trk = old;
		return;
	}
	fw->trk_used = fw->trk_gone = 0;
	for (i = 0; i < FWD_TRACK_MAX; i++) {
		struct trk *t;

		if (old[i].st != TRK_USED)
			continue;
		t = trk_find(fw, &old[i].k, true);
		*t = old[i];
		fw->trk_used++;
	}
	free(old);
}

/* A forward-path event read off the ring (or toed's own): tracking. */
void fwd_track(struct fwdev *fw, const struct toe_event *e)
{
	struct toe_flow_key k = e->key;
	struct trk *t;

	k.netns = 0; /* the toe_fwd key (fwd_event adds the namespace) */
	if (!fw->trk && e->type == TOE_EV_FWD_ADMITTED)
		fw->trk = calloc(FWD_TRACK_MAX, sizeof(*fw->trk));
	t = trk_find(fw, &k, e->type == TOE_EV_FWD_ADMITTED);
	if (!t)
		return;
	if (e->type == TOE_EV_FWD_ENDED) {
		if (t->st == TRK_USED)
			trk_drop(fw, t);
		return;
	}
	if (e->type != TOE_EV_FWD_ADMITTED || t->st == TRK_USED ||
	    fw->trk_used >= FWD_TRACK_MAX / 2)
		return;
	if (t->st == TRK_GONE)
		fw->trk_gone--;
	t->k = k;
	t->st = TRK_USED;
	t->hook = e->hook;
	t->client = e->direction;
	t->dev = e->dev;
	t->fwd_if[0] = e->fwd_if[0];
	t->fwd_if[1] = e->fwd_if[1];
	t->netns = e->key.netns;
	fw->trk_used++;
}

/*
 * Whether the tracked flows are worth a look: the tracking of another
 * datapath's toe_fwd (loaded again or unloaded since) dropped first.
 */
static bool evict_ready(struct fwdev *fw)
{
	if (fw->trk && fw->trk_reloads != fw->dp->reloads + fw->dp->unloads) {
		/* another datapath's toe_fwd: what was tracked is not in it */
		free(fw->trk);
		fw->trk = NULL;
		fw->trk_used = fw->trk_gone = 0;
	}
	fw->trk_reloads = fw->dp->reloads + fw->dp->unloads;
	return fw->trk && fw->m->fwd >= 0 && fw->dp->loaded;
}

/* Tracked flow t went from toe_fwd without its fwd_ended: evicted. */
static void evict_one(struct fwdev *fw, struct trk *t)
{
	struct toe_event e;

	memset(&e, 0, sizeof(e));
	e.type = TOE_EV_FWD_ENDED;
	e.key = t->k;
	e.key.netns = t->netns;
	e.reason = TOE_FR_EVICTED;
	e.hook = t->hook;
	e.direction = t->client;
	e.dev = t->dev;
	e.fwd_if[0] = t->fwd_if[0];
	e.fwd_if[1] = t->fwd_if[1]; /* its counters went with it: 0 */
	fw->fwd_evicted[t->hook & 1]++;
	trk_drop(fw, t);
	fwd_event_show(fw, &e, false);
}

/* The tracked flows gone from toe_fwd without fwd_ended: evicted. */
static void evict_scan(struct fwdev *fw)
{
	struct toe_fwd v;
	__u32 i;

	for (i = 0; i < FWD_TRACK_MAX; i++) {
		struct trk *t = &fw->trk[i];

		if (t->st != TRK_USED ||
		    bpf_map_lookup_elem(fw->m->fwd, &t->k, &v) == 0)
			continue;
		evict_one(fw, t);
	}
	if (fw->trk_gone > FWD_TRACK_MAX / 2)
		trk_sweep(fw);
}

/*
 * A flow admitted (e) while toed still tracks its key: the entry of its
 * earlier admission went without a fwd_ended, and the flow was admitted
 * again (joined mid-stream, or a new handshake of the tuple) before the
 * timer looked, so the scan would find an entry and say nothing.  The
 * earlier one was evicted (or its event lost): its fwd_ended first.
 */
static void evict_readmitted(struct fwdev *fw, const struct toe_event *e)
{
	struct toe_flow_key k = e->key;
	struct trk *t;

	k.netns = 0; /* the toe_fwd key, as fwd_track keeps it */
	t = trk_find(fw, &k, false);
	if (t && t->st == TRK_USED)
		evict_one(fw, t);
}

/* The timer's check: tracked flows gone from toe_fwd without fwd_ended. */
void fwd_evict_check(struct toed *d)
{
	if (!evict_ready(&d->fwd))
		return;
	events_consume(&d->evs); /* a FIN's event before its entry's absence */
	evict_scan(&d->fwd);
}

/* The forward path admitted a flow (events.c's table): conntrack kept true (ct.c). */
void fwd_on_admitted(struct toed *d, const struct toe_event *e)
{
	evict_readmitted(&d->fwd, e); /* an eviction the timer missed */
	fwd_event_show(&d->fwd, e, ct_admitted(nft_fwd_path(), e));
	fwd_track(&d->fwd, e); /* evictions */
}

/* It gave one back to the stack, or ended its fast path (events.c's table). */
void fwd_on_returned(struct toed *d, const struct toe_event *e)
{
	fwd_track(&d->fwd, e);
	fwd_event_show(&d->fwd, e, false);
}

void fwd_init(struct fwdev *fw, struct toe_maps *m, const struct toed_dp *dp,
	      struct mon_set *mon)
{
	memset(fw, 0, sizeof(*fw));
	fw->m = m;
	fw->dp = dp;
	fw->mon = mon;
	fw->fwd_rl.what = "forward path events";
}

/* fw's tracking let go (toed stops). */
void fwd_exit(struct fwdev *fw)
{
	free(fw->trk);
	fw->trk = NULL;
	fw->trk_used = fw->trk_gone = 0;
}
