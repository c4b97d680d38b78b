// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader: the attach steps of a load.  sock_ops on the cgroup, sk_msg
 * on the toe_bypass sockhash, XDP or tcx on each interface (adopting an
 * XDP program already there into the chain), the forward path's egress
 * entries.  A link pinned by an earlier load gets the new program in place;
 * every change goes into the rollback log (undo.c) first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <net/if_arp.h>
#include <unistd.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "opentoe_common.h"
#include "opentoe_policy.h"
#include "opentoe_forward.h"
#include "opentoe_xdp.h"
#include "loader.h"
#include "undo.h"
#include "pins.h"
#include "attach.h"
#include "tcclassic.h"
#include "xdpdisp.h"
#include "uapi_compat.h"
#include "lib/err.h"
#include "lib/path.h"
#include "lib/pinned.h"
#include "lib/netns.h"

/*
 * A pinned link of ours already exists: swap prog_fd into it in place,
 * recording the old program (old_prog_id) so that a rollback puts it back.
 * ifname (or NULL) and what name it in the message.  0 or -errno.
 */
static int link_swap(int link_fd, __u32 old_prog_id, int prog_fd,
		     const char *ifname, const char *what)
{
	struct undo *u = undo_push(UNDO_LINK_UPDATE, NULL);
	int err;

	if (!u) {
		close(link_fd);
		return -ENOSPC;
	}
	u->fd = link_fd;
	u->fd2 = bpf_prog_get_fd_by_id(old_prog_id);
	if (!bpf_link_update(link_fd, prog_fd, NULL))
		return 0;
	err = -errno;
	if (ifname)
		toe_err("%s: cannot replace the %s program: %s", ifname, what,
			strerror(-err));
	else
		toe_err("cannot replace the %s program: %s", what,
			strerror(-err));
	return err;
}

/* Pin a link just made; from here on rollback detaches and unpins it. */
int pin_new_link(int link_fd, const char *path)
{
	struct undo *u = undo_push(UNDO_LINK, path);
	int err;

	if (!u) {
		close(link_fd); /* not pinned: this releases it */
		return -ENOSPC;
	}
	u->fd = link_fd;
	u->id = obj_id_of(link_fd);
	if (bpf_obj_pin(link_fd, path)) {
		err = -errno;
		toe_err("cannot pin %s: %s", path, strerror(errno));
		u->path[0] = '\0';
		return err;
	}
	return 0;
}

int attach_sockops(const struct opts *o, int prog_fd)
{
	char path[PATH_MAX];
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	struct stat cst;
	int cg_fd, link_fd, err;

	toe_join(path, sizeof(path), o->pin_dir, TOE_PIN_LINK_SOCKOPS);
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
		/* Same cgroup: swap the program in place. */
		if (info.cgroup.cgroup_id == (__u64)cst.st_ino)
			return link_swap(link_fd, info.prog_id, prog_fd, NULL,
					 "sock_ops");
		close(link_fd);
		toe_err("sock_ops is attached to another cgroup (id %llu): run 'toe-loader unload' first",
			(unsigned long long)info.cgroup.cgroup_id);
		return -EEXIST;
	}
	cg_fd = open(o->cgroup, O_RDONLY | O_DIRECTORY);
	if (cg_fd < 0) {
		toe_err("cannot open cgroup %s: %s", o->cgroup,
			strerror(errno));
		return -errno;
	}
	link_fd = bpf_link_create(prog_fd, cg_fd, BPF_CGROUP_SOCK_OPS, NULL);
	err = -errno;
	close(cg_fd);
	if (link_fd < 0) {
		toe_err("cannot attach sock_ops to cgroup %s: %s", o->cgroup,
			strerror(-err));
		return err;
	}
	return pin_new_link(link_fd, path);
}

/*
 * No sockmap links in this kernel: the map holds the program
 * (bpf_prog_attach); the map, which is pinned, then holds it, and unload
 * detaches it.
 */
