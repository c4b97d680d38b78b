/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* opentoe: compile a configuration into the datapath's maps, atomically. */
#ifndef __TOE_POLICY_H
#define __TOE_POLICY_H

#include <stddef.h>
#include <linux/types.h>
#include "config.h"

struct toe_apply_stats {
	__u32 rules;
	__u32 tuples;
	__u32 cells;
	__u32 gen; /* generation now in force */
	__u64 serial;
	double ms; /* wall-clock time of the apply */
};

/*
 * Apply c to the datapath pinned in pin_dir: devices first, then the rule
 * set into the idle generation, one flip, one RCU grace period.  On any
 * error the policy in force is unchanged and err holds one line.  The
 * caller holds pin_dir's TOE_LOCK_CHANGE (dplock.h): applies, loads and
 * unloads of one datapath never overlap.
 */
int toe_policy_apply(const char *pin_dir, const struct toe_cfg *c,
		     struct toe_apply_stats *st, char *err, size_t errlen);

/* The maps an apply writes (policy.c opens them for devices.c, cpumap.c, classify.c). */
struct pol_maps {
	int devs, live, gen, hdr, tuples, rules, cells, lclass, rclass, rcu;
	/* Optional: a datapath loaded by an older toe-loader has neither. */
	int cpumap, xconf;
	int flows; /* toe_flows: its size, for "quota flows" */
	int events; /* toe_events: its size, for "quota events" */
};

struct toe_flow_key;
struct toe_pol_answer;
/*
 * What the policy in force in pin_dir's maps says of a connection of k
 * made in cgroup cgid (classify.h's classify_lookup: the datapath's own
 * search).  Reads only; 0, or -1 with err.
 */
int toe_policy_explain(const char *pin_dir, const struct toe_flow_key *k,
		       __u64 cgid, struct toe_pol_answer *a, char *err,
		       size_t len);

#endif /* __TOE_POLICY_H */
