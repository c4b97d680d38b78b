// SPDX-License-Identifier: GPL-2.0
/*
 * cfg_limits DIR: the boundary cases of every limit of the configuration
 * language (user/toed/config_limits.h, the table the parser uses), one
 * configuration file each in DIR, named ID.N.WANT: N the value (or length,
 * or count) tried, WANT "ok" (toed --check accepts it), "bad" (it refuses
 * it), "words" (refused, but not for too many words) or "toomany" (refused
 * for too many words).  Prints the names, one a line.
 * selftests/config/test_limits.sh runs toed --check on each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "toed/config_limits.h"

static const char *dir;

/* The text of a template with s in place of its '@'. */
static void put_tpl(FILE *f, const char *tpl, const char *s)
{
	const char *at = strchr(tpl, '@');

	if (!at) {
		fputs(tpl, f);
		return;
	}
	fprintf(f, "%.*s%s%s", (int)(at - tpl), tpl, s, at + 1);
}

/* A word of n characters, 'a' to 'z' over and over; n words "w"; a comment. */
static char *word(unsigned long long n, int kind)
{
	char *s = malloc(2 * n + 2);
	unsigned long long i, o = 0;

	if (!s)
		exit(1);
	for (i = 0; i < n; i++) {
		if (kind == TOE_LK_WORDS)
			o += sprintf(s + o, i ? " w" : "w");
		else
			s[o++] = kind == TOE_LK_LINE && i == 0 ? '#' :
								 'a' + i % 26;
	}
	s[o] = 0;
	return s;
}

static void write_case(const struct toe_cfg_limit *l, long long v)
{
	char name[512], num[32], *s = NULL;
	const char *nl = strrchr(l->tpl, '\n');
	int want = v >= (long long)l->lo && v <= (long long)l->hi;
	const char *ws[] = { "bad", "ok" };
	FILE *f;
	long long i;

	if (l->kind == TOE_LK_WORDS)
		ws[0] = "toomany", ws[1] = "words";
	snprintf(name, sizeof(name), "%s/%s.%lld.%s", dir, l->id, v, ws[want]);
	f = fopen(name, "w");
	if (!f)
		exit(1);
	snprintf(num, sizeof(num), "%lld", v);
	if (l->kind == TOE_LK_COUNT) {
		/* the lines before the last once, the last one v times */
		if (nl)
			fprintf(f, "%.*s", (int)(nl - l->tpl + 1), l->tpl);
		for (i = 1; i <= v; i++) {
			snprintf(num, sizeof(num), "%lld", i);
			put_tpl(f, nl ? nl + 1 : l->tpl, num);
			fputc('\n', f);
		}
	} else {
		if (l->kind != TOE_LK_NUM)
			s = word(v, l->kind);
		put_tpl(f, l->tpl, s ? s : num);
		fputc('\n', f);
	}
	free(s);
	fclose(f);
	printf("%s\n", strrchr(name, '/') + 1);
}

int main(int argc, char **argv)
{
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: cfg_limits DIR\n");
		return 2;
	}
	dir = argv[1];
	for (i = 0; i < TOE_LIM__N; i++) {
		const struct toe_cfg_limit *l = &toe_cfg_limits[i];
		long long lo = l->lo, hi = l->hi;

		/* the lower end: not for a word or line of no characters */
		if (l->kind == TOE_LK_NUM ||
		    (l->kind == TOE_LK_LEN && lo > 1)) {
			write_case(l, lo - 1);
		}
		if (l->kind == TOE_LK_NUM || l->kind == TOE_LK_LEN) {
			write_case(l, lo);
			write_case(l, lo + 1);
		}
		write_case(l, hi - 1);
		write_case(l, hi);
		write_case(l, hi + 1);
	}
	return 0;
}
