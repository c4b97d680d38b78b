/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toe-loader: what its files share.  The command line (struct opts, the
 * option and command tables of main.c), the eBPF object (skel.c), the
 * rollback log (undo.c), pin names and checks (pins.c), the attach steps
 * of a load (attach.c) and the three subcommands (load.c, status.c,
 * unload.c).
 */
#ifndef __TOE_LOADER_H
#define __TOE_LOADER_H

#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdbool.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include "opentoe.h"
#include "lib/pinned.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* kernel-internal, what some BPF commands return */
#endif

/*
 * Interfaces one load attaches to (--dev options).  Not TOE_MAX_DEVS: that
 * is the size of toe_devs, the offload devices toed's policy declares.
 */
#define MAX_IFACES 64

/* Newer than the uapi headers this builds against (Debian 12: 6.1). */
#define TOE_LINK_TYPE_SOCKMAP 14 /* BPF_LINK_TYPE_SOCKMAP, kernel 6.10 */
#define TOE_LINK_TYPE_TCX 11 /* BPF_LINK_TYPE_TCX, kernel 6.6 */
#define TOE_TCX_INGRESS 46 /* BPF_TCX_INGRESS, kernel 6.6 */
#define TOE_TCX_EGRESS 47 /* BPF_TCX_EGRESS, kernel 6.6 */
/* Netfilter programs (kernel 6.4), newer than libbpf 1.1 and these headers. */
#define TOE_PROG_TYPE_NETFILTER 32 /* BPF_PROG_TYPE_NETFILTER */
#define TOE_ATTACH_NETFILTER 45 /* BPF_NETFILTER */
#define TOE_LINK_TYPE_NETFILTER 10 /* BPF_LINK_TYPE_NETFILTER */
#define TOE_NF_INET_FORWARD 2 /* NF_INET_FORWARD */
/* Last but one: the kernel refuses NF_IP_PRI_LAST itself. */
#define TOE_NF_PRIORITY (INT_MAX - 1)
#define TOE_NF_PRIORITIES 64 /* tried from TOE_NF_PRIORITY down */
/* toe_nf_fwd's links, per namespace and family (egress.c). */
#define TOE_PIN_LINK_NF "link_nf_fwd_%c%llu_%s"
/*
 * toe_egress's pins (TOE_PIN_LINK_EGRESS, TOE_PIN_TC_EGRESS) are in
 * lib/pinned.h: toed reads them too.  Without tcx (before 6.6): classic
 * clsact filters (tcclassic.c), at opentoe's handle and priority.
 */
#define TOE_TC_HANDLE 0x70e
#define TOE_TC_PRIO 0x70e
/*
 * bpf_link_info of a tcx link: the union's tcx member starts with ifindex,
 * as its xdp member does; these headers only know the latter.
 */
#define tcx_ifindex(li) ((li)->xdp.ifindex)

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

/*
 * The forward path's proof (egress.c): why toe_nf_fwd cannot be used
 * (NULL: it can), its preparation before the load, its links.
 */
struct bpf_program;
const char *nf_why_not(void);
void nf_prepare(const struct opts *o, struct bpf_program *nf,
		volatile __u32 *nf_admit);
int attach_nf(const struct opts *o, int prog_fd);
__u32 kernel_hz(void);
/*
 * The datapath's home namespace (toe_fwd_gen.rt_netns): made this one's if
 * it has none; whether this one is it (egress.c).
 */
bool claim_home(int gen_fd);

/*
 * The packet capture's maps (capture_maps.c): --capture-ring; their sizes
 * before the load (0, or -EINVAL after a message); after it, whether
 * these programs capture (toe_cap_conf.no_capture).
 */
struct opentoe;
int set_capture_ring(struct opts *o, const char *arg);
int capture_sizes(const struct opts *o, struct opentoe *skel);
void capture_mark(struct opentoe *skel);

int cmd_load(struct opts *o);
int cmd_status(struct opts *o);
int cmd_unload(struct opts *o);
int cmd_features(struct opts *o);
/* Before a load: what the programs need that this kernel lacks (features.c). */
int check_features(void);

/*
 * The eBPF object, opened (skel.c: its one copy in the binary; every other
 * file that includes opentoe.skel.h calls this, never opentoe__open).
 */
struct opentoe;
struct opentoe *toe_skel_open(void);

/* --------------------------------------------------- rollback (undo.c) */

/*
 * Every change load makes is recorded here first; on failure they are
 * undone in reverse order, so a failed load leaves the system as it was.
 */
/*
 * A pin is only ever removed by a rollback if it still holds the object
 * this run pinned there (its id: a map's, a link's or a program's), never
 * one another run made in its place.
 */
