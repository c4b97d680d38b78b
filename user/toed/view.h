/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: a view walked from its description in fields.h.  A table view
 * (toectl neigh, devices, flows): each field's JSON key and type, and its
 * text column (header, width, form); a view fills a row of cells, one per
 * field in the table's order, and tv_text_row and tv_json_row write it.
 * A line view (toectl status): its fields, and its text lines as
 * templates of them; tv_json_doc and tv_text_lines write it.
 */
#ifndef __TOE_VIEW_H
#define __TOE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "lib/json.h"

/* the JSON value (FN: written by the cell's function; TEXT: none) */
enum tv_type { TV_STR, TV_U64, TV_I64, TV_F64, TV_BOOL, TV_FN, TV_TEXT };
/*
 * the text's: as the cell is (STR; WORDS: one with blanks), a number, an
 * age (AGO: then " ago"), the cells of the fields of from as A/B; and a
 * text-only field's, as the view filled it: ENDPOINT and EITHER as STR,
 * SUM as NUM, DASH always "-" (their from says what they are made of)
 */
enum tv_text {
	TV_T_NONE,
	TV_T_STR,
	TV_T_WORDS,
	TV_T_NUM,
	TV_T_AGE,
	TV_T_AGO,
	TV_T_RATIO,
	TV_T_ENDPOINT,
	TV_T_SUM,
	TV_T_EITHER,
	TV_T_DASH,
};

/* A field of a view (fields.h's X(ID, key, type, unit, head, width, text,
 * from, FAM, labels)). */
struct tv_field {
	const char *key; /* its JSON key (NULL: the text's alone) */
	enum tv_type type;
	const char *unit; /* "s", or "" */
	const char *head; /* its text column's header; NULL: not in the text */
	int width; /* the column's; negative: left-aligned; 0: as wide as it is */
	enum tv_text text;
	const char *from; /* the keys of the fields it is made of (RATIO's two) */
	int fam; /* enum toe_fam: the metric family it is exported in */
	const char *labels; /* the sample's labels beside the view's, or NULL */
};

/* A row of a table view's description in fields.h, as its tv_field (where
 * fields.h's enum toe_fam is in scope). */
/* clang-format off */
#define TV_FIELD(id, key, type, unit, head, width, text, from, fam, labels) \
	{ key, TV_##type, unit, head, width, TV_T_##text, from, F_##fam, labels },
/* clang-format on */

struct tv_cell;
typedef void (*tv_json_fn)(struct toe_json *j, const struct tv_cell *c);
typedef void (*tv_text_fn)(FILE *f, const struct tv_cell *c);

/* A field's value in a row: s (STR), u (U64, BOOL), i (I64), f (F64). */
struct tv_cell {
	const char *s;
	unsigned long long u;
	long long i;
	double f;
	bool null; /* none: JSON null, text "-" */
	bool absent; /* not in this row: no JSON key, text "-" */
	tv_json_fn json; /* FN: writes the value */
	tv_text_fn text; /* FN: writes its text form (a line view's FORM) */
	const void *ctx; /* for json and text */
};

/* A line of a line view (fields.h's Y(label, when, template)). */
struct tv_line {
	const char *label;
	const char *when; /* "KEY=VALUE", "KEY!=VALUE", "": always */
	const char *template; /* {KEY} and {KEY:FORM}: fields' values */
};

void tv_text_head(FILE *f, const struct tv_field *fl, size_t n);
void tv_text_row(FILE *f, const struct tv_field *fl, const struct tv_cell *c,
		 size_t n);
void tv_json_row(struct toe_json *j, const struct tv_field *fl,
		 const struct tv_cell *c, size_t n);
/* A line view (toectl status): its fields as one JSON document, keys
 * KEY.MEMBER members of object KEY; its lines as text. */
void tv_json_doc(struct toe_json *j, const struct tv_field *fl,
		 const struct tv_cell *c, size_t n);
void tv_text_lines(FILE *f, const struct tv_line *ln, size_t nl,
		   const struct tv_field *fl, const struct tv_cell *c,
		   size_t n);

#endif /* __TOE_VIEW_H */
