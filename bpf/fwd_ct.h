/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, conntrack kept true on the forward path (issue 33): a
 * fast-path flow's packets skip conntrack, so its entry would time out
 * (and with it, through toed's destroy event, the fast path) although the
 * flow runs.  As nftables' flowtable does, the fast path refreshes the
 * entry: once a second of traffic (TOE_FWD_CT_REFRESH_NS), one packet of
 * the flow looks its entry up with the conntrack kfuncs and gives it the
 * established timeout again (net.netfilter.nf_conntrack_tcp_timeout_
 * established, as the stack would at that packet), unless it has more
 * left.  The rest of "true" (ESTABLISHED, window-liberal) toed sets at
 * admission (user/toed/ct.c).  Kfuncs weak: without them (a kernel
 * without conntrack's BPF kfuncs, or nf_conntrack a module not loaded
 * when opentoe was) nothing is refreshed.  Whether they are there is
 * toe_ct_kfuncs, from toe-loader (ct_kfuncs()), never tested by address
 * here: with nf_conntrack a module, libbpf 1.1 loads such a test without
 * the module's BTF and 6.1 refuses the whole object.
 * Both hooks, one body (fwd_ct_refresh_one): the lookup is
 * bpf_xdp_ct_lookup or bpf_skb_ct_lookup, with the packet's own tuple.
 */
#ifndef __TOE_FWD_CT_H
#define __TOE_FWD_CT_H

#include "common.h"
#include "toe_parse.h"

#define TOE_ENOENT 2

/* How often a running flow's conntrack entry is refreshed. */
#define TOE_FWD_CT_REFRESH_NS 1000000000ULL
#define TOE_TCP_CONNTRACK_ESTABLISHED 3
#define TOE_UDP_CT_REPLIED 1 /* enum udp_conntrack */

extern struct nf_conn *bpf_xdp_ct_lookup(struct xdp_md *xdp_ctx,
					 struct bpf_sock_tuple *bpf_tuple,
					 __u32 len_tuple,
					 struct bpf_ct_opts *opts,
					 __u32 len_opts) __ksym __weak;
extern struct nf_conn *bpf_skb_ct_lookup(struct __sk_buff *skb_ctx,
					 struct bpf_sock_tuple *bpf_tuple,
					 __u32 len_tuple,
					 struct bpf_ct_opts *opts,
					 __u32 len_opts) __ksym __weak;
extern void bpf_ct_release(struct nf_conn *ct) __ksym __weak;
extern int bpf_ct_change_timeout(struct nf_conn *nfct,
				 __u32 timeout) __ksym __weak;
/*
 * The kernel's CONFIG_HZ, set by toe-loader (.rodata, from /proc/config.gz):
 * conntrack's timeouts are in jiffies, bpf_ct_change_timeout takes ms.  0
 * (unknown): 100, the lowest, which errs on the longer side.
 */
const volatile __u32 toe_hz = 0;
/*
 * 1: libbpf resolves all four kfuncs above at this load (toe-loader); 0:
 * the calls are dead code, which the verifier drops.
 */
const volatile __u32 toe_ct_kfuncs = 0;

/*
 * Entry ct (a reference the caller holds) of a fast-path flow of protocol
 * l4 (TOE_IPPROTO_*): its timeout back to the namespace's established
 * timeout (TCP's; UDP's for a stream that has seen its reply,
 * nf_conntrack_udp_timeout_stream, as the stack gives a replied flow's
 * packets after its first seconds), if it has less left.
 */
static __always_inline void fwd_ct_keep(struct nf_conn *ct, __u8 l4)
{
	__u32 est = 0, left, hz = toe_hz ? toe_hz : 100;
	struct net *net = BPF_CORE_READ(ct, ct_net.net);
	int err;

	if (!net)
		return;
	if (l4 == TOE_IPPROTO_UDP)
		err = bpf_core_read(
			&est, sizeof(est),
			&net->ct.nf_ct_proto.udp.timeouts[TOE_UDP_CT_REPLIED]);
	else
		err = bpf_core_read(
			&est, sizeof(est),
			&net->ct.nf_ct_proto.tcp
				 .timeouts[TOE_TCP_CONNTRACK_ESTABLISHED]);
	if (err || !est)
		return;
	left = ct->timeout - (__u32)bpf_jiffies64();
	if ((__s32)left >= (__s32)est)
		return;
	bpf_ct_change_timeout(ct, (__u32)((__u64)est * 1000 / hz));
}

/*
 * The conntrack tuple of packet p (its own, as it arrived: before any NAT
 * rewrite, one of its entry's two) into t, and the lookup's options into
 * o; returns the tuple's length.
 */
static __always_inline __u32 fwd_ct_tuple(const struct toe_pkt *p,
					  struct bpf_sock_tuple *t,
					  struct bpf_ct_opts *o)
{
	/* field by field: an initializer would be a .rodata.cst16 map */
	__builtin_memset(o, 0, sizeof(*o));
	o->netns_id = BPF_F_CURRENT_NETNS;
	o->l4proto = p->l4proto; /* TCP or UDP: the fast path takes no other */
	if (p->family == TOE_AF_INET) {
		t->ipv4.saddr = p->saddr32[0];
		t->ipv4.daddr = p->daddr32[0];
		t->ipv4.sport = p->sport;
		t->ipv4.dport = p->dport;
		return sizeof(t->ipv4);
	}
	__builtin_memcpy(t->ipv6.saddr, p->saddr, 16);
	__builtin_memcpy(t->ipv6.daddr, p->daddr, 16);
	t->ipv6.sport = p->sport;
	t->ipv6.dport = p->dport;
	return sizeof(t->ipv6);
}

/*
 * The lookup's options with a conntrack zone (Linux 6.8: ct_zone_id,
 * NF_BPF_CT_OPTS_SZ 16), declared here: the build's vmlinux.h may be an
 * older kernel's.  A kernel that takes only the 12-byte options refuses
 * them: a zoned flow's entry is then not refreshed (not another zone's).
 */
struct toe_ct_opts_zone {
	__s32 netns_id;
	__s32 error;
	__u8 l4proto;
	__u8 dir;
	__u16 ct_zone_id;
	__u8 ct_zone_dir;
	__u8 reserved[3];
};

/* o as the lookup takes it for zone (0: the default, o as it is): its size. */
static __always_inline __u32 fwd_ct_zone(struct bpf_ct_opts *o,
					 struct toe_ct_opts_zone *oz,
					 __u16 zone)
{
	if (!zone)
		return sizeof(*o);
	__builtin_memset(oz, 0, sizeof(*oz));
	oz->netns_id = o->netns_id;
	oz->l4proto = o->l4proto;
	oz->ct_zone_id = zone;
	return sizeof(*oz);
}

/* Whether this packet of the flow refreshes its entry: once a second. */
static __always_inline bool fwd_ct_due(__u64 *ct_ns, __u64 now)
{
	/* (signed: another CPU's packet may have set a later time) */
	if ((__s64)(now - *ct_ns) < (__s64)TOE_FWD_CT_REFRESH_NS)
		return false;
	*ct_ns = now;
	return toe_ct_kfuncs;
}

/*
 * Packet p of a fast-path flow (its tuple as it arrived, before any NAT
 * rewrite: one of its conntrack entry's two), in conntrack zone zone, on
 * hook (ctx.h): its entry refreshed (fwd_ct_refresh calls this once a
 * second of the flow's traffic).  Returns 1 if the flow was admitted with an entry
 * (tracked) and conntrack has none now (the lookup said -ENOENT: deleted,
 * flushed, timed out): its fast path is over (conntrack_gone), whether or
 * not toed heard a destroy event; 0 otherwise.  xdp_fwd_ct_refresh and
 * tc_fwd_ct_refresh are its two instances (the lookup kfunc is the
 * hook's).
 */
static __always_inline int fwd_ct_refresh_one(void *ctx, int hook,
					      const struct toe_pkt *p, __u32 zt)
{
	struct toe_ct_opts_zone oz;
	struct bpf_ct_opts o;
	struct bpf_sock_tuple t = {};
	struct bpf_ct_opts *op;
	struct nf_conn *ct;
	__u16 zone = zt & 0xffff;
	__u32 len, olen;

	len = fwd_ct_tuple(p, &t, &o);
	olen = fwd_ct_zone(&o, &oz, zone);
	op = zone ? (struct bpf_ct_opts *)&oz : &o;
	if (hook == TOE_FH_XDP)
		ct = bpf_xdp_ct_lookup(ctx, &t, len, op, olen);
	else
		ct = bpf_skb_ct_lookup(ctx, &t, len, op, olen);
	if (!ct)
		return (zt >> 16) && op->error == -TOE_ENOENT;
	fwd_ct_keep(ct, p->l4proto);
	bpf_ct_release(ct);
	return 0;
}

/* zt: the flow's zone | tracked << 16 (fwd_ct_refresh) */
static __noinline __attribute__((unused)) int
xdp_fwd_ct_refresh(struct xdp_md *ctx, const struct toe_pkt *p, __u32 zt)
{
	return fwd_ct_refresh_one(ctx, TOE_FH_XDP, p, zt);
}

static __noinline __attribute__((unused)) int
tc_fwd_ct_refresh(struct __sk_buff *skb, const struct toe_pkt *p, __u32 zt)
{
	return fwd_ct_refresh_one(skb, TOE_FH_TC, p, zt);
}

/*
 * Flow fs's conntrack entry kept (once a second), on hook; 1 if it was
 * admitted with one and conntrack has none now (fwd_ct_refresh_one).
 * Whether it is due is tested here, inline: every other frame costs the
 * clock and a compare, not the call and the tuple's and options' zeroing
 * in the subprogram (about 25 ns a frame, bench_xdp_steps.sh's noct).
 */
static __always_inline int fwd_ct_refresh(void *ctx, int hook,
					  const struct toe_pkt *p,
					  struct toe_fwd *fs, __u64 now)
{
	__u32 zt = fs->ct_zone | (fs->ct_tracked ? 1U << 16 : 0);

#ifdef TOE_BENCH_NO_CT /* (benchmark only: see stat_add, stats.h) */
	return 0;
#endif

	if (!fwd_ct_due(&fs->ct_ns, now))
		return 0;
	if (hook == TOE_FH_XDP)
		return xdp_fwd_ct_refresh(ctx, p, zt);
	return tc_fwd_ct_refresh(ctx, p, zt);
}

#endif /* __TOE_FWD_CT_H */
