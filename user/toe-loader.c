// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader: load, attach, pin, inspect and unload the opentoe datapath.
 *
 * Everything opentoe puts in the kernel is pinned under one bpffs folder
 * (default /sys/fs/bpf/opentoe):
 *   <map name>            every map (toe_flows, toe_devs, ...)
 *   link_sockops          the cgroup sock_ops link
 *   link_skmsg            the sk_msg program's link to the toe_bypass
 *                         sockhash (local bypass)
 *   link_xdp_n<NS>_if<N>  the XDP link on interface index N of the
 *                         network namespace whose inode is NS
 *   link_tc_n<NS>_if<N>   the tcx ingress link there instead (--hook tc)
 *   chain_n<NS>_if<N>_<mode>  an XDP program that was on that interface
 *                         before opentoe; it now runs after opentoe (tail
 *                         call) and is put back on unload
 * Every interface XDP is attached to is also an egress of the forward path:
 * an entry in toe_devmap (the redirect target) and toe_ifaces (its MAC and
 * network namespace), written at load and removed at unload.
 * so the programs keep running when no process holds them, a new loader
 * replaces them in place (bpf_link update, maps kept), and unload knows
 * exactly what is opentoe's.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <net/if_arp.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "opentoe.h"
#include "util.h"
#include "opentoe.skel.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524	/* kernel-internal, what some BPF commands return */
#endif

#define MAX_DEVS 64

/*
 * The map table (toe_maps.h) and the eBPF object agree: the skeleton has a
 * member for every map of the table, and no more.
 */
#define TOE_MAP_IN_SKEL(id, name) + sizeof(((struct opentoe *)0)->maps.name)
_Static_assert(0 TOE_MAP_TABLE(TOE_MAP_IN_SKEL) == sizeof(((struct opentoe *)0)->maps),
	       "include/toe_maps.h and bpf/ declare different maps");
#undef TOE_MAP_IN_SKEL

/* Maps older opentoes pinned and this one does not: unload removes them. */
static const char *retired_maps[] = {
	"toe_flow_pkts",	/* XDP counters, now in toe_flows and toe_fwd */
};

struct opts {
	const char *pin_dir;
	const char *cgroup;
	const char *devs[MAX_DEVS];
	int ndevs;
	__u32 xdp_flags;	/* XDP_FLAGS_SKB_MODE / DRV_MODE / 0 (kernel picks) */
	bool hook_tc;		/* --hook tc: toe_tc on tcx ingress, not XDP */
	__u32 flows;
	bool json;
	bool force;		/* unload: drop unread bypassed data */
	double drain_timeout;	/* unload: seconds to wait for readers */
};

/* Newer than the uapi headers this builds against (Debian 12: 6.1). */
#define TOE_LINK_TYPE_SOCKMAP 14	/* BPF_LINK_TYPE_SOCKMAP, kernel 6.10 */
#define TOE_LINK_TYPE_TCX 11		/* BPF_LINK_TYPE_TCX, kernel 6.6 */
#define TOE_TCX_INGRESS 46		/* BPF_TCX_INGRESS, kernel 6.6 */
/*
 * bpf_link_info of a tcx link: the union's tcx member starts with ifindex,
 * as its xdp member does; these headers only know the latter.
 */
#define tcx_ifindex(li) ((li)->xdp.ifindex)

/* ----------------------------------------------------------- rollback */

/*
 * Every change load makes is recorded here first; on failure they are
 * undone in reverse order, so a failed load leaves the system as it was.
 */
enum undo_kind {
	UNDO_UNPIN,		/* unlink path */
	UNDO_RMDIR,		/* rmdir path */
	UNDO_LINK,		/* detach link fd, unlink path */
	UNDO_LINK_UPDATE,	/* put prog fd back into link fd */
	UNDO_CHAIN,		/* reattach prog fd on ifindex, clear slot */
	UNDO_EGRESS,		/* delete or restore ifindex in devmap/ifaces */
	UNDO_PROG_DETACH,	/* bpf_prog_detach2 prog fd from map fd2 */
};

struct undo {
	enum undo_kind kind;
	char path[PATH_MAX];
	int fd;
	int fd2;
	__u32 ifindex;
	__u32 flags;
	bool had_old;		/* UNDO_EGRESS: entries to restore */
	struct bpf_devmap_val old_dev;
	struct toe_iface old_if;
};

static struct undo undo_log[5 * MAX_DEVS + TOE_MAP__N + 8];
static int n_undo;

static struct undo *undo_push(enum undo_kind kind, const char *path)
{
	struct undo *u = &undo_log[n_undo++];

	memset(u, 0, sizeof(*u));
	u->kind = kind;
	u->fd = u->fd2 = -1;
	if (path)
		snprintf(u->path, sizeof(u->path), "%s", path);
	return u;
}

/*
 * A pinned link of ours already exists: swap prog_fd into it in place,
 * recording the old program (old_prog_id) so that a rollback puts it back.
 * Returns 0 or -errno (what names the link is the caller's message).
 */
static int link_swap(int link_fd, __u32 old_prog_id, int prog_fd)
{
	struct undo *u = undo_push(UNDO_LINK_UPDATE, NULL);

	u->fd = link_fd;
	u->fd2 = bpf_prog_get_fd_by_id(old_prog_id);
	return bpf_link_update(link_fd, prog_fd, NULL) ? -errno : 0;
}

static void rollback(int next_fd)
{
	while (n_undo > 0) {
		struct undo *u = &undo_log[--n_undo];

		switch (u->kind) {
		case UNDO_UNPIN:
			unlink(u->path);
			break;
		case UNDO_RMDIR:
			rmdir(u->path);
			break;
		case UNDO_LINK:
			bpf_link_detach(u->fd);
			unlink(u->path);
			break;
		case UNDO_LINK_UPDATE:
			bpf_link_update(u->fd, u->fd2, NULL);
			break;
		case UNDO_CHAIN:
			/* our link is gone by now: put the original back */
			bpf_xdp_attach(u->ifindex, u->fd, u->flags, NULL);
			if (next_fd >= 0)
				bpf_map_delete_elem(next_fd, &u->ifindex);
			unlink(u->path);
			break;
		case UNDO_PROG_DETACH:
			bpf_prog_detach2(u->fd, u->fd2, BPF_SK_MSG_VERDICT);
			break;
		case UNDO_EGRESS:
			/* fd: toe_ifaces, fd2: toe_devmap (closed below) */
			if (u->had_old) {
				bpf_map_update_elem(u->fd, &u->ifindex, &u->old_if, BPF_ANY);
				bpf_map_update_elem(u->fd2, &u->ifindex, &u->old_dev, BPF_ANY);
			} else {
				bpf_map_delete_elem(u->fd, &u->ifindex);
				bpf_map_delete_elem(u->fd2, &u->ifindex);
			}
			break;
		}
		if (u->fd >= 0)
			close(u->fd);
		if (u->fd2 >= 0)
			close(u->fd2);
	}
}

static void undo_forget(void)
{
	while (n_undo > 0) {
		struct undo *u = &undo_log[--n_undo];

		if (u->fd >= 0)
			close(u->fd);
		if (u->fd2 >= 0)
			close(u->fd2);
	}
}

