/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * For the test and benchmark tools that put each end of a connection in
 * its own network namespace (bench/loadgen, selftests/tools/bypass_check).
 */
#ifndef __TOE_SETNS_H
#define __TOE_SETNS_H

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

/* Enter the network namespace at path (/run/netns/NAME); NULL: stay. */
static inline int toe_enter_netns(const char *path)
{
	int fd;

	if (!path)
		return 0;
	fd = open(path, O_RDONLY);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		perror(path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

#endif /* __TOE_SETNS_H */
