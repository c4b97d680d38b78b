// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* opentoe: devices, flows, neighbours and counters, as tables or JSON. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/netns.h"
#include "lib/pinned.h"
#include "lib/json.h"
#include "lib/hooks.h"
#include "lib/clock.h"
#include "opentoe_common.h"
#include "opentoe_policy.h"
#include "opentoe_flows.h"
#include "opentoe_stats.h"
#include "opentoe_forward.h"
#include "opentoe_bypass.h"
#include "config.h"
#include "neigh.h"
#include "toe_parse.h"
#include "show_maps.h"
#include "fields.h"
#include "view.h"

static const struct toe_pin view_pins[] = {
	TOE_PIN(struct toe_maps, devs, DEVS),
	TOE_PIN(struct toe_maps, live, DEV_LIVE),
	TOE_PIN(struct toe_maps, flows, FLOWS),
	TOE_PIN(struct toe_maps, stats, STATS),
	TOE_PIN(struct toe_maps, hdr, POL_HDR),
	TOE_PIN(struct toe_maps, gen, POL_GEN),
	TOE_PIN(struct toe_maps, neigh, NEIGH),
	TOE_PIN(struct toe_maps, local, LOCAL_ADDR),
	TOE_PIN(struct toe_maps, events, EVENTS),
	TOE_PIN_OPT(struct toe_maps, fwd, FWD),
	TOE_PIN_OPT(struct toe_maps, byp, BYP_FLOWS),
	TOE_PIN_OPT(struct toe_maps, tid_pool, TID_POOL),
	TOE_PIN_OPT(struct toe_maps, tid_held, TID_HELD),
	TOE_PIN_OPT(struct toe_maps, listeners, LISTENERS),
	TOE_PIN_OPT(struct toe_maps, ifaces, IFACES),
	TOE_PIN_OPT(struct toe_maps, tenants, TENANTS),
	TOE_PIN_OPT(struct toe_maps, reasons, REASONS),
};
#define N_VIEW_PINS (sizeof(view_pins) / sizeof(view_pins[0]))

int toe_maps_open(const char *pin_dir, struct toe_maps *m, char *err,
		  size_t len)
{
	return toe_open_pins(pin_dir, view_pins, N_VIEW_PINS, m, err, len);
}

void toe_maps_close(struct toe_maps *m)
{
	toe_close_pins(view_pins, N_VIEW_PINS, m);
}

const char *toe_age_str(__u64 ns, char *buf, size_t len)
{
	double s = ns / 1e9;

	if (s < 60)
		snprintf(buf, len, "%.1fs", s);
	else if (s < 3600)
		snprintf(buf, len, "%.0fm", s / 60);
	else if (s < 86400)
		snprintf(buf, len, "%.1fh", s / 3600);
	else
		snprintf(buf, len, "%.1fd", s / 86400);
	return buf;
}

const char *toe_reason_name(__u32 r)
{
	return toe_reason_str(r); /* TOE_REASON_TABLE */
}

const char *toe_endpoint_str(__u8 family, const __u32 *addr, __u16 port,
			     char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	toe_nl_addr_str(family, addr, a, sizeof(a));
	if (family == TOE_AF_INET6)
		snprintf(buf, len, "[%s]:%u", a, port);
	else
		snprintf(buf, len, "%s:%u", a, port);
	return buf;
}

static const char *ifname(__u32 ifindex, char *buf)
{
	if (!ifindex)
		return "-";
	if (!if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "if%u", ifindex);
	return buf;
}

static const char *steer_str(const struct toe_dev *d, char *buf, size_t len)
{
	switch (d->steer) {
	case TOE_STEER_ACCOUNT:
		return "account";
	case TOE_STEER_CPU:
		snprintf(buf, len, "cpu %u", d->steer_cpu);
		return buf;
	case TOE_STEER_FORWARD:
		return "forward";
	default:
		return "?";
	}
}

/*
 * The offload module behind a device, the patch's "TOM" column: for a
 * device of the kernel module, the TOM the module attached to it; every
 * other one is served by the sock_ops/XDP datapath.
 */
