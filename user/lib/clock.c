// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* opentoe: the clocks, in nanoseconds (clock.h). */
#include <time.h>
#include "clock.h"

static __u64 clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__u64 toe_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

__u64 toe_unix_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}
