// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader status: its options, and what it shows of the pin folder:
 * the programs (links and chained programs: id, type, attach point, XDP
 * mode), which build of the datapath they are, and the maps of toe_maps.h
 * (type, size, entries in use), as text or one JSON document (-j).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "toe_maps.h"
#include "loader.h"
#include "pins.h"
#include "pin_ns.h"
#include "egress.h"
#include "tcclassic.h"
#include "xdpdisp.h"
#include "uapi_compat.h"
#include "lib/path.h"
#include "lib/netns.h"
#include "lib/json.h"
#include "lib/hooks.h"

/* clang-format off */
const struct loader_opt status_options[] = {
	{ .name = "json", .has_arg = no_argument, .key = 'j', .help =
"  -j, --json             JSON output\n",
	  .flag = offsetof(struct opts, json) },
	{ NULL }
};
/* clang-format on */

/* count_entries of a map whose entries cannot be counted. */
#define NOT_COUNTED (-1L)

static long count_entries(int fd, const struct bpf_map_info *mi)
{
	char key[256], next[256];
	void *prev = NULL;
	long n = 0;
	__u32 i, id;

	switch (mi->type) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_LPM_TRIE:
	case BPF_MAP_TYPE_DEVMAP_HASH:
	case BPF_MAP_TYPE_SOCKHASH:
		if (mi->key_size > sizeof(key))
			return NOT_COUNTED;
		while (bpf_map_get_next_key(fd, prev, next) == 0) {
			n++;
			memcpy(key, next, mi->key_size);
			prev = key;
		}
		return n;
	case BPF_MAP_TYPE_PROG_ARRAY:
		/* user space reads a program array slot as a program id */
		for (i = 0; i < mi->max_entries; i++)
			if (bpf_map_lookup_elem(fd, &i, &id) == 0)
				n++;
		return n;
	default:
		return NOT_COUNTED; /* arrays are always full; others not countable */
	}
}

static const char *map_type_name(__u32 type)
{
	const char *s = libbpf_bpf_map_type_str(type);

	return s ? s : "unknown";
}

static const char *prog_type_name(__u32 type)
{
	const char *s = libbpf_bpf_prog_type_str(type);

	if (type == TOE_PROG_TYPE_NETFILTER)
		return "netfilter"; /* newer than libbpf 1.1 */
	return s ? s : "unknown";
}

struct prog_row {
	__u32 id;
	char type[32];
	char name[BPF_OBJ_NAME_LEN];
	char attach[PATH_MAX];
	char mode[16];
	char pin[NAME_MAX + 1];
	bool chained;
};

/*
 * A per-interface link pinned by a load in another network namespace:
 * its ifindex means nothing here, so the row says which namespace (the
 * inode only for display).
 */
static bool link_elsewhere(struct prog_row *r)
{
	static const char *const pre[] = { "link_xdp_", "link_tc_",
					   "link_egress_" };
	struct pin_ns ns = { 0 };
	__u32 ifindex = 0;
	unsigned int i;
	char nsd[64];

	for (i = 0; i < 3; i++)
		if (parse_if_pin(r->pin, pre[i], &ns, &ifindex))
			break;
	if (i == 3 || pin_ns_self(&ns))
		return false;
	snprintf(r->attach, sizeof(r->attach), "ifindex %u (netns %s)", ifindex,
		 pin_ns_str(&ns, nsd, sizeof(nsd)));
	return true;
}

