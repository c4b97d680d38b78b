/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* opentoe: path helpers (the pin folder, bpffs, cgroup v2). */
#ifndef __TOE_PATH_H
#define __TOE_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

int toe_join(char *buf, size_t len, const char *dir, const char *name);
bool toe_is_bpffs(const char *path);
bool toe_is_cgroup2(const char *path);
/* The cgroup v2 mount point from /proc/mounts, or NULL. */
const char *toe_cgroup2_root(void);
/* Find the path of the cgroup v2 folder whose id is id (its inode). */
int toe_cgroup_path(__u64 id, char *buf, size_t len);
/* Mount bpffs on /sys/fs/bpf when nothing is mounted there. */
int toe_ensure_bpffs(const char *pin_dir);

#endif /* __TOE_PATH_H */
