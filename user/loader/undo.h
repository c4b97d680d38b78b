/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toe-loader: the rollback log of a load (undo.c).  Every change load
 * makes is recorded here first; on failure they are undone in reverse
 * order, so a failed load leaves the system as it was.
 */
#ifndef __TOE_UNDO_H
#define __TOE_UNDO_H

#include <limits.h>
#include <stdbool.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include "opentoe_forward.h"

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
/*
 * A descriptor held from the start of a load for its rollback: a load
 * that failed for want of descriptors (EMFILE) still needs one to check
 * each pin it removes holds its own object (unpin_own).  Released by
 * rollback and undo_forget.
 */
void undo_reserve(void);
/* Undo everything, newest first (next_fd: toe_xdp_next, or -1). */
void rollback(int next_fd);
/* The load succeeded: keep every change, close the fds. */
void undo_forget(void);

#endif /* __TOE_UNDO_H */
