/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: conntrack's destroy events end fast paths (ct.c), read on the
 * firewall watch's netlink socket (nft.c).
 */
#ifndef __TOED_CT_H
#define __TOED_CT_H

struct fwdev;

#include <stdbool.h>
#include <linux/netlink.h>
#include <linux/types.h>
#include "opentoe_flows.h"
#include "opentoe_events.h"
#include "opentoe_forward.h"

/*
 * One ctnetlink message h: if it is a conntrack entry's destruction (its
 * deletion, `conntrack -D`, or its expiry) of a TCP flow, the flow's
 * toe_fwd entry (pinned at fwd_path) goes; true if one went.
 */
bool ct_destroyed(struct fwdev *fw, const char *fwd_path,
		  const struct nlmsghdr *h);

struct toe_event;
struct toe_flow_key;
struct toe_fwd;

/* fwdev.c: the fast path of flow k (entry v) ended by conntrack: its event. */
void fwd_ct_gone(struct fwdev *fw, const struct toe_flow_key *k,
		 const struct toe_fwd *v);

/*
 * The forward path admitted a flow (TOE_EV_FWD_ADMITTED): its conntrack
 * entry is made ESTABLISHED, window-liberal both ways
 * (IP_CT_TCP_FLAG_BE_LIBERAL) and given the established timeout, over
 * ctnetlink, as nftables' flowtable does at offload: the stack, which no
 * longer sees the flow's window move, takes it back later (FIN, RST, a
 * ruleset change) without INVALID drops.  Then, and only then, the flow
 * may take the fast path: toe_fwd_ctok (next to toe_fwd, pinned at
 * fwd_path) says so.  True if conntrack took it.
 */
bool ct_admitted(const char *fwd_path, const struct toe_event *e);

/*
 * Flows admitted TOE_FWD_CT_WAIT at least min_age_ns ago (bpf_ktime_get_ns)
 * and not yet given their word: ct_admitted for each; how many took.  With
 * 0, at toed's start and after an event loss: those whose event toed did
 * not read.  Later, the ones still waiting a while after their event: the
 * ctnetlink update failed, or toe_fwd_ctok (an LRU) evicted the word
 * before the flow's next packet took it.
 */
unsigned int ct_wait_sweep(const char *fwd_path, __u64 min_age_ns);

#endif /* __TOED_CT_H */
