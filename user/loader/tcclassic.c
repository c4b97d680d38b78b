// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader: tc without tcx.  Before Linux 6.6 (Debian 12's 6.1) there
 * are no tcx links; the tc programs (toe_tc for --hook tc, toe_egress for
 * the forward path's admission) then go on the interface's clsact qdisc as
 * classic cls_bpf filters in direct-action mode (libbpf's bpf_tc_*), with
 * opentoe's own handle and priority.  Both programs return TC_ACT_UNSPEC
 * (TCX_NEXT), so a filter others put on the same hook still runs after
 * ours, as with tcx.
 *
 * A filter is not a link: the program is pinned as tc_ingress_n<NS>_if<N>
 * or tc_egress_n<NS>_if<N>, which is how status finds it and how unload
 * knows the filter is ours (its program id is the pinned one) before it
 * deletes it.  A load over an earlier one replaces the program in place
 * (BPF_TC_F_REPLACE); a filter at our handle and priority that is not ours
 * is refused, never replaced.  The clsact qdisc is left on the interface
 * at unload: other filters may be on it, and an empty one passes every
 * packet.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/knob.h"
#include "loader.h"
#include "undo.h"
#include "pins.h"
#include "pin_ns.h"
#include "kernel_features.h"
#include "tcclassic.h"
#include "lib/netns.h"
#include "lib/err.h"

/* Our filter's handle and priority on the clsact hooks. */
#define TOE_TC_HANDLE 0x70e
#define TOE_TC_PRIO 0x70e

/*
 * tcx (BPF_TCX_INGRESS/EGRESS attach types) came with Linux 6.6.  The
 * tests set TOE_LOADER_NO_TCX=1 to take the classic path on a kernel that
 * has tcx too (a fault knob, as netdevsim's).
 */
bool kernel_has_tcx(void)
{
	static int has = -1;
	const char *knob = toe_knob("TOE_LOADER_NO_TCX");

	if (has < 0)
		has = !(knob && !strcmp(knob, "1")) &&
		      kernel_enum_has("bpf_attach_type", "BPF_TCX_EGRESS");
	return has;
}

static void tc_hook_of(struct bpf_tc_hook *h, __u32 ifindex, bool egress)
{
	memset(h, 0, sizeof(*h));
	h->sz = sizeof(*h);
	h->ifindex = ifindex;
	h->attach_point = egress ? BPF_TC_EGRESS : BPF_TC_INGRESS;
}

static void tc_opts_of(struct bpf_tc_opts *t)
{
	memset(t, 0, sizeof(*t));
	t->sz = sizeof(*t);
	t->handle = TOE_TC_HANDLE;
	t->priority = TOE_TC_PRIO;
}

/* The program id of our filter on the hook, 0 if there is none. */
__u32 tc_classic_prog(__u32 ifindex, bool egress)
{
	struct bpf_tc_hook h;
	struct bpf_tc_opts t;

	tc_hook_of(&h, ifindex, egress);
	tc_opts_of(&t);
	if (bpf_tc_query(&h, &t))
		return 0;
	return t.prog_id;
}

/* Put prog_fd on the hook as our filter (replace: ours is there). */
int tc_classic_set(__u32 ifindex, bool egress, int prog_fd, bool replace)
{
	struct bpf_tc_hook h;
	struct bpf_tc_opts t;

	tc_hook_of(&h, ifindex, egress);
	tc_opts_of(&t);
	t.prog_fd = prog_fd;
	t.flags = replace ? BPF_TC_F_REPLACE : 0;
	return bpf_tc_attach(&h, &t);
}

/* Delete our filter from the hook if it still runs program id. */
int tc_classic_del(__u32 ifindex, bool egress, __u32 id)
{
	struct bpf_tc_hook h;
	struct bpf_tc_opts t;

	if (!id || tc_classic_prog(ifindex, egress) != id)
		return 0; /* gone, or not ours any more */
	tc_hook_of(&h, ifindex, egress);
	tc_opts_of(&t);
	return bpf_tc_detach(&h, &t);
}

/* Rollback of attach_tc_classic (its undo action). */
static void undo_tc_classic(const struct undo *u)
{
	if (u->fd2 >= 0)
		tc_classic_set(u->ifindex, u->flags, u->fd2, true);
	else
		tc_classic_del(u->ifindex, u->flags, u->id);
	if (u->id && pinned_id(u->path) == u->id) {
		unlink(u->path);
		if (u->fd2 >= 0)
			bpf_obj_pin(u->fd2, u->path);
	}
}

/*
 * prog_fd as our classic filter on ifname's ingress or egress, its program
 * pinned at the pin name fmt.  The change goes into the rollback log
 * first.  0 or -errno, with a message naming the interface.
 */
int attach_tc_classic(const struct opts *o, const char *fmt, __u32 ifindex,
		      const char *ifname, bool egress, int prog_fd)
{
	const char *hook = egress ? "egress" : "ingress";
	char path[PATH_MAX];
	struct bpf_tc_hook h;
	__u32 cur, mine;
	struct undo *u;
	int err;

	pin_path(path, o->pin_dir, fmt, ifindex);
	tc_hook_of(&h, ifindex, egress);
	err = bpf_tc_hook_create(&h);
	if (err && err != -EEXIST) {
		toe_err("%s: cannot add a clsact qdisc for tc %s: %s", ifname,
			hook, strerror(-err));
		return err;
	}
	cur = tc_classic_prog(ifindex, egress);
	mine = pinned_id(path);
	if (cur && cur != mine) {
		toe_err("%s: tc %s filter handle %#x priority %u (opentoe's) holds program id %u, not the one pinned in %s: delete it first",
			ifname, hook, TOE_TC_HANDLE, TOE_TC_PRIO, cur,
			o->pin_dir);
		return -EBUSY;
	}
	u = undo_push_action(undo_tc_classic, path);
	if (!u)
		return -ENOSPC;
	u->ifindex = ifindex;
	u->flags = egress;
	if (cur)
		u->fd2 = bpf_prog_get_fd_by_id(cur); /* put back on rollback */
	err = tc_classic_set(ifindex, egress, prog_fd, cur != 0);
	if (err == -EEXIST) {
		/* a filter there with no program id: classic BPF, say */
		toe_err("%s: tc %s filter handle %#x priority %u (opentoe's) is taken by a filter that is not opentoe's: delete it first",
			ifname, hook, TOE_TC_HANDLE, TOE_TC_PRIO);
		return -EBUSY;
	}
	if (err) {
		toe_err("%s: cannot attach to tc %s (clsact, no tcx in this kernel): %s",
			ifname, hook, strerror(-err));
		return err;
	}
	u->id = obj_id_of(prog_fd);
	if (cur)
		unlink(path);
	if (bpf_obj_pin(prog_fd, path)) {
		err = -errno;
		toe_err("cannot pin %s: %s", path, strerror(errno));
		return err;
	}
	return 0;
}

/*
 * The tests' fault knob: TOE_LOADER_TC_DEL_ERR=N makes unload's delete of
 * a classic filter, once done, report -N, as a filter deleted by someone
 * else in between (EINVAL, ENOENT: nothing to do) or a failing delete
 * (anything else) would (selftests/xdp/test_tc_hook.sh).
 */
static int tc_del_fault(int err)
{
	const char *knob = toe_knob("TOE_LOADER_TC_DEL_ERR");

	return knob && !err ? -atoi(knob) : err;
}

/*
 * Unload: delete the filter a tc_* pin (name n, at path) stands for, in
 * its network namespace (home: the loader's own, entered back after).
 * 1 if it failed.
 */
int detach_tc_classic(const char *n, const char *path, int home)
{
	bool egress = !strncmp(n, "tc_egress_", 10);
	__u32 ifindex = 0;
	int err, bad = 0;

	if (!enter_if_pin(n, egress ? "tc_egress_" : "tc_ingress_", path,
			  "the filter", &ifindex))
		return 0;
	err = tc_del_fault(tc_classic_del(ifindex, egress, pinned_id(path)));
	if (err && err != -ENODEV && err != -ENOENT && err != -EINVAL) {
		toe_err("cannot delete the tc filter of %s: %s", path,
			strerror(-err));
		bad = 1;
	}
	setns(home, CLONE_NEWNET);
	return bad;
}
