/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: the rules into one generation of the tuple-space classifier. */
#ifndef __TOE_CLASSIFY_H
#define __TOE_CLASSIFY_H

#include <stddef.h>
#include <linux/types.h>
#include "config.h"
#include "opentoe_flows.h"
#include "opentoe_policy.h"
#include "policy.h"

/* One generation as compiled: its tuples, cells and port classes. */
struct compiled {
	struct toe_pol_tuple t[TOE_POL_MAX_TUPLES];
	__u32 nt;
	__u32 cells;
	__u32 lcls[TOE_POL_PORTS];
	__u32 rcls[TOE_POL_PORTS];
};

/* Remove every cell of generation gen (left from two applies ago). */
int clear_gen(const struct pol_maps *m, __u8 gen, char *err, size_t len);
/* The rules of c into generation gen: port classes, rules, cells, tuples. */
int fill_gen(const struct pol_maps *m, const struct toe_cfg *c, __u32 gen,
	     const __u32 *devidx, struct compiled *cp, char *err, size_t len);
/* Generation gen's header, the serial one past the one in force (old). */
int write_hdr(const struct pol_maps *m, const struct toe_cfg *c, __u32 gen,
	      const __u32 *devidx, const struct compiled *cp,
	      const struct toe_pol_hdr *old, struct toe_pol_hdr *hdr, char *err,
	      size_t len);

/* What the classifier in force says of one flow (classify_lookup). */
struct toe_pol_answer {
	__u32 action; /* enum toe_action */
	__u32 reason; /* TOE_R_RULE or TOE_R_DEFAULT */
	__u32 dev; /* toe_devs index, or TOE_DEV_NONE */
	__u32 rule; /* the rule's index, or TOE_RULE_NONE */
	__u32 gen; /* the generation searched */
	__u32 probes; /* cells looked up: the cost of the search */
	struct toe_pol_hdr hdr; /* that generation's header */
	struct toe_pol_rule r; /* the rule's entry, when one matched */
};

/*
 * bpf/policy.h's decide_ns on the maps in force: the rule sock_ops would
 * give a connection of k made in cgroup cgid (k->netns 0: toed's
 * namespace, as a routed flow's).  0, or -1 with err.
 */
int classify_lookup(const struct pol_maps *m, const struct toe_flow_key *k,
		    __u64 cgid, struct toe_pol_answer *a, char *err,
		    size_t len);

#endif /* __TOE_CLASSIFY_H */
