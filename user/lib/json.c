// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* opentoe: a minimal streaming JSON writer (valid, one document). */
#include <string.h>
#include "lib/json.h"

void tj_start(struct toe_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

static void sep(struct toe_json *j)
{
	if (j->key) {
		j->key = false;
		return;
	}
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
}

static void open_(struct toe_json *j, char c)
{
	sep(j);
	fputc(c, j->f);
	if (j->depth < 31)
		j->depth++;
	j->first[j->depth] = true;
}

static void close_(struct toe_json *j, char c)
{
	if (j->depth > 0)
		j->depth--;
	fputc(c, j->f);
}

void tj_obj(struct toe_json *j)
{
	open_(j, '{');
}
void tj_obj_end(struct toe_json *j)
{
	close_(j, '}');
}
void tj_arr(struct toe_json *j)
{
	open_(j, '[');
}
void tj_arr_end(struct toe_json *j)
{
	close_(j, ']');
}

static void quote(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void tj_key(struct toe_json *j, const char *k)
{
	sep(j);
	quote(j->f, k);
	fputc(':', j->f);
	j->key = true;
}

void tj_str(struct toe_json *j, const char *s)
{
	sep(j);
	quote(j->f, s);
}

void tj_u64(struct toe_json *j, unsigned long long v)
{
	sep(j);
	fprintf(j->f, "%llu", v);
}

void tj_i64(struct toe_json *j, long long v)
{
	sep(j);
	fprintf(j->f, "%lld", v);
}

void tj_f64(struct toe_json *j, double v)
{
	sep(j);
	fprintf(j->f, "%.6g", v);
}

void tj_bool(struct toe_json *j, bool v)
{
	sep(j);
	fputs(v ? "true" : "false", j->f);
}

void tj_null(struct toe_json *j)
{
	sep(j);
	fputs("null", j->f);
}

void tj_end(struct toe_json *j)
{
	fputc('\n', j->f);
	fflush(j->f);
}

void tj_kstr_or_null(struct toe_json *j, const char *k, const char *s)
{
	tj_key(j, k);
	if (s)
		tj_str(j, s);
	else
		tj_null(j);
}

void tj_ku64_or_null(struct toe_json *j, const char *k, bool present,
		     unsigned long long v)
{
	tj_key(j, k);
	if (present)
		tj_u64(j, v);
	else
		tj_null(j);
}
