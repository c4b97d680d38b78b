/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: a table view (toectl neigh) walked from its description in
 * fields.h: each field's JSON key and type, and its text column (header,
 * width, form).  A view fills a row of cells, one per field in the
 * table's order; tv_text_row and tv_json_row write it.
 */
#ifndef __TOE_VIEW_H
#define __TOE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "lib/json.h"

enum tv_type { TV_STR, TV_U64, TV_F64 }; /* the JSON value */
enum tv_text { TV_T_NONE, TV_T_STR, TV_T_NUM, TV_T_AGO }; /* the text's */

/* A field of a view (fields.h's X(ID, key, type, unit, head, width, text)). */
struct tv_field {
	const char *key; /* its JSON key */
	enum tv_type type;
	const char *unit; /* "s", or "" */
	const char *head; /* its text column's header; NULL: not in the text */
	int width; /* the column's; negative: left-aligned; 0: as wide as it is */
	enum tv_text text;
};

/* A field's value in a row: s (TV_STR), u (TV_U64) or f (TV_F64). */
struct tv_cell {
	const char *s;
	unsigned long long u;
	double f;
	bool null; /* none: JSON null, text "-" */
};

void tv_text_head(FILE *f, const struct tv_field *fl, size_t n);
void tv_text_row(FILE *f, const struct tv_field *fl, const struct tv_cell *c,
		 size_t n);
void tv_json_row(struct toe_json *j, const struct tv_field *fl,
		 const struct tv_cell *c, size_t n);

#endif /* __TOE_VIEW_H */
