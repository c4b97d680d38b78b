// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed: the text and JSON back ends of a table view (view.h): a row of
 * cells written as its description in fields.h says, so that a field is
 * one row of the description and the code that fills its cell.
 */
#include <stdio.h>
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

/* A cell as the text writes it, into buf. */
static const char *cell_text(const struct tv_field *fl, const struct tv_cell *c,
			     char *buf, size_t len)
{
	char age[16];

	if (c->null)
		return "-";
	switch (fl->text) {
	case TV_T_NUM:
		snprintf(buf, len, "%llu", c->u);
		return buf;
	case TV_T_AGO:
		toe_age_str(c->f > 0 ? (__u64)(c->f * 1e9) : 0, age,
			    sizeof(age));
		snprintf(buf, len, "%s ago", age);
		return buf;
	default:
		return c->s ? c->s : "-";
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
		column(f, &fl[i], cell_text(&fl[i], &c[i], buf, sizeof(buf)),
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
		tj_key(j, fl[i].key);
		if (c[i].null)
			tj_null(j);
		else if (fl[i].type == TV_U64)
			tj_u64(j, c[i].u);
		else if (fl[i].type == TV_F64)
			tj_f64(j, c[i].f);
		else
			tj_str(j, c[i].s);
	}
	tj_obj_end(j);
}
