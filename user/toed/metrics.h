/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: --metrics: /metrics for Prometheus, served from the loop
 * (metrics.c).
 */
#ifndef __TOE_METRICS_H
#define __TOE_METRICS_H

struct toed;

#include <stddef.h>
#include <linux/types.h>

int metrics_parse(const char *arg, char *err, size_t errlen);
int metrics_open(struct toed *d);
void metrics_run(struct toed *d);
int metrics_timeout_ms(int ms);
void metrics_close(void);
struct metrics_stats {
	__u64 bind_failed; /* binds failed (each retried later) */
	__u64 deadline; /* connections shut at the request deadline */
	__u64 evicted; /* the stalest, for a new one over a limit */
	__u64 refused; /* a new one over a limit, none to evict */
	__u64 connections; /* open now */
};
const char *metrics_state(const char **addr, const char **error,
			  long long *retry_ms);
const struct metrics_stats *metrics_stats(void);

#endif /* __TOE_METRICS_H */
