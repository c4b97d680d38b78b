/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * opentoe generic-netlink ABI, shared by the kernel module (kmod/) and user
 * space (toed, toectl, tests).  Only fixed-width __u* types, #defines and
 * enums: include it from both sides.
 *
 * Family "opentoe", version OPENTOE_GENL_VERSION.  Every command needs
 * CAP_NET_ADMIN (GENL_ADMIN_PERM), also the dumps; subscribing to the
 * "events" multicast group needs CAP_NET_ADMIN too.  Requests are validated
 * strictly: unknown attributes, wrong types and oversized values are refused
 * with EINVAL / ERANGE and an extended ACK message.
 *
 * Objects are global to the host but each request and dump only sees the
 * devices whose lower net_device is in the caller's network namespace
 * (devices without one belong to the initial namespace).
 *
 * Commands (request attributes, * = mandatory -> reply):
 *
 *  OPENTOE_CMD_DEV_GET      doit: DEV_INDEX*  -> one device message
 *                           dump: none        -> one message per device
 *      A device message holds: DEV_INDEX, DEV_NAME, DEV_TTID, DEV_NCONN,
 *      DEV_TOM (only when a TOM is attached), DEV_IFINDEX + DEV_IFNAME (when
 *      bound to a net_device), and only while a TOM is attached:
 *      DEV_TIDS_USED, DEV_TIDS_RESERVED, DEV_TIDS_HOST, DEV_LISTENERS,
 *      DEV_STIDS_RESERVED, DEV_L2T_SIZE, DEV_L2T_USED, DEV_STATS (nest of
 *      OPENTOE_STAT_*, __u64 each).
 *  OPENTOE_CMD_DEV_ATTACH   DEV_INDEX*  -> ack.  Activate: attach a TOM by
 *                           the device's type id.  EALREADY if attached,
 *                           ENOPROTOOPT if no TOM knows the type id.
 *  OPENTOE_CMD_DEV_DETACH   DEV_INDEX*  -> ack.  EBUSY while connections,
 *                           listeners or device-side releases remain,
 *                           ENOTCONN if no TOM is attached.
 *  OPENTOE_CMD_TOM_GET      dump -> TOM_NAME, TOM_IDS (nest of TOM_ID),
 *                           TOM_NDEVS per registered TOM.
 *  OPENTOE_CMD_TID_ALLOC    DEV_INDEX*, FLOW_SADDR4+FLOW_DADDR4 or
 *                           FLOW_SADDR6+FLOW_DADDR6, FLOW_SPORT*, FLOW_DPORT*
 *                           [TID] -> DEV_INDEX, TID, L2T_INDEX.  Offloads
 *                           the flow: the route to DADDR must leave through
 *                           the device's net_device (ENETUNREACH), ENOSPC
 *                           when nconn TIDs (or the L2T) are used up,
 *                           ENOPROTOOPT when no TOM is attached.  The TID is
 *                           the flow's until OPENTOE_CMD_TID_FREE.  With TID:
 *                           binds that TID, reserved by TID_RESERVE, to the
 *                           flow (ENOENT if it is not a reserved TID); when
 *                           the device refuses, it stays reserved.
 *  OPENTOE_CMD_TID_FREE     DEV_INDEX*, TID* -> ack.  The host side lets go
 *                           of the TID; it is reused once the device has
 *                           released it too (asynchronously).  ENOENT if the
 *                           TID is not held by the host.  A reserved TID
 *                           is free again at once.
 *  OPENTOE_CMD_TID_GET      dump, optional DEV_INDEX filter -> one message
 *                           per TID in use: DEV_INDEX, TID, TID_STATE,
 *                           L2T_INDEX, FLOW_SADDR4/6, FLOW_DADDR4/6,
 *                           FLOW_SPORT, FLOW_DPORT.  A daemon that restarts
 *                           finds the TIDs it held here (they outlive its
 *                           socket: TIDs are freed by TID_FREE only, or
 *                           when the device goes).  A reserved TID has
 *                           TID_STATE HOST|RESERVED and no FLOW_* or
 *                           L2T_INDEX; one being bound has TID_STATE 0.
 *  OPENTOE_CMD_TID_RESERVE  DEV_INDEX* -> DEV_INDEX, TID.  Takes a TID for a
 *                           flow not yet known (ENOSPC when nconn are in
 *                           use): the datapath's pool (toed keeps it filled)
 *                           hands it to a connection at once, and toed binds
 *                           it with TID_ALLOC + TID afterwards.  Reserved
 *                           TIDs count in DEV_TIDS_RESERVED, not in
 *                           DEV_TIDS_USED; DEV_DETACH frees them, as the
 *                           device goes.  With SERVER: a server TID, for a
 *                           listener to come (ENOSPC when every one is
 *                           taken), counted in DEV_STIDS_RESERVED, not in
 *                           DEV_LISTENERS nor LISTEN_GET; LISTEN_START with
 *                           DEV_INDEX and TID takes it, TID_FREE with
 *                           SERVER gives it back unused (ENOENT if it is
 *                           not a reserved server TID).
 *  OPENTOE_CMD_L2T_GET      dump, optional DEV_INDEX filter -> one message
 *                           per L2T entry in use: DEV_INDEX, L2T_INDEX,
 *                           L2T_ADDR4 or L2T_ADDR6, L2T_IFINDEX, L2T_LLADDR
 *                           (when known), L2T_STATE (NUD_* bits of
 *                           <linux/neighbour.h>), L2T_REFCNT.
 *  OPENTOE_CMD_LISTEN_START LISTEN_ADDR4 or LISTEN_ADDR6 (absent: wildcard,
 *                           then LISTEN_FAMILY* is needed), LISTEN_PORT*,
 *                           DEV_INDEX -> ack.  Without DEV_INDEX: tells every
 *                           attached device (and every device attached
 *                           later) about a listening socket; a device
 *                           without a free server TID does not offload it.
 *                           With DEV_INDEX: that device alone, which must
 *                           take it (ENODEV, ENOPROTOOPT without a TOM,
 *                           ENOSPC without a free server TID); the listener
 *                           then lasts until LISTEN_STOP or until the
 *                           device's TOM is detached.  EEXIST if a listener
 *                           of the address already reaches the device (one
 *                           without DEV_INDEX reaches all of them).  With
 *                           DEV_INDEX and TID: the listener takes that
 *                           server TID, reserved by TID_RESERVE + SERVER
 *                           (ENOENT if it is not); refused, the server TID
 *                           stays reserved.
 *  OPENTOE_CMD_LISTEN_STOP  same attributes (DEV_INDEX as given to START)
 *                           -> ack; ENOENT if unknown.
 *  OPENTOE_CMD_LISTEN_GET   dump, optional DEV_INDEX filter -> one message
 *                           per server TID in use: DEV_INDEX, TID (the
 *                           server TID), LISTEN_FAMILY, LISTEN_ADDR4 or
 *                           LISTEN_ADDR6 (0 / :: for a wildcard),
 *                           LISTEN_PORT.  The module knows no namespaces
 *                           beyond its devices': a daemon reconciles its
 *                           listeners against this after a restart.  With
 *                           SERVER: one message per server TID reserved
 *                           for a listener to come (TID_RESERVE + SERVER),
 *                           DEV_INDEX, TID and TID_STATE HOST|RESERVED, no
 *                           LISTEN_*: a daemon frees those no listener
 *                           took.
 *
 * Events, multicast on group OPENTOE_GENL_MCGRP_EVENTS in the namespace of
 * the device's net_device:
 *  OPENTOE_CMD_DEV_NEW_NTF, OPENTOE_CMD_DEV_DEL_NTF, OPENTOE_CMD_DEV_CHANGE_NTF
 *      (attach, detach, net_device gone): a device message.
 *  OPENTOE_CMD_L2T_CHANGE_NTF: an L2T entry message (neighbour update).
 *
 * Addresses and ports are in network byte order; everything else is host
 * order.
 */
