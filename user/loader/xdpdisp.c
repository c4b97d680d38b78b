// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader: XDP through libxdp's multi-program dispatcher.
 *
 * Where the kernel loads freplace programs (BPF_PROG_TYPE_EXT: Debian 12's
 * 6.1 does; some kernels refuse them) and libxdp's bpffs is mounted,
 * toe_xdp joins the libxdp dispatcher of the interface as one of its
 * component programs, as xdp-loader's programs do: opentoe and xdp-loader
 * (or any libxdp user) share the interface, each adds and removes only its
 * own program, and `xdp-loader status` lists both.  Elsewhere (no freplace,
 * or a program already attached without a dispatcher, which libxdp cannot
 * add to) opentoe uses its own XDP link and chains that program itself
 * (attach.c).
 *
 * The component is a second copy of toe_xdp, opened from the same ELF with
 * every map but the chain reused from the object just loaded (so both
 * copies share flows, counters, policy and .rodata) and loaded by libxdp
 * as an extension of the dispatcher's slot.  It runs at priority TOE_XDP_DISP_PRIO, after
 * programs at xdp-loader's default (50): a filter an operator loaded with
 * xdp-loader decides on a packet before opentoe can redirect it.  What
 * toe_xdp passes (XDP_PASS) goes on to the next program; what it
 * redirects ends the chain there.
 *
 * The program is pinned as xdpd_n<NS>_if<N>: status finds it there, and
 * unload removes it from the dispatcher only while the dispatcher still
 * holds that program (libxdp then builds a dispatcher without it, or
 * removes the dispatcher with the last program).  libxdp pins the
 * dispatcher and its links in its own folder (LIBXDP_BPFFS, default
 * /sys/fs/bpf, subfolder xdp).  A load over an earlier one takes the old
 * program out and puts the new one in: two dispatcher swaps, between which
 * packets go to the other programs and the stack without opentoe.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/vfs.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "loader.h"
#include "undo.h"
#include "pins.h"
#include "pin_ns.h"
#include "kernel_features.h"
#include "xdpdisp.h"
#include "skel.h"
#include "lib/netns.h"
#include "lib/err.h"
#include "lib/pinned.h"

/*
 * Run priority of toe_xdp in the dispatcher: after xdp-loader's default
 * (50), so that a filter loaded there decides first.
 */
#define TOE_XDP_DISP_PRIO 100
/* Programs a libxdp dispatcher holds at most (MAX_DISPATCHER_ACTIONS). */
#define TOE_XDP_DISP_MAX 10

