/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: what every concern's layouts share (include/opentoe.h): the pin
 * directory, the device and rule limits, address families and the decision
 * a connection gets (enum toe_action, enum toe_reason).
 *
 * eBPF: include after "vmlinux.h".
 */
#ifndef __OPENTOE_COMMON_H
#define __OPENTOE_COMMON_H

#define TOE_PIN_DIR_DEFAULT "/sys/fs/bpf/opentoe"

/* Pinned map names: toe_maps.h. */
#ifndef __bpf__
#include <linux/types.h> /* eBPF: include vmlinux.h first */
#include "toe_maps.h"
#endif

#define TOE_MAX_DEVS 64
#define TOE_DEV_NONE 0xffffffffU

#define TOE_AF_INET 2
#define TOE_AF_INET6 10

/* enum toe_action: what policy decided for a connection. */
enum toe_action {
	TOE_ACT_HOST = 0, /* leave it to the stack (nothing steered) */
	TOE_ACT_OFFLOAD = 1, /* account and steer on an offload device */
	TOE_ACT_BYPASS = 2, /* local socket-to-socket fast path */
};

/* enum toe_reason: why a flow got the decision it got. */
enum toe_reason {
	TOE_R_RULE = 0, /* a policy rule matched */
	TOE_R_DEFAULT = 1, /* no rule matched: default action */
	TOE_R_CAPACITY = 2, /* device at nconn: stays on the host */
	TOE_R_NODEV = 3, /* rule names a device that is not there */
	TOE_R_NOT_LOCAL = 4, /* bypass asked, but the peer is not local */
	TOE_R_UNSUPPORTED =
		5, /* bypass asked, the socket cannot take it (MPTCP) */
	TOE_R_NO_TID = 6, /* the module device's pool of TIDs is empty */
	TOE_R_ROUTE = 7, /* route: another interface or namespace */
	TOE_R_MODULE = 8, /* the kernel module refused it (toed demoted it) */
	TOE_R_QUOTA = 9, /* its namespace holds its quota of the device */
	TOE_R_NO_STID = 10, /* a listener: the device's server TIDs are out */
	TOE_R_LISTENERS_FULL = 11, /* a listener: toe_listeners is full */
	TOE_R__MAX
};

#define TOE_RULE_NONE 0xffffffffU

#endif /* __OPENTOE_COMMON_H */
