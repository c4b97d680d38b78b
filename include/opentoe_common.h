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

/*
 * TOE_REASON_TABLE(X): X(ID, name, counted, help), enum toe_reason (why a
 * flow got the decision it got) in value order from 0: TOE_R_<ID>.
 *   name     toectl flows' reason, the events', label reason of /metrics
 *   counted  1: a refusal sock_ops counts in toe_reasons (TOE_RSN_REFUSED:
 *            toectl stats' refused_<name>, the flow_refused events)
 *   help     its text (build/toe-tables)
 */
/* clang-format off */
#define TOE_REASON_TABLE(X)						\
	X(RULE, "rule", 0, "a policy rule matched")			\
	X(DEFAULT, "default", 0, "no rule matched: default action")	\
	X(CAPACITY, "capacity", 1, "device at nconn: stays on the host") \
	X(NODEV, "nodev", 1, "rule names a device that is not there")	\
	X(NOT_LOCAL, "not_local", 0, "bypass asked, but the peer is not local") \
	X(UNSUPPORTED, "unsupported", 0,				\
	  "bypass asked, the socket cannot take it (MPTCP)")		\
	X(NO_TID, "no_tid", 1, "the module device's pool of TIDs is empty") \
	X(ROUTE, "route", 1, "route: another interface or namespace")	\
	X(MODULE, "module", 0,						\
	  "the kernel module refused it (toed demoted it)")		\
	X(QUOTA, "quota", 1, "its namespace holds its quota of the device") \
	X(NO_STID, "no_stid", 1,					\
	  "a listener: the device's server TIDs are out")		\
	X(LISTENERS_FULL, "listeners_full", 1,				\
	  "a listener: toe_listeners is full")
/* clang-format on */

enum toe_reason {
#define TOE_R_ENUM(id, name, counted, help) TOE_R_##id,
	TOE_REASON_TABLE(TOE_R_ENUM)
#undef TOE_R_ENUM
		TOE_R__MAX
};

/* Whether sock_ops counts refusal r (TOE_REASON_TABLE's counted column). */
static inline int toe_reason_counted(__u32 r)
{
	switch (r) {
#define TOE_R_COUNTED(id, name, counted, help) \
	case TOE_R_##id:                       \
		return counted;
		TOE_REASON_TABLE(TOE_R_COUNTED)
#undef TOE_R_COUNTED
	}
	return 0;
}

#ifndef __bpf__
/* A reason's name ("?" out of range). */
static inline const char *toe_reason_str(__u32 r)
{
	static const char *const n[TOE_R__MAX] = {
#define TOE_R_NAME(id, name, counted, help) [TOE_R_##id] = name,
		TOE_REASON_TABLE(TOE_R_NAME)
#undef TOE_R_NAME
	};

	return r < TOE_R__MAX ? n[r] : "?";
}
#endif

#define TOE_RULE_NONE 0xffffffffU

#endif /* __OPENTOE_COMMON_H */
