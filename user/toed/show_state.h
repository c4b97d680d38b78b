/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: what toectl status, stats and devices show (show_state.c); the
 * metrics (metrics.c) gather the same way.
 */
#ifndef __TOE_SHOW_STATE_H
#define __TOE_SHOW_STATE_H

struct toed;

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "show_maps.h"

struct toe_pol_hdr;
struct toe_policy_src;

struct counter {
	const char *name; /* as toectl stats names it */
	__u64 v;
};

/* A counter's description (fields.h): its name, family and labels. */
struct counter_desc {
	const char *name;
	int fam; /* enum toe_fam; F_NONE: not exported by this row */
	const char *labels; /* NULL: none */
};

/* toectl stats' daemon and control sections, as daemon_counters and
 * control_counters fill their values */
extern const struct counter_desc daemon_desc[], control_desc[];
extern const size_t n_daemon_desc, n_control_desc;

#define MAX_COUNTERS 80

size_t daemon_counters(struct toed *d, struct counter *out);
size_t control_counters(struct toed *d, struct counter *out);
void kmod_view(struct toed *d, struct toe_view_kmod *kv);
/*
 * Where the policy in force came from: toed's own apply (d->config), or
 * another's (toed --apply elsewhere), recorded with the datapath; *rec is
 * filled (to free) when it is another's.  NULL: unknown.
 */
const char *policy_source(struct toed *d, const struct toe_pol_hdr *h,
			  struct toe_policy_src *rec, bool *own);
struct toe_cfg;
/*
 * The configuration in force (config_show.c): toed's own, or the one
 * another recorded with the datapath, parsed into other (to free with
 * toe_cfg_free); *src its file, NULL: unknown (other empty).
 */
const struct toe_cfg *policy_in_force(struct toed *d,
				      const struct toe_pol_hdr *h,
				      struct toe_cfg *other, const char **src);
void view_status(struct toed *d, FILE *f, bool json);
void view_stats(struct toed *d, FILE *f, bool json);
void view_devices(struct toed *d, FILE *f, bool json);
void view_neigh(struct toed *d, FILE *f, bool json);

#endif /* __TOE_SHOW_STATE_H */
