/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: XDP's chaining limits (toe_xdp_next), CPU steering (toe_cpumap)
 * and configuration (toe_xdp_conf), shared by bpf/ and user/
 * (include/opentoe.h).
 */
#ifndef __OPENTOE_XDP_H
#define __OPENTOE_XDP_H

#include "opentoe_common.h"

#define TOE_MAX_CHAIN 64 /* interfaces with a chained XDP program */
#define TOE_XDP_CHAIN_SLOTS 1024 /* ifindexes below this may chain */

/*
 * XDP steering (enum toe_steer).
 *
 * toe_cpumap: CPUMAP, CPU -> struct bpf_cpumap_val.  Written by the policy
 * apply (user/toed/cpumap.c) for the CPUs that devices with "steer cpu N" name,
 * queue size TOE_CPUMAP_QSIZE; entries no device names are removed.
 */
#define TOE_CPUMAP_QSIZE 2048

/*
 * toe_xdp_conf: ARRAY[1], written by the policy apply.  With no device in
 * forward mode XDP skips the forward path, so hosts that route nothing pay
 * no lookup for it.
 */
struct toe_xdp_conf {
	__u32 fwd_devs; /* present devices with steer forward */
	__u32 cpu_devs; /* present devices with steer cpu */
};

#endif /* __OPENTOE_XDP_H */
