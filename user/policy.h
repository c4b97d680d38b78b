/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* opentoe: compile a configuration into the datapath's maps, atomically. */
#ifndef __TOE_POLICY_H
#define __TOE_POLICY_H

#include <linux/types.h>
#include "config.h"

struct toe_apply_stats {
	__u32 rules;
	__u32 tuples;
	__u32 cells;
	__u32 gen;		/* generation now in force */
	__u64 serial;
	double ms;		/* wall-clock time of the apply */
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

/*
 * Where the policy in force came from, whoever applied it: recorded per
 * datapath at apply time, under the change lock, next to the datapath's
 * locks (TOE_LOCK_DIR/<name>.policy: mode 0600, written to a temporary
 * file and renamed, never through a symbolic link).
 */
struct toe_policy_src {
	__u64 serial;		/* the serial it was applied as */
	char config[4096];	/* the file's path */
	const char *text;	/* a copy of its text (in buf) */
	size_t len;
	char *buf;
};

int toe_policy_src_write(const char *pin_dir, __u64 serial, const char *config,
			 const char *text, size_t len, char *err, size_t errlen);
/* 0, or -1: no record (or not a sound one). */
int toe_policy_src_read(const char *pin_dir, struct toe_policy_src *s);
void toe_policy_src_free(struct toe_policy_src *s);

#endif /* __TOE_POLICY_H */
