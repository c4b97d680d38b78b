// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libFuzzer target for toed's control-request parser (user/toed/ctl_parse.c):
 * any bytes give a request that keeps the invariants ctl.c relies on, an
 * error of one printable line, or "more" only while no newline has come and
 * the line is still short; and a request, once complete, parses the same
 * whatever follows it.  ASan/UBSan catch any access out of bounds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl_parse.h"

static void fail(const char *what)
{
	fprintf(stderr, "invariant broken: %s\n", what);
	abort();
}

static void check_err(const char *err)
{
	size_t i, n = strnlen(err, CTL_ERR_MAX);

	if (n == 0 || n == CTL_ERR_MAX)
		fail("error empty or not terminated");
	for (i = 0; i < n; i++)
		if ((unsigned char)err[i] < 0x20 ||
		    (unsigned char)err[i] >= 0x7f)
			fail("error not one printable line");
}

static void check_req(const struct ctl_request *r)
{
	if ((unsigned int)r->cmd >= CTL__NCMDS ||
	    !strcmp(ctl_cmd_name(r->cmd), "?"))
		fail("command");
	if (r->port < -1 || r->port > 65535)
		fail("port");
	if (r->cmd != CTL_FLOWS && (r->dev || r->port != -1 || r->netns))
		fail("filters on a command that takes none");
	if (r->dev &&
	    (r->dev < r->line || r->dev >= r->line + TOE_CTL_REQ_MAX ||
	     !memchr(r->dev, 0, r->line + TOE_CTL_REQ_MAX - r->dev)))
		fail("dev outside the request");
	if (r->netns &&
	    (r->netns < r->line || r->netns >= r->line + TOE_CTL_REQ_MAX ||
	     !memchr(r->netns, 0, r->line + TOE_CTL_REQ_MAX - r->netns)))
		fail("netns outside the request");
	/* toed makes a path of it: /run/netns/NAME */
	if (r->netns && (!r->netns[0] || strchr(r->netns, '/') ||
			 !strcmp(r->netns, ".") || !strcmp(r->netns, "..")))
		fail("netns that is a path");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ctl_request r, r2;
	char err[CTL_ERR_MAX], err2[CTL_ERR_MAX];
	const char *nl = memchr(data, '\n', size);
	enum ctl_parse_res res = ctl_parse((const char *)data, size, &r, err);
	size_t end;

	switch (res) {
	case CTL_PARSE_MORE:
		if ((nl && nl - (const char *)data < TOE_CTL_REQ_MAX) ||
		    size >= TOE_CTL_REQ_MAX)
			fail("more after a newline or past the limit");
		break;
	case CTL_PARSE_ERR:
		check_err(err);
		break;
	case CTL_PARSE_OK:
		if (!nl || nl - (const char *)data >= TOE_CTL_REQ_MAX)
			fail("a request without a newline in the limit");
		check_req(&r);
		/* the line alone parses the same */
		end = nl - (const char *)data + 1;
		if (ctl_parse((const char *)data, end, &r2, err2) !=
			    CTL_PARSE_OK ||
		    r2.cmd != r.cmd || r2.json != r.json || r2.port != r.port ||
		    !r2.dev != !r.dev || (r.dev && strcmp(r.dev, r2.dev)) ||
		    !r2.netns != !r.netns ||
		    (r.netns && strcmp(r.netns, r2.netns)))
			fail("not the same without what follows");
		break;
	default:
		fail("result");
	}
	return 0;
}
