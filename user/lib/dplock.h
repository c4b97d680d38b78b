/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: one owner per datapath.  A datapath is a pin folder; its locks
 * live in TOE_LOCK_DIR, named after the folder's canonical path (every
 * link followed, also where the folder does not exist yet), so two
 * run folders, two toeds or two loaders can never serve or change one pin
 * folder at once:
 *
 *  TOE_LOCK_CHANGE  held by whatever changes the datapath: toe-loader load
 *                   and unload, and a policy apply (toed's own and
 *                   toed --apply), each for its length.  A second one waits
 *                   a bounded time, then fails naming the holder.
 *  TOE_LOCK_DAEMON  held by the toed serving the datapath, for its whole
 *                   life: a second toed is refused at once.
 *  TOE_LOCK_DUMP    held by the toectl dump whose capture is on
 *                   (include/opentoe_capture.h): a second dump is refused
 *                   at once, naming it; whoever takes it and finds the
 *                   capture on knows its dump was killed.
 *
 * flock() locks end with their holder, kill -9 included.  Every folder and
 * file on the way is checked: owned by root (the effective uid), writable
 * by nobody else, never opened through a symbolic link (the run folder and
 * the lock folder are each opened with O_NOFOLLOW, the lock file relative
 * to the lock folder's fd).  Lock files are never removed: a waiter would
 * then hold a lock on a file nobody else opens.
 *
 * The run folder is TOE_RUN_DIR, or the environment's TOE_RUN_DIR (read
 * once, by the first call of toe_run_dir): for tests, which must not
 * touch the machine's /run/opentoe.  Its locks are in "<run folder>/locks".
 */
#ifndef __TOE_DPLOCK_H
#define __TOE_DPLOCK_H

#include <stddef.h>

/* The defaults; toe_run_dir() and toe_lock_dir() say which are in use. */
#define TOE_RUN_DIR "/run/opentoe"
#define TOE_LOCK_DIR TOE_RUN_DIR "/locks"

/* The run folder: $TOE_RUN_DIR if set (and not empty), else TOE_RUN_DIR. */
const char *toe_run_dir(void);
/* Its lock folder, "<run folder>/locks". */
const char *toe_lock_dir(void);

enum toe_lock_kind {
	TOE_LOCK_CHANGE,
	TOE_LOCK_DAEMON,
	TOE_LOCK_DUMP,
};

/*
 * Create dir (mode 0700) if it is missing, or check an existing one: a real
 * folder, not a link, owned by the effective uid, writable by no one else.
 * Returns 0, or -1 with err set.
 */
int toe_secure_dir(const char *dir, char *err, size_t len);

/*
 * Take pin_dir's lock of kind kind for who ("toe-loader load"), waiting up
 * to wait_ms for a holder to finish (0: do not wait).  Returns the lock's
 * fd (keep it open to hold the lock; close it to release), or -1 with err
 * naming the holder ("locked by pid 123 (toe-loader load)": what the
 * holder wrote in the lock file, if /proc/locks agrees; else the pid
 * /proc/locks names and its command name) or the problem.
 */
int toe_dplock_take(const char *pin_dir, enum toe_lock_kind kind,
		    const char *who, int wait_ms, char *err, size_t len);

/* The lock file of pin_dir's lock of kind kind, for messages. */
int toe_dplock_path(const char *pin_dir, enum toe_lock_kind kind, char *buf,
		    size_t len);

#endif /* __TOE_DPLOCK_H */