static const char *module_str(const struct toe_dev *d,
			      const struct toe_view_kmod *k)
{
	if (!(d->flags & TOE_DEVF_KMOD))
		return "sock_ops";
	if (k && k->valid && k->tom[0])
		return k->tom;
	return "opentoe_kmod";
}

int toe_devs_read(const struct toe_maps *m, struct toe_dev_row *rows)
{
	int n = 0;
	__u32 i;

	for (i = 0; i < TOE_MAX_DEVS; i++) {
		struct toe_dev_row *r = &rows[n];

		if (bpf_map_lookup_elem(m->devs, &i, &r->d) ||
		    !(r->d.flags & TOE_DEVF_PRESENT))
			continue;
		memset(&r->l, 0, sizeof(r->l));
		bpf_map_lookup_elem(m->live, &i, &r->l);
		r->index = i;
		memcpy(r->name, r->d.name, 16);
		r->name[16] = 0;
		n++;
	}
	return n;
}

/* toectl devices' fields (fields.h). */
const struct tv_field toe_device_fields[DF__N] = { TOE_DEVICE_FIELDS(
	TV_FIELD) };

/* The hooks of a device's interface, or of every one (no interface). */
static void hooks_json(struct toe_json *j, const struct tv_cell *c)
{
	tj_arr(j);
	toe_hooks_show(*(const int *)c->ctx, c->u, NULL, j, true);
	tj_arr_end(j);
}

