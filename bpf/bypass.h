/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, the local bypass (policy action bypass): putting a
 * socket whose peer is a socket of this host into toe_bypass at sock_ops
 * time (bypass_start), each send's choice between the peer's receive queue
 * and TCP with its flow control (bypass_msg, for sk_msg), and the unload
 * probe of data still queued to a socket (bypass_probe).  Locks and flow
 * control: maps_bypass.h and include/opentoe.h.
 */
#ifndef __TOE_BYPASS_H
#define __TOE_BYPASS_H

#include "common.h"
#include "maps_bypass.h"
#include "maps_flows.h"
#include "policy.h"
#include "stats.h"

/*
 * An MPTCP subflow: sk_msg redirection does not know MPTCP's data-sequence
 * mapping, so its sockets are kept off the bypass.
 */
static __always_inline bool is_mptcp(struct bpf_sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	return tp && tp->is_mptcp;
}

/*
 * Policy said bypass: put the socket into toe_bypass, keyed by its tuple
 * and both ISNs.  On ACTIVE/PASSIVE_ESTABLISHED nothing has been sent yet
 * on either side of this socket (no data before the handshake; TCP Fast
 * Open aside, whose ISN test then fails and which stays on TCP), so
 * snd_una - 1 is this end's ISN and rcv_nxt - 1 the peer's.
 *
 * The connecting end is established first (on the SYN-ACK) and goes in
 * waiting for its peer; the accepting end (on the final ACK) goes in only
 * if its peer is already there, which is the "peer is local" test: both
 * ends passed through this program.  A socket that is not put in stays on
 * the host (reason not_local or unsupported).
 */
static __always_inline void bypass_start(struct bpf_sock_ops *skops,
					 struct bpf_sock *sk,
					 const struct toe_flow_key *k, __u8 dir,
					 struct decision *d)
{
	struct toe_byp_flow v = {};
	struct toe_byp_sk *st;

	if (is_mptcp(sk)) {
		stat_inc(TOE_S_BYP_UNSUPPORTED);
		goto unsupported;
	}
	st = bpf_sk_storage_get(&toe_byp_sk, sk, 0,
				BPF_SK_STORAGE_GET_F_CREATE);
	if (!st) {
		stat_inc(TOE_S_BYP_UNSUPPORTED);
		goto unsupported;
	}
	st->self.flow = *k;
	st->self.flow.netns = 0; /* the peer may be in another namespace */
	st->self.lisn = skops->snd_una - 1;
	st->self.risn = skops->rcv_nxt - 1;
	st->peer.flow.family = k->family;
	__builtin_memcpy(st->peer.flow.laddr, k->raddr, sizeof(k->raddr));
	__builtin_memcpy(st->peer.flow.raddr, k->laddr, sizeof(k->laddr));
	st->peer.flow.lport = k->rport;
	st->peer.flow.rport = k->lport;
	st->peer.lisn = st->self.risn;
	st->peer.risn = st->self.lisn;
	st->state = TOE_BYP_ENDED; /* until it is in the map */
	st->why = TOE_BYP_WHY_NO_PEER;
	st->budget = 0;
	st->local = 0;
	st->reason = d->reason;
	v.state = TOE_BYP_WAITING;
	if (dir == TOE_DIR_PASSIVE) {
		struct toe_byp_flow *pf =
			bpf_map_lookup_elem(&toe_byp_flows, &st->peer);

		if (!pf) {
			stat_inc(TOE_S_BYP_NOT_LOCAL);
			d->action = TOE_ACT_HOST;
			d->reason = TOE_R_NOT_LOCAL;
			return;
		}
		v.state = TOE_BYP_PAIRED;
		stat_inc(TOE_S_BYP_PAIRED);
	}
	v.start_ns = bpf_ktime_get_ns();
	v.cookie = bpf_get_socket_cookie(skops);
	v.sk = (__u64)sk; /* for the peer's flow control (peer_rx) */
	v.direction = dir;
	/* Counters first: the peer may look them up as soon as we are in. */
	if (bpf_map_update_elem(&toe_byp_flows, &st->self, &v, BPF_ANY))
		goto unsupported;
	if (bpf_sock_hash_update(skops, &toe_bypass, &st->self, BPF_NOEXIST)) {
		/* kernel refused it (ULP, full map, duplicate key) */
		bpf_map_delete_elem(&toe_byp_flows, &st->self);
		stat_inc(TOE_S_BYP_UNSUPPORTED);
		goto unsupported;
	}
	/*
	 * Both ends start waiting: the first send checks the peer (and
	 * finds it, or says not_local) before it redirects anything.
	 */
	st->state = TOE_BYP_WAITING;
	st->why = TOE_BYP_WHY_NONE;
	stat_inc(TOE_S_BYP_SOCKS);
	return;
unsupported:
	d->action = TOE_ACT_HOST;
	d->reason = TOE_R_UNSUPPORTED;
}

