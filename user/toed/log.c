// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* toed's log (log.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "log.h"

static const char *const log_names[] = { "error", "warning", "info", "debug" };

static int log_level = LOG_INFO;

void logm(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	fprintf(stderr, "toed: %s: ", log_names[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool log_on(int level)
{
	return level <= log_level;
}

int log_level_parse(const char *name)
{
	int i;

	for (i = 0; i <= LOG_DEBUG && strcmp(name, log_names[i]); i++)
		;
	return i > LOG_DEBUG ? -1 : i;
}

void log_set_level(int level)
{
	log_level = level;
}