static int attach_skmsg_to_map(int prog_fd, int map_fd)
{
	struct undo *u;
	int err;

	if (bpf_prog_attach(prog_fd, map_fd, BPF_SK_MSG_VERDICT, 0)) {
		err = -errno;
		toe_err("cannot attach sk_msg to %s: %s", TOE_MAP(BYPASS),
			strerror(errno));
		return err;
	}
	u = undo_push(UNDO_PROG_DETACH, NULL);
	if (!u) {
		bpf_prog_detach2(prog_fd, map_fd, BPF_SK_MSG_VERDICT);
		return -ENOSPC;
	}
	u->fd = dup(prog_fd);
	u->fd2 = dup(map_fd);
	return 0;
}

/*
 * The local bypass: toe_skmsg on the toe_bypass sockhash, through a
 * bpf_link (kernel 6.10+: BPF_LINK_TYPE_SOCKMAP) pinned as link_skmsg, or
 * held by the map on an older kernel.  Attached before sock_ops, so that
 * every socket sock_ops puts into the map gets the program (a socket takes
 * the map's programs when it goes in).
 */
int attach_skmsg(const struct opts *o, int prog_fd, int map_fd)
{
	char path[PATH_MAX];
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	int link_fd, err;

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
	/* Ours already: swap the program in place. */
	if (link_fd >= 0)
		return link_swap(link_fd, info.prog_id, prog_fd, NULL,
				 "sk_msg");
	link_fd = bpf_link_create(prog_fd, map_fd, BPF_SK_MSG_VERDICT, NULL);
	if (link_fd >= 0)
		return pin_new_link(link_fd, path);
	if (errno != EINVAL && errno != EOPNOTSUPP && errno != ENOTSUPP) {
		err = -errno;
		toe_err("cannot attach sk_msg to %s: %s", TOE_MAP(BYPASS),
			strerror(errno));
		return err;
	}
	return attach_skmsg_to_map(prog_fd, map_fd);
}

/*
 * The chain pin of ifindex (path) for a program in mode_flags's mode, in
 * this network namespace.
 */
static void chain_path(char *path, const struct opts *o, __u32 ifindex,
		       __u32 mode_flags)
{
	pin_path(path, o->pin_dir,
		 mode_flags == XDP_FLAGS_SKB_MODE ? "chain_%c%llu_if%u_skb" :
						    "chain_%c%llu_if%u_drv",
		 ifindex);
}

static __u32 mode_flags_of(const struct bpf_xdp_query_opts *q)
{
	return q->attach_mode == XDP_ATTACHED_SKB ? XDP_FLAGS_SKB_MODE :
						    XDP_FLAGS_DRV_MODE;
}

/*
 * Whether the XDP program q found on an interface can be chained: one
 * native or skb program, an ifindex with a chain slot, and that slot free
 * (an interface of another network namespace may hold it), or holding
 * this very program with its chain pin here: a load killed while adopting
 * it, which this one completes.  0 or -errno.
 */
static int check_chainable(const struct opts *o, __u32 ifindex,
			   const char *ifname, int next_fd,
			   const struct bpf_xdp_query_opts *q)
{
	char path[PATH_MAX];
	__u32 id;

	if (q->attach_mode == XDP_ATTACHED_MULTI ||
	    q->attach_mode == XDP_ATTACHED_HW) {
		toe_err("%s: XDP programs in %s mode are attached; opentoe only chains one native or skb program",
			ifname, mode_name(q->attach_mode));
		return -EBUSY;
	}
	if (ifindex >= TOE_XDP_CHAIN_SLOTS) {
		toe_err("%s already has XDP program id %u and its ifindex %u is too large to chain (< %u)",
			ifname, q->prog_id, ifindex, TOE_XDP_CHAIN_SLOTS);
		return -E2BIG;
	}
	if (bpf_map_lookup_elem(next_fd, &ifindex, &id))
		return 0;
	chain_path(path, o, ifindex, mode_flags_of(q));
	if (id == q->prog_id && pinned_id(path) == id)
		return 0; /* half adopted by a killed load */
	toe_err("%s already has XDP program id %u, and chain slot %u is taken by an interface of another network namespace",
		ifname, q->prog_id, ifindex);
	return -EBUSY;
}