static int libxdp_quiet(enum libxdp_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBXDP_WARN || getenv("TOE_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static void libxdp_init(void)
{
	static bool done;

	if (!done) {
		done = true;
		libxdp_set_print(libxdp_quiet);
	}
}

/*
 * Whether this kernel and this host let libxdp run a dispatcher: freplace
 * programs, and a bpffs where libxdp pins (it falls back to a plain
 * netlink attach without one, which opentoe never wants).  libxdp's own
 * knob, LIBXDP_SKIP_DISPATCHER=1, turns it off as it does for xdp-loader:
 * opentoe then takes its own XDP link (the tests do, to run
 * BPF_PROG_TEST_RUN and bpf_stats on toe_xdp, which an extension program
 * has neither of).
 */
bool xdp_disp_possible(void)
{
	static int can = -1;
	const char *knob = getenv("LIBXDP_SKIP_DISPATCHER");
	const char *fs = getenv("LIBXDP_BPFFS");
	struct statfs st;

	if (can < 0)
		can = !(knob && !strcmp(knob, "1")) && kernel_has_ext() &&
		      !statfs(fs ? fs : "/sys/fs/bpf", &st) &&
		      st.f_type == BPF_FS_MAGIC;
	return can;
}

/*
 * The interface's libxdp dispatcher (*mp, closed by the caller), if one is
 * attached: 1.  0: no XDP program at all.  -EBUSY: a program without a
 * dispatcher (ip, bpftool or a legacy libxdp load attached it).
 */
static int disp_of(__u32 ifindex, struct xdp_multiprog **mp)
{
	struct xdp_multiprog *m;

	libxdp_init();
	*mp = NULL;
	m = xdp_multiprog__get_from_ifindex(ifindex);
	if (libxdp_get_error(m) || !m)
		return 0;
	if (xdp_multiprog__is_legacy(m) || !xdp_multiprog__main_prog(m)) {
		xdp_multiprog__close(m);
		return -EBUSY;
	}
	*mp = m;
	return 1;
}

/* Whether program id is one of the dispatcher's on ifindex. */
bool xdp_disp_holds(__u32 ifindex, __u32 id)
{
	struct xdp_multiprog *mp;
	struct xdp_program *p = NULL;
	bool found = false;

	if (!id || disp_of(ifindex, &mp) != 1)
		return false;
	while (!found && (p = xdp_multiprog__next_prog(p, mp)))
		found = xdp_program__id(p) == id;
	xdp_multiprog__close(mp);
	return found;
}

/*
 * Whether a load puts toe_xdp on ifindex through the dispatcher: it can,
 * and the interface has no XDP program or a dispatcher already (a plain
 * program there is chained by opentoe, as without a dispatcher).
 */
bool xdp_disp_wanted(__u32 ifindex)
{
	struct xdp_multiprog *mp;
	int r;

	if (!xdp_disp_possible())
		return false;
	r = disp_of(ifindex, &mp);
	xdp_multiprog__close(mp);
	return r >= 0;
}

static enum xdp_attach_mode mode_of(__u32 xdp_flags)
{
	return xdp_flags == XDP_FLAGS_SKB_MODE ? XDP_MODE_SKB :
	       xdp_flags == XDP_FLAGS_DRV_MODE ? XDP_MODE_NATIVE :
						 XDP_MODE_UNSPEC;
}

/*
 * A copy of the object with only toe_xdp to load, every map the loaded
 * object's (main).  NULL, with a message, on failure.
 */
static struct bpf_object *ext_object(const struct bpf_object *main)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo,
		    .object_name = bpf_object__name(main));
	struct bpf_program *p;
	struct bpf_object *obj;
	struct bpf_map *m;
	const void *elf;
	size_t sz;

	elf = toe_skel_elf(&sz);
	obj = bpf_object__open_mem(elf, sz, &oo);
	if (!obj) {
		toe_err("cannot open a second copy of the eBPF object: %s",
			strerror(errno));
		return NULL;
	}
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p),
						     "toe_xdp"));
	bpf_object__for_each_map(m, obj) {
		const struct bpf_map *mm =
			bpf_object__find_map_by_name(main, bpf_map__name(m));

		/*
		 * Not the chain: a program array belongs to programs of one
		 * expected attach type (Linux 6.17, and 6.1 stable), BPF_XDP
		 * for the loaded toe_xdp, none for an extension.  The copy
		 * gets an empty one of its own: the dispatcher chains here.
		 */
		if (!strcmp(bpf_map__name(m),
			    toe_map_names[TOE_MAP_ID_XDP_NEXT]))
			continue;

		if (!mm || bpf_map__fd(mm) < 0 ||
		    bpf_map__reuse_fd(m, bpf_map__fd(mm))) {
			toe_err("cannot share map %s with the dispatcher's copy of toe_xdp: %s",
				bpf_map__name(m),
				mm ? strerror(errno) : "not in the object");
			bpf_object__close(obj);
			return NULL;
		}
	}
	return obj;
}

/* Put program fd into the dispatcher on ifindex (libxdp).  0 or -errno. */
static int disp_add(struct xdp_program *p, __u32 ifindex, __u32 xdp_flags)
{
	int err;

	err = xdp_program__set_run_prio(p, TOE_XDP_DISP_PRIO);
	if (!err)
		err = xdp_program__set_chain_call_enabled(p, XDP_PASS, true);
	if (!err)
		err = xdp_program__attach(p, ifindex, mode_of(xdp_flags), 0);
	return err;
}

/* Take program id out of the dispatcher on ifindex.  0 or -errno. */
static int disp_del(__u32 ifindex, __u32 id)
{
	struct xdp_program *p;
	int err;

	if (!xdp_disp_holds(ifindex, id))
		return 0; /* gone, or not in a dispatcher any more */
	p = xdp_program__from_id(id);
	err = libxdp_get_error(p);
	if (err || !p)
		return err ? err : -ENOENT;
	err = xdp_program__detach(p, ifindex, XDP_MODE_UNSPEC, 0);
	xdp_program__close(p);
	return err;
}

/* Whether program id uses map id mid. */
static bool prog_uses_map(__u32 id, __u32 mid)
{
	struct bpf_prog_info pi = {};
	__u32 ids[64], len = sizeof(pi), i;
	bool uses = false;
	int fd;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return false;
	pi.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	pi.map_ids = (__u64)(unsigned long)ids;
	if (!bpf_obj_get_info_by_fd(fd, &pi, &len))
		for (i = 0; i < pi.nr_map_ids && i < 64 && !uses; i++)
			uses = ids[i] == mid;
	close(fd);
	return uses;
}

