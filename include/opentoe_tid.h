/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: the kernel module's TIDs in the datapath (toe_tid_pool,
 * toe_tid_held, toe_tid_demote), shared by bpf/ and user/
 * (include/opentoe.h).
 */
#ifndef __OPENTOE_TID_H
#define __OPENTOE_TID_H

#include "opentoe_flows.h"

/*
 * The kernel module's TIDs, taken synchronously by sock_ops (issue: the
 * datapath and the module agree at every instant).
 *
 * toe_tid_pool: ARRAY_OF_MAPS[2 * TOE_MAX_DEVS] of QUEUE(__u32 TID,
 * TOE_TID_POOL_MAX), index = toe_devs index of a module device for its
 * connections' TIDs, TOE_STID_POOL(index) for its server TIDs (listeners:
 * sock_ops pops one at listen time, an empty pool keeps the listener on
 * the host, TOE_R_NO_STID; toed fills it with TID_RESERVE + SERVER and
 * binds it with LISTEN_START + TID from the listen event).  toed
 * fills each with TIDs the module reserved (TID_RESERVE) and keeps it
 * topped up; sock_ops pops one when it offloads a connection on the
 * device, and an empty pool is a refusal (TOE_R_NO_TID) decided there.
 *
 * toe_tid_held: HASH, socket cookie -> toe_tid_held.  The TID a live
 * connection took, and with it the connection's device slot: whoever
 * deletes the entry (sock_ops at close, or toe_tid_demote when the module
 * refuses the flow or its device goes) releases the slot, exactly once.
 * toed binds the TID to its flow (TID_ALLOC + TID) from the
 * flow_offloaded event, or from this map after a restart.
 */
#define TOE_TID_NONE 0xffffffffU
#define TOE_TID_POOL_MAX 1024
#define TOE_STID_POOL(i) ((i) + TOE_MAX_DEVS)
#define TOE_STID_POOL_MAX 64 /* server TIDs toed keeps reserved per device */
#define TOE_TID_HELD_MAX 65536

struct toe_tid_held {
	struct toe_flow_key key;
	__u32 dev; /* toe_devs index */
	__u32 tid; /* the module's TID */
};

/* toe_tid_demote's argument (BPF_PROG_TEST_RUN data, as toe_byp_probe). */
struct toe_tid_demote {
	__u8 eth[16]; /* room for an Ethernet header, unused */
	__u64 cookie; /* in: the socket's cookie */
	__u32 dev; /* in: what its toe_tid_held entry must hold */
	__u32 tid;
	__u32 reason; /* in: enum toe_reason for its record */
	__u32 done; /* out: 1 demoted; 0 no such entry (closed) */
};

#endif /* __OPENTOE_TID_H */
