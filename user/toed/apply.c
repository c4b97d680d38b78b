// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed applies the configuration: at start, on SIGHUP and toectl reload
 * (the file read again), and when the kernel module's devices change (the
 * configuration in force, merged again with them).  It logs the result,
 * tells the monitor clients and fires the policy_applied/policy_failed
 * USDT probes.
 */
#include <stdio.h>
#include <sys/sdt.h>
#include "toed.h"

/*
 * Apply the configuration: the file read again (reload), or the one in
 * force (a device of the kernel module appeared, changed or went), merged
 * with the module's devices.
 */
int apply(bool reload, char *err, size_t errlen)
{
	struct toe_apply_stats st;
	struct toe_cfg cfg, merged;
	char e[1024];

	if (reload && toe_cfg_load(D->config, &cfg, e, sizeof(e))) {
		toe_cfg_free(&cfg);
		snprintf(err, errlen, "%s; the policy in force is unchanged",
			 e);
		goto fail;
	}
	kmod_merge(reload ? &cfg : &D->cfg, &merged);
	if (toe_policy_apply(D->pin_dir, &merged, &st, e, sizeof(e))) {
		if (reload)
			toe_cfg_free(&cfg);
		snprintf(err, errlen,
			 "%s: %s; the policy in force is unchanged", D->config,
			 e);
		goto fail;
	}
	if (reload) {
		toe_cfg_free(&D->cfg);
		D->cfg = cfg;
	}
	D->kmod_dirty = false;
	kmod_map_refresh();
	D->ast = st;
	D->applied_ns = toe_now_ns();
	D->reload_ok++;
	DTRACE_PROBE4(toed, policy_applied, st.serial, st.rules, st.cells,
		      (unsigned long long)(st.ms * 1000));
	logm(LOG_INFO,
	     "%s: applied policy %llu%s: %u rules, %u shapes, %u cells, %d devices (%d added from the kernel module) in %.1f ms",
	     D->config, (unsigned long long)st.serial,
	     reload ? "" : " (the kernel module's devices changed)", st.rules,
	     st.tuples, st.cells, merged.ndevs, merged.ndevs - D->cfg.ndevs,
	     st.ms);
	if (mon_any()) {
		char text[256], json[256];

		snprintf(text, sizeof(text),
			 "[policy] applied %llu: %u rules from %s\n",
			 (unsigned long long)st.serial, st.rules, D->config);
		snprintf(
			json, sizeof(json),
			"{\"event\":\"policy\",\"serial\":%llu,\"rules\":%u}\n",
			(unsigned long long)st.serial, st.rules);
		mon_send(text, json);
	}
	D->retrack = true;
	return 0;
fail:
	D->reload_failed++;
	DTRACE_PROBE1(toed, policy_failed, D->reload_failed);
	logm(LOG_ERR, "%s", err);
	return -1;
}

/* Reload: the module's devices read again, the file read again, applied. */
int do_apply(char *err, size_t errlen)
{
	kmod_read_devs();
	return apply(true, err, errlen);
}
