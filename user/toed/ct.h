/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: conntrack's destroy events end fast paths (ct.c), read on the
 * firewall watch's netlink socket (nft.c).
 */
#ifndef __TOED_CT_H
#define __TOED_CT_H

#include <stdbool.h>
#include <linux/netlink.h>

/*
 * One ctnetlink message h: if it is a conntrack entry's destruction (its
 * deletion, `conntrack -D`, or its expiry) of a TCP flow, the flow's
 * toe_fwd entry (pinned at fwd_path) goes; true if one went.
 */
bool ct_destroyed(const char *fwd_path, const struct nlmsghdr *h);

#endif /* __TOED_CT_H */