/* A link program's row: where the link attaches it (prog_id: its id). */
static void link_attach(struct prog_row *r, const struct bpf_link_info *li,
			__u32 prog_id)
{
	char ifname[IF_NAMESIZE];

	if ((li->type == BPF_LINK_TYPE_XDP || li->type == TOE_LINK_TYPE_TCX) &&
	    link_elsewhere(r)) {
		if (li->type == TOE_LINK_TYPE_TCX)
			snprintf(r->mode, sizeof(r->mode), "tcx");
		return;
	}
	if (li->type == BPF_LINK_TYPE_CGROUP) {
		if (toe_cgroup_path(li->cgroup.cgroup_id, r->attach,
				    sizeof(r->attach)))
			snprintf(r->attach, sizeof(r->attach), "cgroup id %llu",
				 (unsigned long long)li->cgroup.cgroup_id);
	} else if (li->type == TOE_LINK_TYPE_SOCKMAP) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi);
		int mfd = bpf_map_get_fd_by_id(sockmap_link_map_id(li));

		if (mfd >= 0 && !bpf_obj_get_info_by_fd(mfd, &mi, &mlen))
			snprintf(r->attach, sizeof(r->attach), "map %s",
				 mi.name);
		else
			snprintf(r->attach, sizeof(r->attach), "(map gone)");
		if (mfd >= 0)
			close(mfd);
	} else if (li->type == TOE_LINK_TYPE_TCX) {
		if (tcx_ifindex(li) && if_indextoname(tcx_ifindex(li), ifname))
			snprintf(r->attach, sizeof(r->attach), "%s", ifname);
		else
			snprintf(r->attach, sizeof(r->attach),
				 "(interface gone)");
		snprintf(r->mode, sizeof(r->mode),
			 strncmp(r->pin, "link_egress_", 12) ? "tcx" :
							       "tcx-egress");
	} else if (li->type == TOE_LINK_TYPE_NETFILTER) {
		snprintf(r->attach, sizeof(r->attach), "FORWARD %s",
			 strstr(r->pin, "ipv6") ? "ipv6" : "ipv4");
		snprintf(r->mode, sizeof(r->mode), "netfilter");
	} else if (li->type == BPF_LINK_TYPE_XDP) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);

		if (li->xdp.ifindex &&
		    if_indextoname(li->xdp.ifindex, ifname)) {
			snprintf(r->attach, sizeof(r->attach), "%s", ifname);
			if (!bpf_xdp_query(li->xdp.ifindex, 0, &q))
				snprintf(r->mode, sizeof(r->mode), "%s",
					 q.skb_prog_id == prog_id ? "skb" :
					 q.drv_prog_id == prog_id ? "native" :
					 q.hw_prog_id == prog_id  ? "hw" :
								    "?");
		} else {
			snprintf(r->attach, sizeof(r->attach),
				 "(interface gone)");
		}
	}
}

/* The row of a pinned link or program (fd); 0 or -errno. */
static int read_prog_row(int fd, bool is_link, const char *pin,
			 struct prog_row *r)
{
	struct bpf_link_info li = {};
	struct bpf_prog_info pi = {};
	__u32 len = sizeof(li), plen = sizeof(pi);
	int pfd = fd;

	memset(r, 0, sizeof(*r));
	snprintf(r->pin, sizeof(r->pin), "%s", pin);
	snprintf(r->mode, sizeof(r->mode), "-");
	if (is_link) {
		if (bpf_obj_get_info_by_fd(fd, &li, &len))
			return -errno;
		pfd = bpf_prog_get_fd_by_id(li.prog_id);
		if (pfd < 0)
			return -errno;
	}
	if (bpf_obj_get_info_by_fd(pfd, &pi, &plen)) {
		if (pfd != fd)
			close(pfd);
		return -errno;
	}
	if (pfd != fd)
		close(pfd);
	r->id = pi.id;
	snprintf(r->type, sizeof(r->type), "%s", prog_type_name(pi.type));
	snprintf(r->name, sizeof(r->name), "%s", pi.name);
	if (is_link)
		link_attach(r, &li, pi.id);
	return 0;
}

/* A chained program's row: the interface and mode its pin name says. */
static void chain_row(struct prog_row *r, const char *name)
{
	char ifname[IF_NAMESIZE], nsd[64];
	struct pin_ns ns = { 0 };
	__u32 ifindex = 0;

	r->chained = true;
	parse_if_pin(name, "chain_", &ns, &ifindex);
	if (pin_ns_self(&ns) && if_indextoname(ifindex, ifname))
		snprintf(r->attach, sizeof(r->attach), "%s", ifname);
	else
		snprintf(r->attach, sizeof(r->attach), "ifindex %u (netns %s)",
			 ifindex, pin_ns_str(&ns, nsd, sizeof(nsd)));
	snprintf(r->mode, sizeof(r->mode), "%s",
		 strstr(name, "_skb") ? "skb" : "native");
}

/*
 * A classic tc filter's row (tc_ingress_* / tc_egress_* pins, no tcx): the
 * interface its pin name says; "(filter gone)" when our filter there no
 * longer runs this program.
 */