#ifndef __OPENTOE_GENL_H
#define __OPENTOE_GENL_H

#include <linux/types.h>

#define OPENTOE_GENL_NAME "opentoe"
#define OPENTOE_GENL_VERSION 1
#define OPENTOE_GENL_MCGRP_EVENTS "events"

/* Longest TOE device name, with its NUL (the patch's TOENAMSIZ). */
#define OPENTOE_NAMSIZ 16
/* Longest TOM name, with its NUL. */
#define OPENTOE_TOM_NAMSIZ 32

/* TOE type ids (the patch's enum). */
enum opentoe_ttid {
	OPENTOE_ID_CHELSIO_T1 = 1,
	OPENTOE_ID_CHELSIO_T1C,
	OPENTOE_ID_CHELSIO_T3,
};

enum opentoe_cmd {
	OPENTOE_CMD_UNSPEC,
	OPENTOE_CMD_DEV_GET,
	OPENTOE_CMD_DEV_ATTACH,
	OPENTOE_CMD_DEV_DETACH,
	OPENTOE_CMD_TOM_GET,
	OPENTOE_CMD_TID_ALLOC,
	OPENTOE_CMD_TID_FREE,
	OPENTOE_CMD_L2T_GET,
	OPENTOE_CMD_LISTEN_START,
	OPENTOE_CMD_LISTEN_STOP,
	/* notifications, never requests */
	OPENTOE_CMD_DEV_NEW_NTF,
	OPENTOE_CMD_DEV_DEL_NTF,
	OPENTOE_CMD_DEV_CHANGE_NTF,
	OPENTOE_CMD_L2T_CHANGE_NTF,
	OPENTOE_CMD_TID_GET,
	OPENTOE_CMD_TID_RESERVE,
	OPENTOE_CMD_LISTEN_GET,

	__OPENTOE_CMD_MAX,
	OPENTOE_CMD_MAX = __OPENTOE_CMD_MAX - 1
};