/* The module's counts of a device it has (k), or none (absent). */
static void device_kmod_cells(struct tv_cell *c, const struct toe_view_kmod *k)
{
	const struct {
		int f;
		unsigned long long v;
	} u[] = {
		{ DF_KMOD_INDEX, k ? k->index : 0 },
		{ DF_TIDS_USED, k ? k->tids_used : 0 },
		{ DF_TIDS_HELD, k ? k->tids_held : 0 },
		{ DF_TIDS_RESERVED, k ? k->tids_reserved : 0 },
		{ DF_L2T_USED, k ? k->l2t_used : 0 },
		{ DF_L2T_SIZE, k ? k->l2t_size : 0 },
		{ DF_LISTENERS, k ? k->listeners : 0 },
		{ DF_LISTENERS_HELD, k ? k->listeners_held : 0 },
		{ DF_TIDS_HOST, k ? k->tids_host : 0 },
		{ DF_TID_SEQ, k ? k->tid_seq : 0 },
		{ DF_TID_CHANGED, k ? k->tid_changed_ms : 0 },
		{ DF_TID_EVENT, k ? k->tid_event_ms : 0 },
		{ DF_TID_SETTLED, k ? k->tid_settled_ms : 0 },
		{ DF_STIDS_RESERVED, k ? k->stids_reserved : 0 },
		{ DF_STID_SEQ, k ? k->stid_seq : 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		c[u[i].f].u = u[i].v;
	c[DF_TID_POOL].i = k ? k->tid_pool : 0;
	c[DF_TID_IN_FLIGHT].i = k ? k->tid_in_flight : 0;
	c[DF_STID_POOL].i = k ? k->stid_pool : 0;
	c[DF_STID_IN_FLIGHT].i = k ? k->stid_in_flight : 0;
	for (i = DF_KMOD_INDEX; i < DF__N; i++)
		c[i].absent = !k;
}

/*
 * One device's cells (c: DF__N), the module's counts from kv (NULL: none)
 * where it has the device; ifn and st hold its strings.
 */
void toe_device_cells(struct tv_cell *c, const struct toe_dev_row *r,
		      const struct toe_view_kmod *kv, const int *ifaces,
		      char *ifn, char *st)
{
	const struct toe_view_kmod *k = NULL;

	if (kv && (r->d.flags & TOE_DEVF_KMOD) && kv[r->index].valid)
		k = &kv[r->index];
	memset(c, 0, DF__N * sizeof(*c));
	c[DF_INDEX].u = r->index;
	c[DF_DEVICE].s = r->name;
	c[DF_TYPE].s = toe_dev_type_name(r->d.type);
	c[DF_MODULE].s = module_str(&r->d, k);
	c[DF_KMOD].u = !!(r->d.flags & TOE_DEVF_KMOD);
	c[DF_INTERFACE].s = ifname(r->d.ifindex, ifn);
	c[DF_INTERFACE].null = !r->d.ifindex;
	c[DF_IFINDEX].u = r->d.ifindex;
	c[DF_STEER].s = steer_str(&r->d, st, 16);
	c[DF_NCONN].u = r->d.nconn;
	c[DF_HOOKS].json = hooks_json;
	c[DF_HOOKS].ctx = ifaces;
	c[DF_HOOKS].u = r->d.ifindex;
	c[DF_LIVE].u = r->l.live;
	c[DF_OFFLOADED].u = r->l.offloaded;
	c[DF_REFUSED].u = r->l.refused;
	c[DF_RELEASED].u = r->l.released;
	device_kmod_cells(c, k);
}

void toe_view_devices(FILE *f, bool json, const struct toe_maps *m,
		      const struct toe_view_kmod *kv)
{
	struct toe_dev_row rows[TOE_MAX_DEVS];
	int n = toe_devs_read(m, rows), i;
	struct toe_json j;

	if (json) {
		tj_start(&j, f);
		tj_arr(&j);
	} else {
		tv_text_head(f, toe_device_fields, DF__N);
	}
	for (i = 0; i < n; i++) {
		char ifn[IF_NAMESIZE], st[16];
		struct tv_cell c[DF__N];

		toe_device_cells(c, &rows[i], kv, &m->ifaces, ifn, st);
		if (json)
			tv_json_row(&j, toe_device_fields, c, DF__N);
		else
			tv_text_row(f, toe_device_fields, c, DF__N);
	}
	if (json) {
		tj_arr_end(&j);
		tj_end(&j);
		return;
	}
	/* Where the datapath is, the hook of each interface (hook.c). */
	fprintf(f, "\n%-16s %-5s %-14s %s\n", "INTERFACE", "HOOK", "WHY",
		"FORWARDS");
	toe_hooks_show(m->ifaces, 0, f, NULL, false);
}

void toe_dev_name(const struct toe_maps *m, __u32 dev, char *buf)
{
	struct toe_dev d;

	if (dev == TOE_DEV_NONE || bpf_map_lookup_elem(m->devs, &dev, &d) ||
	    !d.name[0]) {
		strcpy(buf, dev == TOE_DEV_NONE ? "-" : "?");
		return;
	}
	memcpy(buf, d.name, 16);
	buf[16] = 0;
}

/*
 * toe_byp_flows, read once per listing and sorted by socket cookie: a
 * bypassed flow's data goes socket to socket, not through TCP, so its
 * toe_flows counters (bytes_acked, bytes_received) miss it.
 */
struct byp_table {
	struct toe_byp_flow *v;
	size_t n;
};

static int cmp_cookie(const void *a, const void *b)
{
	__u64 x = ((const struct toe_byp_flow *)a)->cookie;
	__u64 y = ((const struct toe_byp_flow *)b)->cookie;

	return x < y ? -1 : x > y;
}

static void byp_load(const struct toe_maps *m, struct byp_table *t)
{
	struct toe_bypass_key k, next;
	void *prev = NULL;
	size_t cap = 0;

	t->v = NULL;
	t->n = 0;
	if (m->byp < 0)
		return;
	while (bpf_map_get_next_key(m->byp, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (t->n == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			void *nv = realloc(t->v, ncap * sizeof(*t->v));

			if (!nv)
				break;
			t->v = nv;
			cap = ncap;
		}
		if (bpf_map_lookup_elem(m->byp, &k, &t->v[t->n]) == 0)
			t->n++;
	}
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_cookie);
}

static const struct toe_byp_flow *byp_find(const struct byp_table *t,
					   __u64 cookie)
{
	struct toe_byp_flow key = { .cookie = cookie };

	return t->n ? bsearch(&key, t->v, t->n, sizeof(*t->v), cmp_cookie) :
		      NULL;
}

static const char *byp_state(__u32 st)
{
	switch (st) {
	case TOE_BYP_WAITING:
		return "waiting";
	case TOE_BYP_PAIRED:
		return "paired";
	case TOE_BYP_TCP:
		return "tcp";
	case TOE_BYP_ENDED:
		return "ended";
	default:
		return "?";
	}
}

static const char *byp_why(__u32 why)
{
	return why == TOE_BYP_WHY_NONE ? NULL : toe_byp_why_str(why);
}

/* A bypassed flow's record (the cell's ctx; null where none). */
static void byp_json(struct toe_json *j, const struct tv_cell *c)
{
	const struct toe_byp_flow *b = c->ctx;
	const char *why = byp_why(b->why);
	__u32 w;

	tj_obj(j);
	tj_kstr(j, "state", byp_state(b->state));
	tj_kstr_or_null(j, "why", why);
	tj_ku64(j, "bytes_out", b->bytes_out);
	tj_ku64(j, "msgs_out", b->msgs_out);
	tj_ku64(j, "bytes_in", b->bytes_in);
	tj_ku64(j, "msgs_in", b->msgs_in);
	tj_ku64(j, "tcp_bytes_out", b->tcp_bytes_out);
	tj_ku64(j, "tcp_msgs_out", b->tcp_msgs_out);
	tj_ku64(j, "to_tcp", b->to_tcp);
	tj_key(j, "to_tcp_why"); /* to_tcp by reason */
	tj_obj(j);
	for (w = 1; w <= TOE_BYP_WHY_N; w++)
		tj_ku64(j, byp_why(w), b->to_tcp_why[w - 1]);
	tj_obj_end(j);
	tj_ku64(j, "to_peer", b->to_peer);
	tj_obj_end(j);
}

/*
 * A toe_fwd entry's namespace is a cookie (identity); shown as the inode
 * `ip netns` and /proc show.  Entries are only ever of toed's own
 * namespace (the forward path serves the datapath's home namespace,
 * docs/forwarding.md); another's shows 0.
 */
static __u64 fwd_ns_ino(__u64 cookie)
{
	return cookie == toe_netns_cookie() ? toe_netns_ino() : 0;
}

static const char *fwd_state(__u8 st)
{
	switch (st) {
	case TOE_FWD_ESTABLISHED:
		return "established";
	case TOE_FWD_READMIT:
		return "readmit";
	case TOE_FWD_CT_WAIT:
		return "ct_wait";
	default:
		return "?";
	}
}

/* One direction's conntrack tuple of a NATed flow: "A:P -> B:Q". */
static void nat_tuple_str(const struct toe_fwd_tuple *t, __u8 fam,
			  char out[160])
{
	char a[64], b[64];

	toe_endpoint_str(fam, t->saddr, ntohs(t->sport), a, sizeof(a));
	toe_endpoint_str(fam, t->daddr, ntohs(t->dport), b, sizeof(b));
	snprintf(out, 160, "%s -> %s", a, b);
}

/*
 * A NATed flow's translation (bpf/nat.h): conntrack's original tuple (as
 * the client's packets arrive) and reply tuple (as the server's arrive).
 * JSON: "nat" (null for a flow without NAT); the text: a line of its own.
 */
static void fwd_nat_json(struct toe_json *j, const struct tv_cell *c)
{
	const struct toe_fwd *v = c->ctx;
	__u8 fam = c->u; /* the flow key's family (fwd_cells) */
	char o[160], r[160];

	nat_tuple_str(&v->nat_tu[0], fam, o);
	nat_tuple_str(&v->nat_tu[1], fam, r);
	tj_obj(j);
	tj_kstr(j, "original", o);
	tj_kstr(j, "reply", r);
	tj_obj_end(j);
}

/* toectl flows' fields (fields.h): toe_flows' rows, toe_fwd's. */
static const struct tv_field flow_fields[FF__N] = { TOE_FLOW_FIELDS(TV_FIELD) };

static const struct tv_field fwd_fields[WF__N] = { TOE_FWD_FIELDS(TV_FIELD) };

/* The strings a flow's cells point to. */
struct flow_strs {
	char l[64], r[64]; /* the endpoints */
	char la[INET6_ADDRSTRLEN], ra[INET6_ADDRSTRLEN];
	char ns[24];
};

/* A routed flow's cells (c: WF__N), client end first; dn its device. */
static void fwd_cells(struct tv_cell *c, const struct toe_flow_key *k,
		      const struct toe_fwd *v, const char *dn, __u64 now,
		      struct flow_strs *t)
{
	const __u32 *ca = v->client ? k->raddr : k->laddr;
	const __u32 *sa = v->client ? k->laddr : k->raddr;
	__u16 cp = v->client ? k->rport : k->lport;
	__u16 sp = v->client ? k->lport : k->rport;

	memset(c, 0, WF__N * sizeof(*c));
	c[WF_FAMILY].u = k->family == TOE_AF_INET6 ? 6 : 4;
	/* a routed flow's protocol (issue 48): tcp or udp */
	c[WF_PROTO].s = k->proto == TOE_IPPROTO_UDP ? "udp" : "tcp";
	c[WF_LOCAL].s = toe_endpoint_str(k->family, ca, cp, t->l, sizeof(t->l));
	c[WF_LADDR].s = toe_nl_addr_str(k->family, ca, t->la, sizeof(t->la));
	c[WF_LPORT].u = cp;
	c[WF_REMOTE].s =
		toe_endpoint_str(k->family, sa, sp, t->r, sizeof(t->r));
	c[WF_RADDR].s = toe_nl_addr_str(k->family, sa, t->ra, sizeof(t->ra));
	c[WF_RPORT].u = sp;
	c[WF_NETNS].u = c[WF_NETNS_TEXT].u = fwd_ns_ino(v->netns);
	c[WF_NETNS_COOKIE].u = v->netns;
	c[WF_DEVICE].s = dn;
	c[WF_DECISION].s = "forward";
	c[WF_REASON].s = toe_reason_name(v->reason);
	c[WF_RULE].u = v->rule;
	c[WF_RULE].null = v->rule == TOE_RULE_NONE;
	c[WF_DIRECTION].s = "routed";
	c[WF_STATE].s = fwd_state(v->state);
	/* admitted mid-stream, its handshake unseen (issue 48) */
	c[WF_JOINED].u = v->joined;
	/* the totals: the two directions' sum (bpf/fwd_events.h) */
	c[WF_XDP_PACKETS].u = c[WF_XDP_PKTS].u =
		v->dir_packets[0] + v->dir_packets[1];
	c[WF_XDP_BYTES].u = c[WF_BYTES_IN].u =
		v->dir_bytes[0] + v->dir_bytes[1];
	/* each way, client to server first (issue 35) */
	c[WF_PACKETS_C2S].u = v->dir_packets[0];
	c[WF_BYTES_C2S].u = v->dir_bytes[0];
	c[WF_PACKETS_S2C].u = v->dir_packets[1];
	c[WF_BYTES_S2C].u = v->dir_bytes[1];
	c[WF_BYPASS].null = true;
	c[WF_AGE].f = now > v->start_ns ? (now - v->start_ns) / 1e9 : 0;
	c[WF_POLICY].u = v->policy;
	c[WF_NAT].json = fwd_nat_json;
	c[WF_NAT].ctx = v;
	c[WF_NAT].u = k->family; /* the tuples' */
	c[WF_NAT].null = !v->nat;
}

/*
 * A routed flow's lines under its row: a state other than established
 * (readmit: back through the stack), UDP, a join mid-stream (TCP's), the
 * NAT tuples.
 */
static void fwd_text_more(FILE *f, const struct toe_flow_key *k,
			  const struct toe_fwd *v)
{
	char o[160], r[160];

	if (v->state != TOE_FWD_ESTABLISHED)
		fprintf(f, "  state: %s\n", fwd_state(v->state));
	if (k->proto == TOE_IPPROTO_UDP)
		fprintf(f, "  proto: udp\n");
	if (v->joined && k->proto != TOE_IPPROTO_UDP)
		fprintf(f, "  joined mid-stream (no handshake seen)\n");
	if (v->nat) {
		nat_tuple_str(&v->nat_tu[0], k->family, o);
		nat_tuple_str(&v->nat_tu[1], k->family, r);
		fprintf(f, "  nat: original %s, reply %s\n", o, r);
	}
}

/* Routed flows in toe_fwd, client end first. */
static int fwd_flows(FILE *f, bool json, struct toe_json *j,
		     const struct toe_maps *m,
		     const struct toe_flow_filter *flt, __u64 now)
{
	struct toe_flow_key k, next;
	void *prev = NULL;
	int shown = 0;

	if (m->fwd < 0)
		return 0;
	while (bpf_map_get_next_key(m->fwd, prev, &next) == 0) {
		struct tv_cell c[WF__N];
		struct flow_strs t;
		struct toe_fwd v;
		char dn[17];

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(m->fwd, &k, &v))
			continue;
		toe_dev_name(m, v.dev, dn);
		if ((flt->dev && strcmp(flt->dev, dn)) ||
		    (flt->port >= 0 && k.lport != flt->port &&
		     k.rport != flt->port) ||
		    (flt->netns && fwd_ns_ino(v.netns) != flt->netns))
			continue;
		shown++;
		fwd_cells(c, &k, &v, dn, now, &t);
		if (json) {
			tv_json_row(j, fwd_fields, c, WF__N);
		} else {
			tv_text_row(f, fwd_fields, c, WF__N);
			fwd_text_more(f, &k, &v);
		}
	}
	return shown;
}

/* The names `ip netns` gave namespaces (/run/netns), by inode. */
struct ns_name {
	__u64 ino;
	char name[NAME_MAX + 1];
};

struct ns_table {
	struct ns_name *v;
	size_t n;
};

static void ns_load(struct ns_table *t)
{
	DIR *d = opendir(TOE_NETNS_RUN_DIR);
	char path[sizeof(TOE_NETNS_RUN_DIR) + NAME_MAX + 1];
	struct ns_name *nv;
	struct dirent *de;
	struct stat st;

	t->v = NULL;
	t->n = 0;
	while (d && (de = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", TOE_NETNS_RUN_DIR,
			 de->d_name);
		/* stat follows the bind mount: the namespace's own inode */
		if (de->d_name[0] == '.' || stat(path, &st))
			continue;
		nv = realloc(t->v, (t->n + 1) * sizeof(*nv));
		if (!nv)
			break;
		t->v = nv;
		t->v[t->n].ino = st.st_ino;
		snprintf(t->v[t->n++].name, sizeof(nv->name), "%s", de->d_name);
	}
	if (d)
		closedir(d);
}

static const char *ns_find(const struct ns_table *t, __u64 ino)
{
	size_t i;

	for (i = 0; ino && i < t->n; i++)
		if (t->v[i].ino == ino)
			return t->v[i].name;
	return NULL;
}

/* What a row of toe_flows shows besides the key and the record. */
struct flow_row {
	const struct toe_byp_flow *b; /* its bypass record, or NULL */
	const char *dn; /* its device's name */
	const char *ns; /* its namespace's name, or NULL */
	long long tid; /* -1: none */
	__u64 now;
};

/* One connection of toe_flows' cells (c: FF__N). */
static void flow_cells(struct tv_cell *c, const struct toe_flow_key *k,
		       const struct toe_flow *v, const struct flow_row *r,
		       struct flow_strs *t)
{
	const struct toe_byp_flow *b = r->b;

	memset(c, 0, FF__N * sizeof(*c));
	c[FF_FAMILY].u = k->family == TOE_AF_INET6 ? 6 : 4;
	c[FF_LOCAL].s = toe_endpoint_str(k->family, k->laddr, k->lport, t->l,
					 sizeof(t->l));
	c[FF_LADDR].s =
		toe_nl_addr_str(k->family, k->laddr, t->la, sizeof(t->la));
	c[FF_LPORT].u = k->lport;
	c[FF_REMOTE].s = toe_endpoint_str(k->family, k->raddr, k->rport, t->r,
					  sizeof(t->r));
	c[FF_RADDR].s =
		toe_nl_addr_str(k->family, k->raddr, t->ra, sizeof(t->ra));
	c[FF_RPORT].u = k->rport;
	c[FF_NETNS].u = v->netns_ino;
	c[FF_NETNS_NAME].s = r->ns;
	c[FF_NETNS_NAME].null = !r->ns;
	c[FF_NETNS_COOKIE].u = k->netns;
	c[FF_DEVICE].s = r->dn;
	c[FF_DEVICE].null = v->dev == TOE_DEV_NONE;
	c[FF_DECISION].s = toe_action_name(v->decision);
	c[FF_REASON].s = toe_reason_name(v->reason);
	c[FF_RULE].u = v->rule;
	c[FF_RULE].null = v->rule == TOE_RULE_NONE;
	c[FF_DIRECTION].s = v->direction == TOE_DIR_PASSIVE ? "passive" :
							      "active";
	/* what the application moved: over TCP, and socket to socket */
	c[FF_BYTES_OUT].u = v->bytes_acked + (b ? b->bytes_out : 0);
	c[FF_BYTES_ACKED].u = v->bytes_acked;
	c[FF_BYTES_IN].u = v->bytes_received + (b ? b->bytes_in : 0);
	c[FF_BYTES_RECEIVED].u = v->bytes_received;
	c[FF_SEGS].u = (unsigned long long)v->segs_in + v->segs_out;
	c[FF_SEGS_IN].u = v->segs_in;
	c[FF_SEGS_OUT].u = v->segs_out;
	c[FF_RETRANS].u = v->total_retrans;
	c[FF_XDP_PACKETS].u = v->xdp_packets;
	c[FF_XDP_BYTES].u = v->xdp_bytes;
	c[FF_BYPASS].json = byp_json;
	c[FF_BYPASS].ctx = b;
	c[FF_BYPASS].null = !b;
	c[FF_SRTT].u = v->srtt_us;
	c[FF_AGE].f = r->now > v->start_ns ? (r->now - v->start_ns) / 1e9 : 0;
	/* the namespace's name, else its inode */
	snprintf(t->ns, sizeof(t->ns), "%llu",
		 (unsigned long long)v->netns_ino);
	c[FF_NETNS_TEXT].s = r->ns ? r->ns : t->ns;
	c[FF_NETNS_TEXT].null = !r->ns && !v->netns_ino;
	c[FF_POLICY].u = v->policy;
	c[FF_COOKIE].u = v->cookie;
	c[FF_TID].u = r->tid;
	c[FF_TID].null = r->tid < 0;
}

int toe_view_flows(FILE *f, bool json, const struct toe_maps *m,
		   const struct toe_flow_filter *flt, toe_tid_fn tid_of,
		   void *ctx)
{
	struct toe_flow_key k, next;
	void *prev = NULL;
	struct byp_table bt;
	struct ns_table nt;
	struct toe_json j;
	int shown = 0;

	byp_load(m, &bt);
	ns_load(&nt);
	if (json) {
		tj_start(&j, f);
		tj_arr(&j);
	} else {
		tv_text_head(f, flow_fields, FF__N);
	}
	while (bpf_map_get_next_key(m->flows, prev, &next) == 0) {
		struct flow_row row = { .tid = -1, .now = toe_now_ns() };
		struct tv_cell c[FF__N];
		struct flow_strs t;
		struct toe_flow v;
		char dn[17];

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(m->flows, &k, &v))
			continue; /* closed meanwhile */
		toe_dev_name(m, v.dev, dn);
		if ((flt->dev && strcmp(flt->dev, dn)) ||
		    (flt->port >= 0 && k.lport != flt->port &&
		     k.rport != flt->port) ||
		    (flt->netns && v.netns_ino != flt->netns))
			continue;
		if (tid_of && v.decision == TOE_ACT_OFFLOAD)
			row.tid = tid_of(&k, ctx);
		if (v.decision == TOE_ACT_BYPASS)
			row.b = byp_find(&bt, v.cookie);
		row.dn = dn;
		row.ns = ns_find(&nt, v.netns_ino);
		shown++;
		flow_cells(c, &k, &v, &row, &t);
		if (json)
			tv_json_row(&j, flow_fields, c, FF__N);
		else
			tv_text_row(f, flow_fields, c, FF__N);
	}
	shown += fwd_flows(f, json, &j, m, flt, toe_now_ns());
	free(bt.v);
	free(nt.v);
	if (json) {
		tj_arr_end(&j);
		tj_end(&j);
	}
	return shown;
}