/*
 * Take out of ifindex's dispatcher every toe_xdp of this pin folder (it
 * uses its map mid) but keep: what a load killed between libxdp's attach
 * and the pin left there, which nothing else would ever remove.  A toe_xdp
 * of another pin folder (other maps) is not touched.  How many went.
 */
static int disp_sweep(__u32 ifindex, __u32 mid, __u32 keep)
{
	__u32 ids[TOE_XDP_DISP_MAX];
	struct xdp_program *p = NULL;
	struct xdp_multiprog *mp;
	int n = 0, i, gone = 0;

	if (!mid || disp_of(ifindex, &mp) != 1)
		return 0;
	while ((p = xdp_multiprog__next_prog(p, mp)) && n < TOE_XDP_DISP_MAX)
		if (!strcmp(xdp_program__name(p), "toe_xdp") &&
		    xdp_program__id(p) != keep)
			ids[n++] = xdp_program__id(p);
	xdp_multiprog__close(mp);
	for (i = 0; i < n; i++)
		if (prog_uses_map(ids[i], mid) && !disp_del(ifindex, ids[i]))
			gone++;
	return gone;
}

/*
 * Unload, once the pinned programs are out: the sweep on every interface
 * of this network namespace, for the pin folder's toe_flows (map id mid).
 */
void xdp_disp_sweep_all(__u32 mid)
{
	struct if_nameindex *ifs, *i;
	int n;

	if (!mid || !xdp_disp_possible())
		return;
	ifs = if_nameindex();
	for (i = ifs; i && i->if_index; i++) {
		n = disp_sweep(i->if_index, mid, 0);
		if (n)
			toe_err("%s: took %d toe_xdp of a killed load out of the XDP dispatcher",
				i->if_name, n);
	}
	if (ifs)
		if_freenameindex(ifs);
}

/* The undo of a dispatcher change, as recorded by attach_xdp_disp. */
static void undo_xdp_disp(const struct undo *u)
{
	struct xdp_program *p;

	disp_del(u->ifindex, u->id);
	if (u->id && pinned_id(u->path) == u->id)
		unlink(u->path);
	if (u->fd2 < 0)
		return;
	/* put the program of the earlier load back, and its pin */
	p = xdp_program__from_fd(u->fd2);
	if (libxdp_get_error(p) || !p)
		return;
	if (!disp_add(p, u->ifindex, u->flags) && access(u->path, F_OK))
		bpf_obj_pin(u->fd2, u->path);
	xdp_program__close(p);
}

/*
 * The dispatcher's copy of toe_xdp (xdp_program, its object in *objp, both
 * closed by the caller), or NULL with a message naming ifname.
 */
static struct xdp_program *ext_program(const struct bpf_object *main,
				       const char *ifname,
				       struct bpf_object **objp)
{
	struct xdp_program_opts po = { .sz = sizeof(po) };
	struct xdp_program *p;
	int err;

	*objp = ext_object(main);
	if (!*objp)
		return NULL;
	po.obj = *objp;
	po.prog_name = "toe_xdp";
	p = xdp_program__create(&po);
	err = libxdp_get_error(p);
	if (err || !p) {
		toe_err("%s: cannot prepare toe_xdp for the XDP dispatcher: %s",
			ifname, strerror(err ? -err : ENOMEM));
		bpf_object__close(*objp);
		*objp = NULL;
		return NULL;
	}
	return p;
}

/*
 * Add p to ifindex's dispatcher, its id into u (the rollback entry).
 * alone: the interface had no XDP program and no toe_xdp of ours was
 * taken out, so where libxdp cannot make a dispatcher nothing is lost by
 * taking opentoe's own link instead (XDP_DISP_NONE, u dropped).  0, that,
 * or -errno, with a message naming ifname.
 */
