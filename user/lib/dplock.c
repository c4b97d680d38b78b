// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* opentoe: the datapath locks (dplock.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "lib/knob.h"
#include "lib/dplock.h"
#include "lib/err.h"

static const char *const kind_names[] = {
	[TOE_LOCK_CHANGE] = "change",
	[TOE_LOCK_DAEMON] = "toed",
	[TOE_LOCK_DUMP] = "dump",
};

const char *toe_run_dir(void)
{
	static const char *dir;

	if (!dir) {
		dir = toe_knob("TOE_RUN_DIR");
		if (!dir || !*dir)
			dir = TOE_RUN_DIR;
	}
	return dir;
}

const char *toe_lock_dir(void)
{
	static char dir[PATH_MAX];

	if (!dir[0])
		snprintf(dir, sizeof(dir), "%s/locks", toe_run_dir());
	return dir;
}

/*
 * The folder name of the folder parent (a folder's fd, or AT_FDCWD), made
 * (mode 0700) if missing, opened without following a symbolic link and
 * checked: owned by the effective uid, writable by no one else.  Its fd,
 * or -1 with err naming it as shown.
 */
static int open_secure_dir(int parent, const char *name, const char *shown,
			   char *err, size_t len)
{
	struct stat st;
	int fd;

	if (mkdirat(parent, name, 0700) && errno != EEXIST)
		return toe_errf(err, len, "cannot create %s: %s", shown,
				strerror(errno));
	fd = openat(parent, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
		return toe_errf(
			err, len,
			"%s is not a folder (a symbolic link?): refused",
			shown);
	if (fd < 0)
		return toe_errf(err, len, "cannot open %s: %s", shown,
				strerror(errno));
	if (fstat(fd, &st)) {
		close(fd);
		return toe_errf(err, len, "cannot stat %s: %s", shown,
				strerror(errno));
	}
	if (st.st_uid != geteuid()) {
		close(fd);
		return toe_errf(err, len,
				"%s is owned by uid %u, not %u: refused", shown,
				(unsigned int)st.st_uid,
				(unsigned int)geteuid());
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		close(fd);
		return toe_errf(
			err, len,
			"%s is writable by its group or others (mode %04o): refused",
			shown, (unsigned int)(st.st_mode & 07777));
	}
	return fd;
}

int toe_secure_dir(const char *dir, char *err, size_t len)
{
	int fd = open_secure_dir(AT_FDCWD, dir, dir, err, len);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* FNV-1a, 64 bits: a short stable name for a path. */
static unsigned long long fnv64(const char *s)
{
	unsigned long long h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* Append component c (of n bytes) to the absolute path buf ("/" alone). */
static int push(char *buf, size_t len, const char *c, size_t n)
{
	size_t at = strlen(buf);

	if (at == 1)
		at = 0; /* "/" */
	if (at + 1 + n + 1 > len)
		return -1;
	buf[at] = '/';
	memcpy(buf + at + 1, c, n);
	buf[at + 1 + n] = 0;
	return 0;
}

/* Drop buf's last component ("/" stays "/"). */
static void pop(char *buf)
{
	char *s = strrchr(buf, '/');

	if (s == buf)
		buf[1] = 0;
	else if (s)
		*s = 0;
}

/*
 * buf's symbolic link (just pushed), if it is one: its target put in front
 * of rest (buf back to its folder, or to "/" for an absolute target).
 * 1 if it was a link, 0 if not (or it does not exist), -1 on error.
 */
static int follow(char *buf, char *rest, size_t len, int *links)
{
	char target[PATH_MAX], tmp[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (lstat(buf, &st) || !S_ISLNK(st.st_mode))
		return 0;
	if (++*links > 40) {
		errno = ELOOP;
		return -1;
	}
	n = readlink(buf, target, sizeof(target) - 1);
	if (n < 0)
		return -1;
	target[n] = 0;
	if (snprintf(tmp, sizeof(tmp), "%s/%s", target, rest) >=
	    (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	snprintf(rest, len, "%s", tmp);
	if (target[0] == '/')
		snprintf(buf, PATH_MAX, "/");
	else
		pop(buf);
	return 1;
}

/*
 * The pin folder's canonical path, resolved as the kernel would resolve it,
 * also where it does not exist yet: component by component from "/" (or
 * the working folder), "." and empty ones dropped, ".." one up, every
 * symbolic link followed, a dangling one too (its target is the folder the
 * loader will make).  So DIR, DIR/., DIR/, //DIR and a link to DIR all
 * name one datapath and take one lock.
 */
static int canonical(const char *pin_dir, char *buf, size_t len)
{
	char rest[PATH_MAX], *p, *c;
	int links = 0, r;

	if (len < PATH_MAX ||
	    snprintf(rest, sizeof(rest), "%s", pin_dir) >= (int)sizeof(rest)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (pin_dir[0] == '/')
		snprintf(buf, len, "/");
	else if (!getcwd(buf, len))
		return -1;
	for (p = rest; *p;) {
		size_t n;

		c = p + strspn(p, "/");
		n = strcspn(c, "/");
		p = c + n;
		if (!n || (n == 1 && c[0] == '.'))
			continue;
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			pop(buf);
			continue;
		}
		if (push(buf, len, c, n)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memmove(rest, p, strlen(p) + 1);
		p = rest;
		r = follow(buf, rest, sizeof(rest), &links);
		if (r < 0)
			return -1;
	}
	return 0;
}

int toe_dplock_path(const char *pin_dir, enum toe_lock_kind kind, char *buf,
		    size_t len)
{
	char canon[PATH_MAX], base[PATH_MAX];

	if (canonical(pin_dir, canon, sizeof(canon)))
		return -1;
	snprintf(base, sizeof(base), "%s", canon);
	if (snprintf(buf, len, "%s/%.64s.%016llx.%s.lock", toe_lock_dir(),
		     basename(base), fnv64(canon),
		     kind_names[kind]) >= (int)len)
		return -1;
	return 0;
}

/*
 * The pid holding an flock() on fd's file, from /proc/locks (lines such as
 * "1: FLOCK  ADVISORY  WRITE 123 00:19:4567 0 EOF"; a waiter's has "->"
 * where FLOCK is); 0 if none is found.
 */
static int lock_owner(int fd)
{
	unsigned int maj, min;
	unsigned long ino;
	char line[256], type[16];
	struct stat st;
	int pid, found = 0;
	FILE *f;

	if (fstat(fd, &st))
		return 0;
	f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%lu", type, &pid,
			   &maj, &min, &ino) == 5 &&
		    !strcmp(type, "FLOCK") && ino == st.st_ino &&
		    maj == major(st.st_dev) && min == minor(st.st_dev))
			found = pid;
	}
	fclose(f);
	return found;
}

/*
 * Who holds the lock: "pid 123 (toe-loader load)" as the holder wrote it
 * in the lock file, if /proc/locks names that pid (or cannot tell); else
 * "pid 123 (COMM)" of the process /proc/locks names (the file may still
 * name an earlier holder, or one that writes it only now); else "another
 * process".
 */
static void holder(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);
	int owner = lock_owner(fd), wrote = 0;
	char path[64], comm[32] = "";
	FILE *f;

	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	if (sscanf(buf, "pid %d", &wrote) == 1 && (!owner || owner == wrote))
		return;
	if (!owner) {
		snprintf(buf, len, "another process");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", owner);
	f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	snprintf(buf, len, "pid %d (%s)", owner, comm[0] ? comm : "?");
}

/* The lock file path, opened in the lock folder lock_dir (its fd). */
static int open_lock_file(int lock_dir, const char *path, char *err, size_t len)
{
	const char *name = strrchr(path, '/') + 1;
	struct stat st;
	int fd;

	fd = openat(lock_dir, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	if (fd < 0)
		return toe_errf(err, len, "cannot open the lock %s: %s", path,
				strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		return toe_errf(
			err, len,
			"the lock %s is not a private regular file of uid %u: refused",
			path, (unsigned int)geteuid());
	}
	return fd;
}

/*
 * The lock file of pin_dir's lock of kind kind, opened: the run folder and
 * the lock folder checked on the way (open_secure_dir).  Its fd, or -1.
 */
static int open_lock(const char *pin_dir, enum toe_lock_kind kind, char *path,
		     size_t plen, char *err, size_t len)
{
	int run, locks, fd;

	if (toe_dplock_path(pin_dir, kind, path, plen))
		return toe_errf(err, len,
				"pin folder %s cannot be resolved: %s", pin_dir,
				strerror(errno ? errno : ENAMETOOLONG));
	run = open_secure_dir(AT_FDCWD, toe_run_dir(), toe_run_dir(), err, len);
	if (run < 0)
		return -1;
	locks = open_secure_dir(run, "locks", toe_lock_dir(), err, len);
	close(run);
	if (locks < 0)
		return -1;
	fd = open_lock_file(locks, path, err, len);
	close(locks);
	return fd;
}

/* Milliseconds since some fixed point (CLOCK_MONOTONIC). */
static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

int toe_dplock_take(const char *pin_dir, enum toe_lock_kind kind,
		    const char *who, int wait_ms, char *err, size_t len)
{
	char path[PATH_MAX], text[128];
	struct timespec pause = { .tv_nsec = 20 * 1000000L };
	long long deadline = now_ms() + wait_ms;
	int fd, n;

	errno = 0;
	fd = open_lock(pin_dir, kind, path, sizeof(path), err, len);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK || now_ms() >= deadline) {
			int e = errno;

			holder(fd, text, sizeof(text));
			close(fd);
			if (e != EWOULDBLOCK)
				return toe_errf(err, len, "cannot lock %s: %s",
						path, strerror(e));
			return toe_errf(
				err, len,
				"datapath %s is locked by %s (lock %s); gave up after %d.%03d s",
				pin_dir, text, path, wait_ms / 1000,
				wait_ms % 1000);
		}
		nanosleep(&pause, NULL);
	}
	n = snprintf(text, sizeof(text), "pid %d (%s)\n", (int)getpid(), who);
	if (ftruncate(fd, 0) || pwrite(fd, text, n, 0) != n) {
		/* the lock holds all the same; only the message is poorer */
	}
	return fd;
}
