/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: layouts of the local bypass (toe_bypass, toe_byp_sk,
 * toe_byp_flows, toe_byp_conf) and its flow control, shared by bpf/ and
 * user/ (include/opentoe.h).
 */
#ifndef __OPENTOE_BYPASS_H
#define __OPENTOE_BYPASS_H

#include "opentoe_flows.h"

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
#define TOE_BYPASS_DEFAULT 65536 /* toe-loader --flows N */

struct toe_bypass_key {
	/*
	 * This socket's view (l = itself), netns 0: the two ends may be in
	 * different namespaces (the ISNs keep keys apart); sk_msg finds its
	 * toe_flows record with bpf_get_netns_cookie().
	 */
	struct toe_flow_key flow;
	__u32 lisn; /* this end's initial sequence number */
	__u32 risn; /* the peer's */
};

enum toe_byp_state {
	TOE_BYP_WAITING = 0, /* connecting end: peer not seen yet */
	TOE_BYP_PAIRED = 1, /* sends are redirected to the peer */
	TOE_BYP_TCP = 2, /* sends go over TCP for now (see why) */
	TOE_BYP_ENDED = 3, /* sends go over TCP for good (unload) */
};

/*
 * Why a socket's sends last went over TCP: TOE_BYP_WHY_TABLE(X), X(ID,
 * name, help) for each reason to leave the peer, enum toe_byp_why's
 * TOE_BYP_WHY_<ID> from 1 (0: none) to TOE_BYP_WHY_N; name: toectl
 * stats' bypass_to_tcp_<name>, toectl flows' why, label reason of /metrics.
 */
/* clang-format off */
#define TOE_BYP_WHY_TABLE(X)						\
	X(NO_PEER, "no_peer", "peer not (or no longer) in toe_bypass")	\
	X(REFUSED, "refused", "peer there but not established (half-closed)") \
	X(DRAIN, "drain", "unload: toe_byp_conf.draining")		\
	X(BACKLOG, "backlog", "the peer has not read its queue: flow control")
/* clang-format on */

enum toe_byp_why {
	TOE_BYP_WHY_NONE = 0,
#define TOE_BYP_WHY_ENUM(id, name, help) TOE_BYP_WHY_##id,
	TOE_BYP_WHY_TABLE(TOE_BYP_WHY_ENUM)
#undef TOE_BYP_WHY_ENUM
		TOE_BYP_WHY__END
};
/* reasons to leave the peer: 1 .. TOE_BYP_WHY_N */
#define TOE_BYP_WHY_N (TOE_BYP_WHY__END - 1)

#ifndef __bpf__
/* A bypass why's name ("none" for 0, "?" out of range). */
static inline const char *toe_byp_why_str(__u32 why)
{
	static const char *const n[TOE_BYP_WHY__END] = {
		[TOE_BYP_WHY_NONE] = "none",
#define TOE_BYP_WHY_NAME(id, name, help) [TOE_BYP_WHY_##id] = name,
		TOE_BYP_WHY_TABLE(TOE_BYP_WHY_NAME)
#undef TOE_BYP_WHY_NAME
	};

	return why < TOE_BYP_WHY__END ? n[why] : "?";
}
#endif

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
#define TOE_BYP_QUEUE_MIN (256U << 10)
#define TOE_BYP_CHECK_BYTES (256U << 10)
#define TOE_BYP_QUEUE_SOFT (4096U << 10)

struct toe_byp_sk {
	struct toe_bypass_key self;
	struct toe_bypass_key peer; /* self with the ends swapped */
	__u32 state; /* enum toe_byp_state */
	__u32 why; /* enum toe_byp_why */
	__u64 budget; /* bytes to redirect before the next queue check */
	__u8 local; /* 1: the peer was found; 2: said not_local */
	__u8 reason; /* the flow's reason (enum toe_reason) */
	__u8 pad[6];
};

struct toe_byp_flow {
	__u64 start_ns; /* put into toe_bypass (bpf_ktime_get_ns) */
	__u64 bytes_out; /* sent: redirected into the peer */
	__u64 msgs_out; /* sk_msg verdicts that did it */
	__u64 bytes_in; /* received: redirected from the peer */
	__u64 msgs_in;
	__u64 tcp_bytes_out; /* sent over TCP while in toe_bypass */
	__u64 tcp_msgs_out;
	__u64 to_tcp; /* switches to TCP (flow control, peer half-closed) */
	__u64 to_peer; /* switches back */
	__u64 cookie; /* socket cookie */
	__u64 sk; /* kernel address of the socket: its peer's sk_msg
				 * reads its receive state from it (flow control) */
	__u32 state; /* enum toe_byp_state */
	__u32 why; /* enum toe_byp_why */
	__u8 direction; /* enum toe_dir */
	__u8 pad[7];
	__u64 to_tcp_why[TOE_BYP_WHY_N]; /* to_tcp by reason: [why - 1] */
};

/* The packet of toe_byp_probe (BPF_PROG_TEST_RUN by toe-loader unload). */
struct toe_byp_probe {
	__u8 eth[16]; /* room for an Ethernet header, unused */
	struct toe_bypass_key key; /* in */
	__u32 found; /* out: the socket is in toe_bypass */
	__u32 queued; /* out: messages redirected to it are unread */
	__u32 bytes; /* out: how many bytes (0 if the kernel does not say) */
	__u32 pad;
};

struct toe_byp_conf {
	__u32 draining; /* 1: redirect nothing, everything over TCP */
	__u32 pad;
};

#endif /* __OPENTOE_BYPASS_H */
