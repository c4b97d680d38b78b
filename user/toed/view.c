// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed: the text and JSON back ends of a table view (view.h): a row of
 * cells written as its description in fields.h says, so that a field is
 * one row of the description and the code that fills its cell.
 */
#include <stdio.h>
#include <string.h>
#include "lib/json.h"
#include "show_maps.h"
#include "view.h"

/* One column: s padded to the field's width, after a blank but the first. */
static void column(FILE *f, const struct tv_field *fl, const char *s,
		   bool first)
{
	if (!first)
		fputc(' ', f);
	if (fl->width)
		fprintf(f, "%*s", fl->width, s);
	else
		fputs(s, f);
}

void tv_text_head(FILE *f, const struct tv_field *fl, size_t n)
{
	bool first = true;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!fl[i].head)
			continue;
		column(f, &fl[i], fl[i].head, first);
		first = false;
	}
	fputc('\n', f);
}

/* The cell of the field named key[0..len) of the row (NULL: none). */
static const struct tv_cell *cell_of(const struct tv_field *fl,
				     const struct tv_cell *c, size_t n,
				     const char *key, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fl[i].key && strlen(fl[i].key) == len &&
		    !strncmp(fl[i].key, key, len))
			return &c[i];
	return NULL;
}

/* RATIO: the cells of the two fields from names, as A/B ("-": absent). */
static const char *ratio_text(const struct tv_field *fl,
			      const struct tv_cell *c, size_t n,
			      const char *from, char *buf, size_t len)
{
	size_t la = strcspn(from, " ");
	const struct tv_cell *a = cell_of(fl, c, n, from, la);
	const struct tv_cell *b = from[la] ? cell_of(fl, c, n, from + la + 1,
						     strlen(from + la + 1)) :
					     NULL;

	if (!a || !b || a->absent || b->absent || a->null || b->null)
		return "-";
	snprintf(buf, len, "%llu/%llu", a->u, b->u);
	return buf;
}

/* Cell k of the row as the text writes it, into buf. */
static const char *cell_text(const struct tv_field *fl, const struct tv_cell *c,
			     size_t n, size_t k, char *buf, size_t len)
{
	char age[16];

	if (fl[k].text == TV_T_RATIO)
		return ratio_text(fl, c, n, fl[k].from, buf, len);
	if (c[k].null || c[k].absent)
		return "-";
	switch (fl[k].text) {
	case TV_T_NUM:
		snprintf(buf, len, "%llu", c[k].u);
		return buf;
	case TV_T_AGO:
		toe_age_str(c[k].f > 0 ? (__u64)(c[k].f * 1e9) : 0, age,
			    sizeof(age));
		snprintf(buf, len, "%s ago", age);
		return buf;
	default:
		return c[k].s ? c[k].s : "-";
	}
}

void tv_text_row(FILE *f, const struct tv_field *fl, const struct tv_cell *c,
		 size_t n)
{
	bool first = true;
	char buf[64];
	size_t i;

	for (i = 0; i < n; i++) {
		if (!fl[i].head)
			continue;
		column(f, &fl[i], cell_text(fl, c, n, i, buf, sizeof(buf)),
		       first);
		first = false;
	}
	fputc('\n', f);
}

void tv_json_row(struct toe_json *j, const struct tv_field *fl,
		 const struct tv_cell *c, size_t n)
{
	size_t i;

	tj_obj(j);
	for (i = 0; i < n; i++) {
		if (fl[i].type == TV_TEXT || c[i].absent)
			continue;
		tj_key(j, fl[i].key);
		if (c[i].null)
			tj_null(j);
		else if (fl[i].type == TV_U64)
			tj_u64(j, c[i].u);
		else if (fl[i].type == TV_I64)
			tj_i64(j, c[i].i);
		else if (fl[i].type == TV_F64)
			tj_f64(j, c[i].f);
		else if (fl[i].type == TV_BOOL)
			tj_bool(j, c[i].u);
		else if (fl[i].type == TV_FN)
			c[i].json(j, &c[i]);
		else
			tj_str(j, c[i].s);
	}
	tj_obj_end(j);
}