/*
 * Take the chained program fd (pi: its info) off the interface, only if it
 * is still the one chained.  On failure it stays attached: its chain slot,
 * pin and rollback entry (the last one) are dropped.
 */
static int take_over(__u32 ifindex, const char *ifname, int next_fd, int fd,
		     __u32 mode_flags, const struct bpf_prog_info *pi,
		     const char *path)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, ao);
	int err;

	ao.old_prog_fd = fd;
	if (!bpf_xdp_detach(ifindex, mode_flags | XDP_FLAGS_REPLACE, &ao))
		return 0;
	err = -errno;
	if (err == -EBUSY || err == -EINVAL)
		toe_err("%s: XDP program %s (id %u) is attached through a bpf_link owned by another loader; opentoe does not displace it",
			ifname, pi->name, pi->id);
	else
		toe_err("%s: cannot take over XDP program %s (id %u): %s",
			ifname, pi->name, pi->id, strerror(-err));
	/* Still attached: nothing to put back. */
	bpf_map_delete_elem(next_fd, &ifindex);
	unlink(path);
	undo_drop_last(); /* closes fd */
	return err;
}

/*
 * An XDP program already on the interface (attached through netlink, as
 * ip, xdp-loader or libxdp in legacy mode do) is kept: it goes into
 * opentoe's chain slot for the interface and runs after opentoe on every
 * packet opentoe passes.  One attached through a bpf_link belongs to its
 * loader and is never displaced.
 */
static int adopt_existing(const struct opts *o, __u32 ifindex,
			  const char *ifname, const struct chain_maps *cm,
			  struct bpf_xdp_query_opts *q)
{
	char path[PATH_MAX];
	struct bpf_prog_info pi = {};
	__u32 len = sizeof(pi), mode_flags;
	__u32 id = q->prog_id;
	__u64 ns = toe_netns_cookie();
	int fd, err, next_fd = cm->next_fd;
	struct undo *u;

	err = check_chainable(o, ifindex, ifname, next_fd, q);
	if (err)
		return err;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &pi, &len)) {
		toe_err("%s: cannot open its XDP program id %u: %s", ifname, id,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	mode_flags = mode_flags_of(q);
	/* The owner first: the slot only ever runs for its namespace. */
	if (!ns || bpf_map_update_elem(cm->ns_fd, &ifindex, &ns, BPF_ANY) ||
	    bpf_map_update_elem(next_fd, &ifindex, &fd, BPF_ANY)) {
		err = -errno;
		toe_err("%s: XDP program %s (id %u) cannot be chained after opentoe: %s",
			ifname, pi.name, id, strerror(errno));
		close(fd);
		return err;
	}
	chain_path(path, o, ifindex, mode_flags);
	u = undo_push(UNDO_CHAIN, path);
	if (!u) {
		bpf_map_delete_elem(next_fd, &ifindex);
		close(fd);
		return -ENOSPC;
	}
	u->fd = fd;
	u->id = pi.id;
	u->ifindex = ifindex;
	u->flags = mode_flags;
	/* Pinned already by a load killed before it took the program over. */
	if (pinned_id(path) != pi.id && bpf_obj_pin(fd, path)) {
		err = -errno;
		toe_err("cannot pin %s: %s", path, strerror(errno));
		return err;
	}
	return take_over(ifindex, ifname, next_fd, fd, mode_flags, &pi, path);
}

/*
 * The link an earlier load pinned for this interface (pin name fmt, its
 * path into path), if it is still a link of this type there: the program
 * is swapped in place (IF_LINK_SWAPPED, or a negative error).
 * IF_LINK_NONE: none (a stale pin is removed), make a new one.
 */
int swap_if_link(const struct opts *o, const char *fmt, __u32 type,
		 __u32 ifindex, int prog_fd, const char *ifname,
		 const char *what, char *path)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	int link_fd, err;

	pin_path(path, o->pin_dir, fmt, ifindex);
	link_fd = bpf_obj_get(path);
	if (link_fd < 0)
		return IF_LINK_NONE;
	/* xdp.ifindex: also the tcx member's first field (tcx_ifindex) */
	if (bpf_obj_get_info_by_fd(link_fd, &info, &len) || info.type != type ||
	    info.xdp.ifindex != ifindex) {
		/* Detached by someone, or an interface that went away. */
		close(link_fd);
		unlink(path);
		return IF_LINK_NONE;
	}
	err = link_swap(link_fd, info.prog_id, prog_fd, ifname, what);
	return err ? err : IF_LINK_SWAPPED;
}

