// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * opentoe policy apply: a configuration into the datapath's maps,
 * atomically, in the order of toe_policy_apply: the devices (devices.c,
 * cpumap.c), the rules into the idle generation (classify.c), one switch,
 * one RCU grace period.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/err.h"
#include "lib/pinned.h"
#include "opentoe_common.h"
#include "opentoe_policy.h"
#include "classify.h"
#include "cpumap.h"
#include "devices.h"
#include "policy.h"

#define errf toe_errf

static const struct toe_pin policy_pins[] = {
	TOE_PIN(struct pol_maps, devs, DEVS),
	TOE_PIN(struct pol_maps, live, DEV_LIVE),
	TOE_PIN(struct pol_maps, gen, POL_GEN),
	TOE_PIN(struct pol_maps, hdr, POL_HDR),
	TOE_PIN(struct pol_maps, tuples, POL_TUPLES),
	TOE_PIN(struct pol_maps, rules, POL_RULES),
	TOE_PIN(struct pol_maps, cells, POL_CELLS),
	TOE_PIN(struct pol_maps, lclass, POL_LCLASS),
	TOE_PIN(struct pol_maps, rclass, POL_RCLASS),
	TOE_PIN(struct pol_maps, rcu, RCU_SYNC),
	/* a datapath loaded by an older toe-loader has neither */
	TOE_PIN_OPT(struct pol_maps, cpumap, CPUMAP),
	TOE_PIN_OPT(struct pol_maps, xconf, XDP_CONF),
	TOE_PIN_OPT(struct pol_maps, flows, FLOWS),
	TOE_PIN_OPT(struct pol_maps, events, EVENTS),
};
#define N_POLICY_PINS (sizeof(policy_pins) / sizeof(policy_pins[0]))

static void close_maps(struct pol_maps *m)
{
	toe_close_pins(policy_pins, N_POLICY_PINS, m);
}

static int open_maps(const char *dir, struct pol_maps *m, char *err, size_t len)
{
	return toe_open_pins(dir, policy_pins, N_POLICY_PINS, m, err, len);
}

/* Wait until no program still runs with what it looked up before now. */
static int rcu_sync(const struct pol_maps *m, char *err, size_t len)
{
	__u32 zero = 0;
	int inner, ret = 0;

	inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "toe_rcu_inner", 4, 4, 1,
			       NULL);
	if (inner < 0)
		return errf(err, len, "cannot create a map: %s",
			    strerror(errno));
	if (bpf_map_update_elem(m->rcu, &zero, &inner, BPF_ANY))
		ret = errf(err, len, "cannot wait for a grace period: %s",
			   strerror(errno));
	close(inner);
	return ret;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * What the apply starts from: the generation in force (*cur), its header
 * (*old, zeroed if unreadable) and every device slot (saved, to put back if
 * the apply fails).
 */
static int read_state(const struct pol_maps *m, __u32 *cur,
		      struct toe_pol_hdr *old, struct toe_dev *saved, char *err,
		      size_t len)
{
	__u32 zero = 0, i;

	if (bpf_map_lookup_elem(m->gen, &zero, cur))
		return errf(err, len, "cannot read toe_pol_gen: %s",
			    strerror(errno));
	*cur &= 1;
	bpf_map_lookup_elem(m->hdr, cur, old);
	for (i = 0; i < TOE_MAX_DEVS; i++)
		if (bpf_map_lookup_elem(m->devs, &i, &saved[i]))
			return errf(err, len, "cannot read toe_devs: %s",
				    strerror(errno));
	return 0;
}

int toe_policy_apply(const char *pin_dir, const struct toe_cfg *c,
		     struct toe_apply_stats *st, char *err, size_t errlen)
{
	static struct compiled cp;
	struct toe_dev saved[TOE_MAX_DEVS];
	__u32 devidx[TOE_MAX_DEVS];
	struct toe_pol_hdr hdr = {}, old = {};
	struct pol_maps m;
	__u32 zero = 0, cur = 0, gen, i;
	double t0 = now_ms();
	int ret = -1;

	memset(st, 0, sizeof(*st));
	if (check_hooks(pin_dir, c, err, errlen) ||
	    open_maps(pin_dir, &m, err, errlen))
		return -1;
	if (read_state(&m, &cur, &old, saved, err, errlen))
		goto out;
	gen = !cur;

	/*
	 * 1. Devices: new ones appear before any rule can name them (a
	 * changed nconn applies from here; devices are not generation-switched,
	 * only rules are).
	 */
	if (place_devices(&m, c, devidx, err, errlen) ||
	    setup_cpumap(&m, c, err, errlen) ||
	    write_devices(&m, c, devidx, err, errlen))
		goto fail_devs;

	/* 2. The idle generation: emptied, then filled. */
	if (clear_gen(&m, gen, err, errlen))
		goto out;
	if (fill_gen(&m, c, gen, devidx, &cp, err, errlen) ||
	    write_hdr(&m, c, gen, devidx, &cp, &old, &hdr, err, errlen))
		goto fail_clear;

	/* 3. The switch: one 4-byte write. */
	if (bpf_map_update_elem(m.gen, &zero, &gen, BPF_ANY)) {
		errf(err, errlen, "cannot switch toe_pol_gen: %s",
		     strerror(errno));
		goto fail_clear;
	}
	write_xdp_conf(&m, c);
	/* 4. After a grace period nobody uses the old generation. */
	if (rcu_sync(&m, err, errlen))
		goto out;
	retire_devices(&m, c, devidx);
	prune_cpumap(&m, c);

	st->rules = c->nrules;
	st->tuples = cp.nt;
	st->cells = cp.cells;
	st->gen = gen;
	st->serial = hdr.serial;
	st->ms = now_ms() - t0;
	ret = 0;
	goto out;

fail_clear:
	/* The policy in force was never touched; drop the half-built one. */
	{
		char e2[8];

		clear_gen(&m, gen, e2, sizeof(e2));
	}
fail_devs:
	for (i = 0; i < TOE_MAX_DEVS; i++)
		bpf_map_update_elem(m.devs, &i, &saved[i], BPF_ANY);
out:
	close_maps(&m);
	return ret;
}

int toe_policy_explain(const char *pin_dir, const struct toe_flow_key *k,
		       __u64 cgid, struct toe_pol_answer *a, char *err,
		       size_t len)
{
	struct pol_maps m;
	int ret;

	if (open_maps(pin_dir, &m, err, len))
		return -1;
	ret = classify_lookup(&m, k, cgid, a, err, len);
	close_maps(&m);
	return ret;
}
