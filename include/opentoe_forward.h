/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: layouts of the routed fast path: the neighbour and address
 * mirrors (toe_neigh, toe_local_addr), the forwarded flows (toe_fwd,
 * toe_fwd_half, toe_fwd_gen) and the egress interfaces (toe_ifaces),
 * shared by bpf/ and user/ (include/opentoe.h).
 */
#ifndef __OPENTOE_FORWARD_H
#define __OPENTOE_FORWARD_H

#include "opentoe_common.h"
#include "opentoe_flows.h" /* toe_flow_key */

/*
 * toe_neigh: HASH, toe_neigh_key -> toe_neigh.  The kernel's ARP and NDP
 * entries of the interfaces opentoe serves, mirrored by toed from rtnetlink
 * (the patch's neighbour.c hooks, done in user space).  toed is the only
 * writer; no datapath program reads it (both forward paths take the next
 * hop's MAC from the kernel's own table, bpf_fib_lookup): it is toed's view
 * for toectl neigh, its metrics and the kernel module's L2T entries, so a
 * stale entry here never decides a frame's MAC.  NOARP pseudo-entries
 * (multicast, broadcast) are not mirrored.  An entry without a usable
 * link-layer address (INCOMPLETE, FAILED) is kept with its state so that the
 * map equals `ip neigh show`; readers test toe_neigh_valid().
 */
#define TOE_NEIGH_MAX 131072

struct toe_neigh_key {
	__u32 ifindex;
	__u8 family; /* TOE_AF_INET / TOE_AF_INET6 */
	__u8 pad[3];
	__u32 addr[4]; /* network order; IPv4 in addr[0] */
};

struct toe_neigh {
	__u8 mac[6]; /* link-layer address; zero if none */
	__u16 state; /* NUD_* bits, as rtnetlink reports them */
	__u64 updated_ns; /* CLOCK_MONOTONIC of toed's write (= ktime) */
	__u32 flags; /* NTF_* flags from rtnetlink */
	__u32 has_mac; /* 1 if the kernel gave an NDA_LLADDR */
};

/* NUD states in which the MAC may be used to send (<linux/neighbour.h>). */
#define TOE_NUD_VALID (0x02 | 0x04 | 0x08 | 0x10 | 0x40 | 0x80)

/*
 * toe_local_addr: HASH, toe_local_key -> toe_local.  The addresses of this
 * host (toed's network namespace), from rtnetlink address events: the
 * "is this peer local?" test for the bypass decision.
 */
#define TOE_LOCAL_MAX 4096

struct toe_local_key {
	__u8 family;
	__u8 pad[3];
	__u32 addr[4];
};

struct toe_local {
	__u32 ifindex;
	__u8 prefixlen;
	__u8 scope;
	__u16 pad;
};

