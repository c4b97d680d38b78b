// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed's one epoll set (loop.c waits on it): a source added, its kind
 * (enum src) in the high 32 bits of the event's data.
 */
#include <sys/epoll.h>
#include <linux/types.h>
#include "ep.h"

int ep_add(int epfd, int fd, enum src s)
{
	struct epoll_event ev = { .events = EPOLLIN,
				  .data.u64 = (__u64)s << 32 };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}
