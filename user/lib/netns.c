// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* opentoe: this process's network namespace: its inode and its cookie. */
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