/*
 * The peer's receive side, read without its lock (values only ever grow,
 * and are re-read on every decision): its psock queue, its receive buffer,
 * and whether it has read everything TCP delivered to it.  sk_msg programs
 * may not hold a socket reference (no bpf_sk_release), so the peer is read
 * through the address its own sock_ops put in toe_byp_flows: the entry is
 * deleted when the socket closes, before it is freed, and programs run
 * under RCU; the reads are probe reads, which cannot fault.
 */
struct peer_rx {
	__u32 queued; /* psock msg_tot_len: redirected, unread */
	__u32 limit; /* the most that may be queued */
	__u32 room; /* sk_rcvbuf - sk_rmem_alloc: what TCP could take */
	bool consumed; /* copied_seq == rcv_nxt */
};

/* What peer_rx() found. */
enum peer_rx_rc {
	/* the peer's receive side is in *r */
	PEER_RX_OK = 0,
	/* no peer in toe_byp_flows: not yet, or no more */
	PEER_RX_NO_PEER = -1,
};

static __always_inline enum peer_rx_rc peer_rx(struct toe_byp_sk *st,
					       struct peer_rx *r)
{
	struct toe_byp_flow *pf =
		bpf_map_lookup_elem(&toe_byp_flows, &st->peer);
	struct tcp_sock *tp;
	struct sk_psock *ps;
	unsigned long ud;
	__u32 rcv_nxt;
	int rcvbuf, rmem_max, rmem;

	if (!pf || !pf->sk)
		return PEER_RX_NO_PEER;
	tp = (struct tcp_sock *)pf->sk;
	r->queued = 0;
	r->limit = TOE_BYP_QUEUE_MIN;
	/* first: copied_seq only catches up */
	rcv_nxt = BPF_CORE_READ(tp, rcv_nxt);
	r->consumed = BPF_CORE_READ(tp, copied_seq) == rcv_nxt;
	rcvbuf = BPF_CORE_READ(tp, inet_conn.icsk_inet.sk.sk_rcvbuf);
	/* clang-format off */
	rmem = BPF_CORE_READ(tp, inet_conn.icsk_inet.sk.sk_backlog.rmem_alloc.counter);
	/* clang-format on */
	r->room = rcvbuf > rmem ? rcvbuf - rmem : 0;
	/* clang-format off */
	rmem_max = BPF_CORE_READ(tp, inet_conn.icsk_inet.sk.__sk_common.skc_net.net,
				 ipv4.sysctl_tcp_rmem[2]);
	/* clang-format on */
	if (rcvbuf > (int)r->limit)
		r->limit = rcvbuf;
	if (rmem_max > (int)r->limit)
		r->limit = rmem_max;
	/* sk_user_data holds the psock, flags in its low bits */
	/* clang-format off */
	ud = (unsigned long)BPF_CORE_READ(tp, inet_conn.icsk_inet.sk.sk_user_data) & ~7UL;
	/* clang-format on */
	ps = (struct sk_psock *)ud;
	if (ud && bpf_core_field_exists(ps->msg_tot_len))
		r->queued = BPF_CORE_READ(ps, msg_tot_len);
	return PEER_RX_OK;
}

/* Everything this socket sent over TCP has been acknowledged. */
static __always_inline bool tcp_all_acked(struct bpf_sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	return tp && tp->write_seq == tp->snd_una;
}