/* ------------------------------------------------------------- checks */

static int check_root(void)
{
	if (geteuid() != 0) {
		toe_err("must be run as root (loading eBPF needs CAP_BPF and CAP_NET_ADMIN)");
		return -EPERM;
	}
	return 0;
}

static int check_btf(void)
{
	const char *btf = getenv("TOE_SYSFS_BTF");

	if (!btf)
		btf = "/sys/kernel/btf/vmlinux";
	if (access(btf, R_OK)) {
		toe_err("kernel has no BTF (%s: %s): opentoe needs a kernel built with CONFIG_DEBUG_INFO_BTF",
			btf, strerror(errno));
		return -ENOENT;
	}
	return 0;
}

static const char *mode_name(__u32 attach_mode)
{
	switch (attach_mode) {
	case XDP_ATTACHED_DRV: return "native";
	case XDP_ATTACHED_SKB: return "skb";
	case XDP_ATTACHED_HW: return "hw";
	case XDP_ATTACHED_MULTI: return "multi";
	default: return "none";
	}
}

/* ----------------------------------------------------------------- load */

/* A per-interface pin name: the netns inode too, ifindexes are per namespace. */
static int pin_path(char *buf, const char *dir, const char *fmt, __u32 n)
{
	char name[96];

	snprintf(name, sizeof(name), fmt, toe_netns_ino(), n);
	return toe_join(buf, PATH_MAX, dir, name);
}

/* Parse "<prefix>n<NS>_if<N>..." pin names. */
static bool parse_if_pin(const char *name, const char *prefix,
			 unsigned long *ns, __u32 *ifindex)
{
	size_t l = strlen(prefix);

	return !strncmp(name, prefix, l) &&
	       sscanf(name + l, "n%lu_if%u", ns, ifindex) == 2;
}

/*
 * Enter the network namespace with inode ns (to put a chained program
 * back on its interface): one named in /run/netns or one a process is in.
 */
static int enter_netns(unsigned long ns)
{
	const char *dirs[] = { "/run/netns", "/proc" };
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	unsigned int i;
	int fd, ret = -ENOENT;
	DIR *d;

	if (ns == toe_netns_ino())
		return 0;
	for (i = 0; i < 2 && ret; i++) {
		d = opendir(dirs[i]);
		if (!d)
			continue;
		while (ret && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), i ? "%s/%s/ns/net" : "%s/%s",
				 dirs[i], de->d_name);
			if (stat(path, &st) || st.st_ino != ns)
				continue;
			fd = open(path, O_RDONLY);
			if (fd >= 0 && setns(fd, CLONE_NEWNET) == 0)
				ret = 0;
			if (fd >= 0)
				close(fd);
		}
		closedir(d);
	}
	return ret;
}

/* Pin a link just made; from here on rollback detaches and unpins it. */
static int pin_new_link(int link_fd, const char *path)
{
	struct undo *u = undo_push(UNDO_LINK, path);
	int err;

	u->fd = link_fd;
	if (bpf_obj_pin(link_fd, path)) {
		err = -errno;
		toe_err("cannot pin %s: %s", path, strerror(errno));
		u->path[0] = '\0';
		return err;
	}
	return 0;
}

static int attach_sockops(const struct opts *o, int prog_fd)
{
	char path[PATH_MAX];
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	struct stat cst;
	int cg_fd, link_fd, err;

	toe_join(path, sizeof(path), o->pin_dir, "link_sockops");
	if (stat(o->cgroup, &cst)) {
		toe_err("cgroup %s: %s", o->cgroup, strerror(errno));
		return -errno;
	}
	link_fd = bpf_obj_get(path);
	if (link_fd >= 0 && bpf_obj_get_info_by_fd(link_fd, &info, &len) == 0 &&
	    info.cgroup.cgroup_id == 0) {
		/* Detached by someone, or its cgroup is gone: a stale pin. */
		close(link_fd);
		unlink(path);
		link_fd = -1;
	}
	if (link_fd >= 0) {
		if (info.cgroup.cgroup_id == (__u64)cst.st_ino) {
			/* Same cgroup: swap the program in place. */
			err = link_swap(link_fd, info.prog_id, prog_fd);
			if (err)
				toe_err("cannot replace the sock_ops program: %s", strerror(-err));
			return err;
		}
		close(link_fd);
		toe_err("sock_ops is attached to another cgroup (id %llu): run 'toe-loader unload' first",
			(unsigned long long)info.cgroup.cgroup_id);
		return -EEXIST;
	}
	cg_fd = open(o->cgroup, O_RDONLY | O_DIRECTORY);
	if (cg_fd < 0) {
		toe_err("cannot open cgroup %s: %s", o->cgroup, strerror(errno));
		return -errno;
	}
	link_fd = bpf_link_create(prog_fd, cg_fd, BPF_CGROUP_SOCK_OPS, NULL);
	err = -errno;
	close(cg_fd);
	if (link_fd < 0) {
		toe_err("cannot attach sock_ops to cgroup %s: %s", o->cgroup, strerror(-err));
		return err;
	}
	return pin_new_link(link_fd, path);
}

/*
 * Map id of a sockmap link.  struct bpf_link_info's sockmap member is newer
 * than the uapi headers here; it is the first __u32 of the union, which
 * sits right after type, id and prog_id (offset 16: the union holds
 * 64-bit members).
 */
static __u32 sockmap_link_map_id(const struct bpf_link_info *li)
{
	__u32 id;

	memcpy(&id, (const char *)li + 16, sizeof(id));
	return id;
}

static __u32 map_id_of(int fd)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);

	return bpf_obj_get_info_by_fd(fd, &mi, &len) ? 0 : mi.id;
}

/*
 * The local bypass: toe_skmsg on the toe_bypass sockhash, through a
 * bpf_link (kernel 6.10+: BPF_LINK_TYPE_SOCKMAP) pinned as link_skmsg.  A
 * kernel without sockmap links gets the program attached to the map
 * (bpf_prog_attach); the map, which is pinned, then holds it, and unload
 * detaches it.  Attached before sock_ops, so that every socket sock_ops
 * puts into the map gets the program (a socket takes the map's programs
 * when it goes in).
 */
static int attach_skmsg(const struct opts *o, int prog_fd, int map_fd)
{
	char path[PATH_MAX];
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	int link_fd, err;
	struct undo *u;

	toe_join(path, sizeof(path), o->pin_dir, "link_skmsg");
	link_fd = bpf_obj_get(path);
	if (link_fd >= 0 && (bpf_obj_get_info_by_fd(link_fd, &info, &len) ||
			     info.type != TOE_LINK_TYPE_SOCKMAP ||
			     sockmap_link_map_id(&info) != map_id_of(map_fd))) {
		/* Detached by someone, or the link of a map that is gone. */
		close(link_fd);
		unlink(path);
		link_fd = -1;
	}
	if (link_fd >= 0) {
		/* Ours already: swap the program in place. */
		err = link_swap(link_fd, info.prog_id, prog_fd);
		if (err)
			toe_err("cannot replace the sk_msg program: %s", strerror(-err));
		return err;
	}
	link_fd = bpf_link_create(prog_fd, map_fd, BPF_SK_MSG_VERDICT, NULL);
	if (link_fd >= 0)
		return pin_new_link(link_fd, path);
	if (errno != EINVAL && errno != EOPNOTSUPP && errno != ENOTSUPP) {
		err = -errno;
		toe_err("cannot attach sk_msg to %s: %s", TOE_MAP(BYPASS), strerror(errno));
		return err;
	}
	/* No sockmap links in this kernel: the map holds the program. */
	if (bpf_prog_attach(prog_fd, map_fd, BPF_SK_MSG_VERDICT, 0)) {
		err = -errno;
		toe_err("cannot attach sk_msg to %s: %s", TOE_MAP(BYPASS), strerror(errno));
		return err;
	}
	u = undo_push(UNDO_PROG_DETACH, NULL);
	u->fd = dup(prog_fd);
	u->fd2 = dup(map_fd);
	return 0;
}

