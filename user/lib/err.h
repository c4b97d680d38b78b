/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* opentoe: one-line error messages (toe-loader, toed and toectl). */
#ifndef __TOE_ERR_H
#define __TOE_ERR_H

#include <stddef.h>

extern const char *toe_prog; /* program name for messages */

/* One line to stderr, "prog: message". */
void toe_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Format one line into err (if any room); returns -1, for "return errf(...)". */
int toe_errf(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* __TOE_ERR_H */
