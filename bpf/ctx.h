/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, the context layer: what the forward path (and the
 * capture and the conntrack refresh under it) needs of the packet it runs
 * on, for both hooks, so that each step is written once (Cilium's
 * __ctx_buff, in one object with both kinds of program).
 *
 * Every function here takes the program's ctx as void * and the hook it
 * runs on (enum toe_fwd_hook: TOE_FH_XDP, ctx a struct xdp_md; TOE_FH_TC,
 * a struct __sk_buff).  The hook is a constant at every call: the callers
 * are __always_inline down to a per-hook entry (toe_xdp and toe_tc, or a
 * __noinline subprogram's pair of wrappers, CTX_TWINS), so the compiler
 * keeps one hook's branch and drops the other; nothing is tested at run
 * time, and the code each program gets is what a hand-written version for
 * its hook would be.  A hook argument that is not such a constant would
 * still be correct (both branches verify) but slower.
 *
 * Packet pointers from ctx_data()/ctx_end() are invalid after a tc
 * helper that writes the skb (ctx_store, ctx_l3_csum, ctx_l4_csum): read
 * them again.
 */
#ifndef __TOE_CTX_H
#define __TOE_CTX_H

#include "common.h"
#include "xdp.h"
#include "tc.h"
#ifdef TOE_BENCH_NO_NETNS
#include "maps_forward.h"
#endif

#ifndef TOE_TC_ACT_REDIRECT
#define TOE_TC_ACT_REDIRECT 7 /* TC_ACT_REDIRECT: a #define, not in BTF */
#endif

#define CTX_XDP(ctx) ((struct xdp_md *)(ctx))
#define CTX_SKB(ctx) ((struct __sk_buff *)(ctx))

/*
 * XDP's ctx field at off, loaded as the verifier takes it: from the ctx
 * pointer itself with the offset in the instruction.  Plain C lets clang
 * form &ctx->data_end once (ctx + 4, the 4 shared with a constant in a
 * register) and load through it, which the verifier refuses ("dereference
 * of modified ctx ptr").  Not volatile: equal loads may be merged (XDP's
 * packet pointers stay valid: nothing here moves the frame).
 */
#define CTX_XDP_LD(ctx, field)                                         \
	({                                                             \
		__u64 __v; /* the load zero-extends: no shift after */ \
		asm("%0 = *(u32 *)(%1 + %2)"                           \
		    : "=r"(__v)                                        \
		    : "r"(ctx),                                        \
		      "i"(__builtin_offsetof(struct xdp_md, field)));  \
		__v;                                                   \
	})

static __always_inline void *ctx_data(void *ctx, int hook)
{
	if (hook == TOE_FH_XDP)
		return (void *)(long)CTX_XDP_LD(ctx, data);
	return (void *)(long)CTX_SKB(ctx)->data;
}

static __always_inline void *ctx_end(void *ctx, int hook)
{
	if (hook == TOE_FH_XDP)
		return (void *)(long)CTX_XDP_LD(ctx, data_end);
	return (void *)(long)CTX_SKB(ctx)->data_end;
}

/* The ifindex the packet came in on. */
static __always_inline __u32 ctx_ifin(void *ctx, int hook)
{
	if (hook == TOE_FH_XDP)
		return CTX_XDP(ctx)->ingress_ifindex;
	return CTX_SKB(ctx)->ingress_ifindex;
}

/* The cookie of the namespace of the device it came in on. */
static __always_inline __u64 ctx_netns(void *ctx, int hook)
{
#ifdef TOE_BENCH_NO_NETNS
	/*
	 * Benchmark only (bench/bench_xdp_steps.sh; see stat_add, stats.h):
	 * the forward path's namespace read replaced by one array load, the
	 * router's cookie as toed writes it (rt_netns): what the probe reads
	 * cost beyond that.  Wrong for any other namespace.
	 */
	__u32 z = 0;
	struct toe_fwd_gen *g = bpf_map_lookup_elem(&toe_fwd_gen, &z);

	return g ? g->rt_netns : 0;
#endif
	if (hook == TOE_FH_XDP)
		return xdp_netns(CTX_XDP(ctx));
	return skb_netns(CTX_SKB(ctx));
}

/* Its length in bytes (tc: the whole skb, GSO included; XDP: the frame). */
static __always_inline __u32 ctx_len(void *ctx, int hook)
{
	if (hook == TOE_FH_XDP)
		return ctx_end(ctx, hook) - ctx_data(ctx, hook);
	return CTX_SKB(ctx)->len;
}

/* The packets it carries on the wire (tc: a GSO skb's segments). */
static __always_inline __u32 ctx_segs(void *ctx, int hook)
{
	__u32 segs;

	if (hook == TOE_FH_XDP)
		return 1;
	segs = CTX_SKB(ctx)->gso_segs;
	return segs ? segs : 1;
}

/*
 * Copy len bytes from offset off into to (the capture's): XDP's frame
 * (multi-buffer too), tc's skb (its fragments too).
 */
static __always_inline long ctx_load(void *ctx, int hook, __u32 off, void *to,
				     __u32 len)
{
	if (hook == TOE_FH_XDP)
		return bpf_xdp_load_bytes(CTX_XDP(ctx), off, to, len);
	return bpf_skb_load_bytes(CTX_SKB(ctx), off, to, len);
}

/* The whole packet's length, as the capture records it. */
static __always_inline __u64 ctx_wire_len(void *ctx, int hook)
{
	if (hook == TOE_FH_XDP)
		return bpf_xdp_get_buff_len(CTX_XDP(ctx));
	return CTX_SKB(ctx)->len;
}

/*
 * The verdict that hands the packet on untouched: XDP's chained program or
 * the stack (xdp_next), tc's next program then the stack (TCX_NEXT).
 */
static __always_inline int ctx_pass(void *ctx, int hook)
{
	if (hook == TOE_FH_XDP)
		return xdp_next(CTX_XDP(ctx));
	return TCX_NEXT;
}

/* The verdict that drops it. */
static __always_inline int ctx_drop(int hook)
{
	return hook == TOE_FH_XDP ? XDP_DROP : TCX_DROP;
}

/* ---------------------------------------- writes that keep checksums */

/* HC' = ~(~HC + ~m + m') (RFC 1624), m and m' 16-bit words as in memory. */
static __always_inline __u32 csum_fold16(__u32 s)
{
	s = (s & 0xffff) + (s >> 16);
	return (s & 0xffff) + (s >> 16);
}

static __always_inline void csum_repl4(__u16 *check, __u32 from, __u32 to)
{
	__u32 s = (__u16) ~*check;

	s += (__u16) ~(from & 0xffff) + (__u16) ~(from >> 16);
	s += (to & 0xffff) + (to >> 16);
	*check = (__u16)~csum_fold16(s);
}

static __always_inline void csum_repl2(__u16 *check, __u16 from, __u16 to)
{
	__u32 s = (__u16) ~*check;

	s += (__u16)~from + to;
	*check = (__u16)~csum_fold16(s);
}

/*
 * The IPv4 header checksum at off, for a 4-byte field going from from to
 * to (as bpf_l3_csum_replace(), whose tc form it is).  0, or nonzero with
 * nothing written.
 */
static __always_inline int ctx_l3_csum(void *ctx, int hook, __u32 off,
				       __u32 from, __u32 to)
{
	__u16 *c;

	if (hook == TOE_FH_TC)
		return bpf_l3_csum_replace(ctx, off, from, to, 4);
	c = ctx_data(ctx, hook) + off;
	if ((void *)(c + 1) > ctx_end(ctx, hook))
		return -1;
	csum_repl4(c, from, to);
	return 0;
}

/*
 * The transport checksum at off, for a field of flags & 0xf bytes (2 or
 * 4) going from from to to; BPF_F_PSEUDO_HDR: a field of the
 * pseudo-header (an address), BPF_F_MARK_MANGLED_0: a UDP checksum (0:
 * none, left so; a result of 0 is sent as 0xffff).  tc: the kernel's
 * bpf_l4_csum_replace(), which also keeps the skb's checksum state right
 * (CHECKSUM_PARTIAL's field holds the pseudo-header's sum only, so ports
 * change nothing there); XDP: the frame's field, RFC 1624.  0, or nonzero
 * with nothing written.
 */
static __always_inline int ctx_l4_csum(void *ctx, int hook, __u32 off,
				       __u32 from, __u32 to, __u64 flags)
{
	__u16 *c;

	if (hook == TOE_FH_TC)
		return bpf_l4_csum_replace(ctx, off, from, to, flags);
	c = ctx_data(ctx, hook) + off;
	if ((void *)(c + 1) > ctx_end(ctx, hook))
		return -1;
	if ((flags & BPF_F_MARK_MANGLED_0) && !*c)
		return 0;
	if ((flags & 0xf) == 4)
		csum_repl4(c, from, to);
	else
		csum_repl2(c, from, to);
	if ((flags & BPF_F_MARK_MANGLED_0) && !*c)
		*c = 0xffff;
	return 0;
}

/*
 * len bytes (a constant at every call) from from written at off, after
 * the checksums were updated for them.  0, or nonzero with nothing
 * written (XDP) or the skb not to be sent (tc).
 */
static __always_inline int ctx_store(void *ctx, int hook, __u32 off,
				     const void *from, __u32 len)
{
	void *d;

	if (hook == TOE_FH_TC)
		return bpf_skb_store_bytes(ctx, off, from, len, 0);
	d = ctx_data(ctx, hook) + off;
	if (d + len > ctx_end(ctx, hook))
		return -1;
	__builtin_memcpy(d, from, len);
	return 0;
}

/* The hook's counter of two (toe_stats ids): XDP's, or tc's. */
static __always_inline __u32 ctx_stat(int hook, __u32 xdp, __u32 tc)
{
	return hook == TOE_FH_XDP ? xdp : tc;
}

#endif /* __TOE_CTX_H */