static __always_inline void set_state(struct toe_byp_sk *st, __u32 state,
				      __u32 why)
{
	struct toe_byp_flow *bf =
		bpf_map_lookup_elem(&toe_byp_flows, &st->self);

	if (st->state == TOE_BYP_PAIRED && state != TOE_BYP_PAIRED) {
		stat_inc(TOE_S_BYP_TO_TCP);
		rsn_inc(TOE_RSN_BYP(why & (TOE_RSN_STRIDE - 1)));
		if (bf) {
			bf->to_tcp++;
			if (why >= 1 && why <= TOE_BYP_WHY_N)
				bf->to_tcp_why[why - 1]++;
		}
	} else if (st->state == TOE_BYP_TCP && state == TOE_BYP_PAIRED) {
		stat_inc(TOE_S_BYP_TO_PEER);
		if (bf)
			bf->to_peer++;
	}
	st->state = state;
	st->why = why;
	if (bf) {
		bf->state = state;
		bf->why = why;
	}
}

/*
 * The socket's record in toe_flows: its bypass key's tuple (netns 0) in
 * its own namespace.
 */
static __always_inline struct toe_flow *own_flow(struct sk_msg_md *msg,
						 struct toe_byp_sk *st)
{
	struct toe_flow_key k = st->self.flow;

	k.netns = bpf_get_netns_cookie(msg);
	return bpf_map_lookup_elem(&toe_flows, &k);
}

/*
 * A connecting end that never found its peer: the peer is not a socket of
 * this host's cgroup.  Said once, in the flow record.
 */
static __always_inline void not_local(struct sk_msg_md *msg,
				      struct toe_byp_sk *st)
{
	struct toe_flow *f = own_flow(msg, st);

	if (f) {
		f->decision = TOE_ACT_HOST;
		f->reason = TOE_R_NOT_LOCAL;
	}
	stat_inc(TOE_S_BYP_NOT_LOCAL);
	st->local = 2; /* reported */
}

/* Found after all (it established late): the flow is bypassed. */
static __always_inline void is_local(struct sk_msg_md *msg,
				     struct toe_byp_sk *st)
{
	struct toe_flow *f;

	if (st->local == 2) {
		f = own_flow(msg, st);
		if (f) {
			f->decision = TOE_ACT_BYPASS;
			f->reason = st->reason;
		}
	}
	st->local = 1;
}

/*
 * Every send of a socket in toe_bypass, under its lock.  Redirect it to
 * the peer's receive queue, or SK_PASS: over TCP, as if opentoe were not
 * there.  Nothing is ever dropped: a redirect that cannot be done (peer
 * closed, half-closed, not local, queue full, unload) goes over TCP, and
 * the socket comes back to the peer only when that cannot reorder the
 * stream (include/opentoe.h, toe_byp_sk and flow control).
 */
