// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader load: its options, the checks before anything is changed,
 * pinning (or reusing) the maps, loading the object, counting what an
 * earlier datapath left in toe_flows (filter_load), and the order of the
 * attach steps (attach.c).  Any failure rolls back every change (undo.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "opentoe_common.h"
#include "opentoe_flows.h"
#include "opentoe_bypass.h"
#include "opentoe_forward.h"
#include "toe_maps.h"
#include "lib/knob.h"
#include "loader.h"
#include "undo.h"
#include "pins.h"
#include "attach.h"
#include "egress.h"
#include "hook.h"
#include "kernel_features.h"
#include "capture_maps.h"
#include "skel.h"
#include "lib/err.h"
#include "lib/path.h"
#include "opentoe.skel.h"

/*
 * Anything pinned in dir already (a map an earlier load left)?  Only then
 * can EINVAL from the load be a pinned map that does not fit; else it is
 * something else (a map the kernel refused, its BTF not loaded for want
 * of a descriptor, ...) and the hint would mislead.
 */
static bool pins_there(const char *dir)
{
	struct dirent *e;
	bool any = false;
	DIR *d = opendir(dir);

	while (d && !any && (e = readdir(d)))
		any = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return any;
}

#define STR_(x) #x
#define STR(x) STR_(x)
#define FLOWS_MAX (1U << 26)

static int set_dev(struct opts *o, const char *arg)
{
	if (o->ndevs == MAX_IFACES) {
		toe_err("too many --dev (at most %d)", MAX_IFACES);
		return 1;
	}
	if (strlen(arg) >= IF_NAMESIZE) {
		toe_err("unknown interface '%s' (name too long)", arg);
		return 1;
	}
	o->devs[o->ndevs++] = arg;
	return 0;
}

static int set_xdp_mode(struct opts *o, const char *arg)
{
	if (!strcmp(arg, "native") || !strcmp(arg, "drv")) {
		o->xdp_flags = XDP_FLAGS_DRV_MODE;
	} else if (!strcmp(arg, "skb") || !strcmp(arg, "generic")) {
		o->xdp_flags = XDP_FLAGS_SKB_MODE;
	} else {
		toe_err("bad --xdp-mode '%s': expected native or skb", arg);
		return 1;
	}
	return 0;
}

static int set_hook(struct opts *o, const char *arg)
{
	if (!strcmp(arg, "auto")) {
		o->hook = TOE_HOOK_AUTO;
	} else if (!strcmp(arg, "xdp")) {
		o->hook = TOE_HOOK_XDP;
	} else if (!strcmp(arg, "tc") || !strcmp(arg, "tcx")) {
		o->hook = TOE_HOOK_TC;
	} else {
		toe_err("bad --hook '%s': expected auto, xdp or tc", arg);
		return 1;
	}
	return 0;
}

static int set_cgroup(struct opts *o, const char *arg)
{
	o->cgroup = arg;
	return 0;
}

static int set_flows(struct opts *o, const char *arg)
{
	char *end;

	errno = 0;
	o->flows = strtoul(arg, &end, 0);
	if (errno || *end || o->flows < 1 || o->flows > FLOWS_MAX) {
		toe_err("bad --flows '%s': expected 1 to %u", arg, FLOWS_MAX);
		return 1;
	}
	return 0;
}

/* clang-format off */
const struct loader_opt load_options[] = {
	{ .name = "dev", .has_arg = required_argument, .key = 'd',
	  .set = set_dev, .help =
"  -d, --dev IFACE        attach XDP to IFACE (repeatable)\n" },
	{ .name = "hook", .has_arg = required_argument, .key = 'H',
	  .set = set_hook, .help =
"  -H, --hook HOOK        auto (default): tc on a veth, a VLAN sub-interface and\n"
"                         a device without native XDP, XDP on one whose\n"
"                         driver has it (a NIC);\n"
"                         xdp: account, steer and forward in XDP everywhere;\n"
"                         tc: account and forward on tc ingress everywhere (a\n"
"                         tcx link; before Linux 6.6 a clsact filter), after\n"
"                         GRO, the skb kept whole; no 'steer cpu' there\n" },
	{ .name = "xdp-veth-tx", .has_arg = no_argument, .key = 'V',
	  .flag = offsetof(struct opts, xdp_veth_tx), .help =
"  -V, --xdp-veth-tx      XDP may redirect into veths (their peers have GRO on\n"
"                         and send full checksums: ethtool -K PEER tx off gro\n"
"                         on); without it XDP leaves flows out of a veth to the\n"
"                         stack\n" },
	{ .name = "xdp-mode", .has_arg = required_argument, .key = 'm',
	  .set = set_xdp_mode, .help =
"  -m, --xdp-mode MODE    native or skb (default: native where the driver has it)\n" },
	{ .name = "cgroup", .has_arg = required_argument, .key = 'c',
	  .set = set_cgroup, .help =
"  -c, --cgroup PATH      cgroup v2 folder for sock_ops (default: cgroup v2 root\n"
"                         from /proc/mounts)\n" },
	{ .name = "flows", .has_arg = required_argument, .key = 'f',
	  .set = set_flows, .help =
"  -f, --flows N          size of toe_flows and toe_fwd\n"
"                         (default " STR(TOE_FLOWS_DEFAULT) ", toe_fwd " STR(TOE_FWD_DEFAULT) ")\n" },
	{ .name = "capture-ring", .has_arg = required_argument, .key = 'R',
	  .set = set_capture_ring, .help =
"  -R, --capture-ring BYTES  size of toectl dump's capture ring, a power of 2\n"
"                         (default 4m; kept across reloads)\n" },
	WAIT_OPTION,
	{ NULL }
};
/* clang-format on */

/*
 * toe_flow_filter's loaded counts (include/opentoe.h), for a load over
 * pinned maps: toe_flows may hold offloaded records that no socket counted
 * in the filter (written by a sock_ops program without it, the one this
 * load has just replaced).  Once that program can no longer run (swapped
 * out, then an RCU grace period: an update of the toe_rcu_sync map-in-map)
 * no such record can appear any more; count the offloaded records per
 * slot and store the counts, through mmap: the datapath adds to live, the
 * other half of each slot, with atomic instructions, which a whole-value
 * map update would race with.  Counting records the new program counted
 * too only errs high.  Done before XDP is attached or swapped.
 */
#define FILTER_BATCH 1024

/* An RCU grace period: the replaced sock_ops program runs no more. */
static int rcu_sync(struct opentoe *skel)
{
	__u32 zero = 0;
	int inner;

	inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "toe_rcu_inner", 4, 4, 1,
			       NULL);
	if (inner < 0 ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.toe_rcu_sync), &zero,
				&inner, BPF_ANY)) {
		toe_err("cannot wait for an RCU grace period: %s",
			strerror(errno));
		if (inner >= 0)
			close(inner);
		return -EIO;
	}
	close(inner);
	return 0;
}

