// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * opentoe: paths: joining them, telling bpffs and cgroup v2 folders, finding
 * a cgroup's folder by id, mounting bpffs for the pin folder.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include "lib/err.h"
#include "lib/path.h"

int toe_join(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

static bool fs_is(const char *path, long magic)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == magic;
}

bool toe_is_bpffs(const char *path)
{
	return fs_is(path, BPF_FS_MAGIC);
}

bool toe_is_cgroup2(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
	       fs_is(path, CGROUP2_SUPER_MAGIC);
}

const char *toe_cgroup2_root(void)
{
	static char root[4096];
	char dev[256], dir[4096], type[64];
	FILE *f = fopen("/proc/mounts", "r");
	const char *ret = NULL;

	if (!f)
		return NULL;
	while (fscanf(f, "%255s %4095s %63s %*[^\n]", dev, dir, type) == 3) {
		if (!strcmp(type, "cgroup2")) {
			snprintf(root, sizeof(root), "%s", dir);
			ret = root;
			break;
		}
	}
	fclose(f);
	return ret;
}

static __u64 want_ino;
static char *found_path;
static size_t found_len;

static int cg_visit(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_D && (__u64)st->st_ino == want_ino) {
		snprintf(found_path, found_len, "%s", path);
		return 1;
	}
	return 0;
}

int toe_cgroup_path(__u64 id, char *buf, size_t len)
{
	const char *root = toe_cgroup2_root();

	if (!root)
		return -ENOENT;
	want_ino = id;
	found_path = buf;
	found_len = len;
	return nftw(root, cg_visit, 16, FTW_PHYS | FTW_MOUNT) == 1 ? 0 :
								     -ENOENT;
}

int toe_ensure_bpffs(const char *pin_dir)
{
	char parent[4096];
	char *slash;

	if (toe_is_bpffs(pin_dir))
		return 0;
	/* The folder may not exist yet: its parent must be on bpffs. */
	snprintf(parent, sizeof(parent), "%s", pin_dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	if (toe_is_bpffs(parent))
		return 0;
	if (!strcmp(parent, "/sys/fs/bpf")) {
		if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700") == 0)
			return 0;
		toe_err("cannot mount bpffs on /sys/fs/bpf: %s",
			strerror(errno));
		return -errno;
	}
	toe_err("pin folder %s is not on a bpf filesystem (mount -t bpf bpf %s)",
		pin_dir, parent);
	return -EINVAL;
}
