/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: map layouts shared by the eBPF programs (bpf/) and user space
 * (user/).  Every struct here is the key or value of a pinned map, so its
 * layout is ABI between a running datapath and a newer toe-loader/toed:
 * fields are only ever appended, holes are explicit.
 *
 * eBPF: include after "vmlinux.h".
 */
#ifndef __OPENTOE_H
#define __OPENTOE_H

#define TOE_PIN_DIR_DEFAULT	"/sys/fs/bpf/opentoe"

/* Pinned map names: toe_maps.h. */
#ifndef __bpf__
#include <linux/types.h>	/* eBPF: include vmlinux.h first */
#include "toe_maps.h"
#endif

#define TOE_MAX_DEVS		64
#define TOE_DEV_NONE		0xffffffffU
#define TOE_FLOWS_DEFAULT	262144
#define TOE_MAX_CHAIN		64	/* interfaces with a chained XDP program */
#define TOE_XDP_CHAIN_SLOTS	1024	/* ifindexes below this may chain */

#define TOE_AF_INET		2
#define TOE_AF_INET6		10

/* enum toe_action: what policy decided for a connection. */
enum toe_action {
	TOE_ACT_HOST = 0,	/* leave it to the stack (nothing steered) */
	TOE_ACT_OFFLOAD = 1,	/* account and steer on an offload device */
	TOE_ACT_BYPASS = 2,	/* local socket-to-socket fast path */
};

/* enum toe_reason: why a flow got the decision it got. */
enum toe_reason {
	TOE_R_RULE = 0,		/* a policy rule matched */
	TOE_R_DEFAULT = 1,	/* no rule matched: default action */
	TOE_R_CAPACITY = 2,	/* device at nconn: stays on the host */
	TOE_R_NODEV = 3,	/* rule names a device that is not there */
	TOE_R_NOT_LOCAL = 4,	/* bypass asked, but the peer is not local */
	TOE_R_UNSUPPORTED = 5,	/* bypass asked, the socket cannot take it (MPTCP) */
	TOE_R_NO_TID = 6,	/* the module device's pool of TIDs is empty */
	TOE_R_ROUTE = 7,	/* its route leaves through another interface */
	TOE_R_MODULE = 8,	/* the kernel module refused it (toed demoted it) */
	TOE_R__MAX
};

/* enum toe_dev_type: offload device type ids (the patch's TOE_ID_*). */
enum toe_dev_type {
	TOE_DEV_SOFTWARE = 0,
	TOE_DEV_CHELSIO_T1 = 1,
	TOE_DEV_CHELSIO_T1C = 2,
	TOE_DEV_CHELSIO_T3 = 3,
};

/* enum toe_steer: what XDP does with an offloaded flow's packets. */
enum toe_steer {
	TOE_STEER_ACCOUNT = 0,	/* count, XDP_PASS */
	TOE_STEER_CPU = 1,	/* count, redirect to a cpumap entry */
	TOE_STEER_FORWARD = 2,	/* count, rewrite L2, redirect to egress */
};

#define TOE_DEVF_PRESENT	(1U << 0)	/* entry in use */
#define TOE_DEVF_KMOD		(1U << 1)	/* from the kernel module */

/* toe_devs: ARRAY[TOE_MAX_DEVS], index = device index. Written by toed. */
struct toe_dev {
	char name[16];
	__u32 type;		/* enum toe_dev_type */
	__u32 ifindex;		/* lower interface */
	__u32 nconn;		/* capacity: max offloaded connections */
	__u32 flags;		/* TOE_DEVF_* */
	__u32 steer;		/* enum toe_steer */
	__u32 steer_cpu;	/* with TOE_STEER_CPU */
};

/*
 * toe_dev_live: ARRAY[TOE_MAX_DEVS]. Written only by the datapath with
 * atomic adds, so that toed rewriting a device's configuration never
 * clobbers its live count.
 */
struct toe_dev_live {
	__u64 live;		/* offloaded connections open now */
	__u64 offloaded;	/* total ever offloaded */
	__u64 refused;		/* total refused for capacity */
	__u64 released;		/* total slots released at close */
};

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
 * namespace is in the value.
 */
struct toe_flow_key {
	__u32 laddr[4];
	__u32 raddr[4];
	__u16 lport;
	__u16 rport;
	__u8 family;		/* TOE_AF_INET or TOE_AF_INET6 */
	__u8 pad[3];
	__u64 netns;		/* network namespace cookie; 0 for routed flows */
};