/*
 * An XDP program already on the interface (attached through netlink, as
 * ip, xdp-loader or libxdp in legacy mode do) is kept: it goes into
 * opentoe's chain slot for the interface and runs after opentoe on every
 * packet opentoe passes.  One attached through a bpf_link belongs to its
 * loader and is never displaced.
 */
static int adopt_existing(const struct opts *o, __u32 ifindex, const char *ifname,
			  int next_fd, struct bpf_xdp_query_opts *q)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, ao);
	char path[PATH_MAX];
	struct bpf_prog_info pi = {};
	__u32 len = sizeof(pi), mode_flags;
	__u32 id = q->prog_id;
	int fd, err;
	struct undo *u;

	if (q->attach_mode == XDP_ATTACHED_MULTI || q->attach_mode == XDP_ATTACHED_HW) {
		toe_err("%s: XDP programs in %s mode are attached; opentoe only chains one native or skb program",
			ifname, mode_name(q->attach_mode));
		return -EBUSY;
	}
	if (ifindex >= TOE_XDP_CHAIN_SLOTS) {
		toe_err("%s already has XDP program id %u and its ifindex %u is too large to chain (< %u)",
			ifname, id, ifindex, TOE_XDP_CHAIN_SLOTS);
		return -E2BIG;
	}
	if (bpf_map_lookup_elem(next_fd, &ifindex, &pi.id) == 0) {
		toe_err("%s already has XDP program id %u, and chain slot %u is taken by an interface of another network namespace",
			ifname, id, ifindex);
		return -EBUSY;
	}
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &pi, &len)) {
		toe_err("%s: cannot open its XDP program id %u: %s", ifname, id, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	mode_flags = q->attach_mode == XDP_ATTACHED_SKB ? XDP_FLAGS_SKB_MODE :
							  XDP_FLAGS_DRV_MODE;
	if (bpf_map_update_elem(next_fd, &ifindex, &fd, BPF_ANY)) {
		err = -errno;
		toe_err("%s: XDP program %s (id %u) cannot be chained after opentoe: %s",
			ifname, pi.name, id, strerror(errno));
		close(fd);
		return err;
	}
	pin_path(path, o->pin_dir,
		 mode_flags == XDP_FLAGS_SKB_MODE ? "chain_n%lu_if%u_skb" : "chain_n%lu_if%u_drv",
		 ifindex);
	u = undo_push(UNDO_CHAIN, path);
	u->fd = fd;
	u->ifindex = ifindex;
	u->flags = mode_flags;
	if (bpf_obj_pin(fd, path)) {
		err = -errno;
		toe_err("cannot pin %s: %s", path, strerror(errno));
		return err;
	}
	/* Detach it only if it is still the one we chained. */
	ao.old_prog_fd = fd;
	if (bpf_xdp_detach(ifindex, mode_flags | XDP_FLAGS_REPLACE, &ao)) {
		err = -errno;
		if (err == -EBUSY || err == -EINVAL)
			toe_err("%s: XDP program %s (id %u) is attached through a bpf_link owned by another loader; opentoe does not displace it",
				ifname, pi.name, id);
		else
			toe_err("%s: cannot take over XDP program %s (id %u): %s",
				ifname, pi.name, id, strerror(-err));
		/* Still attached: nothing to put back. */
		bpf_map_delete_elem(next_fd, &ifindex);
		unlink(path);
		n_undo--;
		close(fd);
		return err;
	}
	return 0;
}

/*
 * The link pinned at path from an earlier load, if it is still a link of
 * this type on this interface: the program is swapped in place (1, or a
 * negative error).  0: none (a stale pin is removed), make a new one.
 */
static int swap_if_link(const char *path, __u32 type, __u32 ifindex, int prog_fd,
			const char *ifname, const char *what)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	int link_fd, err;

	link_fd = bpf_obj_get(path);
	if (link_fd < 0)
		return 0;
	/* xdp.ifindex: also the tcx member's first field (tcx_ifindex) */
	if (bpf_obj_get_info_by_fd(link_fd, &info, &len) || info.type != type ||
	    info.xdp.ifindex != ifindex) {
		/* Detached by someone, or an interface that went away. */
		close(link_fd);
		unlink(path);
		return 0;
	}
	err = link_swap(link_fd, info.prog_id, prog_fd);
	if (err)
		toe_err("%s: cannot replace the %s program: %s", ifname, what, strerror(-err));
	return err ? err : 1;
}

static int attach_xdp(const struct opts *o, const char *ifname, int prog_fd,
		      int next_fd)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	LIBBPF_OPTS(bpf_link_create_opts, lo);
	char path[PATH_MAX];
	__u32 ifindex = if_nametoindex(ifname);
	int link_fd, err;

	pin_path(path, o->pin_dir, TOE_PIN_LINK_XDP, ifindex);
	err = swap_if_link(path, BPF_LINK_TYPE_XDP, ifindex, prog_fd, ifname, "XDP");
	if (err)
		return err < 0 ? err : 0;
	if (bpf_xdp_query(ifindex, 0, &q)) {
		err = -errno;
		toe_err("%s: cannot query XDP state: %s", ifname, strerror(errno));
		return err;
	}
	if (q.prog_id) {
		err = adopt_existing(o, ifindex, ifname, next_fd, &q);
		if (err)
			return err;
	}
	lo.flags = o->xdp_flags;
	link_fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &lo);
	if (link_fd < 0) {
		err = -errno;
		toe_err("%s: cannot attach XDP%s: %s", ifname,
			o->xdp_flags == XDP_FLAGS_DRV_MODE ? " in native mode" :
			o->xdp_flags == XDP_FLAGS_SKB_MODE ? " in skb mode" : "",
			strerror(errno));
		return err;
	}
	return pin_new_link(link_fd, path);
}

/*
 * --hook tc: toe_tc on the interface's tcx ingress.  tcx keeps a list of
 * programs, so anything else attached there (by tc or another loader)
 * stays and runs after opentoe's; nothing to chain.
 */
static int attach_tc(const struct opts *o, const char *ifname, int prog_fd)
{
	char path[PATH_MAX];
	__u32 ifindex = if_nametoindex(ifname);
	int link_fd, err;

	pin_path(path, o->pin_dir, TOE_PIN_LINK_TC, ifindex);
	err = swap_if_link(path, TOE_LINK_TYPE_TCX, ifindex, prog_fd, ifname, "tc");
	if (err)
		return err < 0 ? err : 0;
	link_fd = bpf_link_create(prog_fd, ifindex, TOE_TCX_INGRESS, NULL);
	if (link_fd < 0) {
		err = -errno;
		toe_err("%s: cannot attach to tc ingress (tcx): %s%s", ifname, strerror(errno),
			errno == EINVAL ? " (tcx needs kernel 6.6)" : "");
		return err;
	}
	return pin_new_link(link_fd, path);
}

