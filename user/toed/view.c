// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed: the text and JSON back ends of the views (view.h): a table view's
 * row of cells, a line view's cells and lines, written as their
 * description in fields.h says, so that a field is one row of the
 * description and the code that fills its cell.
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
	if (c[k].null || c[k].absent || fl[k].text == TV_T_DASH)
		return "-";
	switch (fl[k].text) {
	case TV_T_NUM:
	case TV_T_SUM:
		snprintf(buf, len, "%llu", c[k].u);
		return buf;
	case TV_T_AGE:
	case TV_T_AGO:
		toe_age_str(c[k].f > 0 ? (__u64)(c[k].f * 1e9) : 0, age,
			    sizeof(age));
		snprintf(buf, len, "%s%s", age,
			 fl[k].text == TV_T_AGO ? " ago" : "");
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

/* One field's value under its key (or its member's name) in JSON. */
static void json_value(struct toe_json *j, const struct tv_field *fl,
		       const struct tv_cell *c, const char *key)
{
	tj_key(j, key);
	if (c->null)
		tj_null(j);
	else if (fl->type == TV_U64)
		tj_u64(j, c->u);
	else if (fl->type == TV_I64)
		tj_i64(j, c->i);
	else if (fl->type == TV_F64)
		tj_f64(j, c->f);
	else if (fl->type == TV_BOOL)
		tj_bool(j, c->u);
	else if (fl->type == TV_FN)
		c->json(j, c);
	else
		tj_str(j, c->s);
}

void tv_json_row(struct toe_json *j, const struct tv_field *fl,
		 const struct tv_cell *c, size_t n)
{
	size_t i;

	tj_obj(j);
	for (i = 0; i < n; i++)
		if (fl[i].type != TV_TEXT && !c[i].absent)
			json_value(j, &fl[i], &c[i], fl[i].key);
	tj_obj_end(j);
}

/* The JSON value of a cell as its text (a line's when compares it). */
static const char *json_text(const struct tv_field *fl, const struct tv_cell *c,
			     char *buf, size_t len)
{
	if (c->absent || c->null)
		return "null"; /* absent: as textjson.py reads it */
	switch (fl->type) {
	case TV_BOOL:
		return c->u ? "true" : "false";
	case TV_U64:
		snprintf(buf, len, "%llu", c->u);
		return buf;
	case TV_I64:
		snprintf(buf, len, "%lld", c->i);
		return buf;
	case TV_F64:
		snprintf(buf, len, "%g", c->f);
		return buf;
	default:
		return c->s ? c->s : "null";
	}
}

/* The index of the field named key[0..len), or n. */
static size_t field_at(const struct tv_field *fl, size_t n, const char *key,
		       size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fl[i].key && strlen(fl[i].key) == len &&
		    !strncmp(fl[i].key, key, len))
			break;
	return i;
}

/* Does a line's when ("KEY=VALUE", "KEY!=VALUE", "") hold? */
static bool line_when(const char *when, const struct tv_field *fl,
		      const struct tv_cell *c, size_t n)
{
	size_t k = strcspn(when, "!="), i;
	bool neg = when[k] == '!';
	char buf[32];

	if (!*when)
		return true;
	i = field_at(fl, n, when, k);
	if (i == n)
		return false;
	return !strcmp(json_text(&fl[i], &c[i], buf, sizeof(buf)),
		       when + k + 1 + neg) != neg;
}

/* A field's cell in a template: as FORM (form[0..flen)) writes it, or
 * (flen 0) as its type does. */
static void put_form(FILE *f, const struct tv_field *fl,
		     const struct tv_cell *c, const char *form, size_t flen)
{
	char buf[32], age[16];

	if (flen == 3 && !strncmp(form, "age", 3)) {
		toe_age_str(c->f > 0 ? (__u64)(c->f * 1e9) : 0, age,
			    sizeof(age));
		fputs(age, f);
	} else if (flen == 1 && *form == 's') {
		fputs(c->u == 1 ? "" : "s", f);
	} else if (flen == 2 && !strncmp(form, "by", 2)) {
		fputs(c->s && !strcmp(c->s, "toed") ? "this toed" :
						      "another program",
		      f);
	} else if (flen == 7 && !strncmp(form, "unknown", 7)) {
		fputs(c->null || !c->s ? "(unknown)" : c->s, f);
	} else if (flen == 2 && !strncmp(form, "f1", 2)) {
		fprintf(f, "%.1f", c->f);
	} else if (flen && c->text) {
		c->text(f, c);
	} else if (fl->type == TV_STR) {
		fputs(c->null || !c->s ? "" : c->s, f);
	} else {
		fputs(json_text(fl, c, buf, sizeof(buf)), f);
	}
}

/* A template: its text, each {KEY[:FORM]} the field's value. */
static void put_template(FILE *f, const char *t, const struct tv_field *fl,
			 const struct tv_cell *c, size_t n)
{
	const char *end, *colon;
	size_t i;

	while (*t) {
		if (*t != '{' || !(end = strchr(t, '}'))) {
			fputc(*t++, f);
			continue;
		}
		colon = memchr(t, ':', end - t);
		i = field_at(fl, n, t + 1, (colon ? colon : end) - t - 1);
		if (i < n)
			put_form(f, &fl[i], &c[i], colon ? colon + 1 : end,
				 colon ? (size_t)(end - colon - 1) : 0);
		t = end + 1;
	}
}

void tv_text_lines(FILE *f, const struct tv_line *ln, size_t nl,
		   const struct tv_field *fl, const struct tv_cell *c, size_t n)
{
	const char *done = NULL; /* the label last written */
	size_t i;

	for (i = 0; i < nl; i++) {
		if ((done && !strcmp(done, ln[i].label)) ||
		    !line_when(ln[i].when, fl, c, n))
			continue;
		fprintf(f, "%-11s", ln[i].label);
		put_template(f, ln[i].template, fl, c, n);
		fputc('\n', f);
		done = ln[i].label;
	}
}

void tv_json_doc(struct toe_json *j, const struct tv_field *fl,
		 const struct tv_cell *c, size_t n)
{
	const char *obj = NULL, *dot; /* the object open, its key's length */
	size_t olen = 0, i;

	tj_obj(j);
	for (i = 0; i < n; i++) {
		if (fl[i].type == TV_TEXT || c[i].absent)
			continue;
		dot = strchr(fl[i].key, '.');
		if (obj && (!dot || (size_t)(dot - fl[i].key) != olen ||
			    strncmp(obj, fl[i].key, olen))) {
			tj_obj_end(j);
			obj = NULL;
		}
		if (dot && !obj) {
			char k[32];

			olen = dot - fl[i].key;
			snprintf(k, sizeof(k), "%.*s", (int)olen, fl[i].key);
			tj_key(j, k);
			tj_obj(j);
			obj = fl[i].key;
		}
		json_value(j, &fl[i], &c[i], dot ? dot + 1 : fl[i].key);
	}
	if (obj)
		tj_obj_end(j);
	tj_obj_end(j);
}