static int disp_join(struct xdp_program *p, const struct opts *o, __u32 ifindex,
		     const char *ifname, struct undo *u, bool alone)
{
	char buf[128];
	int err;

	err = disp_add(p, ifindex, o->xdp_flags);
	if (!err) {
		u->id = obj_id_of(xdp_program__fd(p));
		if (xdp_disp_holds(ifindex, u->id))
			return 0;
		/* libxdp fell back to a plain attach: not what was asked */
		xdp_program__detach(p, ifindex, XDP_MODE_UNSPEC, 0);
		err = -EOPNOTSUPP;
	}
	libxdp_strerror(err, buf, sizeof(buf));
	if (!alone) {
		toe_err("%s: cannot add toe_xdp to the XDP dispatcher (libxdp): %s",
			ifname, buf);
		return err;
	}
	toe_err("%s: libxdp cannot set up its XDP dispatcher here (%s): opentoe's own XDP link instead",
		ifname, buf);
	undo_drop_last();
	return XDP_DISP_NONE;
}

/*
 * toe_xdp of the loaded object main on ifname through its dispatcher
 * (a new one if it has none), replacing the program an earlier load put
 * there.  The change goes into the rollback log first.  0 or -errno, with
 * a message naming the interface; XDP_DISP_NONE when the interface had no
 * XDP program and libxdp cannot make a dispatcher (its files missing, say):
 * nothing changed, the caller takes opentoe's own link.
 */
int attach_xdp_disp(const struct opts *o, __u32 ifindex, const char *ifname,
		    const struct bpf_object *main)
{
	char path[PATH_MAX], buf[128];
	const struct bpf_map *flows;
	struct xdp_multiprog *mp;
	struct bpf_object *obj;
	struct xdp_program *p;
	struct undo *u;
	__u32 old;
	bool had;
	int err;

	pin_path(path, o->pin_dir, TOE_PIN_XDP_DISP, ifindex);
	had = disp_of(ifindex, &mp) == 1;
	xdp_multiprog__close(mp);
	old = pinned_id(path);
	if (old && !xdp_disp_holds(ifindex, old)) {
		unlink(path); /* taken out by someone, or the interface went */
		old = 0;
	}
	flows = bpf_object__find_map_by_name(main,
					     toe_map_names[TOE_MAP_ID_FLOWS]);
	if (flows && disp_sweep(ifindex, obj_id_of(bpf_map__fd(flows)), old))
		toe_err("%s: took toe_xdp of a killed load out of the XDP dispatcher",
			ifname);
	p = ext_program(main, ifname, &obj);
	if (!p)
		return -EINVAL;
	u = undo_push_action(undo_xdp_disp, path);
	err = u ? 0 : -ENOSPC;
	if (u) {
		u->ifindex = ifindex;
		u->flags = o->xdp_flags;
	}
	if (u && old) {
		u->fd2 = bpf_prog_get_fd_by_id(old); /* put back on rollback */
		err = disp_del(ifindex, old);
		if (err) {
			libxdp_strerror(err, buf, sizeof(buf));
			toe_err("%s: cannot take the earlier toe_xdp (id %u) out of the XDP dispatcher: %s",
				ifname, old, buf);
			close(u->fd2); /* still in: nothing to put back */
			u->fd2 = -1;
		} else {
			unlink(path);
		}
	}
	if (!err)
		err = disp_join(p, o, ifindex, ifname, u, !old && !had);
	if (!err && bpf_obj_pin(xdp_program__fd(p), path)) {
		err = -errno;
		toe_err("cannot pin %s: %s", path, strerror(errno));
	}
	xdp_program__close(p);
	bpf_object__close(obj);
	return err;
}

/*
 * Unload: take the program an xdpd_* pin (name n, at path) stands for out
 * of its interface's dispatcher, in its network namespace (home: the
 * loader's own, entered back after).  1 if it failed.
 */
int detach_xdp_disp(const char *n, const char *path, int home)
{
	__u32 ifindex = 0;
	char buf[128];
	int err, bad = 0;

	if (!enter_if_pin(n, "xdpd_", path, "the program", &ifindex))
		return 0;
	err = disp_del(ifindex, pinned_id(path));
	if (err && err != -ENODEV && err != -ENOENT) {
		libxdp_strerror(err, buf, sizeof(buf));
		toe_err("cannot take %s out of the XDP dispatcher: %s", path,
			buf);
		bad = 1;
	}
	setns(home, CLONE_NEWNET);
	return bad;
}

/* The dispatcher's mode on ifindex, for status ("" without one). */
const char *xdp_disp_mode(__u32 ifindex)
{
	struct xdp_multiprog *mp;
	enum xdp_attach_mode m;

	if (disp_of(ifindex, &mp) != 1)
		return "";
	m = xdp_multiprog__attach_mode(mp);
	xdp_multiprog__close(mp);
	return m == XDP_MODE_SKB ? "dispatcher-skb" : "dispatcher";
}