enum undo_kind {
	UNDO_UNPIN, /* unlink path if it holds map (once created) */
	UNDO_RMDIR, /* rmdir path */
	UNDO_LINK, /* detach link fd, unlink path if it holds link id */
	UNDO_LINK_UPDATE, /* put prog fd back into link fd */
	UNDO_CHAIN, /* reattach prog fd on ifindex, clear slot, unpin id */
	UNDO_EGRESS, /* delete or restore ifindex in devmap/ifaces */
	UNDO_PROG_DETACH, /* bpf_prog_detach2 prog fd from map fd2 */
	UNDO_ACTION, /* the concern's own undo: action(u) */
	UNDO_REPIN, /* pin link fd back at path; on success: detach it */
};

struct bpf_map;
struct bpf_object;

struct undo {
	enum undo_kind kind;
	/*
	 * UNDO_ACTION: how the file that made the change undoes it (a classic
	 * tc filter: tcclassic.c; a program in libxdp's dispatcher: xdpdisp.c),
	 * so that the log calls out to no concern of its own accord.
	 */
	void (*action)(const struct undo *u);
	char path[PATH_MAX];
	int fd;
	int fd2;
	__u32 id; /* UNDO_LINK, UNDO_CHAIN: what this run pinned at path */
	const struct bpf_map *map; /* UNDO_UNPIN: the map libbpf pins there */
	__u32 ifindex;
	__u32 flags;
	bool had_old; /* UNDO_EGRESS: entries to restore */
	struct bpf_devmap_val old_dev;
	struct toe_iface old_if;
};

/*
 * A new entry (fd, fd2: -1), or NULL, with a message, when the log is
 * full: the caller undoes its own change and fails, and the load rolls
 * back the rest.
 */
struct undo *undo_push(enum undo_kind kind, const char *path);
/* The same for a change action undoes (UNDO_ACTION: devm_add_action's way). */
struct undo *undo_push_action(void (*action)(const struct undo *u),
			      const char *path);
/* Forget the last entry, closing its fds: its change did not happen. */
void undo_drop_last(void);
/* Undo everything, newest first (next_fd: toe_xdp_next, or -1). */
void rollback(int next_fd);
/* The load succeeded: keep every change, close the fds. */
void undo_forget(void);

/* ---------------------------------------------- pins, checks (pins.c) */

int check_root(void);
int check_btf(void);
const char *mode_name(__u32 attach_mode);
/*
 * A network namespace as a per-interface pin name says it (lib/pinned.h):
 * kind TOE_NS_COOKIE and its cookie, or TOE_NS_INO and its inode (pins an
 * older toe-loader made).
 */
struct pin_ns {
	char kind;
	unsigned long long id;
};
/* A per-interface pin name: fmt gets this namespace (cookie) and n. */
int pin_path(char *buf, const char *dir, const char *fmt, __u32 n);
/* pin_ns.c: parse "<prefix>c<COOKIE>_if<N>..." (or n<INODE>) pin names. */
bool parse_if_pin(const char *name, const char *prefix, struct pin_ns *ns,
		  __u32 *ifindex);
/* Is ns this process's namespace? */
bool pin_ns_self(const struct pin_ns *ns);
/* "cookie N (inode I)" or "inode I", for messages. */
const char *pin_ns_str(const struct pin_ns *ns, char *buf, size_t len);
/* Enter the network namespace ns; 0 or -errno (-ENOENT: it is gone). */
int enter_netns(const struct pin_ns *ns);
/* The inode of namespace ns, for display (0: gone). */
unsigned long netns_ino_of(const struct pin_ns *ns);
/*
 * Old-style pins of this namespace (n<INODE>, an older toe-loader's)
 * renamed to this one's names (c<COOKIE>), so that a load finds and
 * replaces what the previous version attached here.
 */
void pins_upgrade(const char *dir);
/* A pin name opentoe made, a retired map's included. */
bool is_ours(const char *name);
/* Map id of a sockmap link; the map id of an fd (0 if unknown). */
__u32 sockmap_link_map_id(const struct bpf_link_info *li);
__u32 map_id_of(int fd);
/* The id of a map, link or program fd, or of what path pins; 0 if none. */
__u32 obj_id_of(int fd);
__u32 pinned_id(const char *path);
/* 0, or -EINVAL (message given) if the pin is not this map's layout. */
int check_pin_layout(const struct bpf_map *map, const char *path);

/* ------------------------------------------- attach steps (attach.c) */

int attach_sockops(const struct opts *o, int prog_fd);
int attach_skmsg(const struct opts *o, int prog_fd, int map_fd);
/*
 * The XDP chain: toe_xdp_next (slot = ifindex) and toe_xdp_next_ns, the
 * namespace that owns each slot.
 */
