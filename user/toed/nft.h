/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: the firewall watch (nft.c).  nftables announces every committed
 * ruleset change on netlink (NETLINK_NETFILTER, group NFNLGRP_NFTABLES,
 * NFT_MSG_NEWGEN; Debian's iptables is iptables-nft, so its changes are
 * announced too); at each one toed bumps toe_fwd_gen.gen, which sends every
 * fast-path flow of the forward path back through the stack to be admitted
 * again under the new ruleset.  While it runs, toed also keeps
 * toe_fwd_gen.lease_ns ahead of the clock: with the lease out (toed
 * stopped, killed, frozen), an admission holds for TOE_FWD_UNWATCHED_NS
 * only.  Both are a thread's of their own (the warden), which nothing
 * else in toed can hold up.
 */
#ifndef __TOE_NFT_H
#define __TOE_NFT_H

struct fwdev;

#include <stdbool.h>
#include <linux/types.h>

/*
 * Join the nftables group, take the lease (bumping the generation once:
 * the ruleset may have changed while no toed watched) and start the
 * warden, the thread that from then on alone reads nftables' events and
 * keeps the lease (nft.c).  Then join conntrack's destroy group on a
 * socket of the caller's: its fd (for epoll), or -1 (after a warning: toed
 * then runs without the watch, or without conntrack's events).
 * netns: toed's network namespace (its cookie), the one whose routes it
 * follows (the lease names it: its flows' routes may be cached).
 */
int nft_open(const char *pin_dir, __u64 netns);
/* The conntrack socket nft_open made (-1 if none). */
int nft_fd(void);
/* It is readable: destroyed entries end their fast paths (ct.c). */
void nft_process(struct fwdev *fw);
/* rtnetlink saw a change that may reroute: the cached routes go stale. */
void nft_route_changed(void);
__u64 nft_route_changes(void);
/*
 * Times conntrack's destroy events were lost (ENOBUFS): each sent every
 * fast-path flow back through the stack (a generation bump).
 */
__u64 nft_ct_lost(void);
/* toe_fwd's pin ("" before nft_open): conntrack's side of it (ct.c). */
const char *nft_fwd_path(void);
struct toe_nl;
/* rtnetlink's route callback (neigh.c): a change that may reroute packets. */
void nft_on_route(struct toe_nl *nl);
/* --no-route-cache: keep rt_gen 0, so the forward path caches no route. */
void nft_route_cache(bool on);
/* Whether the warden runs (the firewall watched, the lease kept). */
bool nft_watching(void);
/* toed stops: the warden gives the lease back (the fast path stops
 * trusting it now) and ends. */
void nft_close(void);

#endif /* __TOE_NFT_H */
