/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: how parsing a command line (or one step of it) ended, the same
 * for toe-loader, toed and toectl.
 */
#ifndef __TOE_PARSE_RC_H
#define __TOE_PARSE_RC_H

#include <stdio.h>

enum toe_parse_rc {
	TOE_PARSE_OK, /* go on: run what was asked */
	TOE_PARSE_DONE, /* nothing more to do (--help, --version shown): exit 0 */
	TOE_PARSE_BAD, /* a message was given: exit 1 */
};

/* The exit status of a parse that ended otherwise than TOE_PARSE_OK. */
static inline int toe_parse_exit(enum toe_parse_rc rc)
{
	return rc == TOE_PARSE_BAD ? 1 : 0;
}

/*
 * The end of a getopt switch that toed and toectl share: -V prints
 * "PROG VERSION" and -h the usage to stdout (TOE_PARSE_DONE); any other
 * option c, the usage to stderr (TOE_PARSE_BAD).
 */
enum toe_parse_rc toe_parse_common(int c, void (*usage)(FILE *f));

#endif /* __TOE_PARSE_RC_H */