/* Count the offloaded records of toe_flows per filter slot into cnt. */
static int count_offloaded(int flows, __u32 *cnt, __u32 *nrec)
{
	struct toe_flow_key *keys = calloc(FILTER_BATCH, sizeof(*keys));
	struct toe_flow *vals = calloc(FILTER_BATCH, sizeof(*vals));
	__u32 batch, n, i;
	void *in = NULL;
	int rc, err = 0;

	if (!keys || !vals) {
		toe_err("out of memory");
		err = -ENOMEM;
		goto out;
	}
	do {
		n = FILTER_BATCH;
		rc = bpf_map_lookup_batch(flows, in, &batch, keys, vals, &n,
					  NULL);
		if (rc && errno != ENOENT) {
			toe_err("cannot read %s: %s", TOE_MAP(FLOWS),
				strerror(errno));
			err = -EIO;
			goto out;
		}
		for (i = 0; i < n; i++) {
			if (vals[i].decision != TOE_ACT_OFFLOAD)
				continue;
			cnt[toe_filter_slot(keys[i].laddr, keys[i].raddr,
					    keys[i].lport, keys[i].rport)]++;
			(*nrec)++;
		}
		in = &batch;
	} while (!rc); /* ENOENT: that was the last of them */
out:
	free(keys);
	free(vals);
	return err;
}

