// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed's events: the datapath's ring buffer (logged, counted, a TID taken
 * or given back in the kernel module), streamed to the monitor clients
 * (mon.c), rtnetlink's neighbour and link callbacks, and which
 * interfaces' neighbours are mirrored (retrack).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/sdt.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/netns.h"
#include "lib/pinned.h"
#include "lib/clock.h"
#include "opentoe_common.h"
#include "opentoe_policy.h"
#include "opentoe_flows.h"
#include "opentoe_events.h"
#include "opentoe_forward.h"
#include "events.h"
#include "mon.h"
#include "config.h"
#include "log.h"
#include "neigh.h"
#include "show_maps.h"
#include "state.h"
#include "nlat.h"
#include "nft.h"

/* ----------------------------------------------------------- events */

/* The monitor's JSON line for a datapath event; dn its device, tids " tid N" or "". */
static void event_json(const struct toe_event *e, const char *dn,
		       const char *tids, long long tid, char *json, size_t len)
{
	char la[48], ra[48];

	toe_nl_addr_str(e->key.family, e->key.laddr, la, sizeof(la));
	toe_nl_addr_str(e->key.family, e->key.raddr, ra, sizeof(ra));
	snprintf(
		json, len,
		"{\"event\":\"%s\",\"laddr\":\"%s\",\"lport\":%u,\"raddr\":\"%s\",\"rport\":%u,"
		"\"direction\":\"%s\",\"decision\":\"%s\",\"reason\":\"%s\",\"device\":%s%s%s,"
		"\"rule\":%d,\"policy\":%u,\"bytes_acked\":%llu,\"bytes_received\":%llu,"
		"\"total_retrans\":%u,\"tid\":%s,\"netns\":%llu,\"netns_cookie\":%llu}\n",
		toe_event_name(e->type), la, e->key.lport, ra, e->key.rport,
		e->direction == TOE_DIR_PASSIVE ? "passive" : "active",
		toe_action_name(e->decision), toe_reason_name(e->reason),
		e->dev == TOE_DEV_NONE ? "" : "\"",
		e->dev == TOE_DEV_NONE ? "null" : dn,
		e->dev == TOE_DEV_NONE ? "" : "\"", (int)e->rule, e->policy,
		(unsigned long long)e->bytes_acked,
		(unsigned long long)e->bytes_received, e->total_retrans,
		tid >= 0 ? tids + 5 : "null", (unsigned long long)e->netns_ino,
		(unsigned long long)e->key.netns);
}

/* The log's and the text monitor's line for a datapath event; its log level. */
static int event_text(struct toed *d, const struct toe_event *e, const char *dn,
		      const char *tids, char *text, size_t len)
{
	char l[64], r[64], ns[32] = "";

	/* the namespace, when it is not toed's own (-j has it always) */
	if (e->netns_ino && e->netns_ino != d->netns_ino)
		snprintf(ns, sizeof(ns), " netns %llu",
			 (unsigned long long)e->netns_ino);
	toe_endpoint_str(e->key.family, e->key.laddr, e->key.lport, l,
			 sizeof(l));
	toe_endpoint_str(e->key.family, e->key.raddr, e->key.rport, r,
			 sizeof(r));
	switch (e->type) {
	case TOE_EV_LISTEN_START:
		/* a listener policy offloads kept home: no server TID, a
		 * tenant's, no room in toe_listeners */
		if (e->reason == TOE_R_NO_STID || e->reason == TOE_R_ROUTE ||
		    e->reason == TOE_R_LISTENERS_FULL) {
			snprintf(text, len, "[%s] %s %s dev - reason %s%s\n",
				 toe_event_name(e->type), l,
				 toe_action_name(e->decision),
				 toe_reason_name(e->reason), ns);
			return LOG_WARN;
		}
		/* fall through */
	case TOE_EV_LISTEN_STOP:
		snprintf(text, len, "[%s] %s\n", toe_event_name(e->type), l);
		return LOG_DEBUG;
	case TOE_EV_FLOW_CLOSED:
		snprintf(
			text, len,
			"[%s] %s %s %s dev %s out %llu in %llu retrans %u%s%s\n",
			toe_event_name(e->type), l,
			e->direction == TOE_DIR_PASSIVE ? "<-" : "->", r, dn,
			(unsigned long long)e->bytes_acked,
			(unsigned long long)e->bytes_received, e->total_retrans,
			tids, ns);
		return LOG_DEBUG;
	default:
		snprintf(
			text, len,
			"[%s] %s %s %s %s dev %s reason %s rule %d policy %u%s%s\n",
			toe_event_name(e->type), l,
			e->direction == TOE_DIR_PASSIVE ? "<-" : "->", r,
			toe_action_name(e->decision), dn,
			toe_reason_name(e->reason), (int)e->rule, e->policy,
			tids, ns);
		return e->type == TOE_EV_FLOW_REFUSED ? LOG_WARN : LOG_INFO;
	}
}