/*
 * --hook tc under a policy already in force: a device on this interface
 * that steers to a CPU or forwards needs XDP (toed refuses the converse).
 */
static int check_steer(const struct opts *o, const char *ifname, __u32 ifindex)
{
	char path[PATH_MAX];
	struct toe_dev d;
	__u32 i;
	int fd;

	toe_join(path, sizeof(path), o->pin_dir, TOE_MAP(DEVS));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;	/* nothing loaded yet */
	for (i = 0; i < TOE_MAX_DEVS; i++) {
		if (bpf_map_lookup_elem(fd, &i, &d) || !(d.flags & TOE_DEVF_PRESENT) ||
		    d.ifindex != ifindex || d.steer == TOE_STEER_ACCOUNT)
			continue;
		close(fd);
		toe_err("%s: device '%.16s' of the policy in force steers %s there, which needs XDP; load with --hook xdp, or apply a policy with steer account first",
			ifname, d.name, d.steer == TOE_STEER_CPU ? "to a CPU" : "forward");
		return -EBUSY;
	}
	close(fd);
	return 0;
}

/*
 * An interface is XDP or tc, never both: the other hook's link, from an
 * earlier load, must go first (unload), or packets would be counted twice.
 */
static int check_other_hook(const struct opts *o, const char *ifname)
{
	char path[PATH_MAX];
	__u32 ifindex = if_nametoindex(ifname);

	pin_path(path, o->pin_dir, o->hook_tc ? TOE_PIN_LINK_XDP : TOE_PIN_LINK_TC,
		 ifindex);
	if (access(path, F_OK) == 0) {
		toe_err("%s: opentoe is attached there with %s (%s); run 'toe-loader unload' before loading with --hook %s",
			ifname, o->hook_tc ? "XDP" : "tc", path, o->hook_tc ? "tc" : "xdp");
		return -EBUSY;
	}
	return o->hook_tc ? check_steer(o, ifname, ifindex) : 0;
}

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

static int filter_load(struct opentoe *skel)
{
	int flows = bpf_map__fd(skel->maps.toe_flows);
	int filt = bpf_map__fd(skel->maps.toe_flow_filter);
	size_t sz = TOE_FILTER_SLOTS * sizeof(struct toe_filter);
	struct toe_flow_key *keys = calloc(FILTER_BATCH, sizeof(*keys));
	struct toe_flow *vals = calloc(FILTER_BATCH, sizeof(*vals));
	__u32 *cnt = calloc(TOE_FILTER_SLOTS, sizeof(*cnt));
	struct toe_filter *slots = MAP_FAILED;
	__u32 batch, n, i, zero = 0, nrec = 0;
	void *in = NULL;
	int inner, err = -1;

	if (!keys || !vals || !cnt) {
		toe_err("out of memory");
		goto out;
	}
	inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "toe_rcu_inner", 4, 4, 1, NULL);
	if (inner < 0 || bpf_map_update_elem(bpf_map__fd(skel->maps.toe_rcu_sync),
					     &zero, &inner, BPF_ANY)) {
		toe_err("cannot wait for an RCU grace period: %s", strerror(errno));
		if (inner >= 0)
			close(inner);
		goto out;
	}
	close(inner);
	for (;;) {
		int rc;

		n = FILTER_BATCH;
		rc = bpf_map_lookup_batch(flows, in, &batch, keys, vals, &n, NULL);
		if (rc && errno != ENOENT) {
			toe_err("cannot read %s: %s", TOE_MAP(FLOWS), strerror(errno));
			goto out;
		}
		for (i = 0; i < n; i++) {
			if (vals[i].decision != TOE_ACT_OFFLOAD)
				continue;
			cnt[toe_filter_slot(keys[i].laddr, keys[i].raddr,
					    keys[i].lport, keys[i].rport)]++;
			nrec++;
		}
		if (rc)
			break;	/* ENOENT: that was the last of them */
		in = &batch;
	}
	slots = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, filt, 0);
	if (slots == MAP_FAILED) {
		toe_err("cannot map %s: %s", TOE_MAP(FLOW_FILTER), strerror(errno));
		goto out;
	}
	for (i = 0; i < TOE_FILTER_SLOTS; i++)
		__atomic_store_n(&slots[i].loaded, cnt[i], __ATOMIC_RELAXED);
	munmap(slots, sz);
	if (getenv("TOE_DEBUG"))
		fprintf(stderr, "toe-loader: %u offloaded records in %s counted in %s\n",
			nrec, TOE_MAP(FLOWS), TOE_MAP(FLOW_FILTER));
	err = 0;
out:
	free(keys);
	free(vals);
	free(cnt);
	return err;
}

/*
 * The interface's MAC (SIOCGIFHWADDR: /sys/class/net is the namespace of
 * whoever mounted /sys, not necessarily ours).
 */
static int read_mac(const char *ifname, __u8 *mac)
{
	struct ifreq ifr = {};
	int fd, err = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		err = -errno;
	else if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER)
		err = -EPFNOSUPPORT;	/* the forward path rewrites Ethernet */
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return err;
}

/*
 * Make an interface XDP is attached to a redirect target of the forward
 * path: toe_devmap[ifindex] (the device) and toe_ifaces[ifindex] (the MAC
 * frames leave it with, its network namespace).  The two maps are keyed by
 * ifindex, which is per namespace, so an entry of a live interface of
 * another namespace is never overwritten (as with chain slots).
 */
static int add_egress(const char *ifname, __u32 ifindex, int dev_fd, int if_fd)
{
	struct bpf_devmap_val dv = { .ifindex = ifindex }, odv;
	struct toe_iface v = { .netns = toe_netns_ino() }, old;
	bool had_if, had_dev;
	struct undo *u;
	int err;

	err = read_mac(ifname, v.mac);
	if (err == -EPFNOSUPPORT)
		return 0;	/* not Ethernet: XDP there only accounts and steers */
	if (err) {
		toe_err("%s: cannot read its MAC address: %s", ifname, strerror(-err));
		return err;
	}
	had_if = bpf_map_lookup_elem(if_fd, &ifindex, &old) == 0;
	had_dev = bpf_map_lookup_elem(dev_fd, &ifindex, &odv) == 0;
	if (had_if && had_dev && old.netns != v.netns) {
		toe_err("%s: ifindex %u is already a forwarding target for an interface of another network namespace (%llu)",
			ifname, ifindex, (unsigned long long)old.netns);
		return -EBUSY;
	}
	u = undo_push(UNDO_EGRESS, NULL);
	u->ifindex = ifindex;
	u->fd = dup(if_fd);
	u->fd2 = dup(dev_fd);
	u->had_old = had_if && had_dev;
	u->old_if = old;
	u->old_dev = odv;
	/* The device first: the XDP program only redirects to an iface it knows. */
	if (bpf_map_update_elem(dev_fd, &ifindex, &dv, BPF_ANY) ||
	    bpf_map_update_elem(if_fd, &ifindex, &v, BPF_ANY)) {
		err = -errno;
		toe_err("%s: cannot make it a redirect target (toe_devmap/toe_ifaces): %s",
			ifname, strerror(errno));
		return err;
	}
	return 0;
}

