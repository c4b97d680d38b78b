// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed applies the configuration: at start, on SIGHUP and toectl reload
 * (the file read again), when the kernel module's devices change (the
 * configuration in force, merged again with them) and when the datapath
 * was loaded again under it.  Every apply holds the datapath's change lock
 * (dplock.h), waiting a bounded time for a loader or toed --apply, and
 * records the policy's source next to it (toe_policy_src_write) so that
 * whoever asks later knows what is in force.  It logs the result, tells
 * the monitor clients and fires the policy_applied/policy_failed USDT
 * probes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <unistd.h>
#include "lib/dplock.h"
#include "lib/clock.h"
#include "devices.h"
#include "apply.h"
#include "kmod.h"
#include "listen.h"
#include "events.h"
#include "mon.h"
#include "config.h"
#include "genl.h"
#include "log.h"
#include "policy.h"
#include "srcrec.h"
#include "state.h"

#define CHANGE_WAIT_MS 2000 /* for a loader or toed --apply to finish */

/* Take the datapath's change lock unless toed holds it already (datapath.c). */
int change_lock(struct apply *ap, const char *who, int wait_ms, char *err,
		size_t errlen)
{
	if (ap->change_lock >= 0)
		return 0;
	ap->change_lock = toe_dplock_take(*ap->pin_dir, TOE_LOCK_CHANGE, who,
					  wait_ms, err, errlen);
	return ap->change_lock < 0 ? -1 : 0;
}

void change_unlock(struct apply *ap)
{
	if (ap->change_lock >= 0)
		close(ap->change_lock);
	ap->change_lock = -1;
}

/*
 * The settings' hooks (config_stmts.h's S rows, hook column), declared
 * from it: HOOK(fn) is fn(value), in any of toed's files.
 */
#define HOOK(fn) void fn(__u32 value);
#define NO_HOOK
#define X(id, kw, syn, bounds, help, example, parse, show)
#define S(id, kw, help, field, names, dflt, hook) hook
TOE_CFG_STATEMENTS(X, S)
#undef S
#undef X
#undef NO_HOOK
#undef HOOK

/* Each setting's hook told its value in cfg. */
static void settings_hooks(const struct toe_cfg *cfg)
{
#define HOOK(fn) fn
#define NO_HOOK (void)
#define X(id, kw, syn, bounds, help, example, parse, show)
#define S(id, kw, help, field, names, dflt, hook) hook(cfg->field);
	TOE_CFG_STATEMENTS(X, S)
#undef S
#undef X
#undef NO_HOOK
#undef HOOK
}

/*
 * A configuration applied or waiting for a datapath: the one in force now
 * (its settings take effect).
 */
static void adopt(struct apply *ap, struct toe_cfg *cfg, char *text, size_t len)
{
	settings_hooks(cfg);
	toe_cfg_free(&ap->cfg);
	ap->cfg = *cfg;
	free(ap->cfg_text);
	ap->cfg_text = text;
	ap->cfg_len = len;
}

static void applied(struct toed *d, const struct toe_apply_stats *st,
		    const struct toe_cfg *merged, const char *why)
{
	char text[256], json[256];

	d->kmod.kmod_dirty = false;
	kmod_map_refresh(&d->kmod);
	listen_reconcile(&d->lis); /* devices may have come, gone or moved */
	d->ap.ast = *st;
	d->ap.applied_ns = toe_now_ns();
	d->ap.reload_ok++;
	DTRACE_PROBE4(toed, policy_applied, st->serial, st->rules, st->cells,
		      (unsigned long long)(st->ms * 1000));
	logm(LOG_INFO,
	     "%s: applied policy %llu%s: %u rules, %u shapes, %u cells, %d devices (%d added from the kernel module) in %.1f ms",
	     d->config, (unsigned long long)st->serial, why, st->rules,
	     st->tuples, st->cells, merged->ndevs,
	     merged->ndevs - d->ap.cfg.ndevs, st->ms);
	if (mon_any(&d->mon)) {
		snprintf(text, sizeof(text),
			 "[policy] applied %llu: %u rules from %s\n",
			 (unsigned long long)st->serial, st->rules, d->config);
		snprintf(
			json, sizeof(json),
			"{\"event\":\"policy\",\"serial\":%llu,\"rules\":%u}\n",
			(unsigned long long)st->serial, st->rules);
		mon_send(&d->mon, text, json);
	}
	d->retrack = true;
}

/*
 * src merged with the module's devices into merged, applied to the
 * datapath at pin_dir under its change lock, its source recorded.  lock:
 * the change lock if the caller holds it, else -1: then it is taken for
 * the apply (as who, waiting up to wait_ms) and let go.  toed's applies
 * and toed --apply (main.c) both come here.
 */