enum opentoe_attr {
	OPENTOE_A_UNSPEC,
	OPENTOE_A_PAD, /* alignment padding for __u64 */
	OPENTOE_A_DEV_INDEX, /* __u32, >= 1 */
	OPENTOE_A_DEV_NAME, /* string, < OPENTOE_NAMSIZ */
	OPENTOE_A_DEV_TTID, /* __u32, enum opentoe_ttid */
	OPENTOE_A_DEV_NCONN, /* __u32, size of the TID table */
	OPENTOE_A_DEV_TOM, /* string: attached TOM's name */
	OPENTOE_A_DEV_IFINDEX, /* __u32: lower net_device */
	OPENTOE_A_DEV_IFNAME, /* string: lower net_device */
	OPENTOE_A_DEV_TIDS_USED, /* __u32: by connections */
	OPENTOE_A_DEV_LISTENERS, /* __u32 */
	OPENTOE_A_DEV_L2T_SIZE, /* __u32 */
	OPENTOE_A_DEV_L2T_USED, /* __u32 */
	OPENTOE_A_DEV_STATS, /* nest: OPENTOE_STAT_* */
	OPENTOE_A_TOM_NAME, /* string */
	OPENTOE_A_TOM_IDS, /* nest: OPENTOE_A_TOM_ID, repeated */
	OPENTOE_A_TOM_ID, /* __u32, inside OPENTOE_A_TOM_IDS */
	OPENTOE_A_TOM_NDEVS, /* __u32: devices attached */
	OPENTOE_A_FLOW_SADDR4, /* __be32 */
	OPENTOE_A_FLOW_DADDR4, /* __be32 */
	OPENTOE_A_FLOW_SADDR6, /* 16 bytes */
	OPENTOE_A_FLOW_DADDR6, /* 16 bytes */
	OPENTOE_A_FLOW_SPORT, /* __be16, != 0 */
	OPENTOE_A_FLOW_DPORT, /* __be16, != 0 */
	OPENTOE_A_TID, /* __u32 */
	OPENTOE_A_L2T_INDEX, /* __u32 */
	OPENTOE_A_L2T_ADDR4, /* __be32: next hop */
	OPENTOE_A_L2T_ADDR6, /* 16 bytes: next hop */
	OPENTOE_A_L2T_IFINDEX, /* __u32 */
	OPENTOE_A_L2T_LLADDR, /* 6 bytes */
	OPENTOE_A_L2T_STATE, /* __u16: NUD_* */
	OPENTOE_A_L2T_REFCNT, /* __u32: TIDs using the entry */
	OPENTOE_A_LISTEN_FAMILY, /* __u8: AF_INET or AF_INET6 */
	OPENTOE_A_LISTEN_ADDR4, /* __be32 */
	OPENTOE_A_LISTEN_ADDR6, /* 16 bytes */
	OPENTOE_A_LISTEN_PORT, /* __be16, != 0 */
	OPENTOE_A_TID_STATE, /* __u32: OPENTOE_TID_F_* */
	OPENTOE_A_DEV_TIDS_RESERVED, /* __u32: by TID_RESERVE, no flow yet */
	/*
	 * flag: TID_RESERVE and TID_FREE act on the device's server TIDs
	 * (listeners'): a server TID reserved for a listener to come, which
	 * LISTEN_START with DEV_INDEX and TID takes
	 */
	OPENTOE_A_SERVER,
	OPENTOE_A_DEV_STIDS_RESERVED, /* __u32: server TIDs reserved */
	/*
	 * __u32: TIDs the host holds, reserved or bound (until its TID_FREE;
	 * a TID being bound too): what toed's pool, bound and in-flight
	 * counts add up to (docs/architecture.md, the TID invariant)
	 */
	OPENTOE_A_DEV_TIDS_HOST,

	__OPENTOE_A_MAX,
	OPENTOE_A_MAX = __OPENTOE_A_MAX - 1
};

/* OPENTOE_A_TID_STATE: who still holds the TID */
#define OPENTOE_TID_F_HOST 0x1 /* the host: until TID_FREE */
#define OPENTOE_TID_F_DEVICE 0x2 /* the device: until it releases it */
#define OPENTOE_TID_F_RESERVED 0x4 /* reserved, bound to no flow yet */

/* Counters of a device's TOM, inside OPENTOE_A_DEV_STATS (__u64 each). */
enum opentoe_stat {
	OPENTOE_STAT_UNSPEC,
	OPENTOE_STAT_PAD,
	OPENTOE_STAT_CONNECTS, /* TIDs handed out */
	OPENTOE_STAT_CONNECT_FAILS, /* refused by the device */
	OPENTOE_STAT_NO_TID, /* refused: nconn TIDs in use */
	OPENTOE_STAT_NO_L2T, /* refused: L2T full */
	OPENTOE_STAT_NO_ROUTE, /* refused by can_offload */
	OPENTOE_STAT_CLOSES, /* host released a TID */
	OPENTOE_STAT_RELEASES, /* device released a TID */
	OPENTOE_STAT_L2T_UPDATES, /* neighbour updates applied */
	OPENTOE_STAT_LISTENS, /* listeners started */
	OPENTOE_STAT_RESERVES, /* TIDs reserved (TID_RESERVE) */

	__OPENTOE_STAT_MAX,
	OPENTOE_STAT_MAX = __OPENTOE_STAT_MAX - 1
};

#endif /* __OPENTOE_GENL_H */