enum toe_dir {
	TOE_DIR_ACTIVE = 0,	/* this host connected */
	TOE_DIR_PASSIVE = 1,	/* this host accepted */
};

/*
 * toe_flows: LRU_HASH, toe_flow_key -> toe_flow.  The table operators and
 * toectl read (the patch's TCPDIAG_OFFLOAD).  Eviction loses only this
 * record: the device slot a flow holds is owned by the socket's own
 * storage (toe_sk_state), so an evicted live flow still releases its slot
 * when the socket closes.
 */
struct toe_flow {
	__u64 start_ns;		/* bpf_ktime_get_ns() when established */
	__u64 cookie;		/* socket cookie */
	__u64 bytes_acked;	/* from the socket at the last callback */
	__u64 bytes_received;
	__u32 segs_in;
	__u32 segs_out;
	__u32 total_retrans;
	__u32 srtt_us;
	__u32 dev;		/* device index or TOE_DEV_NONE */
	__u32 rule;		/* matching rule index or TOE_RULE_NONE */
	__u8 decision;		/* enum toe_action */
	__u8 reason;		/* enum toe_reason */
	__u8 direction;		/* enum toe_dir */
	__u8 state;		/* last TCP state seen (TCP_ESTABLISHED = 1) */
	__u32 policy;		/* serial of the policy that decided (low bits) */
	/*
	 * Received packets and bytes XDP (or tc) counted for an offloaded
	 * flow, added atomically in place: XDP finds the record anyway, so
	 * the counters cost no second lookup.  Zero for other flows.
	 */
	__u64 xdp_packets;
	__u64 xdp_bytes;
	__u64 netns_ino;	/* inode of the key's namespace, for display */
};

#define TOE_RULE_NONE		0xffffffffU

/*
 * Policy: ordered rules, first match wins, looked up without walking the
 * rules (tuple space search, as Open vSwitch's classifier does).
 *
 * Port ranges first become port classes: the boundaries of all the rules'
 * ranges cut 0-65535 into elementary intervals, and two arrays map a local
 * or remote port to the number of its interval (toe_pol_lclass/rclass), so
 * every range is a whole number of classes.  Every rule then becomes cells
 * of one "tuple" (a shape: family, local and remote prefix lengths, whether
 * it matches the local port, the remote port, the cgroup); a cell key is
 * the flow's fields masked by its tuple's masks, its value the lowest
 * (first) rule index among the rules that own the cell.  A lookup masks the
 * flow once per tuple and looks up one hash entry per tuple: its cost grows
 * with the number of distinct shapes (at most TOE_POL_MAX_TUPLES), not with
 * the number of rules.  Tuples are sorted by
 * the lowest rule they hold, so the walk stops at the first tuple that
 * cannot beat the best match found so far.
 *
 * Two generations of every table live side by side (index or key field
 * "gen").  toe_pol_gen says which one connections use; the program reads it
 * once per connection, so no connection is decided by a mix of two rule
 * sets.  A writer fills the other generation, flips toe_pol_gen, then waits
 * for an RCU grace period (an update of the toe_rcu_sync map-in-map, which
 * the kernel follows with synchronize_rcu) before it may touch the old
 * generation again.
 */
#define TOE_POL_MAX_RULES	131072
#define TOE_POL_MAX_TUPLES	64
#define TOE_POL_CELLS_DEFAULT	(1U << 20)

/* toe_pol_rules: ARRAY[2 * TOE_POL_MAX_RULES], index gen * MAX + rule. */
struct toe_pol_rule {
	__u32 action;		/* enum toe_action */
	__u32 dev;		/* device index with TOE_ACT_OFFLOAD */
	__u32 ka_idle;		/* keepalive (seconds); 0: leave it alone */
	__u32 ka_intvl;
	__u32 ka_cnt;
	__u32 pad;
};

/* toe_pol_tuples: ARRAY[2 * TOE_POL_MAX_TUPLES], index gen * MAX + t. */
struct toe_pol_tuple {
	__u32 lmask[4];		/* local address mask, network order */
	__u32 rmask[4];		/* remote address mask */
	__u8 family;		/* TOE_AF_INET / TOE_AF_INET6 */
	__u8 use_cgroup;	/* key carries the cgroup id */
	__u8 use_lport;		/* key carries the local port class */
	__u8 use_rport;		/* key carries the remote port class */
	__u32 min_rule;		/* lowest rule index with a cell here */
};

