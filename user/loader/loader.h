/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toe-loader: its command line.  struct opts (every subcommand's options),
 * the option and command tables of main.c, the subcommands, and lock.c's
 * --wait and change lock, which load and unload share.  Each other file's
 * interface is in the header of its name: undo.h (the rollback log),
 * pins.h and pin_ns.h (pin names, checks, namespaces), attach.h (the
 * attach steps of a load), egress.h (the forward path's admission),
 * hook.h, tcclassic.h, xdpdisp.h, capture_maps.h, skel.h; but features.c's
 * is kernel_features.h (glibc has a <features.h>).  And uapi_compat.h: what
 * the uapi headers lack.
 */
#ifndef __TOE_LOADER_H
#define __TOE_LOADER_H

#include <getopt.h>
#include <stddef.h>
#include <stdbool.h>
#include <linux/types.h>

/*
 * Interfaces one load attaches to (--dev options).  Not TOE_MAX_DEVS: that
 * is the size of toe_devs, the offload devices toed's policy declares.
 */
#define MAX_IFACES 64

/* ------------------------------------------------------- command line */

/* Every option of every subcommand; each sets only its own (main.c). */
struct opts {
	const char *pin_dir;
	const char *cgroup;
	const char *devs[MAX_IFACES];
	int ndevs;
	__u32 xdp_flags; /* XDP_FLAGS_SKB_MODE / DRV_MODE / 0 (kernel picks) */
	int hook; /* --hook: TOE_HOOK_AUTO (default), _XDP or _TC */
	bool dev_tc[MAX_IFACES]; /* devs[i]'s hook is tc (resolve_hooks) */
	__u8 dev_why[MAX_IFACES]; /* and why: enum toe_hook_why */
	bool dev_kept[MAX_IFACES]; /* the hook an earlier load put there */
	bool xdp_veth_tx; /* --xdp-veth-tx: XDP may redirect into veths */
	__u32 flows;
	bool json;
	bool force; /* unload: drop unread bypassed data */
	double drain_timeout; /* unload: seconds to wait for readers */
	int wait_ms; /* load, unload: --wait for the datapath's lock */
	__u32 cap_ring; /* load: --capture-ring BYTES, 0: the default */
};

/*
 * One option: its getopt_long entry (key: the short option letter, or a
 * value above 255 for a long-only option), what it sets (set: 0, or 1
 * after an error message; or flag: the offset of a bool in struct opts it
 * makes true; neither: --help) and its lines of --help text.
 */
struct loader_opt {
	const char *name;
	int has_arg;
	int key;
	int (*set)(struct opts *o, const char *arg);
	const char *help;
	size_t flag;
};

/* A subcommand: the model is xdp-tools' xdp-loader cmds[]. */
struct loader_cmd {
	const char *name;
	int (*func)(struct opts *o);
	const struct loader_opt *options; /* ends with { NULL } */
	const char *synopsis; /* its options, after "toe-loader NAME " */
	const char *help; /* what it does */
};

extern const struct loader_opt load_options[];
extern const struct loader_opt status_options[];
extern const struct loader_opt unload_options[];

/* --wait SECONDS (lock.c): load's and unload's. */
int set_wait(struct opts *o, const char *arg);
/* clang-format off */
#define WAIT_OPTION \
	{ .name = "wait", .has_arg = required_argument, .key = 'w', \
	  .set = set_wait, .help = \
"  -w, --wait SECONDS     wait up to SECONDS (default 10) while another load\n" \
"                         or unload holds the pin folder's lock\n" }
/* clang-format on */
/*
 * The pin folder's change lock (lock.c tells what it protects), for who
 * ("toe-loader load"), waiting --wait: its fd (held until it is closed or
 * the process ends), or -1 after a message naming the holder.
 */
int take_change_lock(const struct opts *o, const char *who);

int cmd_load(struct opts *o);
int cmd_status(struct opts *o);
int cmd_unload(struct opts *o);
int cmd_features(struct opts *o);

#endif /* __TOE_LOADER_H */