/*
 * XDP forwarding (steer forward, enum toe_steer).
 *
 * toe_devmap: DEVMAP_HASH, ifindex -> struct bpf_devmap_val, and
 * toe_ifaces: HASH, ifindex -> struct toe_iface.  Written by toe-loader for
 * every interface it attaches XDP to, removed at unload: the egress devices
 * the forward path may redirect to, with the MAC it sends from.
 *
 * toe_fwd: LRU_HASH, canonical toe_flow_key -> struct toe_fwd.  The TCP
 * flows this host routes that the fast path may take: only ever written
 * with an admitted flow (never by a SYN), so that no flood of handshakes
 * can push a running flow out.  Canonical key: laddr/lport is the lower
 * end (address compared as bytes in network order, then port), raddr/rport
 * the higher one, of conntrack's original tuple (the client's packets as
 * they arrive; without conntrack, the packet's own tuple): without NAT
 * both directions find one entry by their own tuple; a NATed flow's
 * server packets carry the reply tuple and find the entry's key in
 * toe_fwd_nat (bpf/nat.h), and only the client's packets may find it
 * directly.  Written by toe_egress
 * (the tcx egress program) when the host stack itself forwarded the
 * flow's SYN-ACK from the server's interface out of the client's after it
 * forwarded the SYN the other way; read by XDP, which forwards a packet
 * only if it came in on the interface the entry says its sender is on, and
 * only under the firewall generation it was admitted under (toe_fwd_gen);
 * deleted by XDP at FIN or RST.  The packets and bytes XDP forwarded are
 * counted in the entry itself.
 *
 * toe_fwd_half: LRU_HASH, canonical toe_flow_key -> struct toe_fwd_half.
 * Handshakes in progress: the stack forwarded the SYN (so FORWARD accepted
 * it) and the SYN-ACK has not come back yet.  Written by toe_egress at the
 * SYN, read and deleted by it at the SYN-ACK; a flood of SYNs only ever
 * evicts other half-open handshakes (which then stay in the stack).
 *
 * toe_fwd_nat: LRU_HASH, canonical toe_flow_key -> toe_flow_key.  A NATed
 * flow's packets carry other tuples in each direction: its toe_fwd entry
 * is under the canonical key of conntrack's original tuple (the client's
 * packets'), and this map names that key under the canonical key of the
 * reply tuple (the server's packets').  Written by the admission with the
 * entry; read by XDP, which takes a packet found through it only if its
 * tuple is the entry's reply tuple exactly; deleted with the entry by toed
 * (conntrack's destroy event); a stale alias finds nothing that matches.
 *
 * toe_fwd_ctok: LRU_HASH, canonical toe_flow_key -> __u32 (1).  A flow
 * conntrack tracks is admitted TOE_FWD_CT_WAIT: the stack forwards it
 * until toed has made its conntrack entry ESTABLISHED and window-liberal
 * (user/toed/ct.c, on the fwd_admitted event) and says so here; the fast
 * path's next packet of the flow then makes it TOE_FWD_ESTABLISHED and
 * deletes the entry.  Written by toed only, so toe_fwd keeps one writer
 * per field.  Without it a packet the fast path sends back to the stack
 * (FIN, RST, a re-admission) before toed's update would be judged against
 * the window conntrack last saw: INVALID, and a NATed one goes out
 * untranslated (the server resets the flow).
 *
 * toe_fwd_gen: ARRAY[1] (mmapable), struct toe_fwd_gen.  The firewall's
 * generation as toed saw it: toed bumps gen at every ruleset change
 * (nftables' NFT_MSG_NEWGEN) and keeps lease_ns (CLOCK_MONOTONIC) a few
 * seconds ahead while it runs; XDP and toe_egress read it.  A fast-path
 * entry admitted under an older gen goes back to the stack
 * (TOE_FWD_READMIT) until toe_egress sees the stack forward it both ways
 * again.  With the lease run out (toed not running), an admission is good
 * for TOE_FWD_UNWATCHED_NS only.
 */

#define TOE_FWD_DEFAULT 65536
#define TOE_FWD_HALF_DEFAULT 16384
#define TOE_FWD_CTOK_MAX 16384
#define TOE_IFACES_MAX 1024
/* How long an admission holds when no toed vouches for the generation. */
#define TOE_FWD_UNWATCHED_NS 1000000000ULL
/*
 * How far ahead toed keeps toe_fwd_gen.lease_ns: its watch thread renews
 * it every TOE_FWD_RT_RENEW_MS while it watches.  Short, so that the fast
 * path fails closed: a toed killed, frozen (SIGSTOP) or stuck stops
 * vouching for the generation within this time, and every admission then
 * holds TOE_FWD_UNWATCHED_NS at most, so a ruleset change nobody announces
 * reaches every fast-path flow within max(lease, TOE_FWD_UNWATCHED_NS) =
 * 1 s.  25 renewals: a watch thread delayed that long only costs each flow
 * one round trip through the stack (reason lease).
 */
#define TOE_FWD_LEASE_NS 500000000ULL
/*
 * The forward path's route cache is used only while toed renewed the lease
 * in the last TOE_FWD_RT_FRESH_NS (lease_ns - TOE_FWD_LEASE_NS): toed keeps
 * the cache current by bumping rt_gen, and a toed killed bumps nothing, so
 * a route or a next hop's MAC that changes after its death is followed
 * within that time (bpf/forward.h, route_cache_on).
 */
#define TOE_FWD_RT_FRESH_NS 50000000ULL
#define TOE_FWD_RT_RENEW_MS 20
/*
 * toed bumps toe_fwd_gen again this long after a ruleset change: a packet
 * the old ruleset forwarded just before the commit, still between FORWARD
 * and tc egress when toed's first bump lands, could otherwise re-admit its
 * flow under the new generation (docs/forwarding.md, "Firewall changes").
 */
