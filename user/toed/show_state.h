/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: what toectl status, stats, policy and devices show (show_state.c);
 * the metrics (metrics.c) gather the same way.
 */
#ifndef __TOE_SHOW_STATE_H
#define __TOE_SHOW_STATE_H

struct toed;

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

size_t daemon_counters(struct toed *d, struct counter *out);
size_t control_counters(struct toed *d, struct counter *out);
void kmod_view(struct toed *d, struct toe_view_kmod *kv);
void view_status(struct toed *d, FILE *f, bool json);
void view_stats(struct toed *d, FILE *f, bool json);
void view_policy(struct toed *d, FILE *f, bool json);
void view_devices(struct toed *d, FILE *f, bool json);
void view_neigh(struct toed *d, FILE *f, bool json);

#endif /* __TOE_SHOW_STATE_H */