static __always_inline int bypass_msg(struct sk_msg_md *msg)
{
	struct toe_byp_flow *self, *peer;
	struct toe_byp_conf *conf;
	struct toe_byp_sk *st;
	struct bpf_sock *sk = msg->sk;
	struct peer_rx r;
	__u64 len = msg->size;
	__u32 zero = 0;

	if (!sk)
		return SK_PASS;
	st = bpf_sk_storage_get(&toe_byp_sk, sk, 0, 0);
	if (!st)
		return SK_PASS;
	if (st->state == TOE_BYP_ENDED)
		goto tcp;
	conf = bpf_map_lookup_elem(&toe_byp_conf, &zero);
	if (conf && conf->draining) {
		set_state(st, TOE_BYP_ENDED, TOE_BYP_WHY_DRAIN);
		goto tcp;
	}
	if (st->state != TOE_BYP_PAIRED || st->budget < len) {
		/* (re)check the peer: resume, or flow control */
		if (peer_rx(st, &r) != PEER_RX_OK) {
			if (st->state == TOE_BYP_WAITING && !st->local)
				not_local(msg, st);
			if (st->state == TOE_BYP_PAIRED)
				set_state(st, TOE_BYP_TCP, TOE_BYP_WHY_NO_PEER);
			goto tcp;
		}
		if (st->local != 1)
			is_local(msg, st);
		if (st->state == TOE_BYP_PAIRED) {
			if (r.queued > r.limit ||
			    (r.queued > TOE_BYP_QUEUE_SOFT &&
			     r.room > TOE_BYP_QUEUE_SOFT)) {
				set_state(st, TOE_BYP_TCP, TOE_BYP_WHY_BACKLOG);
				goto tcp;
			}
		} else if (!tcp_all_acked(sk) || !r.consumed ||
			   r.queued > r.limit / 2) {
			goto tcp; /* TCP has not delivered, or the peer not read */
		}
		st->budget = r.limit - r.queued;
		if (st->budget > TOE_BYP_CHECK_BYTES)
			st->budget = TOE_BYP_CHECK_BYTES;
	}
	if (bpf_msg_redirect_hash(msg, &toe_bypass, &st->peer, BPF_F_INGRESS) !=
	    SK_PASS) {
		/* gone since, or not established (it shut its side down) */
		set_state(st, TOE_BYP_TCP, TOE_BYP_WHY_REFUSED);
		goto tcp;
	}
	if (st->state != TOE_BYP_PAIRED)
		set_state(st, TOE_BYP_PAIRED, TOE_BYP_WHY_NONE);
	st->budget = st->budget > len ? st->budget - len : 0;
	self = bpf_map_lookup_elem(&toe_byp_flows, &st->self);
	if (self) {
		self->bytes_out += len;
		self->msgs_out++;
	}
	peer = bpf_map_lookup_elem(&toe_byp_flows, &st->peer);
	if (peer) {
		peer->bytes_in += len;
		peer->msgs_in++;
	}
	stat_inc(TOE_S_BYP_MSGS);
	stat_add(TOE_S_BYP_BYTES, len);
	return SK_PASS;
tcp:
	self = bpf_map_lookup_elem(&toe_byp_flows, &st->self);
	if (self) {
		self->tcp_bytes_out += len;
		self->tcp_msgs_out++;
	}
	stat_inc(TOE_S_BYP_TCP_MSGS);
	return SK_PASS;
}

/*
 * Is anything redirected to this socket still unread?  Never attached:
 * toe-loader unload runs it with BPF_PROG_TEST_RUN (a tracing iterator
 * would be the natural tool, but tracing programs are not allowed
 * everywhere), once per socket of toe_bypass, before it takes the sockets
 * out of the map: taking a socket out frees its psock and with it the
 * messages still queued there.  The packet is a struct toe_byp_probe, the
 * key in, the answer written back into it.
 */
static __always_inline int bypass_probe(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct toe_byp_probe *p = data;
	struct toe_bypass_key key;
	struct sk_psock *ps;
	struct tcp_sock *tp;
	struct bpf_sock *sk;
	unsigned long ud, head, next = 0;
	__u32 bytes = 0;

	if ((void *)(p + 1) > data_end)
		return XDP_ABORTED;
	__builtin_memcpy(&key, &p->key, sizeof(key));
	p->found = 0;
	p->queued = 0;
	p->bytes = 0;
	sk = bpf_map_lookup_elem(&toe_bypass, &key);
	if (!sk)
		return XDP_PASS;
	p->found = 1;
	tp = bpf_skc_to_tcp_sock(sk);
	if (tp) {
		/* sk_user_data holds the psock, flags in its low bits */
		ud = (unsigned long)tp->inet_conn.icsk_inet.sk.sk_user_data &
		     ~7UL;
		ps = (struct sk_psock *)ud;
		if (ud) {
			head = ud + bpf_core_field_offset(struct sk_psock,
							  ingress_msg);
			next = (unsigned long)BPF_CORE_READ(ps,
							    ingress_msg.next);
			if (bpf_core_field_exists(ps->msg_tot_len))
				bytes = BPF_CORE_READ(ps, msg_tot_len);
			p->queued = next && next != head;
			p->bytes = bytes;
		}
	}
	bpf_sk_release(sk);
	return XDP_PASS;
}

#endif /* __TOE_BYPASS_H */
