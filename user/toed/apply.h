/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: applying the configuration (apply.c): at start, on SIGHUP and
 * toectl reload, when the kernel module's devices change; toed --apply.
 */
#ifndef __TOE_APPLY_H
#define __TOE_APPLY_H

struct toed;

#include <stdbool.h>
#include <stddef.h>
#include "config.h"
#include "genl.h"
#include "policy.h"

/* The configuration an apply merges, applies and records. */
struct apply_src {
	const struct toe_cfg *cfg; /* as the file says */
	const char *file; /* the file's name and text, recorded beside */
	const char *text;
	size_t len;
	const struct toe_genl_dev *kdevs; /* the kernel module's devices */
	int nkdevs;
	bool kmod_up; /* the module is loaded (its devices merged) */
};

int apply_locked(const char *pin_dir, const struct apply_src *src, int lock,
		 const char *who, int wait_ms, struct toe_cfg *merged,
		 struct toe_apply_stats *st, char *err, size_t errlen);
int apply(struct toed *d, bool reload, const char *why, char *err,
	  size_t errlen);
int do_apply(struct toed *d, char *err, size_t errlen);
int config_load(struct toed *d, char *err, size_t errlen);
int change_lock(struct toed *d, const char *who, int wait_ms, char *err,
		size_t errlen);
void change_unlock(struct toed *d);
void kmod_changed(struct toed *d);

#endif /* __TOE_APPLY_H */