/* toe_pol_cells: HASH (no prealloc), toe_pol_key -> first rule index. */
struct toe_pol_key {
	__u32 laddr[4];
	__u32 raddr[4];
	__u64 cgroup;		/* 0 unless the tuple uses the cgroup */
	__u32 lclass;		/* local port class, 0 unless used */
	__u32 rclass;
	__u16 tuple;		/* tuple index within the generation */
	__u8 gen;
	__u8 pad[5];
};

/* toe_pol_lclass / toe_pol_rclass: ARRAY[2 * 65536] u32, gen * 65536 + port. */
#define TOE_POL_PORTS		65536

/* toe_pol_hdr: ARRAY[2], per generation. */
struct toe_pol_hdr {
	__u32 ntuples;
	__u32 nrules;
	__u32 default_action;	/* enum toe_action */
	__u32 default_dev;	/* with a default of TOE_ACT_OFFLOAD */
	__u64 applied_ns;	/* CLOCK_MONOTONIC when it was applied */
	__u64 serial;		/* counts applies since the maps were made */
	__u32 track;		/* enum toe_track */
	__u32 pad;
};

/*
 * Which connections sock_ops tracks (a toe_flows record, state callbacks,
 * a close event): all of them, or only those the policy names (a rule
 * matched, or the default is not host).  A connection the policy does not
 * name is then only counted (TOE_S_UNTRACKED) and left alone.
 */