/*
 * A pinned map is reused only if it has this object's layout: pins an
 * older opentoe made (a record that grew a field) are refused by name,
 * before anything is attached, rather than by libbpf's "invalid argument".
 */
static int check_pin_layout(const struct bpf_map *map, const char *path)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	int fd, err = 0;

	fd = bpf_obj_get(path);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &mi, &len)) {
		toe_err("cannot read pinned map %s: %s", path, strerror(errno));
		err = -1;
	} else if (mi.type != bpf_map__type(map) ||
		   mi.key_size != bpf_map__key_size(map) ||
		   mi.value_size != bpf_map__value_size(map)) {
		toe_err("pinned map %s is not this opentoe's (type %u, key %u, value %u bytes; expected %u, %u, %u): pins of an older opentoe? 'toe-loader unload' first",
			path, mi.type, mi.key_size, mi.value_size, bpf_map__type(map),
			bpf_map__key_size(map), bpf_map__value_size(map));
		err = -1;
	}
	if (fd >= 0)
		close(fd);
	return err;
}

static int cmd_load(struct opts *o)
{
	bool existed[TOE_MAP__N], flows_existed = false;
	char path[PATH_MAX];
	struct opentoe *skel = NULL;
	struct bpf_map *map;
	struct stat st;
	unsigned int i;
	int err, next_fd;

	if (check_root() || check_btf())
		return 1;
	for (i = 0; i < (unsigned int)o->ndevs; i++) {
		if (!if_nametoindex(o->devs[i])) {
			toe_err("unknown interface '%s'", o->devs[i]);
			return 1;
		}
		if (check_other_hook(o, o->devs[i]))
			return 1;
	}
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
			toe_err("cannot create pin folder %s: %s", o->pin_dir, strerror(errno));
			return 1;
		}
		undo_push(UNDO_RMDIR, o->pin_dir);
	} else if (!S_ISDIR(st.st_mode) || !toe_is_bpffs(o->pin_dir)) {
		toe_err("pin folder %s is not a folder on a bpf filesystem", o->pin_dir);
		return 1;
	}

	if (!getenv("TOE_DEBUG"))
		libbpf_set_print(NULL);
	skel = opentoe__open();
	if (!skel) {
		toe_err("cannot open the opentoe eBPF object: %s", strerror(errno));
		goto fail;
	}
	i = 0;
	bpf_object__for_each_map(map, skel->obj) {
		const char *name = bpf_map__name(map);
		unsigned int k;

		for (k = 0; k < TOE_MAP__N; k++)
			if (!strcmp(name, toe_map_names[k]))
				break;
		if (k == TOE_MAP__N)
			continue;	/* internal (.rodata): not pinned */
		toe_join(path, sizeof(path), o->pin_dir, name);
		existed[k] = access(path, F_OK) == 0;
		if (existed[k] && check_pin_layout(map, path))
			goto fail;
		if (!existed[k])
			undo_push(UNDO_UNPIN, path);
		else if (!strcmp(name, TOE_MAP(FLOWS)))
			flows_existed = true;
		if (existed[k] && bpf_map__type(map) == BPF_MAP_TYPE_DEVMAP_HASH) {
			/*
			 * The kernel adds BPF_F_RDONLY_PROG to a devmap's flags,
			 * which this libbpf then sees as a mismatch with the
			 * object's definition: reuse the pin by hand.
			 */
			int fd = bpf_obj_get(path);

			if (fd < 0 || bpf_map__reuse_fd(map, fd)) {
				toe_err("cannot reuse %s: %s", path, strerror(errno));
				if (fd >= 0)
					close(fd);
				goto fail;
			}
			close(fd);	/* reuse_fd keeps its own copy */
			continue;
		}
		bpf_map__set_pin_path(map, path);
	}
	if (o->flows) {
		bpf_map__set_max_entries(skel->maps.toe_bypass, o->flows);
		bpf_map__set_max_entries(skel->maps.toe_byp_flows, o->flows);
		bpf_map__set_max_entries(skel->maps.toe_flows, o->flows);
		bpf_map__set_max_entries(skel->maps.toe_fwd, o->flows);
	}
	/* One cpumap slot per possible CPU (entries: the policy apply). */
	err = libbpf_num_possible_cpus();
	if (err > 0)
		bpf_map__set_max_entries(skel->maps.toe_cpumap, err);
	err = opentoe__load(skel);
	if (err) {
		toe_err("cannot load the opentoe eBPF object: %s%s", strerror(-err),
			err == -EINVAL ? " (a pinned map from an older or differently sized load? run 'toe-loader unload' first)" : "");
		goto fail;
	}
	next_fd = bpf_map__fd(skel->maps.toe_xdp_next);

	if (attach_skmsg(o, bpf_program__fd(skel->progs.toe_skmsg),
			 bpf_map__fd(skel->maps.toe_bypass)) ||
	    attach_sockops(o, bpf_program__fd(skel->progs.toe_sockops)) ||
	    (flows_existed && filter_load(skel)))
		goto fail;
	for (i = 0; i < (unsigned int)o->ndevs && o->hook_tc; i++) {
		if (attach_tc(o, o->devs[i], bpf_program__fd(skel->progs.toe_tc)))
			goto fail;
	}
	for (i = 0; i < (unsigned int)o->ndevs && !o->hook_tc; i++) {
		if (add_egress(o->devs[i], if_nametoindex(o->devs[i]),
			       bpf_map__fd(skel->maps.toe_devmap),
			       bpf_map__fd(skel->maps.toe_ifaces)) ||
		    attach_xdp(o, o->devs[i], bpf_program__fd(skel->progs.toe_xdp), next_fd))
			goto fail;
	}

	/* Bypass on (an unload that stopped short may have left it draining). */
	i = 0;
	bpf_map_update_elem(bpf_map__fd(skel->maps.toe_byp_conf), &i,
			    &(struct toe_byp_conf){ .draining = 0 }, BPF_ANY);
	undo_forget();
	opentoe__destroy(skel);	/* everything stays: it is pinned */
	printf("opentoe loaded: sock_ops on %s", o->cgroup);
	for (i = 0; i < (unsigned int)o->ndevs; i++)
		printf("%s%s", i ? ", " : o->hook_tc ? "; tc ingress on " : "; XDP on ",
		       o->devs[i]);
	printf("; pinned in %s\n", o->pin_dir);
	return 0;

fail:
	rollback(skel ? bpf_map__fd(skel->maps.toe_xdp_next) : -1);
	opentoe__destroy(skel);
	return 1;
}

/* --------------------------------------------------------------- status */

