/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: an interface opentoe is attached to in toed's namespace, as toe-
 * loader's pins and the kernel's links say (attached.c; toectl status).
 */
#ifndef __TOE_ATTACHED_H
#define __TOE_ATTACHED_H

struct toed;

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

int attached_read(struct toed *d, struct toe_attached *out, int max);

#endif /* __TOE_ATTACHED_H */
