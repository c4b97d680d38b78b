// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* opentoe: a daemon's run folder, its lock and its socket (rundir.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "err.h"
#include "path.h"
#include "rundir.h"

int toe_rundir_lock(const char *run_dir, const char *name)
{
	char path[4096], pid[32];
	int fd, n;

	toe_join(path, sizeof(path), run_dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		toe_err("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		n = errno == EWOULDBLOCK ? pread(fd, pid, sizeof(pid) - 1, 0) :
					   -1;
		if (n > 0) {
			pid[n] = 0;
			pid[strcspn(pid, "\n")] = 0;
		}
		toe_err("another toed is running (pid %s; lock %s held)",
			n > 0 ? pid : "?", path);
		close(fd);
		return -1;
	}
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, n, 0) != n)
		toe_err("warning: cannot write the pid into %s", path);
	return fd;
}

int toe_rundir_listen(const char *run_dir, const char *sock, char *path,
		      size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd;

	if (len > sizeof(sa.sun_path))
		len = sizeof(sa.sun_path);
	if (snprintf(path, len, "%s/%s", run_dir, sock) >= (int)len) {
		toe_err("run folder %s: path too long for a unix socket",
			run_dir);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		toe_err("%s exists and is not a socket: refused", path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	unlink(path); /* a stale one: the caller holds the lock */
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 256)) {
		umask(old);
		toe_err("cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	umask(old);
	chmod(path, 0600);
	return fd;
}
