/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: layouts of the flow records (toe_flows), XDP's prefilter of them
 * (toe_flow_filter), each socket's own state (toe_sk_state) and the
 * offloaded listeners (toe_listeners), shared by bpf/ and user/
 * (include/opentoe.h).
 */
#ifndef __OPENTOE_FLOWS_H
#define __OPENTOE_FLOWS_H

#include "opentoe_common.h"

#define TOE_FLOWS_DEFAULT 262144

/*
 * Flow key, from this host's point of view: l = local end, r = remote end.
 * Addresses in network order (IPv4 in addr[0], rest zero; IPv4-mapped
 * IPv6 sockets are keyed as IPv4 so that XDP, which sees IPv4 packets,
 * finds them); ports in host order.  netns is the cookie of the socket's
 * network namespace (bpf_get_netns_cookie(), SO_NETNS_COOKIE): two
 * namespaces may hold connections with the same addresses and ports
 * (127.0.0.1 in every container), and each must have its own record.  XDP
 * and tc key a packet with the cookie of the namespace of the device it
 * arrived on.  Routed flows (toe_fwd, toe_fwd_half) carry netns 0: their
 * namespace is in the value.  proto: 0 for TCP (every key but a routed
 * UDP flow's: a key made zeroed is a TCP one, as before proto was there),
 * TOE_IPPROTO_UDP for a routed UDP flow (toe_fwd, toe_fwd_half,
 * toe_fwd_nat, toe_fwd_ctok), so a UDP flow never finds a TCP flow's entry
 * of the same addresses and ports.
 */
struct toe_flow_key {
	__u32 laddr[4];
	__u32 raddr[4];
	__u16 lport;
	__u16 rport;
	__u8 family; /* TOE_AF_INET or TOE_AF_INET6 */
	__u8 proto; /* 0: TCP; TOE_IPPROTO_UDP: a routed UDP flow */
	__u8 pad[2];
	__u64 netns; /* network namespace cookie; 0 for routed flows */
};

enum toe_dir {
	TOE_DIR_ACTIVE = 0, /* this host connected */
	TOE_DIR_PASSIVE = 1, /* this host accepted */
};

/*
 * toe_flows: LRU_HASH, toe_flow_key -> toe_flow.  The table operators and
 * toectl read (the patch's TCPDIAG_OFFLOAD).  Eviction loses only this
 * record: the device slot a flow holds is owned by the socket's own
 * storage (toe_sk_state), so an evicted live flow still releases its slot
 * when the socket closes.
 */
struct toe_flow {
	__u64 start_ns; /* bpf_ktime_get_ns() when established */
	__u64 cookie; /* socket cookie */
	__u64 bytes_acked; /* from the socket at the last callback */
	__u64 bytes_received;
	__u32 segs_in;
	__u32 segs_out;
	__u32 total_retrans;
	__u32 srtt_us;
	__u32 dev; /* device index or TOE_DEV_NONE */
	__u32 rule; /* matching rule index or TOE_RULE_NONE */
	__u8 decision; /* enum toe_action */
	__u8 reason; /* enum toe_reason */
	__u8 direction; /* enum toe_dir */
	__u8 state; /* last TCP state seen (TCP_ESTABLISHED = 1) */
	__u32 policy; /* serial of the policy that decided (low bits) */
	/*
	 * Received packets and bytes XDP (or tc) counted for an offloaded
	 * flow, added atomically in place: XDP finds the record anyway, so
	 * the counters cost no second lookup.  Zero for other flows.
	 */
	__u64 xdp_packets;
	__u64 xdp_bytes;
	__u64 netns_ino; /* inode of the key's namespace, for display */
};