int apply_locked(const char *pin_dir, const struct apply_src *src, int lock,
		 const char *who, int wait_ms, struct toe_cfg *merged,
		 struct toe_apply_stats *st, char *err, size_t errlen)
{
	int fd = lock;
	char w[512];
	int ret;

	if (fd < 0)
		fd = toe_dplock_take(pin_dir, TOE_LOCK_CHANGE, who, wait_ms,
				     err, errlen);
	if (fd < 0)
		return -1;
	kmod_merge(src->kdevs, src->nkdevs, src->kmod_up, src->cfg, merged);
	ret = toe_policy_apply(pin_dir, merged, st, err, errlen);
	if (!ret && toe_policy_src_write(pin_dir, st->serial, src->file,
					 src->text ? src->text : "", src->len,
					 w, sizeof(w)))
		logm(LOG_WARN, "the policy's source is not recorded: %s", w);
	if (lock < 0)
		close(fd);
	return ret;
}

/*
 * Apply the configuration: the file read again (reload), or the one in
 * force (why says what changed), merged with the module's devices.
 */
int apply(struct toed *d, bool reload, const char *why, char *err,
	  size_t errlen)
{
	struct toe_apply_stats st;
	struct toe_cfg cfg, merged;
	struct apply_src src;
	char e[1024], *text = NULL;
	size_t len = 0;

	if (reload &&
	    toe_cfg_load_text(d->config, &cfg, &text, &len, e, sizeof(e))) {
		toe_cfg_free(&cfg);
		snprintf(err, errlen, "%s; the policy in force is unchanged",
			 e);
		goto fail;
	}
	if (!d->dp.loaded) {
		if (reload) /* valid: it is applied when the datapath appears */
			adopt(&d->ap, &cfg, text, len);
		snprintf(err, errlen,
			 "opentoe is not loaded at %s (toe-loader load)",
			 d->pin_dir);
		goto fail;
	}
	src = (struct apply_src){ .cfg = reload ? &cfg : &d->ap.cfg,
				  .file = d->config,
				  .text = reload ? text : d->ap.cfg_text,
				  .len = reload ? len : d->ap.cfg_len,
				  .kdevs = d->kmod.kdevs,
				  .nkdevs = d->kmod.nkdevs,
				  .kmod_up = toe_genl_up(&d->gl) };
	if (apply_locked(d->pin_dir, &src, d->ap.change_lock, "toed apply",
			 CHANGE_WAIT_MS, &merged, &st, e, sizeof(e))) {
		if (reload) {
			toe_cfg_free(&cfg);
			free(text);
		}
		snprintf(err, errlen,
			 "%s: %s; the policy in force is unchanged", d->config,
			 e);
		goto fail;
	}
	if (reload)
		adopt(&d->ap, &cfg, text, len);
	applied(d, &st, &merged, why);
	return 0;
fail:
	d->ap.reload_failed++;
	DTRACE_PROBE1(toed, policy_failed, d->ap.reload_failed);
	logm(LOG_ERR, "%s", err);
	return -1;
}

/* The file, read and checked at start: applied when the datapath is there. */
int config_load(struct apply *ap, char *err, size_t errlen)
{
	struct toe_cfg cfg;
	char *text = NULL;
	size_t len = 0;

	if (toe_cfg_load_text(*ap->config, &cfg, &text, &len, err, errlen)) {
		toe_cfg_free(&cfg);
		return -1;
	}
	adopt(ap, &cfg, text, len);
	return 0;
}

/* Reload: the module's devices read again, the file read again, applied. */
int do_apply(struct toed *d, char *err, size_t errlen)
{
	kmod_read_devs(&d->kmod);
	return apply(d, true, "", err, errlen);
}

/* The module's devices changed (or the module came or went). */
void kmod_changed(struct toed *d)
{
	char err[1200];

	if (!d->dp.loaded)
		return; /* applied when the datapath comes (datapath.c) */
	kmod_read_devs(&d->kmod);
	if (apply(d, false, " (the kernel module's devices changed)", err,
		  sizeof(err)) == 0) {
		events_consume(
			&d->evs); /* every reconcile reads the ring first */
		kmod_reconcile(&d->kmod);
	}
}

void apply_init(struct apply *ap, const char *const *config,
		const char *const *pin_dir)
{
	memset(ap, 0, sizeof(*ap));
	ap->config = config;
	ap->pin_dir = pin_dir;
	ap->cfg.default_dev = -1;
	ap->change_lock = -1;
}

void apply_exit(struct apply *ap)
{
	toe_cfg_free(&ap->cfg);
	free(ap->cfg_text);
	ap->cfg_text = NULL;
}
