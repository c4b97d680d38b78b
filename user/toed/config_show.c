// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toectl policy: the configuration in force, whoever applied it, every
 * statement written back by config.c's table (toe_cfg_show), after a
 * comment naming the policy and its source.  Its text, fed back to the
 * parser, is the same configuration (selftests/policy/test_roundtrip.sh).
 */
#include <string.h>
#include "lib/json.h"
#include "opentoe_policy.h"
#include "config.h"
#include "show_maps.h"
#include "show_state.h"
#include "srcrec.h"
#include "state.h"

/*
 * The configuration in force, whoever applied it: toed's own, or the text
 * recorded with the datapath by the one that did, parsed into other.
 * NULL src: unknown (other empty).
 */
const struct toe_cfg *policy_in_force(struct toed *d,
				      const struct toe_pol_hdr *h,
				      struct toe_cfg *other, const char **src)
{
	struct toe_policy_src rec;
	char err[256];
	bool own;

	memset(other, 0, sizeof(*other));
	other->default_dev = -1;
	*src = policy_source(d, h, &rec, &own);
	if (own)
		return &d->ap.cfg;
	if (*src && toe_cfg_parse(rec.config, rec.text, rec.len, other, err,
				  sizeof(err))) {
		toe_cfg_free(other);
		memset(other, 0, sizeof(*other));
		other->default_dev = -1;
		*src = NULL;
	}
	if (*src) {
		snprintf(d->src_shown, sizeof(d->src_shown), "%s", rec.config);
		*src = d->src_shown;
	}
	toe_policy_src_free(&rec);
	return other;
}

/* toectl policy (lib/ctl_cmds.h's handler: ctl.c declares it). */
void view_policy(struct toed *d, FILE *f, bool json)
{
	struct toe_pol_hdr h = {};
	const struct toe_cfg *c;
	struct toe_cfg other;
	struct toe_json j;
	const char *src;
	__u32 gen = 0;

	toe_policy_hdr(&d->m, &gen, &h);
	c = policy_in_force(d, &h, &other, &src);
	if (json) {
		tj_start(&j, f);
		tj_obj(&j);
		tj_ku64(&j, "serial", h.serial);
		tj_ku64(&j, "generation", gen);
		tj_kstr_or_null(&j, "config", src);
		toe_cfg_show(c, f, &j);
		tj_obj_end(&j);
		tj_end(&j);
	} else {
		fprintf(f, "# policy %llu (generation %u) from %s\n",
			(unsigned long long)h.serial, gen,
			src ? src :
			      "an unknown source (applied by another program, not recorded)");
		toe_cfg_show(c, f, NULL);
	}
	toe_cfg_free(&other);
}
