// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libFuzzer target for the configuration parser (user/toed/config.c): any input
 * either parses into a configuration that keeps every invariant the policy
 * compiler relies on, or fails with one "NAME:LINE:COL: message" line.
 * A configuration parsed is written back as toectl policy writes it
 * (toe_cfg_show): that text parses, to the same text (each rule's
 * "# line N" aside), and its JSON is written too.  ASan/UBSan catch any
 * read or write out of bounds on the way.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/json.h"
#include "toed/config.h"

static void fail(const char *what)
{
	fprintf(stderr, "invariant broken: %s\n", what);
	abort();
}

/* c as toe_cfg_show writes it (text, or JSON with j), malloc'd. */
static char *show(const struct toe_cfg *c, bool json, size_t *len)
{
	struct toe_json j;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		fail("open_memstream");
	if (json) {
		tj_start(&j, f);
		tj_obj(&j);
		toe_cfg_show(c, f, &j);
		tj_obj_end(&j);
		tj_end(&j);
	} else {
		toe_cfg_show(c, f, NULL);
	}
	fclose(f);
	return buf;
}

/* s without the "    # line N" each rule's line ends with (in place). */
static void unline(char *s)
{
	char *p, *e;

	while ((p = strstr(s, "    # line "))) {
		e = p + strlen("    # line ");
		e += strspn(e, "0123456789");
		memmove(p, e, strlen(e) + 1);
	}
}

/*
 * The text of c parses back to a configuration whose text is the same.
 * (A cgroup named by a path whose inode is past 32 bits has no id the
 * parser takes: not written back, so not tried.)
 */
static void round_trip(const struct toe_cfg *c)
{
	struct toe_cfg back;
	char err[1024], *t1, *t2, *js;
	size_t n1, n2, nj;
	int i;

	for (i = 0; i < c->nrules; i++)
		if (c->rules[i].cgroup > 0xffffffffULL)
			return;
	t1 = show(c, false, &n1);
	if (toe_cfg_parse("back.conf", t1, n1, &back, err, sizeof(err))) {
		fprintf(stderr, "%s\n--\n%s", err, t1);
		fail("the text written back does not parse");
	}
	t2 = show(&back, false, &n2);
	unline(t1);
	unline(t2);
	if (strcmp(t1, t2)) {
		fprintf(stderr, "%s--\n%s", t1, t2);
		fail("the text written back parses to another configuration");
	}
	js = show(&back, true, &nj);
	if (!nj || js[0] != '{' || js[nj - 1] != '\n')
		fail("JSON");
	free(js);
	free(t1);
	free(t2);
	toe_cfg_free(&back);
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
	round_trip(&c);
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
