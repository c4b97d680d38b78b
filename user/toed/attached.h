/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: an interface opentoe is attached to in toed's namespace, as toe-
 * loader's pins and the kernel's links say (attached.c; toectl status).
 */
#ifndef __TOE_ATTACHED_H
#define __TOE_ATTACHED_H

#include <stdbool.h>
#include <linux/types.h>

struct toe_attached {
	__u32 ifindex;
	const char *hook; /* "xdp", "tc"; NULL: only toe_egress there */
	const char *mode; /* xdp: native, generic, hw; tc: tcx, clsact */
	bool dispatcher; /* xdp through libxdp's dispatcher */
	const char *egress; /* toe_egress at tc egress: tcx, clsact, NULL */
	bool mirrored; /* toed mirrors its neighbours (status fills it) */
};

/* The network namespace toed is in: its identity (pin names) and inode. */
struct toe_netns_id {
	__u64 cookie;
	unsigned long ino;
};

/*
 * The interfaces of pin_dir's datapath in namespace ns_id, into out (max
 * of them): how many.
 */
int attached_read(const struct toe_netns_id *ns_id, const char *pin_dir,
		  struct toe_attached *out, int max);

#endif /* __TOE_ATTACHED_H */