#define TOE_FWD_AGAIN_MS 50

enum toe_fwd_state {
	TOE_FWD_SYN_SENT = 1, /* toe_fwd_half: the stack forwarded the SYN */
	TOE_FWD_ESTABLISHED = 3, /* and the SYN-ACK back: fast path */
	TOE_FWD_READMIT = 4, /* fast path suspended: the stack must forward it
				 * both ways again (ruleset changed, lease out) */
	TOE_FWD_CT_WAIT = 5, /* admitted; the stack forwards it until toed
				 * made conntrack's entry true (toe_fwd_ctok) */
	TOE_FWD_JOINING = 6, /* toe_fwd_half: a flow conntrack has established,
			      * of no toe_fwd entry (running before a load,
			      * evicted, its entry made again): the stack must
			      * forward it both ways (seen) to join mid-stream */
};

/*
 * Joining mid-stream (bpf/egress.h, egress_join): a flow joins at most
 * TOE_FWD_JOIN_MAX times in TOE_FWD_JOIN_WIN_NS (toe_fwd_half.joins), so
 * that flows evicting each other from a full toe_fwd do not thrash it
 * (fwd_join_limited counts what waits); a flow policy does not name is
 * decided again at most once per TOE_FWD_JOIN_RECHECK_NS.
 */
#define TOE_FWD_JOIN_MAX 4
#define TOE_FWD_JOIN_WIN_NS 60000000000ULL
#define TOE_FWD_JOIN_RECHECK_NS 1000000000ULL

/* toe_fwd.seen: the directions the stack forwarded while READMIT (and
 * toe_fwd_half.seen while JOINING). */
#define TOE_FWD_SEEN_C2S 1
#define TOE_FWD_SEEN_S2C 2
#define TOE_FWD_SEEN_BOTH (TOE_FWD_SEEN_C2S | TOE_FWD_SEEN_S2C)
#define TOE_FWD_HALF_FLIP 0x80 /* toe_fwd_half.seen: see there */

/*
 * A routed flow's cached route, one direction's (issue 20): what
 * bpf_fib_lookup (route, the kernel's neighbour) said for its packets, good
 * while toe_fwd_gen.rt_gen is the one it was found under and toed vouches
 * for it (its lease renewed in the last TOE_FWD_RT_FRESH_NS, in its own
 * namespace).  gen 0: none.  Written by XDP
 * on a miss, gen last (and cleared again if rt_gen moved meanwhile).
 */
struct toe_fwd_route {
	__u32 gen; /* toe_fwd_gen.rt_gen it was found under */
	__u32 ifout; /* egress ifindex */
	__u8 dmac[6]; /* the next hop's MAC */
	__u8 smac[6]; /* the egress interface's */
	__u16 max_len; /* longest IP packet that route took (the MTU check) */
	__u16 pad;
};

/*
 * A conntrack tuple, network order (bpf/nat.h): as the packets of one
 * direction of a NATed flow arrive at the router.  IPv4 in [0], the rest
 * zero; the family is the flow key's.
 */
struct toe_fwd_tuple {
	__be32 saddr[4];
	__be32 daddr[4];
	__be16 sport;
	__be16 dport;
};