/* toectl neigh's fields (fields.h). */
static const struct tv_field neigh_fields[NF__N] = { TOE_NEIGH_FIELDS(
	TV_FIELD) };

/* One neighbour's cells (c: NF__N); a, mac and ifn hold its strings. */
static void neigh_cells(struct tv_cell *c, const struct toe_neigh_key *k,
			const struct toe_neigh *v, __u64 now,
			char a[INET6_ADDRSTRLEN], char mac[18],
			char ifn[IF_NAMESIZE])
{
	memset(c, 0, NF__N * sizeof(*c));
	c[NF_DST].s = toe_nl_addr_str(k->family, k->addr, a, INET6_ADDRSTRLEN);
	c[NF_DEV].s = ifname(k->ifindex, ifn);
	c[NF_IFINDEX].u = k->ifindex;
	c[NF_LLADDR].s = toe_nl_mac_str(v->mac, mac, 18);
	c[NF_LLADDR].null = !v->has_mac;
	c[NF_STATE].s = toe_nl_nud_str(v->state);
	c[NF_NUD].u = v->state;
	c[NF_UPDATED].f = now > v->updated_ns ? (now - v->updated_ns) / 1e9 : 0;
}

void toe_view_neigh(FILE *f, bool json, const struct toe_maps *m)
{
	struct toe_neigh_key k, next;
	__u64 now = toe_now_ns();
	void *prev = NULL;
	struct toe_json j;

	if (json) {
		tj_start(&j, f);
		tj_arr(&j);
	} else {
		tv_text_head(f, neigh_fields, NF__N);
	}
	while (bpf_map_get_next_key(m->neigh, prev, &next) == 0) {
		char a[INET6_ADDRSTRLEN], mac[18], ifn[IF_NAMESIZE];
		struct tv_cell c[NF__N];
		struct toe_neigh v;

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(m->neigh, &k, &v))
			continue;
		neigh_cells(c, &k, &v, now, a, mac, ifn);
		if (json)
			tv_json_row(&j, neigh_fields, c, NF__N);
		else
			tv_text_row(f, neigh_fields, c, NF__N);
	}
	if (json) {
		tj_arr_end(&j);
		tj_end(&j);
	}
}