/*
 * toe_flow_filter: ARRAY[TOE_FILTER_SLOTS] (BPF_F_MMAPABLE), slot
 * toe_filter_slot(key) -> struct toe_filter.  A counting filter in front of
 * toe_flows for XDP: a packet whose slot is all zero cannot belong to an
 * offloaded flow, so XDP skips the toe_flows lookup and takes the path of
 * a miss; a slot that is not zero only means "look it up" (another flow may
 * share the slot, or the count may be high).
 *
 * What it guarantees: at any time, for every record of toe_flows with
 * decision offload, the record's slot is not zero.  A count may be high
 * (records evicted, overwritten, or counted twice), never low:
 *   - live: offloaded sockets open now.  sock_ops adds 1 (atomic) before it
 *     writes an offloaded record and notes it in the socket's toe_sk_state
 *     (filter, slot); at TCP_CLOSE, after the record is deleted, the
 *     socket that added 1 takes 1 off, once.  Nothing else writes it.  A
 *     record lives no longer than its socket (on_close deletes it), so a
 *     record written by a socket that added 1 is always counted.
 *   - loaded: offloaded records written by anything else, as found by
 *     toe-loader: a load over pinned maps (a sock_ops program of a version
 *     without the filter may have written records) sets it, once sock_ops
 *     is the new program and an RCU grace period has passed, to the number
 *     of offloaded records in toe_flows per slot; only toe-loader writes
 *     it, through mmap, so the datapath's atomic adds to live are never
 *     lost.  Tests that write toe_flows by hand set it too
 *     (selftests/tools/pkt.py filter).
 */
#define TOE_FILTER_SLOTS 65536

struct toe_filter {
	__u32 live; /* open offloaded sockets (sock_ops, atomic) */
	__u32 loaded; /* offloaded records found by toe-loader's last load */
};

/*
 * The filter slot of a flow key's fields (addresses in network order,
 * ports in host order, as in struct toe_flow_key): the addresses' words
 * and both ports folded into 32 bits, Fibonacci hashing to 16.  The same
 * in the datapath, in toe-loader and in selftests/tools/pkt.py.  The
 * namespace is left out on purpose: XDP reads a frame's namespace only
 * when the slot says an offloaded flow may match, so a host flow costs no
 * such read; namespaces with one tuple share a slot (a count may be high).
 */
static inline __u32 toe_filter_slot(const __u32 *laddr, const __u32 *raddr,
				    __u16 lport, __u16 rport)
{
	__u32 h = laddr[0] ^ laddr[1] ^ laddr[2] ^ laddr[3] ^ raddr[0] ^
		  raddr[1] ^ raddr[2] ^ raddr[3] ^ ((__u32)lport << 16 | rport);

	return (h * 0x9e3779b1U) >> 16;
}

/*
 * toe_sk_state: SK_STORAGE, per socket.  Owns the device slot of an
 * offloaded connection: created when the slot is taken, the slot released
 * (and dev set to TOE_DEV_NONE) exactly once, at TCP_CLOSE.  Likewise its
 * count in toe_flow_filter: filter = 1 while it holds one in slot
 * filter_slot, taken back (filter = 0) once, at TCP_CLOSE.
 */
struct toe_sk_state {
	__u32 dev; /* TOE_DEV_NONE for a module device's flow: */
	/* its slot is toe_tid_held's (by cookie) */
	__u8 decision;
	__u8 filter; /* 1: holds a count in toe_flow_filter */
	__u16 filter_slot; /* its slot there */
	__u32 tenant_what; /* what it holds of its tenant's quota (toe_tenants) */
	/* 1: a listener toe_listeners had no room for, kept on the host; its
	 * accepted sockets get a copy (BPF_F_CLONE) and stay there too */
	__u8 listen_full;
	__u8 pad[3];
	__u64 tenant; /* the namespace charged, 0: none */
	__u64 flows_tenant; /* the namespace its toe_flows record counts for */
};

/*
 * toe_listeners: HASH, toe_flow_key -> toe_listen.  The listening sockets
 * policy offloads on a device (the patch's OFFLOAD_LISTEN_START), keyed as
 * sock_ops keys them: local address (0 or :: for a wildcard) and port,
 * remote address and port 0, the socket's namespace cookie.  sock_ops
 * writes an entry when a socket listens and policy says offload on a
 * device, and deletes it when the socket leaves LISTEN; toed reads it to
 * reconcile the kernel module's server TIDs after a restart.
 */
#define TOE_LISTENERS_MAX 16384

struct toe_listen {
	__u32 dev; /* device index policy chose */
	__u32 rule; /* matching rule index or TOE_RULE_NONE */
	__u32 policy; /* serial of the policy that decided (low bits) */
	__u32 stid; /* its server TID on a module device, else TOE_TID_NONE */
	__u64 cookie; /* socket cookie */
	__u64 netns_ino; /* inode of the key's namespace, for display */
};

#endif /* __OPENTOE_FLOWS_H */
