/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: the datapath's ring buffer events (toe_events), shared by bpf/
 * and user/ (include/opentoe.h).
 */
#ifndef __OPENTOE_EVENTS_H
#define __OPENTOE_EVENTS_H

#include "opentoe_flows.h"

/*
 * Ring buffer events (toe_events): TOE_EVENT_TABLE(X), X(ID, name, fields,
 * help) in type order from 1: enum toe_event_type's TOE_EV_<ID>.
 *   name    the event's name, as toed's log, toectl monitor and the tools
 *           print it (toe_event_name)
 *   fields  the fields of struct toe_event it fills beyond ts_ns, type,
 *           key and tenant (build/toe-tables)
 *   help    what it says
 *
 * TOE_EV_FWD_ADMITTED: the forward path admitted a routed flow
 * (bpf/egress.h): key is the toe_fwd key (conntrack's original tuple's),
 * direction the client's end (0 = laddr).  toed marks its conntrack entry
 * ESTABLISHED and window-liberal (user/toed/ct.c); toectl monitor shows it.
 *
 * TOE_EV_FWD_RETURNED: the forward path gave an admitted flow back to the
 * stack (reason: enum toe_fwd_reason of kind "returned"; the flow stays
 * admitted) or ended its fast path (TOE_EV_FWD_ENDED: FIN, RST; toed's own
 * for conntrack_gone and evicted).  Once a flow transition, never a
 * packet (bpf/fwd_events.h).  fwd_* of struct toe_event: the flow's
 * counters then.
 */
/* The fields a flow's record gives its events (bpf/stats.h's emit), and
 * the forward path's (bpf/fwd_events.h). */
#define TOE_EVF_FLOW \
	"dev rule decision reason direction policy netns_ino cookie"
#define TOE_EVF_FWD \
	"dev rule policy direction hook ct_zone fwd_packets fwd_bytes fwd_if"

/* clang-format off */
#define TOE_EVENT_TABLE(X)						\
	X(LISTEN_START, "listen_start", TOE_EVF_FLOW " tid",		\
	  "a socket listens: the listener policy's decision (kept home: its reason)") \
	X(LISTEN_STOP, "listen_stop", TOE_EVF_FLOW " tid",		\
	  "a listener closed")						\
	X(FLOW_OFFLOADED, "flow_offloaded", TOE_EVF_FLOW " tid",	\
	  "sock_ops decided a connection: its decision, reason, device, rule") \
	X(FLOW_REFUSED, "flow_refused", TOE_EVF_FLOW,			\
	  "a connection its policy would offload kept on the host (reason: the refusal)") \
	X(FLOW_CLOSED, "flow_closed", TOE_EVF_FLOW " tid bytes_acked "	\
	  "bytes_received segs_in segs_out total_retrans srtt_us",	\
	  "a tracked connection closed, with its final counters")	\
	X(FWD_ADMITTED, "fwd_admitted", TOE_EVF_FWD,			\
	  "the forward path admitted a routed flow")			\
	X(FWD_RETURNED, "fwd_returned", TOE_EVF_FWD " reason",		\
	  "the forward path gave an admitted flow back to the stack (a reason of kind returned)") \
	X(FWD_ENDED, "fwd_ended", TOE_EVF_FWD " reason",		\
	  "a routed flow's fast path ended (a reason of kind ended)")
/* clang-format on */

enum toe_event_type {
	TOE_EV__NONE = 0,
#define TOE_EV_ENUM(id, name, fields, help) TOE_EV_##id,
	TOE_EVENT_TABLE(TOE_EV_ENUM)
#undef TOE_EV_ENUM
		TOE_EV__MAX
};

#ifndef __bpf__
/* The event's name, as toed, toectl and the tools print it. */
static inline const char *toe_event_name(__u32 type)
{
	static const char *const n[TOE_EV__MAX] = { [TOE_EV__NONE] = "unknown",
#define TOE_EV_NAME(id, name, fields, help) [TOE_EV_##id] = name,
						    TOE_EVENT_TABLE(TOE_EV_NAME)
#undef TOE_EV_NAME
	};

	return type < TOE_EV__MAX ? n[type] : "unknown";
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
