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

/*
 * The policy in force (apply.c): the configuration and its file's text,
 * its last apply, the datapath's change lock while toed holds it, the
 * counts.  apply_init gives it the options it reads (set after it: the
 * configuration file's path, the pin folder).
 */
struct apply {
	const char *const *config;
	const char *const *pin_dir;
	struct toe_cfg cfg; /* the configuration in force */
	char *cfg_text; /* its file's text, as parsed (recorded at each apply) */
	size_t cfg_len;
	struct toe_apply_stats ast; /* its last apply */
	__u64 applied_ns;
	/*
	 * The datapath's TOE_LOCK_CHANGE (dplock.h) while toed applies or
	 * reopens the datapath, else -1: it keeps toe-loader and toed --apply
	 * out of the datapath meanwhile (apply.c takes it, or finds it held).
	 */
	int change_lock;
	__u64 reload_ok, reload_failed;
};

void apply_init(struct apply *ap, const char *const *config,
		const char *const *pin_dir);
/* ap's configuration let go (toed stops). */
void apply_exit(struct apply *ap);

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
int config_load(struct apply *ap, char *err, size_t errlen);
int change_lock(struct apply *ap, const char *who, int wait_ms, char *err,
		size_t errlen);
void change_unlock(struct apply *ap);
void kmod_changed(struct toed *d);

#endif /* __TOE_APPLY_H */
