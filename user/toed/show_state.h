/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: what toectl status, stats, policy and devices show (show_state.c);
 * the metrics (metrics.c) gather the same way.
 */
#ifndef __TOE_SHOW_STATE_H
#define __TOE_SHOW_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "show_maps.h"

struct counter {
	const char *name; /* as toectl stats names it */
	__u64 v;
};

#define MAX_COUNTERS 80

size_t daemon_counters(struct counter *out);
size_t control_counters(struct counter *out);
void kmod_view(struct toe_view_kmod *kv);
void view_status(FILE *f, bool json);
void view_stats(FILE *f, bool json);
void view_policy(FILE *f, bool json);
void view_devices(FILE *f, bool json);
void view_neigh(FILE *f, bool json);

#endif /* __TOE_SHOW_STATE_H */