int toe_stats_read(const struct toe_maps *m, __u64 *out, int n)
{
	int ncpu = libbpf_num_possible_cpus(), c;
	__u64 *v;
	__u32 i;

	memset(out, 0, n * sizeof(*out));
	if (ncpu <= 0)
		return -1;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -1;
	for (i = 0; i < (__u32)n && i < TOE_STATS_MAX; i++) {
		if (bpf_map_lookup_elem(m->stats, &i, v))
			continue;
		for (c = 0; c < ncpu; c++)
			out[i] += v[c];
	}
	free(v);
	return 0;
}

const char *toe_stat_name(int i)
{
	static const char *const n[TOE_S__MAX - TOE_S_BASE] = {
#define STAT_NAME(id, name, help) [TOE_S_##id - TOE_S_BASE] = name,
		TOE_STAT_TABLE(STAT_NAME)
#undef STAT_NAME
	};

	if (i >= 0 && i < TOE_P__MAX)
		return toe_parse_result_names[i];
	if (i >= TOE_S_BASE && i < TOE_S__MAX)
		return n[i - TOE_S_BASE];
	return NULL;
}

int toe_policy_hdr(const struct toe_maps *m, __u32 *gen, struct toe_pol_hdr *h)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(m->gen, &zero, gen))
		return -1;
	*gen &= 1;
	return bpf_map_lookup_elem(m->hdr, gen, h);
}
