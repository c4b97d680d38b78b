// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* opentoe: this process's network namespace: its inode and its cookie. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/netns.h"

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

int toe_netns_cookie_at(const char *path, __u64 *cookie)
{
	int fd, home, e = 0;

	*cookie = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home < 0 || setns(fd, CLONE_NEWNET)) {
		e = errno;
	} else {
		*cookie = toe_netns_cookie();
		if (setns(home, CLONE_NEWNET))
			abort(); /* never left in another's namespace */
	}
	close(fd);
	if (home >= 0)
		close(home);
	return e ? e : *cookie ? 0 : ENOTSUP;
}