static int filter_load(struct opentoe *skel)
{
	int filt = bpf_map__fd(skel->maps.toe_flow_filter);
	size_t sz = TOE_FILTER_SLOTS * sizeof(struct toe_filter);
	__u32 *cnt = calloc(TOE_FILTER_SLOTS, sizeof(*cnt));
	struct toe_filter *slots;
	__u32 i, nrec = 0;
	int err = -EIO;

	if (!cnt) {
		toe_err("out of memory");
		return -ENOMEM;
	}
	if (rcu_sync(skel) ||
	    count_offloaded(bpf_map__fd(skel->maps.toe_flows), cnt, &nrec))
		goto out;
	slots = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, filt, 0);
	if (slots == MAP_FAILED) {
		toe_err("cannot map %s: %s", TOE_MAP(FLOW_FILTER),
			strerror(errno));
		goto out;
	}
	for (i = 0; i < TOE_FILTER_SLOTS; i++)
		__atomic_store_n(&slots[i].loaded, cnt[i], __ATOMIC_RELAXED);
	munmap(slots, sz);
	if (getenv("TOE_DEBUG"))
		fprintf(stderr,
			"toe-loader: %u offloaded records in %s counted in %s\n",
			nrec, TOE_MAP(FLOWS), TOE_MAP(FLOW_FILTER));
	err = 0;
out:
	free(cnt);
	return err;
}

/*
 * Before anything is changed: root, kernel BTF, the interfaces, the cgroup,
 * the pin folder on bpffs (made here if missing: the first change, and
 * recorded).  0, or 1 after a message.
 */
static int load_checks(struct opts *o)
{
	struct stat st;
	int i;

	if (check_root() || check_btf() || check_features())
		return 1;
	for (i = 0; i < o->ndevs; i++) {
		if (!if_nametoindex(o->devs[i])) {
			toe_err("unknown interface '%s'", o->devs[i]);
			return 1;
		}
	}
	if (resolve_hooks(o))
		return 1;
	for (i = 0; i < o->ndevs; i++)
		if (check_other_hook(o, o->devs[i], o->dev_tc[i]))
			return 1;
	if (!o->cgroup)
		o->cgroup = toe_cgroup2_root();
	if (!o->cgroup) {
		toe_err("no cgroup v2 mount in /proc/mounts: mount one or pass --cgroup PATH");
		return 1;
	}
	if (!toe_is_cgroup2(o->cgroup)) {
		toe_err("'%s' is not a cgroup v2 folder", o->cgroup);
		return 1;
	}
	if (toe_ensure_bpffs(o->pin_dir))
		return 1;
	if (stat(o->pin_dir, &st)) {
		if (mkdir(o->pin_dir, 0700)) {
			toe_err("cannot create pin folder %s: %s", o->pin_dir,
				strerror(errno));
			return 1;
		}
		if (!undo_push(UNDO_RMDIR, o->pin_dir)) {
			rmdir(o->pin_dir);
			return 1;
		}
	} else if (!S_ISDIR(st.st_mode) || !toe_is_bpffs(o->pin_dir)) {
		toe_err("pin folder %s is not a folder on a bpf filesystem",
			o->pin_dir);
		return 1;
	}
	return 0;
}

/*
 * The kernel adds BPF_F_RDONLY_PROG to a devmap's flags, which this libbpf
 * then sees as a mismatch with the object's definition: reuse the pin by
 * hand.
 */
