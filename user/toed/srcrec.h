/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: the record of where the policy in force came from. */
#ifndef __TOE_SRCREC_H
#define __TOE_SRCREC_H

#include <stddef.h>
#include <linux/types.h>

/*
 * Where the policy in force came from, whoever applied it: recorded per
 * datapath at apply time, under the change lock, next to the datapath's
 * locks (TOE_LOCK_DIR/<name>.policy: mode 0600, written to a temporary
 * file and renamed, never through a symbolic link).
 */
struct toe_policy_src {
	__u64 serial; /* the serial it was applied as */
	char config[4096]; /* the file's path */
	const char *text; /* a copy of its text (in buf) */
	size_t len;
	char *buf;
};

int toe_policy_src_write(const char *pin_dir, __u64 serial, const char *config,
			 const char *text, size_t len, char *err,
			 size_t errlen);
/* 0, or -1: no record (or not a sound one). */
int toe_policy_src_read(const char *pin_dir, struct toe_policy_src *s);
void toe_policy_src_free(struct toe_policy_src *s);

#endif /* __TOE_SRCREC_H */