struct toe_fwd {
	__u64 start_ns; /* the stack forwarded the SYN (bpf_ktime_get_ns) */
	__u64 est_ns; /* ... and the SYN-ACK: first admission */
	__u64 adm_ns; /* last admission (bpf_ktime_get_ns) */
	__u32 client_isn; /* sequence number of the SYN (host order) */
	__u32 server_isn; /* of the SYN-ACK */
	__u32 dev; /* device index policy chose */
	__u32 rule; /* matching rule or TOE_RULE_NONE */
	__u32 policy; /* serial of the policy that decided (low bits) */
	__u32 client_if; /* ifindex the SYN came in on: the client's side */
	__u32 server_if; /* ifindex the stack sent the SYN out of */
	__u32 gen; /* toe_fwd_gen.gen admitted under (READMIT: being proved under) */
	__u32 readmits; /* times admitted again after a READMIT */
	__u8 state; /* enum toe_fwd_state */
	__u8 client; /* the SYN's sender: 0 = laddr/lport, 1 = raddr/rport */
	__u8 reason; /* enum toe_reason */
	__u8 seen; /* READMIT: TOE_FWD_SEEN_* the stack forwarded */
	__u64 netns; /* cookie of the router's network namespace */
	/* the route of each direction, by sender (0 = laddr's, 1 = raddr's) */
	struct toe_fwd_route rt[2];
	/*
	 * NAT (issue 33): conntrack's original tuple (as the client's packets
	 * arrive) and reply tuple (as the server's arrive), when they are not
	 * each other reversed (nat = 1; IPv4 or IPv6, the key's family):
	 * the fast path rewrites each direction's
	 * packets into the other tuple reversed (bpf/nat.h).  The entry's key
	 * is the original tuple's; the reply tuple's key is in toe_fwd_nat.
	 */
	struct toe_fwd_tuple nat_tu[2];
	__u8 nat;
	__u8 joined; /* admitted mid-stream (TOE_FWD_JOINING), no handshake */
	/*
	 * conntrack's zone of its entry (0: the default): toed names it in
	 * every ctnetlink request, and a destroy event of another zone's
	 * entry with the same tuple ends nothing (user/toed/ct.c).
	 */
	__u16 ct_zone;
	/*
	 * ct_tracked: admitted with a conntrack entry; the fast path's
	 * refresh (bpf/fwd_ct.h) finding none ends its fast path
	 * (conntrack_gone), even where conntrack sends toed no destroy event
	 * (an entry made before any listener existed has none).
	 */
	__u8 ct_tracked;
	__u8 pad3[3];
	__u64 ct_ns; /* its conntrack entry last refreshed (bpf/fwd_ct.h) */
	/*
	 * Issue 35 (bpf/fwd_events.h): what the fast path forwarded by
	 * direction, [0] client to server, [1] server to client (packets:
	 * tc's segments; bytes of the frames, Ethernet header included;
	 * atomic adds; the flow's totals are their sums, kept nowhere else:
	 * two adds a packet fewer); the reason of the last
	 * fwd_returned event (enum toe_fwd_reason, 0: none since the flow was
	 * back on the fast path a second after it) and when it was sent.
	 */
	__u64 dir_packets[2];
	__u64 dir_bytes[2];
	__u64 ret_ns;
	__u8 ret_reason;
	__u8 pad4[7];
};

/*
 * What conntrack says of a packet the stack forwarded (bpf/nat.h,
 * nat_ct_read): the admission's, in toe_fwd_scratch; user space never
 * reads it.
 */
struct toe_nat_ct {
	struct toe_fwd_tuple tu[2]; /* original and reply tuples */
	__u16 zone; /* its conntrack zone's id (0: the default, or no zones) */
	__u8 from; /* the admission's: the end that sent it (fwd_key's) */
	__u8 family; /* tu[]'s: TOE_AF_INET or TOE_AF_INET6 (tuples set) */
	__u8 reply : 1; /* the packet went the reply way */
	__u8 nat : 1; /* the reply tuple is not the original reversed */
	__u8 tuples : 1; /* tu[] read: a TCP or UDP entry, IPv4 or IPv6 */
	__u8 tracked : 1; /* conntrack has an entry for it (any family) */
	/*
	 * final: its translation is final: the entry is confirmed and NAT has
	 * run at both ends (IPS_CONFIRMED, IPS_SRC_NAT_DONE,
	 * IPS_DST_NAT_DONE).  At FORWARD the first packet of an entry made
	 * mid-stream (a flush) has no SNAT yet: POSTROUTING, after FORWARD,
	 * sets it up.
	 */
	__u8 final : 1;
	/*
	 * notrack: a rule said NOTRACK (IP_CT_UNTRACKED): the ruleset may
	 * rewrite such a flow statelessly (a payload or address set in a
	 * chain, with no conntrack entry that says so), which the fast path
	 * could not repeat: never admitted.
	 */
	__u8 notrack : 1;
	/*
	 * est: the packet is of an established entry (ctinfo ESTABLISHED or
	 * ESTABLISHED_REPLY: conntrack saw both directions) whose TCP state
	 * is ESTABLISHED (UDP: no more): what lets a flow join mid-stream
	 * (egress_join).
	 */
	__u8 est : 1;
	__u8 udp : 1; /* a UDP entry (else TCP, where tu[] or est are read) */
};