/*
 * The event budget (include/opentoe_policy.h, TOE_TQ_EVENTS): what toed
 * read of each tenant's events, told to the datapath after each read of
 * the ring (events_consume), one update per tenant rather than per event.
 * toed is the only writer of the TOE_TQ_EVENTS_READ entries: the credit
 * of es (events.h) told to the datapath.
 */
static void credit_flush(struct events *es)
{
	struct toe_tenant_key k = { .what = TOE_TQ_EVENTS_READ };
	struct toe_tenant v;
	int i;

	for (i = 0; i < CREDIT_SLOTS && es->credit[i].tenant; i++) {
		k.netns = es->credit[i].tenant;
		if (es->m->tenants < 0 ||
		    bpf_map_lookup_elem(es->m->tenants, &k, &v))
			memset(&v, 0, sizeof(v));
		v.held += es->credit[i].n;
		if (es->m->tenants >= 0 &&
		    bpf_map_update_elem(es->m->tenants, &k, &v, BPF_ANY))
			logm(LOG_WARN, "cannot write %s: %s", TOE_MAP(TENANTS),
			     strerror(errno));
		es->credit[i].tenant = 0;
	}
}

/* One more of tenant's events read. */
static void credit_add(struct events *es, __u64 tenant)
{
	int i;

	for (i = 0; i < CREDIT_SLOTS; i++) {
		if (es->credit[i].tenant == tenant) {
			es->credit[i].n++;
			return;
		}
		if (!es->credit[i].tenant) {
			es->credit[i].tenant = tenant;
			es->credit[i].n = 1;
			return;
		}
	}
	credit_flush(es); /* more tenants than slots in one read: tell now */
	es->credit[0].tenant = tenant;
	es->credit[0].n = 1;
}

/* Read what is on the ring now, then give the tenants their budget back. */
void events_consume(struct events *es)
{
	if (es->rb)
		ring_buffer__consume(es->rb);
	credit_flush(es);
}

/*
 * A listener's or a flow's event, after the concern that owns it took its
 * part (before: it may make the event another), counted, logged and
 * streamed; then that concern's part that needs its TID read first.
 */
static void flow_event(struct toed *d, struct toe_event *e)
{
	const struct ev_table *tb = d->evs.evt;
	const struct ev_type *t = &tb->type[e->type];
	char dn[17] = "-", text[512], json[768], tids[32] = "";
	long long tid;
	struct toe_dev dv;
	int level;

	if (t->before) {
		t->before(d, e);
		t = &tb->type[e->type];
	}
	d->evs.ev[e->type]++;
	if (e->type == TOE_EV_FLOW_CLOSED && e->decision <= TOE_ACT_BYPASS)
		d->evs.closed_by[e->decision]++;
	if (e->type == TOE_EV_FLOW_REFUSED && e->reason < TOE_R__MAX)
		d->evs.refused_by[e->reason]++;
	DTRACE_PROBE5(toed, event, e->type, e->dev, e->key.lport, e->key.rport,
		      e->decision);
	tid = tb->tid(&e->key, &d->kmod);
	if (t->after)
		t->after(d, e);
	if (tid >= 0)
		snprintf(tids, sizeof(tids), " tid %lld", tid);
	if (e->dev != TOE_DEV_NONE &&
	    bpf_map_lookup_elem(d->m.devs, &e->dev, &dv) == 0 && dv.name[0]) {
		memcpy(dn, dv.name, 16);
		dn[16] = 0;
	}
	level = event_text(d, e, dn, tids, text, sizeof(text));
	if (log_on(level))
		logm_limited(&d->evs.ev_rl[e->type], level, "%.*s",
			     (int)strlen(text) - 1, text);
	if (!mon_any(&d->mon))
		return;
	event_json(e, dn, tids, tid, json, sizeof(json));
	mon_send(&d->mon, text, json);
}

/*
 * ring_buffer__consume's callback: one datapath event, handed on by its
 * type as the table says (ctx is toed's state, its evt evtypes.c's table).
 */
int on_event(void *ctx, void *data, size_t len)
{
	struct toed *d = ctx;
	const struct ev_table *tb = d->evs.evt;
	const struct ev_type *t = NULL;
	struct toe_event ev;

	if (len < sizeof(ev)) {
		d->evs.ev_bad++;
		return 0;
	}
	memcpy(&ev, data, sizeof(ev));
	if (ev.tenant)
		credit_add(&d->evs, ev.tenant);
	if (ev.type < TOE_EV__N)
		t = &tb->type[ev.type];
	if (t && t->fwd)
		t->fwd(d, &ev);
	else if (t && t->flow)
		flow_event(d, &ev);
	else
		d->evs.ev_bad++;
	return 0;
}