static void tc_row(struct prog_row *r, const char *name)
{
	bool egress = !strncmp(name, "tc_egress_", 10);
	char ifname[IF_NAMESIZE], nsd[64];
	struct pin_ns ns = { 0 };
	__u32 ifindex = 0;

	parse_if_pin(name, egress ? "tc_egress_" : "tc_ingress_", &ns,
		     &ifindex);
	snprintf(r->mode, sizeof(r->mode), "%s",
		 egress ? "clsact-egress" : "clsact");
	if (!pin_ns_self(&ns))
		snprintf(r->attach, sizeof(r->attach), "ifindex %u (netns %s)",
			 ifindex, pin_ns_str(&ns, nsd, sizeof(nsd)));
	else if (tc_classic_prog(ifindex, egress) != r->id)
		snprintf(r->attach, sizeof(r->attach), "(filter gone)");
	else if (if_indextoname(ifindex, ifname))
		snprintf(r->attach, sizeof(r->attach), "%s", ifname);
}

/*
 * toe_xdp in libxdp's dispatcher (xdpd_* pins): the interface its pin name
 * says; "(not in the dispatcher)" when the interface's dispatcher no
 * longer holds this program.
 */
static void disp_row(struct prog_row *r, const char *name)
{
	char ifname[IF_NAMESIZE], nsd[64];
	struct pin_ns ns = { 0 };
	__u32 ifindex = 0;

	parse_if_pin(name, "xdpd_", &ns, &ifindex);
	if (!pin_ns_self(&ns)) {
		snprintf(r->attach, sizeof(r->attach), "ifindex %u (netns %s)",
			 ifindex, pin_ns_str(&ns, nsd, sizeof(nsd)));
		return;
	}
	if (!xdp_disp_holds(ifindex, r->id)) {
		snprintf(r->attach, sizeof(r->attach),
			 "(not in the dispatcher)");
		return;
	}
	snprintf(r->mode, sizeof(r->mode), "%s", xdp_disp_mode(ifindex));
	if (if_indextoname(ifindex, ifname))
		snprintf(r->attach, sizeof(r->attach), "%s", ifname);
}

/* The rows of the pinned links and chained programs in d, at most max. */
static int read_rows(const struct opts *o, DIR *d, struct prog_row *rows,
		     int max)
{
	char path[PATH_MAX];
	struct dirent *de;
	int nrows = 0;

	while ((de = readdir(d)) && nrows < max) {
		bool link = !strncmp(de->d_name, "link_", 5);
		bool chain = !strncmp(de->d_name, "chain_", 6);
		bool tc = !strncmp(de->d_name, "tc_", 3);
		bool disp = !strncmp(de->d_name, "xdpd_", 5);
		int fd;

		if (!link && !chain && !tc && !disp)
			continue;
		toe_join(path, sizeof(path), o->pin_dir, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		if (!read_prog_row(fd, link, de->d_name, &rows[nrows])) {
			if (chain)
				chain_row(&rows[nrows], de->d_name);
			else if (tc)
				tc_row(&rows[nrows], de->d_name);
			else if (disp)
				disp_row(&rows[nrows], de->d_name);
			nrows++;
		}
		close(fd);
	}
	return nrows;
}

/*
 * Without sockmap links (before Linux 6.10) the sk_msg program has no pin
 * of its own: the pinned toe_bypass holds it.  Its row (pin: the map's),
 * appended when no link row named it; 1 if there is one, else 0.
 */
static int map_held_skmsg(const struct opts *o, struct prog_row *rows,
			  int nrows)
{
	char path[PATH_MAX];
	__u32 ids[4], cnt = 4, flags = 0;
	int i, fd, pfd, ret = 0;

	for (i = 0; i < nrows; i++)
		if (!strcmp(rows[i].type, "sk_msg"))
			return 0;
	toe_join(path, sizeof(path), o->pin_dir, TOE_MAP(BYPASS));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (!bpf_prog_query(fd, BPF_SK_MSG_VERDICT, 0, &flags, ids, &cnt) &&
	    cnt) {
		pfd = bpf_prog_get_fd_by_id(ids[0]);
		if (pfd >= 0 &&
		    !read_prog_row(pfd, false, TOE_MAP(BYPASS), &rows[nrows])) {
			snprintf(rows[nrows].attach, sizeof(rows[nrows].attach),
				 "map %s", TOE_MAP(BYPASS));
			ret = 1;
		}
		if (pfd >= 0)
			close(pfd);
	}
	close(fd);
	return ret;
}

static void print_not_loaded(const struct opts *o)
{
	struct toe_json j;

	if (!o->json) {
		printf("opentoe is not loaded (no pin folder %s)\n",
		       o->pin_dir);
		return;
	}
	tj_start(&j, stdout);
	tj_obj(&j);
	tj_key(&j, "loaded");
	tj_bool(&j, false);
	tj_kstr(&j, "pin_dir", o->pin_dir);
	tj_obj_end(&j);
	tj_end(&j);
}

/*
 * Which proof admits routed flows to the fast path, from the rows: the
 * netfilter program at FORWARD, else toe_egress at tc egress (the fallback:
 * why is *why), else none (--hook tc, or nothing attached).
 */
static const char *admission(const struct prog_row *rows, int nrows,
			     const char **why)
{
	bool egress = false;
	int i;

	*why = NULL;
	for (i = 0; i < nrows; i++) {
		if (!strcmp(rows[i].mode, "netfilter"))
			return "netfilter";
		egress |= !strcmp(rows[i].name, "toe_egress");
	}
	if (!egress)
		return "none";
	*why = nf_why_not();
	if (!*why)
#ifdef TOE_TEST_KNOBS
		*why = "loaded so (by an older toe-loader, or TOE_LOADER_NO_NF=1, the test build's knob)";
#else
		*why = "loaded so (by an older toe-loader)";
#endif
	return "tc-egress";
}

/*
 * Which build of the datapath is loaded (skel.c): the one whose programs'
 * BTF declares bpf_cast_to_kern_ctx is opentoe_kctx.bpf.o.  Read off the
 * sock_ops program, which every load has; NULL if it cannot be told.
 */
static const char *datapath_build(const struct prog_row *rows, int nrows)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	const char *build = NULL;
	struct btf *btf;
	int i, fd;

	for (i = 0; i < nrows && strcmp(rows[i].name, "toe_sockops"); i++)
		;
	if (i == nrows)
		return NULL;
	fd = bpf_prog_get_fd_by_id(rows[i].id);
	if (fd < 0)
		return NULL;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.btf_id) {
		btf = btf__load_from_kernel_by_id(info.btf_id);
		if (btf)
			build = btf__find_by_name_kind(btf,
						       "bpf_cast_to_kern_ctx",
						       BTF_KIND_FUNC) > 0 ?
					"opentoe_kctx.bpf.o" :
					"opentoe.bpf.o";
		btf__free(btf);
	}
	close(fd);
	return build;
}

