/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: a killed toectl dump's capture switched off, every 2 s (capture.c). */
#ifndef __TOED_CAPTURE_H
#define __TOED_CAPTURE_H

#include <linux/types.h>

/* The sweep's own state: when it looks next. */
struct capture {
	__u64 next_check_ns;
};

/* Every 2 s: the capture of pin_dir's datapath off if a killed dump's. */
void capture_sweep(struct capture *cp, const char *pin_dir);

#endif /* __TOED_CAPTURE_H */
