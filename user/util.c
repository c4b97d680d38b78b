// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* opentoe: helpers shared by toe-loader, toed and toectl. */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/magic.h>
#include "util.h"

const char *toe_prog = "opentoe";

void toe_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", toe_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int toe_errf(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

void toe_close_fds(int *fds, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

static int *pin_fd(const struct toe_pin *pin, void *base)
{
	return (int *)((char *)base + pin->off);
}

void toe_close_pins(const struct toe_pin *pins, unsigned int n, void *base)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		toe_close_fds(pin_fd(&pins[i], base), 1);
}

int toe_open_pins(const char *dir, const struct toe_pin *pins, unsigned int n,
		  void *base, char *err, size_t len)
{
	char path[4096];
	unsigned int i;

	for (i = 0; i < n; i++)
		*pin_fd(&pins[i], base) = -1;
	for (i = 0; i < n; i++) {
		int *fd = pin_fd(&pins[i], base);

		toe_join(path, sizeof(path), dir, toe_map_names[pins[i].id]);
		*fd = bpf_obj_get(path);
		if (*fd < 0 && !pins[i].optional) {
			toe_errf(err, len, "opentoe is not loaded: cannot open %s: %s (run toe-loader load)",
				 path, strerror(errno));
			toe_close_pins(pins, n, base);
			return -1;
		}
	}
	return 0;
}

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
	return nftw(root, cg_visit, 16, FTW_PHYS | FTW_MOUNT) == 1 ? 0 : -ENOENT;
}

unsigned long toe_netns_ino(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : (unsigned long)st.st_ino;
}

__u64 toe_netns_cookie(void)
{
	__u64 c = 0;
	socklen_t len = sizeof(c);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, TOE_SO_NETNS_COOKIE, &c, &len))
		c = 0;
	close(fd);
	return c;
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
		toe_err("cannot mount bpffs on /sys/fs/bpf: %s", strerror(errno));
		return -errno;
	}
	toe_err("pin folder %s is not on a bpf filesystem (mount -t bpf bpf %s)",
		pin_dir, parent);
	return -EINVAL;
}

/* ---- JSON */

void tj_start(struct toe_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

static void sep(struct toe_json *j)
{
	if (j->key) {
		j->key = false;
		return;
	}
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
}

static void open_(struct toe_json *j, char c)
{
	sep(j);
	fputc(c, j->f);
	if (j->depth < 31)
		j->depth++;
	j->first[j->depth] = true;
}

static void close_(struct toe_json *j, char c)
{
	if (j->depth > 0)
		j->depth--;
	fputc(c, j->f);
}

void tj_obj(struct toe_json *j) { open_(j, '{'); }
void tj_obj_end(struct toe_json *j) { close_(j, '}'); }
void tj_arr(struct toe_json *j) { open_(j, '['); }
void tj_arr_end(struct toe_json *j) { close_(j, ']'); }

static void quote(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void tj_key(struct toe_json *j, const char *k)
{
	sep(j);
	quote(j->f, k);
	fputc(':', j->f);
	j->key = true;
}

void tj_str(struct toe_json *j, const char *s)
{
	sep(j);
	quote(j->f, s);
}

void tj_u64(struct toe_json *j, unsigned long long v)
{
	sep(j);
	fprintf(j->f, "%llu", v);
}

void tj_i64(struct toe_json *j, long long v)
{
	sep(j);
	fprintf(j->f, "%lld", v);
}

void tj_f64(struct toe_json *j, double v)
{
	sep(j);
	fprintf(j->f, "%.6g", v);
}

void tj_bool(struct toe_json *j, bool v)
{
	sep(j);
	fputs(v ? "true" : "false", j->f);
}

void tj_null(struct toe_json *j)
{
	sep(j);
	fputs("null", j->f);
}

void tj_end(struct toe_json *j)
{
	fputc('\n', j->f);
	fflush(j->f);
}