/* JSON: the document's start up to the maps array, left open. */
static void json_programs(const struct opts *o, struct toe_json *j,
			  const struct prog_row *rows, int nrows)
{
	const char *why;
	int i;

	tj_start(j, stdout);
	tj_obj(j);
	tj_key(j, "loaded");
	tj_bool(j, true);
	tj_kstr(j, "pin_dir", o->pin_dir);
	tj_kstr(j, "admission", admission(rows, nrows, &why));
	if (why)
		tj_kstr(j, "admission_why", why);
	tj_kstr_or_null(j, "build", datapath_build(rows, nrows));
	tj_key(j, "programs");
	tj_arr(j);
	for (i = 0; i < nrows; i++) {
		tj_obj(j);
		tj_ku64(j, "id", rows[i].id);
		tj_kstr(j, "type", rows[i].type);
		tj_kstr(j, "name", rows[i].name);
		tj_kstr(j, "attach", rows[i].attach);
		tj_kstr(j, "xdp_mode", rows[i].mode);
		tj_kstr(j, "pin", rows[i].pin);
		tj_key(j, "chained");
		tj_bool(j, rows[i].chained);
		tj_obj_end(j);
	}
	tj_arr_end(j);
	tj_key(j, "maps");
	tj_arr(j);
}

/* Text: the programs' table and the maps' header. */
static void text_programs(const struct opts *o, const struct prog_row *rows,
			  int nrows)
{
	const char *why, *how = admission(rows, nrows, &why), *build;
	int i;

	printf("pin folder: %s\n", o->pin_dir);
	build = datapath_build(rows, nrows);
	printf("datapath build: %s\n",
	       !build ?
		       "unknown (no BTF on its programs)" :
	       !strcmp(build, "opentoe.bpf.o") ?
		       "opentoe.bpf.o (the namespace by probe reads: no kern_ctx)" :
		       "opentoe_kctx.bpf.o (the namespace by plain loads: kern_ctx)");
	if (!strcmp(how, "netfilter"))
		printf("forward admission: netfilter FORWARD (toe_nf_fwd: what the stack forwarded and FORWARD accepted)\n\n");
	else if (why)
		printf("forward admission: tc egress (toe_egress, the fallback: %s; a bpf_redirect_neigh can pass for forwarding)\n\n",
		       why);
	else
		printf("forward admission: none\n\n");
	printf("%-6s %-10s %-16s %-8s %-24s %s\n", "ID", "TYPE", "NAME", "MODE",
	       "ATTACHED TO", "PIN");
	for (i = 0; i < nrows; i++)
		printf("%-6u %-10s %-16s %-8s %-24s %s%s\n", rows[i].id,
		       rows[i].type, rows[i].name, rows[i].mode, rows[i].attach,
		       rows[i].pin,
		       rows[i].chained ? " (chained after opentoe)" : "");
	printf("\n%-6s %-16s %-20s %12s %12s\n", "ID", "MAP", "TYPE",
	       "MAX ENTRIES", "IN USE");
}

