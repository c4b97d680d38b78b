// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader features: what this kernel offers of what opentoe's programs
 * use, probed the way bpftool feature probe does (libbpf_probe_bpf_*: load
 * a tiny program or create a tiny map) or read from the kernel's BTF (attach
 * and link types: no side effect), and what opentoe does without each:
 * works, falls back (and to what), works with a stated limit, or refuses
 * to load.  load runs the same
 * probes first and refuses, naming the feature and the kernel it came
 * with, before anything is pinned or attached.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "lib/knob.h"
#include "loader.h"
#include "pins.h"
#include "hook.h"
#include "kernel_features.h"
#include "lib/err.h"
#include "lib/json.h"

enum probe_kind { P_PROG, P_MAP, P_HELPER, P_ENUM, P_FUNC };

/* What opentoe does on a kernel without the feature. */
enum without { W_REFUSE, W_FALLBACK, W_LIMITED };

struct feature {
	const char *name; /* as bpftool feature names it, where it does */
	const char *since; /* the kernel it came with */
	const char *used_by;
	enum probe_kind kind;
	int type; /* prog or map type; for P_HELPER the prog type */
	int helper; /* P_HELPER */
	const char *enum_name, *enum_val; /* P_ENUM; P_FUNC: val NULL */
	enum without without;
	const char *fallback; /* W_FALLBACK: what is done instead */
};

#define PROG(t, s, u)                                                 \
	{                                                             \
		NULL, s, u, P_PROG, BPF_PROG_TYPE_##t, 0, NULL, NULL, \
			W_REFUSE, NULL                                \
	}
#define MAP(t, s, u)                                                          \
	{                                                                     \
		NULL, s, u, P_MAP, BPF_MAP_TYPE_##t, 0, NULL, NULL, W_REFUSE, \
			NULL                                                  \
	}
#define HELPER(p, h, s, u)                                                 \
	{                                                                  \
#h, s, u, P_HELPER, BPF_PROG_TYPE_##p, BPF_FUNC_##h, NULL, \
			NULL, W_REFUSE, NULL                               \
	}

/* clang-format off */
static const struct feature features[] = {
	PROG(XDP, "4.8", "XDP accounting, steering, forwarding"),
	PROG(SOCK_OPS, "4.13", "offload decisions (sock_ops)"),
	PROG(SK_MSG, "4.17", "the local bypass"),
	PROG(SCHED_CLS, "4.1", "--hook tc (auto: veths), the forward path's admission"),
	MAP(HASH, "3.19", "flows, policy"),
	MAP(ARRAY, "3.19", "devices, policy header"),
	MAP(PERCPU_ARRAY, "4.6", "counters"),
	MAP(LRU_HASH, "4.10", "forward flows"),
	MAP(PROG_ARRAY, "4.2", "the XDP chain"),
	MAP(DEVMAP_HASH, "5.4", "forward redirects"),
	MAP(CPUMAP, "4.15", "steer cpu"),
	MAP(SOCKHASH, "4.18", "the local bypass"),
	MAP(SK_STORAGE, "5.2", "bypass socket state"),
	MAP(RINGBUF, "5.8", "events to toed"),
	MAP(QUEUE, "4.20", "module TID pools"),
	MAP(ARRAY_OF_MAPS, "4.12", "module TID pools"),
	HELPER(SOCK_OPS, get_netns_cookie, "5.15", "flow keys per network namespace"),
	HELPER(SOCK_OPS, skc_to_tcp_sock, "5.9", "bypass flow control"),
	HELPER(SOCK_OPS, sock_hash_update, "4.18", "the local bypass"),
	HELPER(SOCK_OPS, sk_storage_get, "5.3", "bypass socket state"),
	HELPER(SOCK_OPS, ktime_get_coarse_ns, "5.11", "flow times"),
	HELPER(SK_MSG, msg_redirect_hash, "4.18", "the local bypass"),
	HELPER(XDP, fib_lookup, "4.18", "the forward path"),
	HELPER(XDP, redirect_map, "4.14", "steering, forwarding"),
	HELPER(XDP, loop, "5.17", "the forward path's option walk"),
	HELPER(XDP, ringbuf_reserve, "5.8", "events to toed"),
	HELPER(SCHED_CLS, redirect_peer, "5.10", "the tc forward path (into a veth peer's namespace)"),
	HELPER(SCHED_CLS, redirect_neigh, "5.10", "the tc forward path (the kernel resolves the next hop)"),
	HELPER(SCHED_CLS, check_mtu, "5.12", "the tc forward path (GSO-aware MTU check)"),
	HELPER(SCHED_CLS, fib_lookup, "4.18", "the tc forward path"),
	{ "tcx", "6.6", "--hook tc, the forward path's admission", P_ENUM, 0, 0,
	  "bpf_attach_type", "BPF_TCX_EGRESS", W_FALLBACK,
	  "a classic clsact filter (cls_bpf, direct action)" },
	{ "netfilter_prog", "6.4", "the forward path's admission (proof: FORWARD)",
	  P_ENUM, 0, 0, "bpf_prog_type", "BPF_PROG_TYPE_NETFILTER", W_FALLBACK,
	  "toe_egress at tc egress: frames tc moved without a route are refused, a bpf_redirect_neigh passes" },
	{ "sockmap_link", "6.10", "the local bypass", P_ENUM, 0, 0,
	  "bpf_link_type", "BPF_LINK_TYPE_SOCKMAP", W_FALLBACK,
	  "the program is attached to the pinned sockhash (no link)" },
	{ "sockmap_fionread", "after 6.1", "the local bypass", P_FUNC, 0, 0,
	  "tcp_bpf_ioctl", NULL, W_LIMITED,
	  "FIONREAD on a bypassed socket counts only what TCP queued, not what the bypass did" },
	{ NULL, "5.10", "XDP beside xdp-loader (libxdp's dispatcher)", P_PROG,
	  BPF_PROG_TYPE_EXT, 0, NULL, NULL, W_FALLBACK,
	  "opentoe's own XDP link; a program already on the interface is chained after it" },
	{ "kern_ctx", "6.3", "the fast paths' namespace read (opentoe_kctx.bpf.o)",
	  P_FUNC, 0, 0, "bpf_cast_to_kern_ctx", NULL, W_FALLBACK,
	  "opentoe.bpf.o: four bpf_probe_read_kernel calls a packet" },
	{ "xdp_link", "5.9", "XDP on each --dev", P_ENUM, 0, 0,
	  "bpf_link_type", "BPF_LINK_TYPE_XDP", W_REFUSE, NULL },
	{ "cgroup_link", "5.7", "sock_ops on the cgroup", P_ENUM, 0, 0,
	  "bpf_link_type", "BPF_LINK_TYPE_CGROUP", W_REFUSE, NULL },
};
/* clang-format on */

