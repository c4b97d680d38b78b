// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* opentoe: the parse results of the three programs (parse_rc.h). */
#include <stdio.h>
#include "lib/err.h"
#include "lib/parse_rc.h"
#include "toe_version.h"

enum toe_parse_rc toe_parse_common(int c, void (*usage)(FILE *f))
{
	switch (c) {
	case 'V':
		printf("%s %s\n", toe_prog, OPENTOE_VERSION);
		return TOE_PARSE_DONE;
	case 'h':
		usage(stdout);
		return TOE_PARSE_DONE;
	default:
		usage(stderr);
		return TOE_PARSE_BAD;
	}
}
