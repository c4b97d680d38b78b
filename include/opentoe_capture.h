/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: layouts of the packet capture of toectl dump (toe_cap_conf,
 * toe_cap_ring, toe_cap_cpu), shared by bpf/capture.h and
 * user/toectl/dump.c (include/opentoe.h).
 *
 * toe_cap_conf: ARRAY[1], written by toectl dump only: whether a capture
 * runs, its session, snap length and filter.  The fast paths read its
 * "on" first, after the packet is theirs (redirected, or of an offloaded
 * flow): with no capture running that is the whole cost.  toectl writes
 * it twice to start (every field with on = 0, then on = 1) and once to
 * stop (on = 0), so a program never sees on set with a half-written
 * filter.  One dump at a time per datapath: toectl holds the pin
 * folder's dump lock (user/lib/dplock.h) while on is set; a dump that
 * takes the lock and finds on set was preceded by one killed (kill -9):
 * it switches the stale capture off (so does toed, reconcile.c).
 *
 * toe_cap_ring: RINGBUF of struct toe_cap_rec, each followed by caplen
 * bytes of the frame from its Ethernet header.  Its size is fixed at load
 * (toe-loader --capture-ring); a record that does not fit is lost and
 * counted in toe_cap_cpu.lost.
 *
 * toe_cap_cpu: PERCPU_ARRAY[1]: the session's counters (zeroed by toectl
 * before on is set) and the scratch record the frame is copied into
 * before it goes on the ring (bpf_ringbuf_reserve takes only a constant
 * size; bpf_ringbuf_output copies a record of the frame's own length).
 */
#ifndef __OPENTOE_CAPTURE_H
#define __OPENTOE_CAPTURE_H

#include "opentoe_common.h"

#define TOE_CAP_SNAP_MAX 65535 /* -s: the most of one frame kept */
#define TOE_CAP_SNAP_DEFAULT 65535
#define TOE_CAP_RING_DEFAULT (4U << 20) /* toe-loader --capture-ring */
#define TOE_CAP_RING_MIN (16U << 10)
#define TOE_CAP_RING_MAX (1U << 30)

/* What a filter names (toe_cap_conf.match): all of them must hold. */
enum toe_cap_match {
	TOE_CAP_M_FLOW = 1 << 0, /* a, b: the flow's two ends, either way */
	TOE_CAP_M_PORT = 1 << 1, /* port: source or destination */
	TOE_CAP_M_NETNS = 1 << 2, /* netns: the namespace it arrived in */
	TOE_CAP_M_IFINDEX = 1 << 3, /* ifindex: the interface it came in on */
	TOE_CAP_M_HOOK = 1 << 4, /* hooks: a mask of 1 << enum toe_cap_hook */
};

/* Where a frame was captured (toe_cap_rec.hook). */
enum toe_cap_hook {
	TOE_CAP_XDP_FWD = 0, /* XDP forwarded it (after its rewrite) */
	TOE_CAP_XDP_LOCAL = 1, /* XDP: a packet of an offloaded local flow */
	TOE_CAP_TC_FWD = 2, /* tc forwarded it (an skb: GSO kept whole) */
	TOE_CAP_TC_LOCAL = 3, /* tc: a packet of an offloaded local flow */
	TOE_CAP_HOOKS = 4,
};

/* One end of a flow filter: address (IPv4: first 4 bytes) and port. */
struct toe_cap_end {
	__u8 addr[16];
	__u16 port; /* network order; 0: any */
	__u8 pad[2];
};

struct toe_cap_conf {
	__u32 on; /* 1: capture; read first, alone */
	__u32 session; /* copied into each record: older ones are skipped */
	__u32 snaplen; /* 1 .. TOE_CAP_SNAP_MAX */
	__u32 match; /* enum toe_cap_match */
	__u8 family; /* with TOE_CAP_M_FLOW: TOE_AF_INET or TOE_AF_INET6 */
	__u8 hooks; /* with TOE_CAP_M_HOOK */
	__u16 port; /* with TOE_CAP_M_PORT, network order */
	__u32 ifindex; /* with TOE_CAP_M_IFINDEX */
	__u64 netns; /* with TOE_CAP_M_NETNS (and TOE_CAP_M_IFINDEX) */
	struct toe_cap_end a; /* with TOE_CAP_M_FLOW: one end */
	struct toe_cap_end b; /* and the other */
	__u32 owner; /* the pid of the toectl dump that set on */
	__u32 no_capture; /* toe-loader: 1 if built with make CAPTURE=0 */
	__u64 start_ns; /* when (bpf_ktime_get_ns clock: CLOCK_MONOTONIC) */
};

struct toe_cap_rec {
	__u64 ts_ns; /* bpf_ktime_get_ns */
	__u32 session;
	__u32 len; /* the frame's length (tc: the skb's, GSO whole) */
	__u32 caplen; /* bytes that follow: min(len, snaplen) */
	__u32 ifindex; /* the interface it came in on */
	__u8 hook; /* enum toe_cap_hook */
	__u8 pad[7];
};

struct toe_cap_cpu {
	__u64 matched; /* frames the filter took */
	__u64 lost; /* of those, not on the ring: full */
	struct toe_cap_rec rec; /* scratch: the record being made */
	__u8 data[TOE_CAP_SNAP_MAX + 1];
};

#endif /* __OPENTOE_CAPTURE_H */
