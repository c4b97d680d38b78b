// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toectl reasons [NAME]: every reason a word in toectl flows, monitor or
 * stats can give, from the tables that define them, with its help and how
 * often it happened (toe_reasons, fwdev.c's fwd_reasons_read): the
 * decisions' reasons (TOE_REASON_TABLE; a refusal counted by sock_ops),
 * the forward path's (TOE_FWD_REASON_TABLE: flows and packets by hook),
 * the bypass's switches to TCP (TOE_BYP_WHY_TABLE).  NAME: only the rows
 * of that name.  What an operator reading "reason nodev" wants next.
 */
#include <stdio.h>
#include <string.h>
#include "lib/json.h"
#include "opentoe_common.h"
#include "opentoe_bypass.h"
#include "opentoe_reasons.h"
#include "ctl_parse.h"
#include "fwdev.h"
#include "state.h"

/* The help columns, by value (the headers keep only the names). */
static const char *const decision_help[TOE_R__MAX] = {
#define R_HELP(id, name, counted, help) [TOE_R_##id] = help,
	TOE_REASON_TABLE(R_HELP)
#undef R_HELP
};

static const char *const fwd_help[TOE_FR__MAX] = {
#define FR_HELP(id, name, kind, hooks, pkts, origin, help) [TOE_FR_##id] = help,
	TOE_FWD_REASON_TABLE(FR_HELP)
#undef FR_HELP
};

static const char *const why_help[TOE_BYP_WHY__END] = {
#define WHY_HELP(id, name, help) [TOE_BYP_WHY_##id] = help,
	TOE_BYP_WHY_TABLE(WHY_HELP)
#undef WHY_HELP
};

/* Where the rows go, and which: NULL name, every one. */
struct rsn_out {
	FILE *f;
	struct toe_json *j; /* NULL: text */
	const char *name;
	const __u64 *v; /* toe_reasons, summed */
};

/* A reason in text: its kind, name and counts, then its help indented. */
static void text_row(struct rsn_out *o, const char *kind, const char *name,
		     const char *counts, const char *help)
{
	fprintf(o->f, "%-9s %-15s %s\n%-9s %s\n", kind, name, counts, "", help);
}

static void decisions(struct rsn_out *o)
{
	char b[64];
	__u32 r;

	if (o->j) {
		tj_key(o->j, "decision");
		tj_arr(o->j);
	}
	for (r = 0; r < TOE_R__MAX; r++) {
		bool counted = toe_reason_counted(r);

		if (o->name && strcmp(o->name, toe_reason_str(r)))
			continue;
		if (!o->j) {
			if (counted)
				snprintf(b, sizeof(b), "refused %llu",
					 (unsigned long long)
						 o->v[TOE_RSN_REFUSED(r)]);
			else
				snprintf(b, sizeof(b), "(not counted)");
			text_row(o, "decision", toe_reason_str(r), b,
				 decision_help[r]);
			continue;
		}
		tj_obj(o->j);
		tj_kstr(o->j, "name", toe_reason_str(r));
		tj_kstr(o->j, "help", decision_help[r]);
		tj_ku64_or_null(o->j, "refused", counted,
				o->v[TOE_RSN_REFUSED(r)]);
		tj_obj_end(o->j);
	}
	if (o->j)
		tj_arr_end(o->j);
}

/*
 * A forward reason's counts, per hook it happens on: flows, packets (or
 * null: it has no packet counter); text into b.
 */
static void fwd_counts(struct rsn_out *o, __u32 r, char *b, size_t len)
{
	bool pkts = toe_fwd_reason_has_pkts(r);
	size_t n = 0;
	__u32 h;

	b[0] = '\0';
	for (h = 0; h < TOE_FH__MAX; h++) {
		__u64 fl = o->v[TOE_RSN_FWD_FLOWS(h, r)];
		__u64 pk = o->v[TOE_RSN_FWD_PKTS(h, r)];

		if (!toe_fwd_reason_on_hook(r, h))
			continue;
		if (o->j) {
			tj_key(o->j, toe_fwd_hook_name(h));
			tj_obj(o->j);
			tj_ku64(o->j, "flows", fl);
			tj_ku64_or_null(o->j, "packets", pkts, pk);
			tj_obj_end(o->j);
			continue;
		}
		n += snprintf(b + n, len - n, "%s%s: flows %llu", n ? "; " : "",
			      toe_fwd_hook_name(h), (unsigned long long)fl);
		if (pkts && n < len)
			n += snprintf(b + n, len - n, " packets %llu",
				      (unsigned long long)pk);
		if (n >= len)
			break;
	}
}

static void forward(struct rsn_out *o)
{
	char b[160];
	__u32 r;

	if (o->j) {
		tj_key(o->j, "forward");
		tj_arr(o->j);
	}
	for (r = 1; r < TOE_FR__MAX; r++) {
		if (o->name && strcmp(o->name, toe_fwd_reason_name(r)))
			continue;
		if (o->j) {
			tj_obj(o->j);
			tj_kstr(o->j, "name", toe_fwd_reason_name(r));
			tj_kstr(o->j, "kind", toe_fwd_reason_kind(r));
			tj_kstr(o->j, "help", fwd_help[r]);
		}
		fwd_counts(o, r, b, sizeof(b));
		if (o->j)
			tj_obj_end(o->j);
		else
			text_row(o, toe_fwd_reason_kind(r),
				 toe_fwd_reason_name(r), b, fwd_help[r]);
	}
	if (o->j)
		tj_arr_end(o->j);
}

static void bypass(struct rsn_out *o)
{
	char b[64];
	__u32 w;

	if (o->j) {
		tj_key(o->j, "bypass_to_tcp");
		tj_arr(o->j);
	}
	for (w = 1; w <= TOE_BYP_WHY_N; w++) {
		if (o->name && strcmp(o->name, toe_byp_why_str(w)))
			continue;
		if (!o->j) {
			snprintf(b, sizeof(b), "switched %llu",
				 (unsigned long long)o->v[TOE_RSN_BYP(w)]);
			text_row(o, "bypass", toe_byp_why_str(w), b,
				 why_help[w]);
			continue;
		}
		tj_obj(o->j);
		tj_kstr(o->j, "name", toe_byp_why_str(w));
		tj_kstr(o->j, "help", why_help[w]);
		tj_ku64(o->j, "switched", o->v[TOE_RSN_BYP(w)]);
		tj_obj_end(o->j);
	}
	if (o->j)
		tj_arr_end(o->j);
}

/* Whether name is a reason of any of the three tables. */
static bool known(const char *name)
{
	__u32 i;

	for (i = 0; i < TOE_R__MAX; i++)
		if (!strcmp(name, toe_reason_str(i)))
			return true;
	for (i = 1; i < TOE_FR__MAX; i++)
		if (!strcmp(name, toe_fwd_reason_name(i)))
			return true;
	for (i = 1; i <= TOE_BYP_WHY_N; i++)
		if (!strcmp(name, toe_byp_why_str(i)))
			return true;
	return false;
}

/* toectl reasons (lib/ctl_cmds.h's handler: ctl.c declares it). */
bool cmd_reasons(struct toed *d, struct client *c, const struct ctl_request *r,
		 FILE *out)
{
	__u64 v[TOE_RSN_MAX];
	struct rsn_out o = { .f = out, .v = v };
	struct toe_json j;

	(void)c;
	if (r->argc > 1) {
		fprintf(out,
			"error reasons takes one reason's name at most (got '%.64s' after '%.64s')\n",
			r->argv[1], r->argv[0]);
		return true;
	}
	o.name = r->argc ? r->argv[0] : NULL;
	if (o.name && !known(o.name)) {
		fprintf(out,
			"error unknown reason '%.64s' (toectl reasons lists them)\n",
			o.name);
		return true;
	}
	fwd_reasons_read(&d->fwd, v);
	fprintf(out, "ok\n");
	if (r->json) {
		tj_start(&j, out);
		tj_obj(&j);
		o.j = &j;
	}
	decisions(&o);
	forward(&o);
	bypass(&o);
	if (r->json) {
		tj_obj_end(&j);
		tj_end(&j);
	}
	return true;
}
