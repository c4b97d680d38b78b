/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, XDP's own machinery: chaining to the XDP program that
 * was on the interface before opentoe (xdp_next, the way every packet
 * opentoe does not keep leaves), and the steering of offloaded local flows
 * to another CPU through the cpumap (steer_local).
 */
#ifndef __TOE_XDP_H
#define __TOE_XDP_H

#include "common.h"
#include "maps_policy.h"
#include "maps_xdp.h"
#include "stats.h"

/*
 * The cookie of the network namespace of the device a frame arrived on,
 * as bpf_get_netns_cookie() gives sock_ops.  XDP may not call that helper.
 *
 * TOE_KERN_CTX (opentoe_kctx.bpf.o, the object toe-loader loads where the
 * kernel has bpf_cast_to_kern_ctx, 6.3 on): ctx is the frame's struct
 * xdp_buff, and the chain rxq -> dev -> net -> cookie is four plain loads
 * (the verifier turns the kfunc into a register move).  Otherwise
 * (opentoe.bpf.o, Debian 12's 6.1: libbpf 1.1 cannot make a kfunc optional,
 * so the object that names it is a second build of the same source): the
 * same chain by bpf_probe_read_kernel calls at CO-RE offsets, about 20 ns
 * each (docs/benchmarks.md, "nonetns").  Root only, as every opentoe
 * program is.
 */
#ifdef TOE_KERN_CTX
static __always_inline __u64 xdp_netns(struct xdp_md *ctx)
{
	struct xdp_buff *x = bpf_cast_to_kern_ctx(ctx);

	return x->rxq->dev->nd_net.net->net_cookie;
}
#else
static __always_inline __u64 xdp_netns(struct xdp_md *ctx)
{
	struct xdp_rxq_info *rxq = NULL;

	bpf_probe_read_kernel(
		&rxq, sizeof(rxq),
		(char *)ctx + bpf_core_field_offset(struct xdp_buff, rxq));
	return BPF_CORE_READ(rxq, dev, nd_net.net, net_cookie);
}
#endif

/*
 * Pass a packet on: to the chained program of its interface, else the
 * stack.  The slot is the ifindex, taken only if its owner is the
 * namespace of the device the frame arrived on: an interface of another
 * namespace with the same ifindex never runs that program.
 */
static __always_inline int xdp_next(struct xdp_md *ctx)
{
	__u32 slot = ctx->ingress_ifindex;
	__u64 *owner;

	if (slot >= TOE_XDP_CHAIN_SLOTS)
		return XDP_PASS;
	owner = bpf_map_lookup_elem(&toe_xdp_next_ns, &slot);
	if (owner && *owner && *owner == xdp_netns(ctx)) {
		/*
		 * Counted before the call, which does not return when it
		 * runs the chained program; taken back when it does return
		 * (the slot emptied under us by a reload).
		 */
		stat_inc(TOE_S_XDP_CHAINED);
		bpf_tail_call(ctx, &toe_xdp_next, slot);
		stat_add(TOE_S_XDP_CHAINED, (__u64)-1);
	}
	/* Empty slot (nothing chained here), or another namespace's. */
	return XDP_PASS;
}

/*
 * A packet of an offloaded flow of this host: "steer cpu N" devices move
 * its receive work to CPU N through the cpumap; if CPU N has no entry the
 * redirect fails and the packet is passed here, as with "steer account".
 * ("steer forward" is for flows this host routes: an offloaded local flow
 * of such a device is only accounted.)
 */
static __always_inline int steer_local(struct xdp_md *ctx, __u32 idx)
{
	struct toe_dev *dev = bpf_map_lookup_elem(&toe_devs, &idx);
	long rc;

	if (!dev || dev->steer != TOE_STEER_CPU ||
	    !(dev->flags & TOE_DEVF_PRESENT))
		return xdp_next(ctx);
	rc = bpf_redirect_map(&toe_cpumap, dev->steer_cpu, XDP_PASS);
	if (rc != XDP_REDIRECT)
		return xdp_next(ctx);
	stat_inc(TOE_S_XDP_REDIRECT_CPU);
	return XDP_REDIRECT;
}

#endif /* __TOE_XDP_H */