static long count_entries(int fd, const struct bpf_map_info *mi)
{
	char key[256], next[256];
	void *prev = NULL;
	long n = 0;

	switch (mi->type) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_LPM_TRIE:
	case BPF_MAP_TYPE_DEVMAP_HASH:
	case BPF_MAP_TYPE_SOCKHASH:
		if (mi->key_size > sizeof(key))
			return -1;
		while (bpf_map_get_next_key(fd, prev, next) == 0) {
			n++;
			memcpy(key, next, mi->key_size);
			prev = key;
		}
		return n;
	case BPF_MAP_TYPE_PROG_ARRAY: {
		__u32 i, id;

		/* user space reads a program array slot as a program id */
		for (i = 0; i < mi->max_entries; i++)
			if (bpf_map_lookup_elem(fd, &i, &id) == 0)
				n++;
		return n;
	}
	default:
		return -1;	/* arrays are always full; others not countable */
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

static int read_prog_row(int fd, bool is_link, const char *pin, struct prog_row *r)
{
	struct bpf_link_info li = {};
	struct bpf_prog_info pi = {};
	__u32 len = sizeof(li), plen = sizeof(pi);
	int pfd = fd;
	char ifname[IF_NAMESIZE];

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
	if (is_link && li.type == BPF_LINK_TYPE_CGROUP) {
		if (toe_cgroup_path(li.cgroup.cgroup_id, r->attach, sizeof(r->attach)))
			snprintf(r->attach, sizeof(r->attach), "cgroup id %llu",
				 (unsigned long long)li.cgroup.cgroup_id);
	} else if (is_link && li.type == TOE_LINK_TYPE_SOCKMAP) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi);
		int mfd = bpf_map_get_fd_by_id(sockmap_link_map_id(&li));

		if (mfd >= 0 && !bpf_obj_get_info_by_fd(mfd, &mi, &mlen))
			snprintf(r->attach, sizeof(r->attach), "map %s", mi.name);
		else
			snprintf(r->attach, sizeof(r->attach), "(map gone)");
		if (mfd >= 0)
			close(mfd);
	} else if (is_link && li.type == TOE_LINK_TYPE_TCX) {
		if (tcx_ifindex(&li) && if_indextoname(tcx_ifindex(&li), ifname))
			snprintf(r->attach, sizeof(r->attach), "%s", ifname);
		else
			snprintf(r->attach, sizeof(r->attach), "(interface gone)");
		snprintf(r->mode, sizeof(r->mode), "tcx");
	} else if (is_link && li.type == BPF_LINK_TYPE_XDP) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);

		if (li.xdp.ifindex && if_indextoname(li.xdp.ifindex, ifname)) {
			snprintf(r->attach, sizeof(r->attach), "%s", ifname);
			if (!bpf_xdp_query(li.xdp.ifindex, 0, &q))
				snprintf(r->mode, sizeof(r->mode), "%s",
					 q.skb_prog_id == pi.id ? "skb" :
					 q.drv_prog_id == pi.id ? "native" :
					 q.hw_prog_id == pi.id ? "hw" : "?");
		} else {
			snprintf(r->attach, sizeof(r->attach), "(interface gone)");
		}
	}
	return 0;
}

static int cmd_status(const struct opts *o)
{
	struct prog_row rows[2 * MAX_DEVS + 2];
	int nrows = 0, i;
	char path[PATH_MAX];
	struct toe_json j;
	struct dirent *de;
	DIR *d;
	unsigned int k;

	if (check_root())
		return 1;
	d = opendir(o->pin_dir);
	if (!d) {
		if (o->json) {
			tj_start(&j, stdout);
			tj_obj(&j);
			tj_key(&j, "loaded"); tj_bool(&j, false);
			tj_kstr(&j, "pin_dir", o->pin_dir);
			tj_obj_end(&j);
			tj_end(&j);
		} else {
			printf("opentoe is not loaded (no pin folder %s)\n", o->pin_dir);
		}
		return 0;
	}
	while ((de = readdir(d)) && nrows < (int)(sizeof(rows) / sizeof(rows[0]))) {
		bool link = !strncmp(de->d_name, "link_", 5);
		bool chain = !strncmp(de->d_name, "chain_", 6);
		unsigned long ns;
		__u32 ifindex;
		char ifname[IF_NAMESIZE];
		int fd;

		if (!link && !chain)
			continue;
		toe_join(path, sizeof(path), o->pin_dir, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		if (!read_prog_row(fd, link, de->d_name, &rows[nrows])) {
			if (chain) {
				rows[nrows].chained = true;
				parse_if_pin(de->d_name, "chain_", &ns, &ifindex);
				if (ns == toe_netns_ino() && if_indextoname(ifindex, ifname))
					snprintf(rows[nrows].attach, sizeof(rows[nrows].attach),
						 "%s", ifname);
				else
					snprintf(rows[nrows].attach, sizeof(rows[nrows].attach),
						 "ifindex %u (netns %lu)", ifindex, ns);
				snprintf(rows[nrows].mode, sizeof(rows[nrows].mode), "%s",
					 strstr(de->d_name, "_skb") ? "skb" : "native");
			}
			nrows++;
		}
		close(fd);
	}
	closedir(d);

	if (o->json) {
		tj_start(&j, stdout);
		tj_obj(&j);
		tj_key(&j, "loaded"); tj_bool(&j, true);
		tj_kstr(&j, "pin_dir", o->pin_dir);
		tj_key(&j, "programs");
		tj_arr(&j);
		for (i = 0; i < nrows; i++) {
			tj_obj(&j);
			tj_ku64(&j, "id", rows[i].id);
			tj_kstr(&j, "type", rows[i].type);
			tj_kstr(&j, "name", rows[i].name);
			tj_kstr(&j, "attach", rows[i].attach);
			tj_kstr(&j, "xdp_mode", rows[i].mode);
			tj_kstr(&j, "pin", rows[i].pin);
			tj_key(&j, "chained"); tj_bool(&j, rows[i].chained);
			tj_obj_end(&j);
		}
		tj_arr_end(&j);
		tj_key(&j, "maps");
		tj_arr(&j);
	} else {
		printf("pin folder: %s\n\n", o->pin_dir);
		printf("%-6s %-10s %-16s %-8s %-24s %s\n", "ID", "TYPE", "NAME", "MODE",
		       "ATTACHED TO", "PIN");
		for (i = 0; i < nrows; i++)
			printf("%-6u %-10s %-16s %-8s %-24s %s%s\n", rows[i].id, rows[i].type,
			       rows[i].name, rows[i].mode, rows[i].attach, rows[i].pin,
			       rows[i].chained ? " (chained after opentoe)" : "");
		printf("\n%-6s %-16s %-20s %12s %12s\n", "ID", "MAP", "TYPE", "MAX ENTRIES",
		       "IN USE");
	}
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
		if (o->json) {
			tj_obj(&j);
			tj_ku64(&j, "id", mi.id);
			tj_kstr(&j, "name", mi.name);
			tj_kstr(&j, "type", map_type_name(mi.type));
			tj_ku64(&j, "max_entries", mi.max_entries);
			tj_key(&j, "entries");
			if (n >= 0)
				tj_u64(&j, n);
			else
				tj_null(&j);
			tj_obj_end(&j);
		} else {
			char in_use[24];

			if (n >= 0)
				snprintf(in_use, sizeof(in_use), "%ld", n);
			else
				snprintf(in_use, sizeof(in_use), "-");
			printf("%-6u %-16s %-20s %12u %12s\n", mi.id, mi.name,
			       map_type_name(mi.type), mi.max_entries, in_use);
		}
	}
	if (o->json) {
		tj_arr_end(&j);
		tj_obj_end(&j);
		tj_end(&j);
	}
	return 0;
}

