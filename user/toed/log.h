/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed's log: one line a message on stderr, within --log-level. */
#ifndef __TOE_LOG_H
#define __TOE_LOG_H

#include <stdbool.h>

enum toed_log { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* "toed: LEVEL: ..." on stderr, when level is within --log-level. */
void logm(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Whether logm(level, ...) would print (to skip formatting what it would not). */
bool log_on(int level);
/* --log-level NAME: error, warning, info or debug; -1 for another name. */
int log_level_parse(const char *name);
/* From here on, what logm prints (LOG_INFO until set). */
void log_set_level(int level);

#endif /* __TOE_LOG_H */
