// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader: the rollback log of a load.  Each change is recorded before
 * or as it is made; a failed load undoes them newest first, a load that
 * succeeded forgets them.  The log is bounded: a change that does not fit
 * is refused, and the load fails and rolls back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/knob.h"
#include "loader.h"
#include "undo.h"
#include "pins.h"
#include "lib/err.h"

/*
 * A load records at most: the pin folder, one unpin per map, the sk_msg
 * and sock_ops attachments, and per interface its egress entries, a
 * chained program and a link.  The slack is for what may come.
 */
#define UNDO_MAX (5 * MAX_IFACES + TOE_MAP__N + 8)

static struct undo undo_log[UNDO_MAX];
static int n_undo;

/*
 * The tests' fault knob: TOE_LOADER_FAIL_AT=N makes the Nth change of this
 * run fail as it is recorded, so that a test can fail every step of a load
 * once and check the rollback (selftests/loader/test_rollback_running.sh).
 */
static bool fault_here(void)
{
	static int calls;
	const char *knob = toe_knob("TOE_LOADER_FAIL_AT");

	if (!knob || atoi(knob) != ++calls)
		return false;
	toe_err("change %d fails (TOE_LOADER_FAIL_AT): undoing this load",
		calls);
	return true;
}

struct undo *undo_push(enum undo_kind kind, const char *path)
{
	struct undo *u;

	if (fault_here())
		return NULL;
	if (n_undo == UNDO_MAX) {
		toe_err("too many changes for the rollback log (at most %d): undoing this load",
			UNDO_MAX);
		return NULL;
	}
	u = &undo_log[n_undo++];
	memset(u, 0, sizeof(*u));
	u->kind = kind;
	u->fd = u->fd2 = -1;
	if (path)
		snprintf(u->path, sizeof(u->path), "%s", path);
	return u;
}

struct undo *undo_push_action(void (*action)(const struct undo *u),
			      const char *path)
{
	struct undo *u = undo_push(UNDO_ACTION, path);

	if (u)
		u->action = action;
	return u;
}

static void undo_close(struct undo *u)
{
	if (u->fd >= 0)
		close(u->fd);
	if (u->fd2 >= 0)
		close(u->fd2);
}

void undo_drop_last(void)
{
	if (n_undo > 0)
		undo_close(&undo_log[--n_undo]);
}

/* Put the egress entries of ifindex back as they were (or delete them). */
static void undo_egress(const struct undo *u)
{
	/* fd: toe_ifaces, fd2: toe_devmap */
	if (!u->had_old) {
		bpf_map_delete_elem(u->fd, &u->ifindex);
		bpf_map_delete_elem(u->fd2, &u->ifindex);
		return;
	}
	bpf_map_update_elem(u->fd, &u->ifindex, &u->old_if, BPF_ANY);
	bpf_map_update_elem(u->fd2, &u->ifindex, &u->old_dev, BPF_ANY);
}

/*
 * Remove the pin at path only if it holds the object of id (this run's).
 * Under the change lock no other loader can have pinned anything there;
 * this also keeps a pin someone made by hand meanwhile.
 */
static void unpin_own(const char *path, __u32 id)
{
	if (id && path[0] && pinned_id(path) == id)
		unlink(path);
}

static void undo_one(const struct undo *u, int next_fd)
{
	switch (u->kind) {
	case UNDO_UNPIN:
		/* No fd: libbpf never created it, or unpinned it itself. */
		if (bpf_map__fd(u->map) >= 0)
			unpin_own(u->path, map_id_of(bpf_map__fd(u->map)));
		break;
	case UNDO_RMDIR:
		rmdir(u->path); /* only if empty */
		break;
	case UNDO_LINK:
		bpf_link_detach(u->fd);
		unpin_own(u->path, u->id);
		break;
	case UNDO_LINK_UPDATE:
		bpf_link_update(u->fd, u->fd2, NULL);
		break;
	case UNDO_CHAIN:
		/* our link is gone by now: put the original back */
		bpf_xdp_attach(u->ifindex, u->fd, u->flags, NULL);
		if (next_fd >= 0)
			bpf_map_delete_elem(next_fd, &u->ifindex);
		unpin_own(u->path, u->id);
		break;
	case UNDO_PROG_DETACH:
		bpf_prog_detach2(u->fd, u->fd2, BPF_SK_MSG_VERDICT);
		break;
	case UNDO_EGRESS:
		undo_egress(u);
		break;
	case UNDO_ACTION:
		u->action(u);
		break;
	case UNDO_REPIN:
		/* the new link is unpinned by now (newer): the old one back */
		if (bpf_obj_pin(u->fd, u->path))
			toe_err("cannot pin %s back: %s", u->path,
				strerror(errno));
		break;
	}
}

static int spare_fd = -1; /* undo_reserve's */

void undo_reserve(void)
{
	if (spare_fd < 0)
		spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void undo_release(void)
{
	if (spare_fd >= 0)
		close(spare_fd);
	spare_fd = -1;
}

void rollback(int next_fd)
{
	undo_release(); /* for pinned_id's look at each pin */
	while (n_undo > 0) {
		struct undo *u = &undo_log[--n_undo];

		undo_one(u, next_fd);
		undo_close(u);
	}
}

void undo_forget(void)
{
	undo_release();
	while (n_undo > 0) {
		struct undo *u = &undo_log[--n_undo];

		/* a link this load replaced, kept running until now */
		if (u->kind == UNDO_REPIN)
			bpf_link_detach(u->fd);
		undo_close(u);
	}
}
