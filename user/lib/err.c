// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* opentoe: one-line error messages, to stderr or into a caller's buffer. */
#include <stdarg.h>
#include <stdio.h>
#include "lib/err.h"

const char *toe_prog = "opentoe";

void toe_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", toe_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int toe_errf(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}
