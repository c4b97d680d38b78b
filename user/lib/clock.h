/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* opentoe: the clocks, in nanoseconds. */
#ifndef __TOE_CLOCK_H
#define __TOE_CLOCK_H

#include <linux/types.h>

/* CLOCK_MONOTONIC (the clock of bpf_ktime_get_ns). */
__u64 toe_now_ns(void);
/* CLOCK_REALTIME: unix time. */
__u64 toe_unix_ns(void);

#endif /* __TOE_CLOCK_H */
