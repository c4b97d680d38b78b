/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: a daemon's run folder (toed's /run/opentoe): the lock that
 * makes it one daemon's, and its control socket.  The folder itself is
 * made safe first (dplock.h's toe_secure_dir).  Errors are said with
 * toe_err (err.h).
 */
#ifndef __TOE_RUNDIR_H
#define __TOE_RUNDIR_H

#include <stddef.h>

/*
 * run_dir/name locked (flock, never through a symbolic link) with this
 * process's pid written in: its fd, held for the daemon's life; -1 if
 * another holds it (its pid said) or it cannot be opened.
 */
int toe_rundir_lock(const char *run_dir, const char *name);

/*
 * A unix stream socket listening at run_dir/sock, mode 0600, non-blocking
 * (a stale socket there replaced: the caller holds the folder's lock;
 * anything else there refused): its fd, its path in path; -1 on error.
 */
int toe_rundir_listen(const char *run_dir, const char *sock, char *path,
		      size_t len);

#endif /* __TOE_RUNDIR_H */
