/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: its one epoll set (ep.c), which loop.c waits on. */
#ifndef __TOE_EP_H
#define __TOE_EP_H

/* What an epoll event came from: the high 32 bits of its data.u64. */
enum src {
	SRC_SIGNAL = 1,
	SRC_NETLINK,
	SRC_RING,
	SRC_LISTEN,
	SRC_TIMER,
	SRC_MON,
	SRC_GENL,
	SRC_CLIENT,
	SRC_NFT, /* conntrack's destroy events (nft.c: the warden reads nftables') */
	SRC_METRICS /* --metrics: libmicrohttpd's epoll fd (metrics.c) */
};

/* fd added to the set epfd, its events reported as s's. */
int ep_add(int epfd, int fd, enum src s);

#endif /* __TOE_EP_H */
