// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* toed's log (log.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <linux/types.h>
#include "log.h"

static const char *const log_names[] = { "error", "warning", "info", "debug" };

/* What logm prints, and whether --log-level said (the file's log then not). */
static struct {
	int max;
	bool fixed;
} log_level = { LOG_INFO, false };

/* The rate-limited sites that ever suppressed a line (log_rl_flush). */
#define MAX_RL_SITES 64
static struct log_rl *rl_sites[MAX_RL_SITES];
static int rl_nsites;
static unsigned long long rl_total; /* lines suppressed, all sites */

/*
 * One line, written by one call: the firewall watch's thread (nft.c) logs
 * too, and stdio locks the stream per call, so lines never interleave.
 */
static void vlog(int level, const char *fmt, va_list ap)
{
	char line[2048];
	int n;

	n = snprintf(line, sizeof(line), "toed: %s: ", log_names[level]);
	vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	n = strlen(line);
	line[n] = '\n';
	fwrite(line, 1, n + 1, stderr);
}

void logm(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level.max)
		return;
	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

static unsigned long long mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned long long)t.tv_sec;
}

/* The site's suppressed lines, said in one line and forgotten. */
static void rl_summary(struct log_rl *rl)
{
	if (!rl->held)
		return;
	logm(rl->level, "suppressed %llu similar messages (%s)", rl->held,
	     rl->what);
	rl->held = 0;
}

void logm_limited(struct log_rl *rl, int level, const char *fmt, ...)
{
	unsigned long long now = mono_s();
	va_list ap;

	if (level > log_level.max)
		return;
	if (now != rl->second) {
		rl_summary(rl);
		rl->second = now;
		rl->n = 0;
	}
	rl->level = level;
	if (rl->n >= LOG_RL_BURST) {
		rl->held++;
		rl_total++;
		if (!rl->listed && rl_nsites < MAX_RL_SITES) {
			rl_sites[rl_nsites++] = rl;
			rl->listed = true;
		}
		return;
	}
	rl->n++;
	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

void log_rl_flush(void)
{
	unsigned long long now = mono_s();
	int i;

	for (i = 0; i < rl_nsites; i++)
		if (rl_sites[i]->second != now)
			rl_summary(rl_sites[i]);
}

unsigned long long log_suppressed(void)
{
	return rl_total;
}

bool log_on(int level)
{
	return level <= log_level.max;
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
	log_level.max = level;
	log_level.fixed = true;
}

/*
 * The configuration's "log LEVEL" (config_stmts.h's setting, its names
 * log_names' order): apply.c calls it with every configuration toed takes
 * (at start, at each reload), so a reload changes the level; toed
 * --log-level, the operator's word for this run, wins over it.
 */
void log_cfg_level(__u32 level)
{
	if (!log_level.fixed && level <= LOG_DEBUG)
		log_level.max = level;
}