/* toe_fwd_scratch's record (bpf/nat.h): the admission's, one a CPU. */
struct toe_fwd_scratch {
	struct toe_nat_ct c; /* fwd_admit: conntrack's word */
	struct toe_flow_key ck; /* fwd_admit: the flow's canonical key */
	struct toe_fwd v; /* fwd_admit_half: the entry it writes */
};

struct toe_fwd_half {
	/*
	 * SYN_SENT: the stack forwarded the SYN; JOINING: the record was
	 * made, and the window its joins are counted in began
	 */
	__u64 start_ns;
	union {
		__u32 client_isn; /* SYN_SENT */
		/* JOINING: joins since start_ns (TOE_FWD_JOIN_MAX) */
		__u32 joins;
	};
	__u32 dev; /* TOE_DEV_NONE (JOINING): policy did not name it */
	__u32 rule;
	__u32 policy;
	__u32 client_if; /* the SYN came in here */
	__u32 server_if; /* and the stack sent it out of here */
	__u32 gen; /* toe_fwd_gen.gen at the SYN (JOINING: being proved under) */
	__u8 state; /* TOE_FWD_SYN_SENT, or TOE_FWD_JOINING */
	__u8 client; /* the SYN's sender: 0 = laddr/lport, 1 = raddr/rport */
	__u8 reason;
	/*
	 * JOINING: TOE_FWD_SEEN_* the stack forwarded, and TOE_FWD_HALF_FLIP
	 * if the client sent conntrack's reply direction.  The record stays
	 * after the flow joined (seen's directions cleared).
	 */
	__u8 seen;
	__u64 netns;
};

struct toe_fwd_gen {
	__u64 lease_ns; /* toed vouches for gen until then (CLOCK_MONOTONIC) */
	__u32 gen; /* bumped by toed at every firewall change */
	/*
	 * rt_netns: the datapath's home namespace (cookie), set by the first
	 * toe-loader load (or the first toed, for a datapath an older loader
	 * made): the only namespace whose routed flows are admitted, the one
	 * toed must run in (it refuses to serve another's).
	 * Bumped by toed at every route, rule, address, link and neighbour
	 * change in its namespace (rt_netns, a cookie): routes cached in
	 * toe_fwd entries of that namespace found under another rt_gen, or
	 * with the lease run out, are looked up again.  0: cache nothing.
	 */
	__u32 rt_gen;
	__u64 rt_netns;
};

/* toe_ifaces value. */
/*
 * toe_iface.flags.  TOE_IFACE_PEER: a veth whose peer is in another network
 * namespace: the tc path forwards into it with bpf_redirect_peer() (the
 * peer's ingress, in its namespace; this device's qdisc and tcpdump see
 * nothing).  TOE_IFACE_TC: opentoe is at tc ingress there (--hook tc).
 * TOE_IFACE_NO_XDP_TX: XDP must not redirect into it (a veth: its peer may
 * have no NAPI, and XDP loses CHECKSUM_PARTIAL; a device without native
 * XDP, a VLAN sub-interface: no ndo_xdp_xmit); XDP leaves such flows to
 * the stack (TOE_S_XDP_FWD_STACK_ONLY).
 */
#define TOE_IFACE_PEER 1
#define TOE_IFACE_TC 2
#define TOE_IFACE_NO_XDP_TX 4

/* Why toe-loader put an interface on the hook it has (--hook auto). */
enum toe_hook_why {
	TOE_HOOK_WHY_FORCED = 1, /* --hook xdp or --hook tc */
	TOE_HOOK_WHY_VETH = 2, /* a veth: tc */
	TOE_HOOK_WHY_NATIVE = 3, /* its driver runs XDP natively: XDP */
	TOE_HOOK_WHY_NO_NATIVE = 4, /* XDP only in skb mode there: tc */
	TOE_HOOK_WHY_KEPT = 5, /* the hook an earlier load put there */
	TOE_HOOK_WHY_SKB_MODE = 6, /* --xdp-mode given: XDP */
	TOE_HOOK_WHY_VLAN = 7, /* a VLAN sub-interface: tc */
};

struct toe_iface {
	__u8 mac[6]; /* source MAC of frames sent out of it */
	__u16 hook_why; /* enum toe_hook_why: why this hook (toe-loader) */
	__u32 flags; /* TOE_IFACE_*, written by toe-loader */
	__u64 netns; /* cookie of its network namespace */
};

#endif /* __OPENTOE_FORWARD_H */
