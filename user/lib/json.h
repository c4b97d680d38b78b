/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* opentoe: minimal streaming JSON writer (valid, one document). */
#ifndef __TOE_JSON_H
#define __TOE_JSON_H

#include <stdbool.h>
#include <stdio.h>

struct toe_json {
	FILE *f;
	int depth;
	bool first[32];
	bool key; /* a key was just written */
};

void tj_start(struct toe_json *j, FILE *f);
void tj_obj(struct toe_json *j); /* { */
void tj_obj_end(struct toe_json *j); /* } */
void tj_arr(struct toe_json *j); /* [ */
void tj_arr_end(struct toe_json *j); /* ] */
void tj_key(struct toe_json *j, const char *k);
void tj_str(struct toe_json *j, const char *s);
void tj_u64(struct toe_json *j, unsigned long long v);
void tj_i64(struct toe_json *j, long long v);
void tj_f64(struct toe_json *j, double v);
void tj_bool(struct toe_json *j, bool v);
void tj_null(struct toe_json *j);
void tj_end(struct toe_json *j); /* newline */

#define tj_kstr(j, k, v)      \
	do {                  \
		tj_key(j, k); \
		tj_str(j, v); \
	} while (0)
#define tj_ku64(j, k, v)      \
	do {                  \
		tj_key(j, k); \
		tj_u64(j, v); \
	} while (0)
#define tj_ki64(j, k, v)      \
	do {                  \
		tj_key(j, k); \
		tj_i64(j, v); \
	} while (0)
/* Key k and the string s, or null when s is NULL. */
void tj_kstr_or_null(struct toe_json *j, const char *k, const char *s);
/* Key k and v, or null when there is none (!present). */
void tj_ku64_or_null(struct toe_json *j, const char *k, bool present,
		     unsigned long long v);

#endif /* __TOE_JSON_H */