struct chain_maps {
	int next_fd;
	int ns_fd;
	const struct bpf_object *obj; /* the loaded object (xdpdisp.c) */
};

/*
 * XDP on the interface, or with --hook tc toe_tc on its tcx ingress: a
 * link an earlier load pinned gets prog_fd in place, else a new one is
 * made and pinned.  cm: the chain an XDP program already there goes into.
 * 0 or -errno.
 */
int attach_iface(const struct opts *o, const char *ifname, bool tc, int prog_fd,
		 const struct chain_maps *cm);
int add_egress(const char *ifname, __u32 ifindex, __u32 flags, __u16 why,
	       int dev_fd, int if_fd);
/* Pin a link just made (path); rollback detaches and unpins it.  0 or -errno. */
int pin_new_link(int link_fd, const char *path);

/* What swap_if_link found pinned (or a negative error). */
enum if_link {
	IF_LINK_NONE = 0, /* no usable link (a stale pin is removed) */
	IF_LINK_SWAPPED = 1, /* ours: the new program is in it */
};
/*
 * The link an earlier load pinned for ifindex (pin name fmt, its path into
 * path), if it is still a link of this type there: prog_fd is swapped in.
 */
int swap_if_link(const struct opts *o, const char *fmt, __u32 type,
		 __u32 ifindex, int prog_fd, const char *ifname,
		 const char *what, char *path);

/* ------------------------------------ tc without tcx (tcclassic.c) */

/* Whether the kernel's BTF lists val in enum name (features.c). */
bool kernel_enum_has(const char *name, const char *val);
/* Whether the kernel's BTF has the function name (features.c). */
bool kernel_func_has(const char *name);
/* Whether libbpf resolves conntrack's kfuncs (features.c). */
bool ct_kfuncs(void);
/* tcx links (Linux 6.6): BPF_TCX_EGRESS in the kernel's BTF. */
bool kernel_has_tcx(void);
__u32 tc_classic_prog(__u32 ifindex, bool egress);
int tc_classic_set(__u32 ifindex, bool egress, int prog_fd, bool replace);
int tc_classic_del(__u32 ifindex, bool egress, __u32 id);
int attach_tc_classic(const struct opts *o, const char *fmt, __u32 ifindex,
		      const char *ifname, bool egress, int prog_fd);
int detach_tc_classic(const char *n, const char *path, int home);
/* ------------------------- XDP through libxdp's dispatcher (xdpdisp.c) */

/*
 * Run priority of toe_xdp in the dispatcher: after xdp-loader's default
 * (50), so that a filter loaded there decides first.
 */
#define TOE_XDP_DISP_PRIO 100
/* Programs a libxdp dispatcher holds at most (MAX_DISPATCHER_ACTIONS). */
#define TOE_XDP_DISP_MAX 10
/* freplace (BPF_PROG_TYPE_EXT) programs load here (features.c). */
bool kernel_has_ext(void);
bool xdp_disp_possible(void);
bool xdp_disp_wanted(__u32 ifindex);
bool xdp_disp_holds(__u32 ifindex, __u32 id);
const char *xdp_disp_mode(__u32 ifindex);
/* attach_xdp_disp: no dispatcher could be made, nothing changed. */
#define XDP_DISP_NONE 1
int attach_xdp_disp(const struct opts *o, __u32 ifindex, const char *ifname,
		    const struct bpf_object *main);
int detach_xdp_disp(const char *n, const char *path, int home);
void xdp_disp_sweep_all(__u32 mid);
/* The object's ELF image (skel.c). */
const void *toe_skel_elf(size_t *sz);

/* ---------------------------- the forward path's admission (egress.c) */

/*
 * toe_egress on the interface's tcx egress, where XDP forwards: it sees
 * what the stack forwards, which alone admits a routed flow.  A link an
 * earlier load pinned gets prog_fd in place.  0 or -errno.
 */
int attach_egress(const struct opts *o, const char *ifname, int prog_fd);
/* An interface is XDP or tc, never both (tc: and no 'steer cpu'). */
int check_other_hook(const struct opts *o, const char *ifname, bool tc);

/* hook.c: --hook auto|xdp|tc, per interface. */
enum { TOE_HOOK_AUTO, TOE_HOOK_XDP, TOE_HOOK_TC };
int resolve_hooks(struct opts *o);
const char *hook_why_key(unsigned int why);
bool iface_is_veth(const char *ifname);
bool iface_is_vlan(const char *ifname);
bool iface_peer_elsewhere(__u32 ifindex);

#endif /* __TOE_LOADER_H */
