// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libFuzzer target for the configuration parser (user/toed/config.c): any input
 * either parses into a configuration that keeps every invariant the policy
 * compiler relies on, or fails with one "NAME:LINE:COL: message" line.
 * ASan/UBSan catch any read or write out of bounds on the way.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "toed/config.h"

static void fail(const char *what)
{
	fprintf(stderr, "invariant broken: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct toe_cfg c;
	char err[1024];
	unsigned int line, col;
	int i;

	if (toe_cfg_parse("fuzz.conf", (const char *)data, size, &c, err,
			  sizeof(err))) {
		if (sscanf(err, "fuzz.conf:%u:%u: ", &line, &col) != 2 ||
		    !line || !col)
			fail("error without file:line:col");
		if (strchr(err, '\n'))
			fail("error longer than one line");
		toe_cfg_free(&c);
		return 0;
	}
	if (c.ndevs < 0 || c.ndevs > TOE_MAX_DEVS || c.nrules < 0 ||
	    c.nrules > TOE_POL_MAX_RULES)
		fail("counts");
	if (c.default_action > TOE_ACT_BYPASS || c.default_dev >= c.ndevs ||
	    (c.default_action == TOE_ACT_OFFLOAD) != (c.default_dev >= 0))
		fail("default");
	if (c.track > TOE_TRACK_POLICY)
		fail("track");
	for (i = 0; i < c.ndevs; i++) {
		const struct toe_cfg_dev *d = &c.devs[i];

		if (!d->name[0] || strlen(d->name) > 15)
			fail("device name");
		/*
		 * A kmod device gets type, nconn and interface from the module
		 * (toed fills them in); until then it is absent, never written
		 * as present with nconn 0.
		 */
		if (d->kmod ? !d->absent || d->nconn || d->ifname[0] ||
				      d->type || d->ifindex :
			      !d->nconn || d->absent || d->ifindex)
			fail("device");
	}
	for (i = 0; i < c.nrules; i++) {
		const struct toe_cfg_rule *r = &c.rules[i];

		if (r->action > TOE_ACT_BYPASS || r->dev >= c.ndevs ||
		    (r->action == TOE_ACT_OFFLOAD) != (r->dev >= 0))
			fail("rule action/dev");
		if (r->lport_lo > r->lport_hi || r->rport_lo > r->rport_hi)
			fail("port range");
		if (r->lplen > (r->family == TOE_AF_INET ? 32 : 128) ||
		    r->rplen > (r->family == TOE_AF_INET ? 32 : 128))
			fail("prefix length");
		if ((r->lplen || r->rplen) && !r->family)
			fail("prefix without family");
	}
	toe_cfg_free(&c);
	return 0;
}