/* --------------------------------------------------------------- unload */

static bool is_ours(const char *name)
{
	unsigned int k;

	if (!strncmp(name, "link_", 5) || !strncmp(name, "chain_", 6))
		return true;
	for (k = 0; k < TOE_MAP__N; k++)
		if (!strcmp(name, toe_map_names[k]))
			return true;
	for (k = 0; k < sizeof(retired_maps) / sizeof(retired_maps[0]); k++)
		if (!strcmp(name, retired_maps[k]))
			return true;
	return false;
}

/* Delete every entry of a pinned hash-like map (devmap, ifaces). */
static void clear_pinned(const char *dir, const char *name)
{
	char path[PATH_MAX];
	__u32 key, next;
	int fd;

	toe_join(path, sizeof(path), dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return;
	while (bpf_map_get_next_key(fd, NULL, &next) == 0) {
		key = next;
		if (bpf_map_delete_elem(fd, &key))
			break;
	}
	close(fd);
}

/*
 * Unload with bypassed connections open.  Taking a socket out of
 * toe_bypass (which freeing the map does too) frees its psock, and with it
 * whatever was redirected to the socket and not read yet.  So first every
 * sender is switched to TCP (toe_byp_conf.draining: the next send of each
 * socket goes over TCP, and so does every later one); then the readers are
 * given up to --drain-timeout seconds to read what was queued before, which
 * toe_byp_probe tells socket by socket; only then are the sockets taken out.
 * After that the connections are plain TCP connections: what is sent from
 * then on goes over TCP, in order after what was redirected.  If a reader
 * does not read in time, unload stops there (the datapath stays loaded,
 * nothing is redirected any more) unless --force, which drops that data.
 */
static int bypass_drain(const struct opts *o)
{
	char path[PATH_MAX];
	struct toe_byp_conf conf = { .draining = 1 };
	struct toe_bypass_key key, next;
	struct opentoe *skel = NULL;
	struct bpf_program *prog;
	struct bpf_map *map;
	struct timespec t0, t;
	long queued = 0, bytes = 0, n = 0;
	int map_fd, conf_fd, probe_fd, err = 0;
	__u32 zero = 0;
	bool first = true;

	toe_join(path, sizeof(path), o->pin_dir, TOE_MAP(BYPASS));
	map_fd = bpf_obj_get(path);
	if (map_fd < 0)
		return 0;	/* a datapath from before the bypass */
	toe_join(path, sizeof(path), o->pin_dir, TOE_MAP(BYP_CONF));
	conf_fd = bpf_obj_get(path);
	if (conf_fd >= 0) {
		bpf_map_update_elem(conf_fd, &zero, &conf, BPF_ANY);
		close(conf_fd);
	}
	if (bpf_map_get_next_key(map_fd, NULL, &next)) {
		close(map_fd);
		return 0;	/* no bypassed socket */
	}

	skel = opentoe__open();
	if (!skel)
		goto noprobe;
	bpf_object__for_each_map(map, skel->obj) {
		if (map == skel->maps.toe_bypass)
			bpf_map__reuse_fd(map, map_fd);
		else
			bpf_map__set_autocreate(map, false);
	}
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == skel->progs.toe_byp_probe);
	if (opentoe__load(skel))
		goto noprobe;
	probe_fd = bpf_program__fd(skel->progs.toe_byp_probe);

	/* Sends that chose the redirect before the switch finish first. */
	usleep(50 * 1000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		void *prev = NULL;

		queued = bytes = n = 0;
		while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
			struct toe_byp_probe pin = { .key = next }, pout;
			LIBBPF_OPTS(bpf_test_run_opts, ro, .data_in = &pin,
				    .data_size_in = sizeof(pin), .data_out = &pout,
				    .data_size_out = sizeof(pout), .repeat = 1);

			key = next;
			prev = &key;
			n++;
			if (bpf_prog_test_run_opts(probe_fd, &ro) || !pout.found)
				continue;
			if (pout.queued) {
				queued++;
				bytes += pout.bytes;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (!queued || (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >=
				       o->drain_timeout)
			break;
		if (first)
			printf("waiting for the readers of %ld bypassed socket%s to read what was redirected to them\n",
			       queued, queued == 1 ? "" : "s");
		first = false;
		usleep(20 * 1000);
	}
	opentoe__destroy(skel);
	skel = NULL;
	if (queued && !o->force) {
		toe_err("%ld of %ld bypassed sockets still hold data redirected to them and not read (%ld bytes) after %.1f s; bypass is off, new data goes over TCP; run unload again once they have read it, or unload --force to drop it",
			queued, n, bytes, o->drain_timeout);
		close(map_fd);
		return -EBUSY;
	}
	if (queued)
		toe_err("--force: dropping %ld bytes redirected to %ld sockets and not read", bytes, queued);
	goto out;

noprobe:
	/* Cannot ask the kernel: give the readers the timeout, then go on. */
	toe_err("cannot load the bypass probe; waiting %.1f s for readers instead", o->drain_timeout);
	opentoe__destroy(skel);
	usleep((useconds_t)(o->drain_timeout * 1e6));
out:
	/* Take the sockets out: from here on they are plain TCP sockets. */
	while (bpf_map_get_next_key(map_fd, NULL, &next) == 0) {
		key = next;
		if (bpf_map_delete_elem(map_fd, &key)) {
			err = -errno;
			toe_err("cannot take a socket out of %s: %s", TOE_MAP(BYPASS), strerror(errno));
			break;
		}
	}
	close(map_fd);
	return err;
}

static int cmd_unload(const struct opts *o)
{
	char path[PATH_MAX];
	struct dirent *de;
	int pass, fd, home, bad = 0, left = 0;
	DIR *d;

	if (check_root())
		return 1;
	d = opendir(o->pin_dir);
	if (!d) {
		toe_err("opentoe is not loaded (no pin folder %s)", o->pin_dir);
		return 1;
	}
	if (bypass_drain(o)) {
		closedir(d);
		return 1;
	}
	home = open("/proc/self/ns/net", O_RDONLY);
	/* Pass 0: detach links.  1: put chained programs back.  2: unpin maps. */
	for (pass = 0; pass < 3; pass++) {
		if (pass == 1) {
			/* XDP detached: release the redirect targets' devices now. */
			clear_pinned(o->pin_dir, TOE_MAP(IFACES));
			clear_pinned(o->pin_dir, TOE_MAP(DEVMAP));
		}
		rewinddir(d);
		while ((de = readdir(d))) {
			const char *n = de->d_name;

			if (n[0] == '.')
				continue;
			if (!is_ours(n)) {
				if (pass == 2) {
					toe_err("leaving %s/%s: not opentoe's", o->pin_dir, n);
					left++;
				}
				continue;
			}
			if ((pass == 0) != !strncmp(n, "link_", 5) ||
			    (pass == 1) != !strncmp(n, "chain_", 6))
				continue;
			toe_join(path, sizeof(path), o->pin_dir, n);
			if (pass == 0) {
				fd = bpf_obj_get(path);
				if (fd >= 0) {
					/* ENOLINK: its interface or cgroup is gone already */
					if (bpf_link_detach(fd) && errno != ENOLINK) {
						toe_err("cannot detach %s: %s", path, strerror(errno));
						bad++;
					}
					close(fd);
				}
			} else if (pass == 1) {
				unsigned long ns = 0;
				__u32 ifindex = 0;
				__u32 flags = strstr(n, "_skb") ? XDP_FLAGS_SKB_MODE :
								  XDP_FLAGS_DRV_MODE;

				fd = bpf_obj_get(path);
				parse_if_pin(n, "chain_", &ns, &ifindex);
				if (fd >= 0 && enter_netns(ns) == 0 &&
				    bpf_xdp_attach(ifindex, fd, flags | XDP_FLAGS_UPDATE_IF_NOEXIST,
						   NULL) && errno != ENODEV)
					toe_err("cannot put chained XDP program back on ifindex %u: %s",
						ifindex, strerror(errno));
				if (fd >= 0)
					close(fd);
				setns(home, CLONE_NEWNET);
			}
			if (unlink(path)) {
				toe_err("cannot unpin %s: %s", path, strerror(errno));
				bad++;
			}
		}
	}
	closedir(d);
	if (home >= 0)
		close(home);
	if (!left && rmdir(o->pin_dir)) {
		toe_err("cannot remove %s: %s", o->pin_dir, strerror(errno));
		bad++;
	}
	if (bad)
		return 1;
	printf("opentoe unloaded from %s\n", o->pin_dir);
	return 0;
}

/* ----------------------------------------------------------------- main */

static void usage(FILE *f)
{
	fprintf(f,
"Usage: toe-loader load [--dev IFACE]... [--hook xdp|tc] [--xdp-mode native|skb]\n"
"                       [--cgroup PATH] [--pin-dir DIR] [--flows N]\n"
"       toe-loader status [-j] [--pin-dir DIR]\n"
"       toe-loader unload [--pin-dir DIR] [--drain-timeout S] [--force]\n"
"\n"
"Load the opentoe datapath, attach it, pin it, inspect it, remove it.\n"
"\n"
"  load     load the eBPF object, pin every map and link under the pin folder,\n"
"           attach sock_ops to the cgroup and XDP to each --dev.  On a loaded\n"
"           system the programs are replaced in place; maps keep their contents.\n"
"           An XDP program already on an interface is chained after opentoe's\n"
"           and put back by unload.  Any failure undoes everything it did.\n"
"  status   programs (id, type, attach point, XDP mode) and maps (type, size,\n"
"           entries in use).  -j: JSON.\n"
"  unload   detach and unpin everything opentoe attached and pinned.  Bypassed\n"
"           connections first go over TCP; their readers get up to\n"
"           --drain-timeout seconds to read what was redirected to them.\n"
"\n"
"Options:\n"
"  -d, --dev IFACE        attach XDP to IFACE (repeatable)\n"
"  -H, --hook HOOK        xdp (default): account, steer and forward in XDP;\n"
"                         tc: account only, on tc ingress (tcx link), after GRO:\n"
"                         no cost to host flows on veths, whose peer loses TSO\n"
"                         under native XDP; no 'steer cpu' or 'forward' there\n"
"  -m, --xdp-mode MODE    native or skb (default: native where the driver has it)\n"
"  -c, --cgroup PATH      cgroup v2 folder for sock_ops (default: cgroup v2 root\n"
"                         from /proc/mounts)\n"
"  -p, --pin-dir DIR      bpffs folder (default " TOE_PIN_DIR_DEFAULT ")\n"
"  -f, --flows N          size of toe_flows and toe_fwd\n"
"                         (default %u, toe_fwd %u)\n"
"  -j, --json             JSON output (status)\n"
"  -t, --drain-timeout S  unload: wait up to S seconds (default 10) for readers\n"
"                         of bypassed connections\n"
"      --force            unload even if bypassed data is still unread (dropped)\n"
"  -h, --help             this text\n", TOE_FLOWS_DEFAULT, TOE_FWD_DEFAULT);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "xdp-mode", required_argument, NULL, 'm' },
		{ "hook", required_argument, NULL, 'H' },
		{ "cgroup", required_argument, NULL, 'c' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "flows", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "drain-timeout", required_argument, NULL, 't' },
		{ "force", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct opts o = { .pin_dir = TOE_PIN_DIR_DEFAULT, .drain_timeout = 10 };
	const char *cmd;
	char *end;
	int c;

	toe_prog = "toe-loader";
	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	optind = 2;
	while ((c = getopt_long(argc, argv, "d:m:H:c:p:f:jt:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (o.ndevs == MAX_DEVS) {
				toe_err("too many --dev (at most %d)", MAX_DEVS);
				return 1;
			}
			if (strlen(optarg) >= IF_NAMESIZE) {
				toe_err("unknown interface '%s' (name too long)", optarg);
				return 1;
			}
			o.devs[o.ndevs++] = optarg;
			break;
		case 'm':
			if (!strcmp(optarg, "native") || !strcmp(optarg, "drv")) {
				o.xdp_flags = XDP_FLAGS_DRV_MODE;
			} else if (!strcmp(optarg, "skb") || !strcmp(optarg, "generic")) {
				o.xdp_flags = XDP_FLAGS_SKB_MODE;
			} else {
				toe_err("bad --xdp-mode '%s': expected native or skb", optarg);
				return 1;
			}
			break;
		case 'H':
			if (!strcmp(optarg, "xdp")) {
				o.hook_tc = false;
			} else if (!strcmp(optarg, "tc") || !strcmp(optarg, "tcx")) {
				o.hook_tc = true;
			} else {
				toe_err("bad --hook '%s': expected xdp or tc", optarg);
				return 1;
			}
			break;
		case 'c':
			o.cgroup = optarg;
			break;
		case 'p':
			o.pin_dir = optarg;
			break;
		case 'f':
			errno = 0;
			o.flows = strtoul(optarg, &end, 0);
			if (errno || *end || o.flows < 1 || o.flows > (1U << 26)) {
				toe_err("bad --flows '%s': expected 1 to %u", optarg, 1U << 26);
				return 1;
			}
			break;
		case 'j':
			o.json = true;
			break;
		case 't':
			errno = 0;
			o.drain_timeout = strtod(optarg, &end);
			if (errno || *end || o.drain_timeout < 0 || o.drain_timeout > 3600) {
				toe_err("bad --drain-timeout '%s': expected 0 to 3600 seconds", optarg);
				return 1;
			}
			break;
		case 'F':
			o.force = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind < argc) {
		toe_err("unexpected argument '%s'", argv[optind]);
		return 1;
	}
	if (o.hook_tc && o.xdp_flags) {
		toe_err("--xdp-mode does not apply to --hook tc");
		return 1;
	}
	if (!strcmp(cmd, "load"))
		return cmd_load(&o);
	if (!strcmp(cmd, "status"))
		return cmd_status(&o);
	if (!strcmp(cmd, "unload"))
		return cmd_unload(&o);
	toe_err("unknown command '%s' (load, status, unload; --help)", cmd);
	return 1;
}
