/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: map layouts shared by the eBPF programs (bpf/) and user space
 * (user/).  Every struct here is the key or value of a pinned map, so its
 * layout is ABI between a running datapath and a newer toe-loader/toed:
 * fields are only ever appended, holes are explicit.
 *
 * Include after "vmlinux.h" (eBPF) or <linux/types.h> (user space).
 */
#ifndef __OPENTOE_H
#define __OPENTOE_H

#define TOE_PIN_DIR_DEFAULT	"/sys/fs/bpf/opentoe"

/* Pinned map names (BPF_OBJ_NAME_LEN is 16, so at most 15 characters). */
#define TOE_MAP_DEVS		"toe_devs"
#define TOE_MAP_DEV_LIVE	"toe_dev_live"
#define TOE_MAP_FLOWS		"toe_flows"
#define TOE_MAP_FLOW_PKTS	"toe_flow_pkts"
#define TOE_MAP_STATS		"toe_stats"
#define TOE_MAP_EVENTS		"toe_events"
#define TOE_MAP_CONFIG		"toe_config"
#define TOE_MAP_SK_STATE	"toe_sk_state"
#define TOE_MAP_XDP_NEXT	"toe_xdp_next"
#define TOE_MAP_IF_SLOT		"toe_if_slot"

#define TOE_MAX_DEVS		64
#define TOE_DEV_NONE		0xffffffffU
#define TOE_FLOWS_DEFAULT	262144
#define TOE_MAX_CHAIN		64	/* interfaces with a chained XDP program */

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
 * finds them); ports in host order.
 */
struct toe_flow_key {
	__u32 laddr[4];
	__u32 raddr[4];
	__u16 lport;
	__u16 rport;
	__u8 family;		/* TOE_AF_INET or TOE_AF_INET6 */
	__u8 pad[3];
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
	__u32 gen;		/* policy generation that decided */
};

#define TOE_RULE_NONE		0xffffffffU

/* toe_flow_pkts: LRU_PERCPU_HASH, toe_flow_key -> per-CPU XDP counters. */
struct toe_flow_pkts {
	__u64 packets;
	__u64 bytes;
};

/*
 * toe_sk_state: SK_STORAGE, per socket.  Owns the device slot of an
 * offloaded connection: created when the slot is taken, the slot released
 * (and dev set to TOE_DEV_NONE) exactly once, at TCP_CLOSE.
 */
struct toe_sk_state {
	__u32 dev;
	__u8 decision;
	__u8 pad[3];
};

/* toe_config: ARRAY[1]. Written by toe-loader/toed. */
struct toe_config {
	__u32 default_action;	/* enum toe_action */
	__u32 flags;		/* TOE_CFG_* */
};

#define TOE_CFG_TRACK_ALL	(1U << 0)	/* record host flows too */

/*
 * toe_stats: PERCPU_ARRAY of __u64 counters, index enum toe_stat.
 * Indexes below TOE_S_BASE count XDP parse results (enum toe_parse_result
 * in include/toe_parse.h).
 */
enum toe_stat {
	TOE_S_BASE = 32,
	TOE_S_XDP_PACKETS = TOE_S_BASE,	/* every packet XDP saw */
	TOE_S_XDP_FLOW_HIT,		/* packet of an offloaded flow */
	TOE_S_XDP_HOST,			/* TCP packet of any other flow */
	TOE_S_XDP_CHAINED,		/* handed to the chained program */
	TOE_S_XDP_REDIRECT_CPU,
	TOE_S_XDP_FORWARD,
	TOE_S_XDP_NEIGH_MISS,
	TOE_S_ESTABLISHED,		/* connections decided by sock_ops */
	TOE_S_CLOSED,			/* tracked connections closed */
	TOE_S_FLOW_EVICTED,		/* closed flow no longer in toe_flows */
	TOE_S_EVENT_DROPPED,		/* ring buffer full */
	TOE_S_LISTEN,			/* listen_start events */
	TOE_S__MAX
};

#define TOE_STATS_MAX		64

/* Ring buffer events (toe_events). */
enum toe_event_type {
	TOE_EV_LISTEN_START = 1,
	TOE_EV_LISTEN_STOP = 2,
	TOE_EV_FLOW_OFFLOADED = 3,
	TOE_EV_FLOW_REFUSED = 4,
	TOE_EV_FLOW_CLOSED = 5,
};

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
};

#endif /* __OPENTOE_H */