enum toe_track {
	TOE_TRACK_ALL = 0,
	TOE_TRACK_POLICY = 1,
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
#define TOE_FILTER_SLOTS	65536

struct toe_filter {
	__u32 live;		/* open offloaded sockets (sock_ops, atomic) */
	__u32 loaded;		/* offloaded records found by toe-loader's last load */
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
	__u32 h = laddr[0] ^ laddr[1] ^ laddr[2] ^ laddr[3] ^
		  raddr[0] ^ raddr[1] ^ raddr[2] ^ raddr[3] ^
		  ((__u32)lport << 16 | rport);

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
	__u32 dev;		/* TOE_DEV_NONE for a module device's flow: */
				/* its slot is toe_tid_held's (by cookie) */
	__u8 decision;
	__u8 filter;		/* 1: holds a count in toe_flow_filter */
	__u16 filter_slot;	/* its slot there */
};

/*
 * toe_stats: PERCPU_ARRAY of __u64 counters, index enum toe_stat.
 * Indexes below TOE_S_BASE count XDP parse results (enum toe_parse_result
 * in include/toe_parse.h).  From TOE_S_BASE on, one X(ID, name, help) a
 * counter in index order (NULL name: reserved, never counted; XDP counts
 * no packet of a host flow, not even in a global counter, so a host flow
 * costs no map write): the enum, toectl's names (user/views.c) and the
 * metrics' HELP (user/toed/metrics.c) all come from this one table.
 */
#define TOE_STAT_TABLE(X)							\
	X(RESERVED0, NULL, NULL)						\
	X(XDP_FLOW_HIT, "xdp_flow_hit",						\
	  "XDP packets of an offloaded flow")					\
	X(RESERVED1, NULL, NULL)						\
	X(XDP_CHAINED, "xdp_chained",						\
	  "XDP packets handed to the chained program")				\
	X(XDP_REDIRECT_CPU, "xdp_redirect_cpu",					\
	  "XDP packets redirected to a CPU")					\
	X(XDP_FORWARD, "xdp_forward", "Packets XDP forwarded")			\
	X(XDP_NEIGH_MISS, "xdp_neigh_miss",					\
	  "XDP forward packets without a usable neighbour")			\
	X(ESTABLISHED, "established",						\
	  "Connections decided by sock_ops")					\
	X(CLOSED, "closed", "Tracked connections closed")			\
	X(FLOW_EVICTED, "flow_evicted",						\
	  "Closed connections no longer in toe_flows")				\
	X(EVENT_DROPPED, "event_dropped",					\
	  "Events lost: the ring buffer was full")				\
	X(LISTEN, "listen", "listen_start events")				\
	X(XDP_FWD_FLOWS, "xdp_fwd_flows",					\
	  "Forwarded flows that entered the fast path")				\
	X(XDP_FWD_ENDED, "xdp_fwd_ended",					\
	  "Fast paths ended by FIN or RST")					\
	X(XDP_FWD_SLOW, "xdp_fwd_slow",						\
	  "Packets of a fast-path flow left to the stack")			\
	X(BYP_SOCKS, "bypass_sockets", "Sockets put into toe_bypass")		\
	X(BYP_PAIRED, "bypass_paired",						\
	  "Accepting ends that found their peer in toe_bypass")			\
	X(BYP_NOT_LOCAL, "bypass_not_local",					\
	  "Bypass asked, peer not local: left to TCP")				\
	X(BYP_UNSUPPORTED, "bypass_unsupported",				\
	  "Bypass asked, socket cannot take it: left to TCP")			\
	X(BYP_MSGS, "bypass_msgs",						\
	  "sk_msg verdicts redirected to the peer")				\
	X(BYP_BYTES, "bypass_bytes",						\
	  "Bytes redirected socket to socket")					\
	X(BYP_TCP_MSGS, "bypass_tcp_msgs",					\
	  "sk_msg verdicts of bypass sockets left to TCP")			\
	X(BYP_TO_TCP, "bypass_to_tcp",						\
	  "Bypass sockets switched to TCP")					\
	X(BYP_TO_PEER, "bypass_to_peer",					\
	  "Bypass sockets switched back to the peer")				\
	X(XDP_FWD_WRONG_IF, "xdp_fwd_wrong_if",					\
	  "Fast-path packets on the other side's interface")			\
	X(XDP_FWD_READMIT, "xdp_fwd_readmit",					\
	  "Fast paths sent back to the stack for re-admission")			\
	X(FWD_READMITTED, "fwd_readmitted",					\
	  "Fast paths admitted again by toe_egress")				\
	X(FWD_HALF, "fwd_half",							\
	  "Handshakes the stack forwarded a SYN of")				\
	X(UNTRACKED, "untracked",						\
	  "Connections left untracked (track policy, no rule named them)")	\
	X(TID_TAKEN, "tid_taken",						\
	  "TIDs taken from a module device's pool at offload")			\
	X(TID_EMPTY, "tid_pool_empty",						\
	  "Offloads refused: the module device's TID pool was empty")		\
	X(TID_ROUTE, "tid_route_other_if",					\
	  "Offloads refused: the route leaves through another interface")	\
	X(TID_DEMOTED, "tid_demoted",						\
	  "Offloaded flows toed demoted to the host (module refused, device gone)")	\
	X(XDP_FWD_CACHED, "xdp_fwd_route_cached",				\
	  "Packets XDP forwarded by their flow's cached route")

enum toe_stat {
	TOE_S_BASE = 32,
	TOE_S__BEFORE = TOE_S_BASE - 1, /* so that the first X is TOE_S_BASE */
#define TOE_STAT_ENUM(id, name, help) TOE_S_##id,
	TOE_STAT_TABLE(TOE_STAT_ENUM)
#undef TOE_STAT_ENUM
	TOE_S__MAX
};

#define TOE_STATS_MAX		96
_Static_assert(TOE_S__MAX <= TOE_STATS_MAX, "toe_stats is too small for TOE_STAT_TABLE");

/* Ring buffer events (toe_events). */
enum toe_event_type {
	TOE_EV_LISTEN_START = 1,
	TOE_EV_LISTEN_STOP = 2,
	TOE_EV_FLOW_OFFLOADED = 3,
	TOE_EV_FLOW_REFUSED = 4,
	TOE_EV_FLOW_CLOSED = 5,
};

#ifndef __bpf__
/* The event's name, as toed, toectl and the tools print it. */
static inline const char *toe_event_name(__u32 type)
{
	switch (type) {
	case TOE_EV_LISTEN_START: return "listen_start";
	case TOE_EV_LISTEN_STOP: return "listen_stop";
	case TOE_EV_FLOW_OFFLOADED: return "flow_offloaded";
	case TOE_EV_FLOW_REFUSED: return "flow_refused";
	case TOE_EV_FLOW_CLOSED: return "flow_closed";
	default: return "unknown";
	}
}
#endif

struct toe_event {
	__u64 ts_ns;
	__u32 type;		/* enum toe_event_type */
	__u32 dev;
	struct toe_flow_key key;
	__u8 decision;
	__u8 reason;
	__u8 direction;
	__u8 pad;
	__u32 rule;
	__u64 bytes_acked;	/* final counters, with FLOW_CLOSED */
	__u64 bytes_received;
	__u32 segs_in;
	__u32 segs_out;
	__u32 total_retrans;
	__u32 srtt_us;
	__u32 policy;		/* serial of the policy that decided (low bits) */
	__u32 tid;		/* module TID the flow took, or TOE_TID_NONE */
	__u64 netns_ino;	/* inode of key.netns's namespace (0: unknown) */
	__u64 cookie;		/* the socket's cookie (0: none) */
};

/*
 * toe_neigh: HASH, toe_neigh_key -> toe_neigh.  The kernel's ARP and NDP
 * entries of the interfaces opentoe serves, mirrored by toed from rtnetlink
 * (the patch's neighbour.c hooks, done in user space).  toed is the only
 * writer; the XDP forward path is the reader.  NOARP pseudo-entries
 * (multicast, broadcast) are not mirrored.  An entry without a usable
 * link-layer address (INCOMPLETE, FAILED) is kept with its state so that the
 * map equals `ip neigh show`; readers test toe_neigh_valid().
 */
#define TOE_NEIGH_MAX		131072

struct toe_neigh_key {
	__u32 ifindex;
	__u8 family;		/* TOE_AF_INET / TOE_AF_INET6 */
	__u8 pad[3];
	__u32 addr[4];		/* network order; IPv4 in addr[0] */
};

struct toe_neigh {
	__u8 mac[6];		/* link-layer address; zero if none */
	__u16 state;		/* NUD_* bits, as rtnetlink reports them */
	__u64 updated_ns;	/* CLOCK_MONOTONIC of toed's write (= ktime) */
	__u32 flags;		/* NTF_* flags from rtnetlink */
	__u32 has_mac;		/* 1 if the kernel gave an NDA_LLADDR */
};

/* NUD states in which the MAC may be used to send (<linux/neighbour.h>). */
#define TOE_NUD_VALID	(0x02 | 0x04 | 0x08 | 0x10 | 0x40 | 0x80)

/*
 * toe_local_addr: HASH, toe_local_key -> toe_local.  The addresses of this
 * host (toed's network namespace), from rtnetlink address events: the
 * "is this peer local?" test for the bypass decision.
 */
#define TOE_LOCAL_MAX		4096

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
 * XDP steering and forwarding (enum toe_steer).
 *
 * toe_cpumap: CPUMAP, CPU -> struct bpf_cpumap_val.  Written by the policy
 * apply (user/policy.c) for the CPUs that devices with "steer cpu N" name,
 * queue size TOE_CPUMAP_QSIZE; entries no device names are removed.
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
 * the higher one, so both directions find one entry.  Written by toe_egress
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
 * toe_fwd_gen: ARRAY[1] (mmapable), struct toe_fwd_gen.  The firewall's
 * generation as toed saw it: toed bumps gen at every ruleset change
 * (nftables' NFT_MSG_NEWGEN) and keeps lease_ns (CLOCK_MONOTONIC) a few
 * seconds ahead while it runs; XDP and toe_egress read it.  A fast-path
 * entry admitted under an older gen goes back to the stack
 * (TOE_FWD_READMIT) until toe_egress sees the stack forward it both ways
 * again.  With the lease run out (toed not running), an admission is good
 * for TOE_FWD_UNWATCHED_NS only.
 */

#define TOE_FWD_DEFAULT		65536
#define TOE_FWD_HALF_DEFAULT	16384
#define TOE_IFACES_MAX		1024
#define TOE_CPUMAP_QSIZE	2048
/* How long an admission holds when no toed vouches for the generation. */
#define TOE_FWD_UNWATCHED_NS	1000000000ULL
/* How far ahead toed keeps toe_fwd_gen.lease_ns (it renews every 2 s). */
#define TOE_FWD_LEASE_NS	5000000000ULL
/*
 * toed bumps toe_fwd_gen again this long after a ruleset change: a packet
 * the old ruleset forwarded just before the commit, still between FORWARD
 * and tc egress when toed's first bump lands, could otherwise re-admit its
 * flow under the new generation (README, "Firewall changes").
 */
#define TOE_FWD_AGAIN_MS	50

enum toe_fwd_state {
	TOE_FWD_SYN_SENT = 1,	/* toe_fwd_half: the stack forwarded the SYN */
	TOE_FWD_ESTABLISHED = 3,/* and the SYN-ACK back: fast path */
	TOE_FWD_READMIT = 4,	/* fast path suspended: the stack must forward it
				 * both ways again (ruleset changed, lease out) */
};

/* toe_fwd.seen: the directions the stack forwarded while READMIT. */
#define TOE_FWD_SEEN_C2S	1
#define TOE_FWD_SEEN_S2C	2

/*
 * A routed flow's cached route, one direction's (issue 20): what
 * bpf_fib_lookup, toe_ifaces and toe_neigh said for its packets, good
 * while toe_fwd_gen.rt_gen is the one it was found under and toed vouches
 * for it (its lease, in its own namespace).  gen 0: none.  Written by XDP
 * on a miss, gen last (and cleared again if rt_gen moved meanwhile).
 */
struct toe_fwd_route {
	__u32 gen;		/* toe_fwd_gen.rt_gen it was found under */
	__u32 ifout;		/* egress ifindex */
	__u8 dmac[6];		/* the next hop's MAC */
	__u8 smac[6];		/* the egress interface's */
	__u16 max_len;		/* longest IP packet that route took (the MTU check) */
	__u16 pad;
};

struct toe_fwd {
	__u64 start_ns;		/* the stack forwarded the SYN (bpf_ktime_get_ns) */
	__u64 est_ns;		/* ... and the SYN-ACK: first admission */
	__u64 adm_ns;		/* last admission (bpf_ktime_get_coarse_ns) */
	__u32 client_isn;	/* sequence number of the SYN (host order) */
	__u32 server_isn;	/* of the SYN-ACK */
	__u32 dev;		/* device index policy chose */
	__u32 rule;		/* matching rule or TOE_RULE_NONE */
	__u32 policy;		/* serial of the policy that decided (low bits) */
	__u32 client_if;	/* ifindex the SYN came in on: the client's side */
	__u32 server_if;	/* ifindex the stack sent the SYN out of */
	__u32 gen;		/* toe_fwd_gen.gen admitted under (READMIT: being proved under) */
	__u32 readmits;		/* times admitted again after a READMIT */
	__u8 state;		/* enum toe_fwd_state */
	__u8 client;		/* the SYN's sender: 0 = laddr/lport, 1 = raddr/rport */
	__u8 reason;		/* enum toe_reason */
	__u8 seen;		/* READMIT: TOE_FWD_SEEN_* the stack forwarded */
	__u64 netns;		/* inode of the router's network namespace */
	__u64 packets;		/* forwarded by XDP, both directions (atomic) */
	__u64 bytes;
	/* the route of each direction, by sender (0 = laddr's, 1 = raddr's) */
	struct toe_fwd_route rt[2];
};

struct toe_fwd_half {
	__u64 start_ns;		/* the stack forwarded the SYN */
	__u32 client_isn;
	__u32 dev;
	__u32 rule;
	__u32 policy;
	__u32 client_if;	/* the SYN came in here */
	__u32 server_if;	/* and the stack sent it out of here */
	__u32 gen;		/* toe_fwd_gen.gen at the SYN */
	__u8 state;		/* TOE_FWD_SYN_SENT */
	__u8 client;		/* the SYN's sender: 0 = laddr/lport, 1 = raddr/rport */
	__u8 reason;
	__u8 pad;
	__u64 netns;
};

struct toe_fwd_gen {
	__u64 lease_ns;		/* toed vouches for gen until then (CLOCK_MONOTONIC) */
	__u32 gen;		/* bumped by toed at every firewall change */
	/*
	 * Bumped by toed at every route, rule, address, link and neighbour
	 * change in its namespace (rt_netns, an inode): routes cached in
	 * toe_fwd entries of that namespace found under another rt_gen, or
	 * with the lease run out, are looked up again.  0: cache nothing.
	 */
	__u32 rt_gen;
	__u64 rt_netns;
};

/*
 * toe_xdp_conf: ARRAY[1], written by the policy apply.  With no device in
 * forward mode XDP skips the forward path, so hosts that route nothing pay
 * no lookup for it.
 */
struct toe_xdp_conf {
	__u32 fwd_devs;		/* present devices with steer forward */
	__u32 cpu_devs;		/* present devices with steer cpu */
};

/* toe_ifaces value. */
struct toe_iface {
	__u8 mac[6];		/* source MAC of frames sent out of it */
	__u16 pad;
	__u32 flags;		/* reserved, 0 */
	__u64 netns;		/* inode of its network namespace */
};

/*
 * Local bypass (policy action bypass): a connection whose two ends are
 * sockets of this host skips TCP/IP; each send is moved by an sk_msg
 * program straight into the peer socket's receive queue.
 *
 * toe_bypass: SOCKHASH, toe_bypass_key -> socket.  Every socket whose
 * connection policy bypasses, put there by sock_ops when it is
 * established; the kernel takes it out when the socket closes.  The
 * sk_msg program toe_skmsg is attached to it (pin link_skmsg): it runs on
 * every send of a socket in the map and redirects it (BPF_F_INGRESS) to the
 * socket stored under the reversed key, the peer.  The key carries both
 * initial sequence numbers: two connections of different network
 * namespaces may have the same addresses and ports, never (but with odds of
 * 2^-64) the same ISNs too, so a sender can only ever find its own peer.
 *
 * toe_byp_sk: SK_STORAGE, per socket in toe_bypass: its own key, its peer's
 * key, and whether its sends go to the peer (enum toe_byp_state).  Never
 * redirect a byte while one sent earlier over TCP may still be unread: the
 * peer reads what was redirected to it (its psock queue) before what TCP
 * delivered (its receive queue).
 *
 * toe_byp_flows: HASH, toe_bypass_key -> toe_byp_flow.  Per-socket
 * counters of bypassed data (the TCP counters of toe_flows no longer move):
 * written by the sending socket's sk_msg program, which holds that socket's
 * lock, so each field has one writer at a time.  Deleted at close.
 *
 * toe_byp_conf: ARRAY[1], written by toe-loader: draining = 1 (unload)
 * makes every socket send over TCP from then on.
 */
#define TOE_BYPASS_DEFAULT	65536	/* toe-loader --flows N */

struct toe_bypass_key {
	/*
	 * This socket's view (l = itself), netns 0: the two ends may be in
	 * different namespaces (the ISNs keep keys apart); sk_msg finds its
	 * toe_flows record with bpf_get_netns_cookie().
	 */
	struct toe_flow_key flow;
	__u32 lisn;		/* this end's initial sequence number */
	__u32 risn;		/* the peer's */
};

enum toe_byp_state {
	TOE_BYP_WAITING = 0,	/* connecting end: peer not seen yet */
	TOE_BYP_PAIRED = 1,	/* sends are redirected to the peer */
	TOE_BYP_TCP = 2,	/* sends go over TCP for now (see why) */
	TOE_BYP_ENDED = 3,	/* sends go over TCP for good (unload) */
};

/* Why a socket's sends last went over TCP. */
enum toe_byp_why {
	TOE_BYP_WHY_NONE = 0,
	TOE_BYP_WHY_NO_PEER = 1,	/* peer not (or no longer) in toe_bypass */
	TOE_BYP_WHY_REFUSED = 2,	/* peer there but not established (half-closed) */
	TOE_BYP_WHY_DRAIN = 3,		/* unload: toe_byp_conf.draining */
	TOE_BYP_WHY_BACKLOG = 4,	/* the peer has not read its queue: flow control */
};
#define TOE_BYP_WHY_N	4	/* reasons to leave the peer: 1 .. TOE_BYP_WHY_N */

/*
 * Flow control: a redirect does not wait for the reader (the kernel queues
 * it, charged to the reader's receive memory, sk_rmem_alloc, but to nothing
 * the sender waits on), so the sender checks the peer's queue (its psock's
 * msg_tot_len) every TOE_BYP_CHECK_BYTES.  The limit is the most TCP lets
 * the peer's receive buffer grow to: the peer namespace's
 * net.ipv4.tcp_rmem[2] (autotuning and tcp_clamp_window stop there), or its
 * sk_rcvbuf if set higher, at least TOE_BYP_QUEUE_MIN.  Not the current
 * sk_rcvbuf: reads from the psock never drive TCP's receive autotuning, so a
 * reader that keeps up would stay at tcp_rmem[1] (128 KiB) for ever.  Over
 * the limit it sends over TCP, whose window then blocks it; a costly path
 * (the queued bytes count against the peer's window, and psock reads send no
 * window update, so the sender waits for zero-window probes, 200 ms and
 * up), which the limit keeps for readers that really fall behind.  It goes
 * back to the peer once TCP has delivered everything (write_seq ==
 * snd_una), the peer has read it (copied_seq == rcv_nxt: nothing older than
 * the next redirect is left) and its queue is under half the limit.
 *
 * A soft limit, TOE_BYP_QUEUE_SOFT, comes first when TCP can take over
 * without stalling: the peer's receive buffer has more room than that left
 * (sk_rcvbuf - sk_rmem_alloc, so its window is open).  A writer that
 * outruns its reader (both on one CPU, say) then stops queueing at 4 MiB
 * instead of tens: the reader copies the bytes out while they are still in
 * the cache (the pinned stream of make bench-bypass: 80 % of its time was
 * copies out of memory, with 32 MiB queued).  A reader without that room
 * (sk_rcvbuf never autotuned: it only ever read the psock) would close its
 * window on TCP, so it is queued up to the limit as before.
 */
#define TOE_BYP_QUEUE_MIN	(256U << 10)
#define TOE_BYP_CHECK_BYTES	(256U << 10)
#define TOE_BYP_QUEUE_SOFT	(4096U << 10)

struct toe_byp_sk {
	struct toe_bypass_key self;
	struct toe_bypass_key peer;	/* self with the ends swapped */
	__u32 state;		/* enum toe_byp_state */
	__u32 why;		/* enum toe_byp_why */
	__u64 budget;		/* bytes to redirect before the next queue check */
	__u8 local;		/* 1: the peer was found; 2: said not_local */
	__u8 reason;		/* the flow's reason (enum toe_reason) */
	__u8 pad[6];
};

struct toe_byp_flow {
	__u64 start_ns;		/* put into toe_bypass (bpf_ktime_get_ns) */
	__u64 bytes_out;	/* sent: redirected into the peer */
	__u64 msgs_out;		/* sk_msg verdicts that did it */
	__u64 bytes_in;		/* received: redirected from the peer */
	__u64 msgs_in;
	__u64 tcp_bytes_out;	/* sent over TCP while in toe_bypass */
	__u64 tcp_msgs_out;
	__u64 to_tcp;		/* switches to TCP (flow control, peer half-closed) */
	__u64 to_peer;		/* switches back */
	__u64 cookie;		/* socket cookie */
	__u64 sk;		/* kernel address of the socket: its peer's sk_msg
				 * reads its receive state from it (flow control) */
	__u32 state;		/* enum toe_byp_state */
	__u32 why;		/* enum toe_byp_why */
	__u8 direction;		/* enum toe_dir */
	__u8 pad[7];
	__u64 to_tcp_why[TOE_BYP_WHY_N];	/* to_tcp by reason: [why - 1] */
};

/* The packet of toe_byp_probe (BPF_PROG_TEST_RUN by toe-loader unload). */
struct toe_byp_probe {
	__u8 eth[16];		/* room for an Ethernet header, unused */
	struct toe_bypass_key key;	/* in */
	__u32 found;		/* out: the socket is in toe_bypass */
	__u32 queued;		/* out: messages redirected to it are unread */
	__u32 bytes;		/* out: how many bytes (0 if the kernel does not say) */
	__u32 pad;
};

/*
 * The kernel module's TIDs, taken synchronously by sock_ops (issue: the
 * datapath and the module agree at every instant).
 *
 * toe_tid_pool: ARRAY_OF_MAPS[TOE_MAX_DEVS] of QUEUE(__u32 TID,
 * TOE_TID_POOL_MAX), index = toe_devs index of a module device.  toed
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
#define TOE_TID_NONE		0xffffffffU
#define TOE_TID_POOL_MAX	1024
#define TOE_TID_HELD_MAX	65536

struct toe_tid_held {
	struct toe_flow_key key;
	__u32 dev;		/* toe_devs index */
	__u32 tid;		/* the module's TID */
};

/* toe_tid_demote's argument (BPF_PROG_TEST_RUN data, as toe_byp_probe). */
struct toe_tid_demote {
	__u8 eth[16];		/* room for an Ethernet header, unused */
	__u64 cookie;		/* in: the socket's cookie */
	__u32 dev;		/* in: what its toe_tid_held entry must hold */
	__u32 tid;
	__u32 reason;		/* in: enum toe_reason for its record */
	__u32 done;		/* out: 1 demoted; 0 no such entry (closed) */
};

struct toe_byp_conf {
	__u32 draining;		/* 1: redirect nothing, everything over TCP */
	__u32 pad;
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
#define TOE_LISTENERS_MAX	16384

struct toe_listen {
	__u32 dev;		/* device index policy chose */
	__u32 rule;		/* matching rule index or TOE_RULE_NONE */
	__u32 policy;		/* serial of the policy that decided (low bits) */
	__u32 pad;
	__u64 cookie;		/* socket cookie */
	__u64 netns_ino;	/* inode of the key's namespace, for display */
};

#endif /* __OPENTOE_H */