#define N_FEATURES (sizeof(features) / sizeof(features[0]))

/*
 * The kernel's BTF, parsed once per run (several MB: every probe of an
 * attach type or kernel function reads it), or NULL without one.
 */
static struct btf *vmlinux_btf(void)
{
	static struct btf *btf;
	static bool tried;

	if (!tried) {
		tried = true;
		btf = btf__load_vmlinux_btf();
	}
	return btf;
}

/* Whether the kernel's BTF lists val in enum name (no side effect). */
bool kernel_enum_has(const char *name, const char *val)
{
	struct btf *btf = vmlinux_btf();
	const struct btf_type *t;
	const struct btf_enum *e;
	bool found = false;
	int id, i;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, name, BTF_KIND_ENUM);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	for (i = 0; t && i < btf_vlen(t) && !found; i++) {
		e = btf_enum(t) + i;
		found = !strcmp(btf__name_by_offset(btf, e->name_off), val);
	}
	return found;
}

/* Whether the kernel's BTF has the function name (no side effect). */
bool kernel_func_has(const char *name)
{
	struct btf *btf = vmlinux_btf();

	return btf && btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) > 0;
}

/*
 * Whether libbpf resolves every conntrack kfunc the fast path calls
 * (bpf/fwd_ct.h) at load: in the kernel's BTF, or in nf_conntrack's where
 * that is a module and loaded (as on Debian).  The object tests this
 * (.rodata toe_ct_kfuncs), never a kfunc's address: libbpf 1.1 (Debian 12)
 * puts no module BTF fd into the ld_imm64 such a test compiles to, which
 * 6.1 refuses ("invalid btf_id"): opentoe would not load at all wherever
 * nf_conntrack is a loaded module.
 */
bool ct_kfuncs(void)
{
	static const char *const fn[] = { "bpf_xdp_ct_lookup",
					  "bpf_skb_ct_lookup", "bpf_ct_release",
					  "bpf_ct_change_timeout" };
	struct btf *base = vmlinux_btf(), *btf = base, *mod = NULL;
	bool all = base != NULL;
	unsigned int i;

	if (base && !access("/sys/kernel/btf/nf_conntrack", F_OK)) {
		mod = btf__load_module_btf("nf_conntrack", base);
		btf = mod ? mod : base; /* split BTF: finds vmlinux's too */
	}
	for (i = 0; all && i < sizeof(fn) / sizeof(fn[0]); i++)
		all = btf__find_by_name_kind(btf, fn[i], BTF_KIND_FUNC) > 0;
	btf__free(mod);
	return all;
}

/* bpftool's names: libbpf's for program and map types. */
static const char *feature_name(const struct feature *f)
{
	const char *n = NULL;

	if (f->kind == P_PROG)
		n = libbpf_bpf_prog_type_str(f->type);
	else if (f->kind == P_MAP)
		n = libbpf_bpf_map_type_str(f->type);
	return n ? n : f->name ? f->name : "?";
}

/*
 * TOE_LOADER_HIDE_FEATURE=NAME: probe NAME as absent (a fault knob, as
 * netdevsim's: the tests check load's refusal on a kernel that has it).
 */
static bool hidden(const struct feature *f)
{
	const char *h = toe_knob("TOE_LOADER_HIDE_FEATURE");

	return h && !strcmp(h, feature_name(f));
}