static int reuse_devmap(struct bpf_map *map, const char *path)
{
	int fd = bpf_obj_get(path);

	if (fd < 0 || bpf_map__reuse_fd(map, fd)) {
		toe_err("cannot reuse %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	close(fd); /* reuse_fd keeps its own copy */
	return 0;
}

/* Rollback unpins path if libbpf pinned map there (its id, undo.c). */
static int record_unpin(const char *path, const struct bpf_map *map)
{
	struct undo *u = undo_push(UNDO_UNPIN, path);

	if (!u)
		return -ENOSPC;
	u->map = map;
	return 0;
}

/*
 * Each map of the table is pinned in the pin folder, or reuses the pin an
 * earlier load left if it has this object's layout.  *flows_existed: a
 * toe_flows was pinned already (filter_load counts its records).
 */
static int pin_maps(const struct opts *o, struct opentoe *skel,
		    bool *flows_existed)
{
	char path[PATH_MAX];
	struct bpf_map *map;

	bpf_object__for_each_map(map, skel->obj) {
		const char *name = bpf_map__name(map);
		unsigned int k;
		bool existed;

		for (k = 0; k < TOE_MAP__N; k++)
			if (!strcmp(name, toe_map_names[k]))
				break;
		if (k == TOE_MAP__N)
			continue; /* internal (.rodata): not pinned */
		toe_join(path, sizeof(path), o->pin_dir, name);
		existed = access(path, F_OK) == 0;
		if (existed && check_pin_layout(map, path))
			return -EINVAL;
		if (!existed && record_unpin(path, map))
			return -ENOSPC;
		if (existed && k == TOE_MAP_ID_FLOWS)
			*flows_existed = true;
		if (existed && bpf_map__type(map) == BPF_MAP_TYPE_DEVMAP_HASH) {
			if (reuse_devmap(map, path))
				return -EIO;
			continue;
		}
		bpf_map__set_pin_path(map, path);
	}
	return 0;
}

/* Whether a test knob's value v (toe_knob(), lib/knob.h) is "1". */
static bool knob_is1(const char *v)
{
	return v && !strcmp(v, "1");
}

#define knob_on(name) knob_is1(toe_knob(name))

/*
 * The tests' knob TOE_LOADER_EVENT_RING: the event ring's size in bytes
 * (a power of 2, at least a page), small enough for a test to lose events
 * on purpose (selftests/kmod/toed_guest.sh).  0 unset, -1 not valid.
 */
static long ring_knob(void)
{
	const char *v = toe_knob("TOE_LOADER_EVENT_RING");
	unsigned long n;
	char *end;

	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoul(v, &end, 0);
	if (errno || *end || n < 4096 || n > (1UL << 30) || (n & (n - 1))) {
		toe_err("TOE_LOADER_EVENT_RING=%s: not a power of 2 between 4096 and 2^30 bytes",
			v);
		return -1;
	}
	return (long)n;
}

/* Map sizes, then load the object into the kernel (pins what is new). */
static int load_object(const struct opts *o, struct opentoe *skel)
{
	long ring = ring_knob();
	int err;

	if (ring < 0)
		return -EINVAL;
	if (ring)
		bpf_map__set_max_entries(skel->maps.toe_events, ring);
	if (o->flows) {
		bpf_map__set_max_entries(skel->maps.toe_bypass, o->flows);
		bpf_map__set_max_entries(skel->maps.toe_byp_flows, o->flows);
		bpf_map__set_max_entries(skel->maps.toe_flows, o->flows);
		bpf_map__set_max_entries(skel->maps.toe_fwd, o->flows);
		bpf_map__set_max_entries(skel->maps.toe_fwd_nat, o->flows);
	}
	/* One cpumap slot per possible CPU (entries: the policy apply). */
	err = libbpf_num_possible_cpus();
	if (err > 0)
		bpf_map__set_max_entries(skel->maps.toe_cpumap, err);
	err = capture_sizes(o, skel);
	if (err)
		return err;
	nf_prepare(o, skel->progs.toe_nf_fwd, &skel->rodata->toe_nf_admit);
	skel->rodata->toe_hz = kernel_hz(); /* conntrack kept (bpf/fwd_ct.h) */
	skel->rodata->toe_ct_kfuncs = ct_kfuncs();
	/* the tests' fault: the forward path's TTL step fails (forward.h) */
	skel->rodata->toe_fault_hop = knob_on("TOE_LOADER_FAULT_HOP");
	err = opentoe__load(skel);
	if (err)
		toe_err("cannot load the opentoe eBPF object: %s%s",
			strerror(-err),
			err == -EINVAL && pins_there(o->pin_dir) ?
				" (a pinned map from an older or differently sized load? run 'toe-loader unload' first)" :
				"");
	return err;
}

/* toe_iface flags of devs[i] (hook.c decided its hook). */
static __u32 iface_flags(const struct opts *o, int i)
{
	const char *no_peer = toe_knob("TOE_LOADER_NO_PEER");
	__u32 f = o->dev_tc[i] ? TOE_IFACE_TC : 0;

	/* no ndo_xdp_xmit there: an XDP redirect into it would be dropped */
	if (o->dev_why[i] == TOE_HOOK_WHY_NO_NATIVE ||
	    iface_is_vlan(o->devs[i]))
		f |= TOE_IFACE_NO_XDP_TX;
	if (!iface_is_veth(o->devs[i]))
		return f;
	/*
	 * TOE_LOADER_NO_PEER=1 (the benchmarks' knob, bench-forward's
	 * tc_nopeer): tc's fast path sends into the veth's own transmit
	 * (bpf_redirect) instead of the peer's ingress
	 */
	if (iface_peer_elsewhere(if_nametoindex(o->devs[i])) &&
	    !(no_peer && !strcmp(no_peer, "1")))
		f |= TOE_IFACE_PEER;
	if (!o->xdp_veth_tx)
		f |= TOE_IFACE_NO_XDP_TX;
	return f;
}

/* sk_msg, sock_ops, then each interface's tc or XDP (and egress). */
static int attach_all(const struct opts *o, struct opentoe *skel,
		      bool flows_existed)
{
	struct chain_maps cm = {
		.next_fd = bpf_map__fd(skel->maps.toe_xdp_next),
		.ns_fd = bpf_map__fd(skel->maps.toe_xdp_next_ns),
		.obj = skel->obj,
	};
	int tc_fd = bpf_program__fd(skel->progs.toe_tc);
	int xdp_fd = bpf_program__fd(skel->progs.toe_xdp);
	int i, err;

	err = attach_skmsg(o, bpf_program__fd(skel->progs.toe_skmsg),
			   bpf_map__fd(skel->maps.toe_bypass));
	if (!err)
		err = attach_sockops(o,
				     bpf_program__fd(skel->progs.toe_sockops));
	if (!err && flows_existed)
		err = filter_load(skel);
	if (!err)
		claim_home(bpf_map__fd(skel->maps.toe_fwd_gen));
	if (!err && skel->rodata->toe_nf_admit) /* the forward path's proof */
		err = attach_nf(o, bpf_program__fd(skel->progs.toe_nf_fwd));
	for (i = 0; !err && i < o->ndevs; i++) {
		err = add_egress(o->devs[i], if_nametoindex(o->devs[i]),
				 iface_flags(o, i), o->dev_why[i],
				 bpf_map__fd(skel->maps.toe_devmap),
				 bpf_map__fd(skel->maps.toe_ifaces));
		if (!err)
			err = attach_iface(o, o->devs[i], o->dev_tc[i],
					   o->dev_tc[i] ? tc_fd : xdp_fd, &cm);
		if (!err && !skel->rodata->toe_nf_admit)
			err = attach_egress(/* the fallback admission */
					    o, o->devs[i],
					    bpf_program__fd(
						    skel->progs.toe_egress));
	}
	return err;
}

/* What was loaded where, one line: each interface's hook and why. */
static void print_loaded(const struct opts *o)
{
	int i;

	printf("opentoe loaded: sock_ops on %s", o->cgroup);
	for (i = 0; i < o->ndevs; i++)
		printf("; %s on %s (%s%s)", o->dev_tc[i] ? "tc ingress" : "XDP",
		       o->devs[i], hook_why_key(o->dev_why[i]),
		       o->dev_kept[i] ? ", kept" : "");
	printf("; pinned in %s\n", o->pin_dir);
}

int cmd_load(struct opts *o)
{
	struct opentoe *skel = NULL;
	bool flows_existed = false;
	__u32 zero = 0;
	int lock;

	if (o->hook == TOE_HOOK_TC && o->xdp_flags) {
		toe_err("--xdp-mode does not apply to --hook tc");
		return 1;
	}
	if (check_root())
		return 1;
	undo_reserve(); /* the rollback's one descriptor, whatever happens */
	/* Held until exit: the pin folder is this run's alone (lock.c). */
	lock = take_change_lock(o, "toe-loader load");
	if (lock < 0)
		return 1;
	pins_upgrade(o->pin_dir); /* an older toe-loader's names: ours */
	if (load_checks(o))
		goto fail;
	if (!getenv("TOE_DEBUG"))
		libbpf_set_print(NULL);
	skel = toe_skel_open();
	if (!skel) {
		toe_err("cannot open the opentoe eBPF object: %s",
			strerror(errno));
		goto fail;
	}
	if (pin_maps(o, skel, &flows_existed) || load_object(o, skel) ||
	    attach_all(o, skel, flows_existed))
		goto fail;
	/* Bypass on (an unload that stopped short may have left it draining). */
	bpf_map_update_elem(bpf_map__fd(skel->maps.toe_byp_conf), &zero,
			    &(struct toe_byp_conf){ .draining = 0 }, BPF_ANY);
	capture_mark(skel);
	undo_forget();
	opentoe__destroy(skel); /* everything stays: it is pinned */
	print_loaded(o);
	close(lock);
	return 0;

fail:
	rollback(skel ? bpf_map__fd(skel->maps.toe_xdp_next) : -1);
	opentoe__destroy(skel);
	close(lock); /* after the rollback: nothing half undone is seen */
	return 1;
}
