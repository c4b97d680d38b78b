/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: the firewall watch (nft.c).  nftables announces every committed
 * ruleset change on netlink (NETLINK_NETFILTER, group NFNLGRP_NFTABLES,
 * NFT_MSG_NEWGEN; Debian's iptables is iptables-nft, so its changes are
 * announced too); at each one toed bumps toe_fwd_gen.gen, which sends every
 * fast-path flow of the forward path back through the stack to be admitted
 * again under the new ruleset.  While it runs, toed also keeps
 * toe_fwd_gen.lease_ns ahead of the clock: with the lease out (toed
 * stopped), an admission holds for TOE_FWD_UNWATCHED_NS only.
 */
#ifndef __TOE_NFT_H
#define __TOE_NFT_H

#include <stdbool.h>
#include <linux/types.h>

/*
 * Join the nftables group and take the lease (bumping the generation once:
 * the ruleset may have changed while no toed watched).  The socket's fd
 * (for epoll), or -1 after a warning: toed then runs without the watch.
 * netns: toed's network namespace (its cookie), the one whose routes it
 * follows (the lease names it: its flows' routes may be cached).
 */
int nft_open(const char *pin_dir, __u64 netns);
/* The socket nft_open made (-1 if none). */
int nft_fd(void);
/* The socket is readable: read every message; a change bumps the generation. */
void nft_process(void);
/*
 * The one-shot timer armed at each change (TOE_FWD_AGAIN_MS), for epoll,
 * and what to do when it fires: bump the generation a second time.
 */
int nft_again_fd(void);
void nft_again(void);
/* rtnetlink saw a change that may reroute: the cached routes go stale. */
void nft_route_changed(void);
__u64 nft_route_changes(void);
/* toe_fwd's pin ("" before nft_open): conntrack's side of it (ct.c). */
const char *nft_fwd_path(void);
/* --no-route-cache: keep rt_gen 0, so the forward path caches no route. */
void nft_route_cache(bool on);
/* The 2 s timer: renew the lease (and follow a datapath loaded anew). */
void nft_tick(void);
/*
 * The lease renewed every TOE_FWD_RT_RENEW_MS (the route cache's
 * freshness); nft_timeout_ms bounds epoll's wait (ms, -1: none) by it.
 */
void nft_heartbeat(void);
int nft_timeout_ms(int ms);
/* toed stops: give the lease back (the fast path stops trusting it now). */
void nft_close(void);

#endif /* __TOE_NFT_H */