/* One map's row or JSON object (n: its entries, or NOT_COUNTED). */
static void print_map(const struct opts *o, struct toe_json *j,
		      const struct bpf_map_info *mi, long n)
{
	char in_use[24];

	if (o->json) {
		tj_obj(j);
		tj_ku64(j, "id", mi->id);
		tj_kstr(j, "name", mi->name);
		tj_kstr(j, "type", map_type_name(mi->type));
		tj_ku64(j, "max_entries", mi->max_entries);
		tj_key(j, "entries");
		if (n != NOT_COUNTED)
			tj_u64(j, n);
		else
			tj_null(j);
		tj_obj_end(j);
		return;
	}
	if (n != NOT_COUNTED)
		snprintf(in_use, sizeof(in_use), "%ld", n);
	else
		snprintf(in_use, sizeof(in_use), "-");
	printf("%-6u %-16s %-20s %12u %12s\n", mi->id, mi->name,
	       map_type_name(mi->type), mi->max_entries, in_use);
}

/* Every map of toe_maps.h that is pinned, in the table's order. */
static void print_maps(const struct opts *o, struct toe_json *j)
{
	char path[PATH_MAX];
	unsigned int k;

	for (k = 0; k < TOE_MAP__N; k++) {
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);
		long n;
		int fd;

		toe_join(path, sizeof(path), o->pin_dir, toe_map_names[k]);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &mi, &len)) {
			close(fd);
			continue;
		}
		n = count_entries(fd, &mi);
		close(fd);
		print_map(o, j, &mi, n);
	}
}

/*
 * Each interface of this namespace in toe_ifaces: its hook and why
 * (hook.c), and whether tc delivers into its veth peer's namespace
 * (redirect_peer: this device's transmit, qdisc and tcpdump see nothing).
 */
static void print_hooks(const struct opts *o, struct toe_json *j)
{
	char path[PATH_MAX];
	int fd;

	if (o->json) {
		tj_key(j, "hooks");
		tj_arr(j);
	} else {
		printf("\n%-16s %-5s %-14s %s\n", "INTERFACE", "HOOK", "WHY",
		       "FORWARDS");
	}
	toe_join(path, sizeof(path), o->pin_dir, TOE_MAP(IFACES));
	fd = bpf_obj_get(path);
	toe_hooks_show(fd, 0, stdout, j, o->json);
	if (fd >= 0)
		close(fd);
	if (o->json)
		tj_arr_end(j);
}

int cmd_status(struct opts *o)
{
	struct prog_row rows[3 * MAX_IFACES + 2];
	struct toe_json j;
	int nrows;
	DIR *d;

	if (check_root())
		return 1;
	d = opendir(o->pin_dir);
	if (!d) {
		print_not_loaded(o);
		return 0;
	}
	nrows = read_rows(o, d, rows, sizeof(rows) / sizeof(rows[0]));
	closedir(d);
	if (nrows < (int)(sizeof(rows) / sizeof(rows[0])))
		nrows += map_held_skmsg(o, rows, nrows);
	if (o->json)
		json_programs(o, &j, rows, nrows);
	else
		text_programs(o, rows, nrows);
	print_maps(o, &j);
	if (o->json)
		tj_arr_end(&j);
	print_hooks(o, &j);
	if (o->json) {
		tj_obj_end(&j);
		tj_end(&j);
	}
	return 0;
}
