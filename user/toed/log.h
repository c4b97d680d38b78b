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

/*
 * Rate-limited logging, per call site (or per key: one struct a key): at
 * most LOG_RL_BURST lines a site each second; the rest are counted, not
 * printed, and "suppressed K similar messages (SITE)" is printed when the
 * site logs again in a later second, or at the next log_rl_flush (toed's
 * 2 s timer).  For what one connection or one packet can cause: a flood
 * of them must not flood the log nor slow toed's loop.
 */
#define LOG_RL_BURST 10

struct log_rl {
	const char *what; /* the site, for the summary line */
	int level; /* of its last line */
	unsigned long long second; /* CLOCK_MONOTONIC second of the window */
	unsigned int n; /* lines printed in that second */
	unsigned long long held; /* suppressed, not yet summarised */
	bool listed; /* in log.c's list, for log_rl_flush */
};

void logm_limited(struct log_rl *rl, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define LOG_STR_(x) #x
#define LOG_STR(x) LOG_STR_(x)
/* logm, rate-limited at this call site. */
#define logm_rl(level, ...)                                           \
	do {                                                          \
		static struct log_rl _rl = { .what = __FILE__         \
					     ":" LOG_STR(__LINE__) }; \
		logm_limited(&_rl, level, __VA_ARGS__);               \
	} while (0)
/* Summaries of what every site suppressed and has not said yet. */
void log_rl_flush(void);
/* Lines suppressed since start, all sites. */
unsigned long long log_suppressed(void);

#endif /* __TOE_LOG_H */