/*
 * A new XDP link on the interface: an XDP program already there is adopted
 * first (chained after opentoe's).  Its fd, or -errno.
 */
static int new_xdp_link(const struct opts *o, __u32 ifindex, const char *ifname,
			int prog_fd, const struct chain_maps *cm)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	LIBBPF_OPTS(bpf_link_create_opts, lo);
	int link_fd, err;

	if (bpf_xdp_query(ifindex, 0, &q)) {
		err = -errno;
		toe_err("%s: cannot query XDP state: %s", ifname,
			strerror(errno));
		return err;
	}
	if (q.prog_id) {
		err = adopt_existing(o, ifindex, ifname, cm, &q);
		if (err)
			return err;
	}
	lo.flags = o->xdp_flags;
	link_fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &lo);
	if (link_fd < 0) {
		err = -errno;
		toe_err("%s: cannot attach XDP%s: %s", ifname,
			o->xdp_flags == XDP_FLAGS_DRV_MODE ? " in native mode" :
			o->xdp_flags == XDP_FLAGS_SKB_MODE ? " in skb mode" :
							     "",
			strerror(errno));
		return err;
	}
	return link_fd;
}

/*
 * --hook tc: a new link of toe_tc on the interface's tcx ingress.  tcx
 * keeps a list of programs, so anything else attached there (by tc or
 * another loader) stays and runs after opentoe's; nothing to chain.  Its
 * fd, or -errno.
 */
static int new_tc_link(__u32 ifindex, const char *ifname, int prog_fd)
{
	int link_fd, err;

	link_fd = bpf_link_create(prog_fd, ifindex, TOE_TCX_INGRESS, NULL);
	if (link_fd < 0) {
		err = -errno;
		toe_err("%s: cannot attach to tc ingress (tcx): %s", ifname,
			strerror(errno));
		return err;
	}
	return link_fd;
}

int attach_iface(const struct opts *o, const char *ifname, bool tc, int prog_fd,
		 const struct chain_maps *cm)
{
	char path[PATH_MAX];
	__u32 ifindex = if_nametoindex(ifname);
	int link_fd, err;

	if (tc && !kernel_has_tcx())
		return attach_tc_classic(o, TOE_PIN_TC_INGRESS, ifindex, ifname,
					 false, prog_fd);
	if (tc)
		err = swap_if_link(o, TOE_PIN_LINK_TC, TOE_LINK_TYPE_TCX,
				   ifindex, prog_fd, ifname, "tc", path);
	else
		err = swap_if_link(o, TOE_PIN_LINK_XDP, BPF_LINK_TYPE_XDP,
				   ifindex, prog_fd, ifname, "XDP", path);
	if (err != IF_LINK_NONE)
		return err < 0 ? err : 0;
	/* No link of ours there: libxdp's dispatcher where it works. */
	if (!tc && xdp_disp_wanted(ifindex)) {
		err = attach_xdp_disp(o, ifindex, ifname, cm->obj);
		if (err != XDP_DISP_NONE)
			return err;
	}
	link_fd = tc ? new_tc_link(ifindex, ifname, prog_fd) :
		       new_xdp_link(o, ifindex, ifname, prog_fd, cm);
	return link_fd < 0 ? link_fd : pin_new_link(link_fd, path);
}