static bool probe(const struct feature *f)
{
	if (hidden(f))
		return false;
	switch (f->kind) {
	case P_PROG:
		return libbpf_probe_bpf_prog_type(f->type, NULL) == 1;
	case P_MAP:
		return libbpf_probe_bpf_map_type(f->type, NULL) == 1;
	case P_HELPER:
		return libbpf_probe_bpf_helper(f->type, f->helper, NULL) == 1;
	case P_ENUM:
		return kernel_enum_has(f->enum_name, f->enum_val);
	case P_FUNC:
		return kernel_func_has(f->enum_name);
	}
	return false;
}

/* freplace programs (libxdp's dispatcher), probed once a run. */
bool kernel_has_ext(void)
{
	static int has = -1;

	if (has < 0)
		has = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_EXT, NULL) == 1;
	return has;
}

/* kern_ctx's row, probed as features shows it (a hidden feature: absent). */
bool kernel_has_kern_ctx(void)
{
	unsigned int i;

	for (i = 0; i < N_FEATURES; i++)
		if (features[i].name && !strcmp(features[i].name, "kern_ctx"))
			return probe(&features[i]);
	return false;
}

/* Before a load changes anything: 0, or 1 after naming what is missing. */
int check_features(void)
{
	unsigned int i;
	int missing = 0;

	for (i = 0; i < N_FEATURES; i++) {
		const struct feature *f = &features[i];

		if (f->without != W_REFUSE || probe(f))
			continue;
		toe_err("this kernel lacks %s (%s, Linux %s), which opentoe needs for %s",
			feature_name(f),
			f->kind == P_PROG   ? "program type" :
			f->kind == P_MAP    ? "map type" :
			f->kind == P_HELPER ? "helper" :
					      "attach type",
			f->since, f->used_by);
		missing++;
	}
	if (missing)
		toe_err("not loaded: nothing was changed ('toe-loader features' lists what this kernel has)");
	return missing ? 1 : 0;
}

/*
 * Text only (-j stays the array of features): what --hook auto gives each
 * interface of this namespace, without probing (hook.c probes at load).
 */
static void print_auto_hooks(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;

	if (!ifs)
		return;
	printf("\n%-16s %s\n", "INTERFACE",
	       "--hook auto (toe-loader status: what a load chose)");
	for (i = ifs; i->if_index; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		const char *h;

		if (!strcmp(i->if_name, "lo"))
			continue;
		if (iface_is_veth(i->if_name))
			h = "tc (veth)";
		else if (iface_is_vlan(i->if_name))
			h = "tc (vlan: --hook xdp is refused there)";
		else if (bpf_xdp_query(i->if_index, 0, &q) || !q.prog_id)
			h = "xdp if its driver runs XDP natively, else tc (probed at load)";
		else if (q.attach_mode == XDP_ATTACHED_SKB)
			h = "tc (no_native_xdp: its XDP program is in skb mode)";
		else
			h = "xdp (native_xdp)";
		printf("%-16s %s\n", i->if_name, h);
	}
	if_freenameindex(ifs);
}

int cmd_features(struct opts *o)
{
	struct toe_json j;
	unsigned int i;

	if (check_root())
		return 1;
	if (o->json) {
		tj_start(&j, stdout);
		tj_arr(&j);
	} else {
		printf("%-20s %-9s %-5s %-12s %s\n", "FEATURE", "SINCE", "HERE",
		       "WITHOUT IT", "USED BY");
	}
	for (i = 0; i < N_FEATURES; i++) {
		const struct feature *f = &features[i];
		bool here = probe(f);
		const char *without = f->without == W_REFUSE   ? "refused" :
				      f->without == W_FALLBACK ? "falls back" :
								 "limited";

		if (!o->json) {
			printf("%-20s %-9s %-5s %-12s %s%s%s\n",
			       feature_name(f), f->since, here ? "yes" : "no",
			       without, f->used_by,
			       !here && f->fallback ? ": " : "",
			       !here && f->fallback ? f->fallback : "");
			continue;
		}
		tj_obj(&j);
		tj_kstr(&j, "name", feature_name(f));
		tj_kstr(&j, "kind",
			f->kind == P_PROG   ? "prog_type" :
			f->kind == P_MAP    ? "map_type" :
			f->kind == P_HELPER ? "helper" :
			f->kind == P_FUNC   ? "kernel_function" :
					      "attach_type");
		if (f->kind == P_HELPER) /* fib_lookup: XDP's and tc's */
			tj_kstr(&j, "prog_type",
				libbpf_bpf_prog_type_str(f->type));
		tj_kstr(&j, "since", f->since);
		tj_key(&j, "present");
		tj_bool(&j, here);
		tj_kstr(&j, "without",
			f->without == W_REFUSE	 ? "refused" :
			f->without == W_FALLBACK ? "falls_back" :
						   "limited");
		if (f->fallback)
			tj_kstr(&j, "fallback", f->fallback);
		tj_kstr(&j, "used_by", f->used_by);
		tj_obj_end(&j);
	}
	if (o->json) {
		tj_arr_end(&j);
		tj_end(&j);
	} else {
		print_auto_hooks();
	}
	return 0;
}
