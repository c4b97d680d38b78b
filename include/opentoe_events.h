/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: the datapath's ring buffer events (toe_events), shared by bpf/
 * and user/ (include/opentoe.h).
 */
#ifndef __OPENTOE_EVENTS_H
#define __OPENTOE_EVENTS_H

#include "opentoe_flows.h"

/* Ring buffer events (toe_events). */
enum toe_event_type {
	TOE_EV_LISTEN_START = 1,
	TOE_EV_LISTEN_STOP = 2,
	TOE_EV_FLOW_OFFLOADED = 3,
	TOE_EV_FLOW_REFUSED = 4,
	TOE_EV_FLOW_CLOSED = 5,
	/*
	 * The forward path admitted a routed flow (bpf/egress.h): key is the
	 * toe_fwd key (conntrack's original tuple's), direction the client's
	 * end (0 = laddr).  toed marks its conntrack entry ESTABLISHED and
	 * window-liberal (user/toed/ct.c); toectl monitor shows it.
	 */
	TOE_EV_FWD_ADMITTED = 6,
	/*
	 * The forward path gave an admitted flow back to the stack (reason:
	 * enum toe_fwd_reason of kind "returned"; the flow stays admitted)
	 * or ended its fast path (TOE_EV_FWD_ENDED: FIN, RST; toed's own for
	 * conntrack_gone).  Once a flow transition, never a packet
	 * (bpf/fwd_events.h).  fwd_* below: the flow's counters then.
	 */
	TOE_EV_FWD_RETURNED = 7,
	TOE_EV_FWD_ENDED = 8,
};

#ifndef __bpf__
/* The event's name, as toed, toectl and the tools print it. */
static inline const char *toe_event_name(__u32 type)
{
	switch (type) {
	case TOE_EV_LISTEN_START:
		return "listen_start";
	case TOE_EV_LISTEN_STOP:
		return "listen_stop";
	case TOE_EV_FLOW_OFFLOADED:
		return "flow_offloaded";
	case TOE_EV_FLOW_REFUSED:
		return "flow_refused";
	case TOE_EV_FLOW_CLOSED:
		return "flow_closed";
	case TOE_EV_FWD_ADMITTED:
		return "fwd_admitted";
	case TOE_EV_FWD_RETURNED:
		return "fwd_returned";
	case TOE_EV_FWD_ENDED:
		return "fwd_ended";
	default:
		return "unknown";
	}
}
#endif

struct toe_event {
	__u64 ts_ns;
	__u32 type; /* enum toe_event_type */
	__u32 dev;
	struct toe_flow_key key;
	__u8 decision;
	__u8 reason;
	__u8 direction;
	__u8 pad;
	__u32 rule;
	__u64 bytes_acked; /* final counters, with FLOW_CLOSED */
	__u64 bytes_received;
	__u32 segs_in;
	__u32 segs_out;
	__u32 total_retrans;
	__u32 srtt_us;
	__u32 policy; /* serial of the policy that decided (low bits) */
	__u32 tid; /* module TID the flow took, or TOE_TID_NONE */
	__u64 netns_ino; /* inode of key.netns's namespace (0: unknown) */
	__u64 cookie; /* the socket's cookie (0: none) */
	/* the tenant whose event budget it took (toe_tenants; 0: none) */
	__u64 tenant;
	/*
	 * TOE_EV_FWD_*: what the fast path forwarded of the flow, by direction
	 * ([0] client to server, [1] server to client; bytes of the frames,
	 * Ethernet header included), the client's and the server's interface
	 * (ifindex in the router's namespace) and the hook (enum toe_fwd_hook)
	 * of the interface the packet came in on (admitted: the client's).
	 */
	__u64 fwd_packets[2];
	__u64 fwd_bytes[2];
	__u32 fwd_if[2];
	__u8 hook;
	__u8 pad3;
	__u16 ct_zone; /* TOE_EV_FWD_*: its conntrack entry's zone */
	__u8 pad2[4];
};

/* What one event takes of the ring: its header and itself, 8-aligned. */
#define TOE_EVENT_RING_BYTES ((sizeof(struct toe_event) + 8 + 7) & ~7UL)

#endif /* __OPENTOE_EVENTS_H */