/*
 * tc under a policy already in force: a device on this interface that
 * steers to a CPU needs XDP (toed refuses the converse).  Forwarding has
 * a path on both hooks.
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
		return 0; /* nothing loaded yet */
	for (i = 0; i < TOE_MAX_DEVS; i++) {
		if (bpf_map_lookup_elem(fd, &i, &d) ||
		    !(d.flags & TOE_DEVF_PRESENT) || d.ifindex != ifindex ||
		    d.steer != TOE_STEER_CPU)
			continue;
		close(fd);
		toe_err("%s: device '%.16s' of the policy in force steers to a CPU there, which needs XDP; load with --hook xdp, or apply a policy without steer cpu first",
			ifname, d.name);
		return -EBUSY;
	}
	close(fd);
	return 0;
}

/*
 * An interface is XDP or tc, never both: the other hook's link, from an
 * earlier load, must go first (unload), or packets would be counted twice.
 */
int check_other_hook(const struct opts *o, const char *ifname, bool tc)
{
	char path[PATH_MAX];
	__u32 ifindex = if_nametoindex(ifname);

	pin_path(path, o->pin_dir, tc ? TOE_PIN_LINK_XDP : TOE_PIN_LINK_TC,
		 ifindex);
	if (access(path, F_OK) && !tc)
		pin_path(path, o->pin_dir, TOE_PIN_TC_INGRESS, ifindex);
	if (access(path, F_OK) && tc)
		pin_path(path, o->pin_dir, TOE_PIN_XDP_DISP, ifindex);
	if (access(path, F_OK) == 0) {
		toe_err("%s: opentoe is attached there with %s (%s); run 'toe-loader unload' before loading with --hook %s",
			ifname, tc ? "XDP" : "tc", path, tc ? "tc" : "xdp");
		return -EBUSY;
	}
	return tc ? check_steer(o, ifname, ifindex) : 0;
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
		err = -EPFNOSUPPORT; /* the forward path rewrites Ethernet */
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return err;
}

/*
 * Make an interface opentoe is attached to (either hook) a target of the
 * forward path: toe_devmap[ifindex] (the device, for XDP's redirects) and
 * toe_ifaces[ifindex] (the MAC frames leave it with, its network
 * namespace, flags TOE_IFACE_* and why it has its hook).  The two maps are keyed by
 * ifindex, which is per namespace, so an entry of a live interface of
 * another namespace is never overwritten (as with chain slots).
 */
int add_egress(const char *ifname, __u32 ifindex, __u32 flags, __u16 why,
	       int dev_fd, int if_fd)
{
	struct bpf_devmap_val dv = { .ifindex = ifindex }, odv;
	struct toe_iface v = { .netns = toe_netns_cookie(),
			       .flags = flags,
			       .hook_why = why },
			 old;
	bool had_if, had_dev;
	struct undo *u;
	int err;

	had_if = bpf_map_lookup_elem(if_fd, &ifindex, &old) == 0;
	had_dev = bpf_map_lookup_elem(dev_fd, &ifindex, &odv) == 0;
	/* Checked for every interface, Ethernet or not (namespace by cookie). */
	if (had_if && had_dev && old.netns != v.netns) {
		toe_err("%s: ifindex %u is already a forwarding target for an interface of another network namespace (cookie %llu)",
			ifname, ifindex, (unsigned long long)old.netns);
		return -EBUSY;
	}
	err = read_mac(ifname, v.mac);
	if (err == -EPFNOSUPPORT)
		return 0; /* not Ethernet: XDP there only accounts and steers */
	if (err) {
		toe_err("%s: cannot read its MAC address: %s", ifname,
			strerror(-err));
		return err;
	}
	u = undo_push(UNDO_EGRESS, NULL);
	if (!u)
		return -ENOSPC;
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
