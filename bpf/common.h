/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath: what every part of it includes.  The kernel's types
 * (CO-RE, build/vmlinux.h), libbpf's helpers, the layouts shared with user
 * space (include/opentoe.h), and the few UAPI constants vmlinux.h lacks
 * (they are #defines in the kernel's headers, so BTF does not carry them).
 */
#ifndef __TOE_COMMON_H
#define __TOE_COMMON_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include "opentoe.h"

/* clang-format off */
#define AF_INET		2
#define AF_INET6	10
#define SOL_SOCKET	1
#define SO_KEEPALIVE	9
#define SOL_TCP		6
#define TCP_KEEPIDLE	4
#define TCP_KEEPINTVL	5
#define TCP_KEEPCNT	6
/* clang-format on */

#ifdef TOE_KERN_CTX
/*
 * The object for kernels from 6.3 on (opentoe_kctx.bpf.o): ctx as the
 * kernel's own struct (xdp_buff, sk_buff).  Only xdp_netns() and
 * skb_netns() use it; the verifier turns the call into a register move.
 */
extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;
#endif

#endif /* __TOE_COMMON_H */