void on_neigh(struct toe_nl *nl, enum toe_nl_op op,
	      const struct toe_neigh_key *k, const struct toe_neigh *v)
{
	struct toed *d = nl->ctx;
	char a[48], mac[18], ifn[IF_NAMESIZE], text[256], json[384];

	nlat_observe(&d->evs.nlat, toe_now_ns() - nl->last_recv_ns);
	if (!mon_any(&d->mon) && !log_on(LOG_DEBUG))
		return;
	toe_nl_addr_str(k->family, k->addr, a, sizeof(a));
	if (!if_indextoname(k->ifindex, ifn))
		snprintf(ifn, sizeof(ifn), "if%u", k->ifindex);
	if (op == TOE_NL_DEL) {
		snprintf(text, sizeof(text), "[neigh] delete %s dev %s\n", a,
			 ifn);
		snprintf(
			json, sizeof(json),
			"{\"event\":\"neigh\",\"op\":\"delete\",\"dst\":\"%s\",\"dev\":\"%s\",\"ifindex\":%u}\n",
			a, ifn, k->ifindex);
	} else {
		toe_nl_mac_str(v->mac, mac, sizeof(mac));
		snprintf(text, sizeof(text),
			 "[neigh] set %s dev %s lladdr %s %s\n", a, ifn,
			 v->has_mac ? mac : "-", toe_nl_nud_str(v->state));
		snprintf(
			json, sizeof(json),
			"{\"event\":\"neigh\",\"op\":\"set\",\"dst\":\"%s\",\"dev\":\"%s\",\"ifindex\":%u,"
			"\"lladdr\":%s%s%s,\"state\":\"%s\"}\n",
			a, ifn, k->ifindex, v->has_mac ? "\"" : "",
			v->has_mac ? mac : "null", v->has_mac ? "\"" : "",
			toe_nl_nud_str(v->state));
	}
	logm(LOG_DEBUG, "%.*s", (int)strlen(text) - 1, text);
	mon_send(&d->mon, text, json);
}

void on_link(struct toe_nl *nl, int ifindex, bool gone)
{
	struct toed *d = nl->ctx;

	(void)ifindex;
	(void)gone;
	d->retrack = true;
}

/* --------------------------------------------------------- tracking */

/*
 * The i-th interface the configuration's devices, --interface and the
 * kernel module's devices (their lower interfaces) name: its index, or 0.
 */
static __u32 named_index(struct toed *d, int i)
{
	int nc = d->ap.cfg.ndevs, ni = d->nifaces;
	const char *name;

	if (i >= nc + ni)
		return d->kmod.kdevs[i - nc - ni].ifindex;
	name = i < nc ? d->ap.cfg.devs[i].ifname : d->ifaces[i - nc];
	return name[0] ? if_nametoindex(name) : 0;
}

/*
 * The interfaces whose neighbours are mirrored: those toe-loader attached
 * opentoe's XDP to in this network namespace (pins link_xdp_c<NS>_if<N>,
 * or xdpd_c<NS>_if<N> through libxdp's dispatcher),
 * those the configuration's devices name, and --interface.
 */
static int tracked_set(struct toed *d, __u32 *out, int max)
{
	struct dirent *de;
	int n = 0, i, k;
	DIR *dir;

	dir = opendir(d->pin_dir);
	while (dir && (de = readdir(dir)) && n < max) {
		unsigned long long ns;
		unsigned int ifindex;
		char kind, tail;

		/* by cookie, or by inode in an older toe-loader's pins */
		if ((sscanf(de->d_name, TOE_PIN_LINK_XDP "%c", &kind, &ns,
			    &ifindex, &tail) == 3 ||
		     sscanf(de->d_name, TOE_PIN_XDP_DISP "%c", &kind, &ns,
			    &ifindex, &tail) == 3) &&
		    toe_netns_match(kind, ns, d->netns_cookie, d->netns_ino))
			out[n++] = ifindex;
	}
	if (dir)
		closedir(dir);
	for (i = 0;
	     i < d->ap.cfg.ndevs + d->nifaces + d->kmod.nkdevs && n < max;
	     i++) {
		__u32 idx = named_index(d, i);

		if (!idx)
			continue;
		for (k = 0; k < n && out[k] != idx; k++)
			;
		if (k == n)
			out[n++] = idx;
	}
	return n;
}

/* Mirror the neighbours of the interfaces tracked_set finds; force: resync. */
void retrack(struct toed *d, bool force)
{
	__u32 set[TOE_NL_MAX_TRACKED];
	int n = tracked_set(d, set, TOE_NL_MAX_TRACKED);
	char err[256];

	d->retrack = false;
	if (!toe_nl_set_tracked(&d->nl, set, n) && !force)
		return;
	logm(LOG_INFO, "mirroring the neighbours of %d interface%s", n,
	     n == 1 ? "" : "s");
	if (toe_nl_resync(&d->nl, err, sizeof(err)))
		logm(LOG_ERR, "neighbour resync: %s", err);
}

void events_init(struct events *es, struct toe_maps *m)
{
	static const char *const what[] = {
		[TOE_EV_LISTEN_START] = "listen_start events",
		[TOE_EV_LISTEN_STOP] = "listen_stop events",
		[TOE_EV_FLOW_OFFLOADED] = "flow_offloaded events",
		[TOE_EV_FLOW_REFUSED] = "flow_refused events",
		[TOE_EV_FLOW_CLOSED] = "flow_closed events",
	};
	__u32 i;

	memset(es, 0, sizeof(*es));
	es->m = m;
	for (i = 0; i < sizeof(what) / sizeof(what[0]); i++)
		es->ev_rl[i].what = what[i];
}
