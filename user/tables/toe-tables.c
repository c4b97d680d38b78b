// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-tables: every vocabulary table of include/, user/lib/ctl_cmds.h and
 * the configuration language (user/toed/config_*.h), as the
 * compiler sees it, dumped for the scripts and tests that need the names
 * (scripts/gen-names.py, scripts/counters.py, scripts/docfacts.py) instead
 * of their reading C with regular expressions.
 *
 *   toe-tables       text: a section a table, a row a line, tab-separated
 *   toe-tables -j    one JSON object: a key a table (see each dump_*)
 *   toe-tables --man FILE   a man page with its lists from the tables
 *
 * A table's columns go out as the table has them; a new column is a new
 * key, never a renamed one.  Built with the programs (make), not installed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <ctype.h>
#include <errno.h>

#include <linux/types.h>

#include "opentoe_common.h"
#include "opentoe_events.h"
#include "opentoe_policy.h"
#include "opentoe_reasons.h"
#include "opentoe_stats.h"
#include "toe_parse.h"
#include "lib/ctl_cmds.h"
#include "lib/json.h"
#include "toed/config_limits.h"
#include "toed/config_stmts.h"
#include "toed/fields.h"

/* Where the rows go: one JSON document, or text lines. */
struct out {
	struct toe_json j;
	bool json;
	bool first; /* the row's first column (text) */
};

static void section(struct out *o, const char *name, const char *columns)
{
	if (o->json) {
		tj_key(&o->j, name);
		tj_arr(&o->j);
	} else {
		printf("# %s: %s\n", name, columns);
	}
}

static void section_end(struct out *o)
{
	if (o->json)
		tj_arr_end(&o->j);
	else
		printf("\n");
}

static void row(struct out *o)
{
	if (o->json)
		tj_obj(&o->j);
	o->first = true;
}

static void row_end(struct out *o)
{
	if (o->json)
		tj_obj_end(&o->j);
	else
		printf("\n");
}

static void text_sep(struct out *o)
{
	if (!o->first)
		printf("\t");
	o->first = false;
}

/* A string column (NULL: JSON null, text "-"); text: newlines as "\n". */
static void col_str(struct out *o, const char *k, const char *v)
{
	if (o->json) {
		tj_kstr_or_null(&o->j, k, v);
		return;
	}
	text_sep(o);
	for (v = v ? v : "-"; *v; v++)
		if (*v == '\n')
			printf("\\n");
		else
			putchar(*v);
}

static void col_u64(struct out *o, const char *k, unsigned long long v)
{
	if (o->json) {
		tj_ku64(&o->j, k, v);
		return;
	}
	text_sep(o);
	printf("%llu", v);
}

static void col_bool(struct out *o, const char *k, bool v)
{
	if (o->json) {
		tj_key(&o->j, k);
		tj_bool(&o->j, v);
		return;
	}
	text_sep(o);
	printf("%s", v ? "yes" : "no");
}

/* maps: id, name (TOE_MAP_TABLE, include/toe_maps.h: the pin names). */
static void dump_maps(struct out *o)
{
	section(o, "maps", "id name");
#define MAP_ROW(id, name)          \
	row(o);                    \
	col_str(o, "id", #id);     \
	col_str(o, "name", #name); \
	row_end(o);
	TOE_MAP_TABLE(MAP_ROW)
#undef MAP_ROW
	section_end(o);
}

/*
 * stats: index, id, name (null: reserved), help (TOE_STAT_TABLE, the
 * toe_stats indexes from TOE_S_BASE); parse: index, id, name (enum
 * toe_parse_result, the toe_stats indexes below TOE_S_BASE).
 */
static void dump_stats(struct out *o)
{
	char id[40];
	int i, k;

	section(o, "stats", "index id name help");
#define STAT_ROW(sid, name, help)         \
	row(o);                           \
	col_u64(o, "index", TOE_S_##sid); \
	col_str(o, "id", #sid);           \
	col_str(o, "name", name);         \
	col_str(o, "help", help);         \
	row_end(o);
	TOE_STAT_TABLE(STAT_ROW)
#undef STAT_ROW
	section_end(o);
	section(o, "parse", "index id name");
	for (i = 0; i < TOE_P__MAX; i++) {
		const char *n = toe_parse_result_names[i];

		for (k = 0; n[k] && k < (int)sizeof(id) - 1; k++)
			id[k] = toupper((unsigned char)n[k]);
		id[k] = 0;
		row(o);
		col_u64(o, "index", i);
		col_str(o, "id", id);
		col_str(o, "name", n);
		row_end(o);
	}
	section_end(o);
}

static void fr_row(struct out *o, __u32 value, const char *id, const char *name,
		   const char *kind, __u32 hooks, int pkts, int origin,
		   const char *help)
{
	char hn[16] = "";
	__u32 h;

	for (h = 0; h < TOE_FH__MAX; h++)
		if (hooks & (1U << h))
			snprintf(hn + strlen(hn), sizeof(hn) - strlen(hn),
				 "%s%s", hn[0] ? "," : "",
				 toe_fwd_hook_name(h));
	row(o);
	col_u64(o, "value", value);
	col_str(o, "id", id);
	col_str(o, "name", name);
	col_str(o, "kind", kind);
	col_str(o, "hooks", hn);
	col_bool(o, "packets", pkts);
	col_str(o, "origin",
		origin == TOE_FRO_BOTH ? "toed, datapath" :
		origin == TOE_FRO_TOED ? "toed" :
					 "datapath");
	col_str(o, "help", help);
	row_end(o);
}

/*
 * fwd_reasons: value, id, name, kind, hooks (the hooks' names, comma
 * separated), packets (a packet counter), origin (datapath, toed, or
 * "toed, datapath"), help:
 * TOE_FWD_REASON_TABLE; fwd_hooks: value, name (enum toe_fwd_hook).
 */
static void dump_fwd_reasons(struct out *o)
{
	__u32 h;

	section(o, "fwd_reasons",
		"value id name kind hooks packets origin help");
#define FR_ROW(id, name, kind, hooks, pkts, origin, help) \
	fr_row(o, TOE_FR_##id, #id, name, kind, hooks, pkts, origin, help);
	TOE_FWD_REASON_TABLE(FR_ROW)
#undef FR_ROW
	section_end(o);
	section(o, "fwd_hooks", "value name");
	for (h = 0; h < TOE_FH__MAX; h++) {
		row(o);
		col_u64(o, "value", h);
		col_str(o, "name", toe_fwd_hook_name(h));
		row_end(o);
	}
	section_end(o);
}

/* bypass_whys: value, id, name, help (TOE_BYP_WHY_TABLE, from 1). */
static void dump_bypass_whys(struct out *o)
{
	section(o, "bypass_whys", "value id name help");
#define WHY_ROW(id, name, help)                \
	row(o);                                \
	col_u64(o, "value", TOE_BYP_WHY_##id); \
	col_str(o, "id", #id);                 \
	col_str(o, "name", name);              \
	col_str(o, "help", help);              \
	row_end(o);
	TOE_BYP_WHY_TABLE(WHY_ROW)
#undef WHY_ROW
	section_end(o);
}

/*
 * reasons: value, id, name, counted (a refusal sock_ops counts in
 * toe_reasons), help (TOE_REASON_TABLE: enum toe_reason).
 */
static void dump_reasons(struct out *o)
{
	section(o, "reasons", "value id name counted help");
#define R_ROW(id, name, counted, help)   \
	row(o);                          \
	col_u64(o, "value", TOE_R_##id); \
	col_str(o, "id", #id);           \
	col_str(o, "name", name);        \
	col_bool(o, "counted", counted); \
	col_str(o, "help", help);        \
	row_end(o);
	TOE_REASON_TABLE(R_ROW)
#undef R_ROW
	section_end(o);
}

/*
 * rsn: the toe_reasons index of each family's first counter (hook 0,
 * reason or why 0), the stride between hooks, the size (TOE_RSN_*).
 */
static void dump_rsn(struct out *o)
{
	section(o, "rsn", "name index");
#define RSN_ROW(n, v)           \
	row(o);                 \
	col_str(o, "name", n);  \
	col_u64(o, "index", v); \
	row_end(o);
	RSN_ROW("fwd_flows", TOE_RSN_FWD_FLOWS(0, 0));
	RSN_ROW("fwd_packets", TOE_RSN_FWD_PKTS(0, 0));
	RSN_ROW("bypass_to_tcp", TOE_RSN_BYP(0));
	RSN_ROW("refused", TOE_RSN_REFUSED(0));
	RSN_ROW("stride", TOE_RSN_STRIDE);
	RSN_ROW("max", TOE_RSN_MAX);
#undef RSN_ROW
	section_end(o);
}

/* events: type, id, name, fields, help (TOE_EVENT_TABLE). */
static void dump_events(struct out *o)
{
	section(o, "events", "type id name fields help");
#define EV_ROW(id, name, fields, help)   \
	row(o);                          \
	col_u64(o, "type", TOE_EV_##id); \
	col_str(o, "id", #id);           \
	col_str(o, "name", name);        \
	col_str(o, "fields", fields);    \
	col_str(o, "help", help);        \
	row_end(o);
	TOE_EVENT_TABLE(EV_ROW)
#undef EV_ROW
	section_end(o);
}

/*
 * commands: name, args (toectl's usage), help, toed (toed answers it; no:
 * toectl runs it itself), stream, needs_dp (TOE_CTL_TABLE,
 * user/lib/ctl_cmds.h).
 */
static void cmd_row(struct out *o, const char *name, const char *args,
		    const char *help, bool toed, bool stream, bool needs_dp)
{
	row(o);
	col_str(o, "name", name);
	col_str(o, "args", args);
	col_str(o, "help", help);
	col_bool(o, "toed", toed);
	col_bool(o, "stream", stream);
	col_bool(o, "needs_dp", needs_dp);
	row_end(o);
}

static void dump_commands(struct out *o)
{
	section(o, "commands", "name args help toed stream needs_dp");
#define X(id, name, args, help, stream, handler, needs_dp) \
	cmd_row(o, name, args, help, true, stream, needs_dp);
#define L(id, name, args, help, main) \
	cmd_row(o, name, args, help, false, false, false);
	TOE_CTL_TABLE(X, L)
#undef L
#undef X
	section_end(o);
}

/*
 * A setting's synopsis, "track all | policy", from its names ("all
 * policy"); its default's name, the dflt-th of them.
 */
static const char *setting_synopsis(const char *kw, const char *names)
{
	static char b[256];
	size_t n = snprintf(b, sizeof(b), "%s ", kw);

	for (; *names && n < sizeof(b) - 4; names++) {
		if (*names == ' ')
			n += snprintf(b + n, sizeof(b) - n, " | ");
		else
			b[n++] = *names;
	}
	b[n] = '\0';
	return b;
}

/* Name i of a setting's names into b (NULL past the last). */
static const char *setting_name(const char *names, unsigned int i, char *b,
				size_t len)
{
	for (; i; i--) {
		if (!strchr(names, ' '))
			return NULL;
		names = strchr(names, ' ') + 1;
	}
	snprintf(b, len, "%.*s", (int)strcspn(names, " "), names);
	return b;
}

static void stmt_row(struct out *o, const char *kw, const char *synopsis,
		     const char *bounds, const char *help, const char *example,
		     bool setting, const char *dflt)
{
	row(o);
	col_str(o, "keyword", kw);
	col_str(o, "synopsis", synopsis);
	col_str(o, "bounds", bounds);
	col_str(o, "help", help);
	col_bool(o, "setting", setting);
	col_str(o, "default", dflt);
	col_str(o, "example", example);
	row_end(o);
}

/* A setting's row: its example, the name after its default (or the first). */
static void setting_row(struct out *o, const char *kw, const char *help,
			const char *names, unsigned int dflt)
{
	char d[64], n[64], ex[128];

	if (!setting_name(names, dflt, d, sizeof(d)))
		snprintf(d, sizeof(d), "?");
	if (!setting_name(names, dflt + 1, n, sizeof(n)))
		setting_name(names, 0, n, sizeof(n));
	snprintf(ex, sizeof(ex), "%s %s", kw, n);
	stmt_row(o, kw, setting_synopsis(kw, names), "", help, ex, true, d);
}

/*
 * statements: keyword, synopsis (toed.8's lines), bounds (config_limits'
 * IDs), help, setting (an S row: "keyword NAME"), default (a setting's;
 * null), example (a valid line, after the examples above it)
 * (TOE_CFG_STATEMENTS, user/toed/config_stmts.h); config_limits:
 * id, lo, hi, what (TOE_CFG_LIMITS, config_limits.h).
 */
static void dump_config(struct out *o)
{
	int i;

	section(o, "statements",
		"keyword synopsis bounds help setting default example");
#define X(id, kw, synopsis, bounds, help, example, parse, show) \
	stmt_row(o, kw, synopsis, bounds, help, example, false, NULL);
#define S(id, kw, help, field, names, dflt, hook) \
	setting_row(o, kw, help, names, dflt);
	TOE_CFG_STATEMENTS(X, S)
#undef S
#undef X
	section_end(o);
	section(o, "config_limits", "id lo hi what");
	for (i = 0; i < TOE_LIM__N; i++) {
		row(o);
		col_str(o, "id", toe_cfg_limits[i].id);
		col_u64(o, "lo", toe_cfg_limits[i].lo);
		col_u64(o, "hi", toe_cfg_limits[i].hi);
		col_str(o, "what", toe_cfg_limits[i].what);
		row_end(o);
	}
	section_end(o);
}

/*
 * --man FILE: a man page with its lists from the tables.  A line
 * ".\\" toe-tables: TEXT" becomes TEXT, each tag in it replaced:
 *   @fwd_reasons KIND@  the names of the forward reasons of that kind as .RB
 *                       alternates them ("ruleset \", \" lease ...": bold
 *                       names, roman commas);
 *   @statements@        every statement's synopsis, its lines as they are
 *                       (for a .nf block; '-' as roff's \-);
 *   @statement_help@    every statement as a .TP entry: its keyword, bold,
 *                       then its help.
 * Every other line is copied.  make installs the man pages so made
 * (build/man/).
 */
#define MAN_MARK ".\\\" toe-tables: "

/* The metric families' names by F_ID (F_NONE: null). */
static const char *const fam[F__MAX + 1] = {
#define FAM_NAME(id, name, type, help) [F_##id] = name,
	TOE_METRIC_FAMILIES(FAM_NAME)
#undef FAM_NAME
};

/*
 * metric_families: id, name, type, help (TOE_METRIC_FAMILIES, toed's
 * /metrics); counters: section (daemon, control), name, family (null: not
 * exported by this row), labels (toectl stats' rows, user/toed/fields.h).
 */
static void dump_metrics(struct out *o)
{
	section(o, "metric_families", "id name type help");
#define FAM_ROW(id, name, type, help) \
	row(o);                       \
	col_str(o, "id", #id);        \
	col_str(o, "name", name);     \
	col_str(o, "type", type);     \
	col_str(o, "help", help);     \
	row_end(o);
	TOE_METRIC_FAMILIES(FAM_ROW)
#undef FAM_ROW
	section_end(o);
	section(o, "counters", "section name family labels");
#define CTR_ROW(sect, name, f, labels)    \
	row(o);                           \
	col_str(o, "section", sect);      \
	col_str(o, "name", name);         \
	col_str(o, "family", fam[F_##f]); \
	col_str(o, "labels", labels);     \
	row_end(o);
#define DAEMON_ROW(name, f, labels, value) CTR_ROW("daemon", name, f, labels)
#define CONTROL_ROW(name, f, labels, value) CTR_ROW("control", name, f, labels)
	TOE_DAEMON_COUNTERS(DAEMON_ROW)
	TOE_CONTROL_COUNTERS(CONTROL_ROW)
#undef DAEMON_ROW
#undef CONTROL_ROW
#undef CTR_ROW
	section_end(o);
}

/*
 * views: view, key (null: the text's alone), type (str, u64, i64, f64,
 * bool, fn, text), unit, head, width, left, text (str, words, num, age,
 * ago, ratio, endpoint, sum, either, dash), from, family, labels (the table views' fields,
 * user/toed/fields.h: JSON key and type, the text's column, the metric
 * family; head and text null where the text does not show it as a
 * column); view_lines: view, label, when, template (a line view's text,
 * toectl status'); selftests/tools/textjson.py checks the text by them.
 */
static void view_row(struct out *o, const char *view, const char *key,
		     const char *type, const char *unit, const char *head,
		     int width, const char *text, const char *from, int f,
		     const char *labels)
{
	char t[8], x[12];
	int i;

	for (i = 0; type[i] && i < (int)sizeof(t) - 1; i++)
		t[i] = tolower((unsigned char)type[i]);
	t[i] = 0;
	for (i = 0; text[i] && i < (int)sizeof(x) - 1; i++)
		x[i] = tolower((unsigned char)text[i]);
	x[i] = 0;
	row(o);
	col_str(o, "view", view);
	col_str(o, "key", key);
	col_str(o, "type", t);
	col_str(o, "unit", unit);
	col_str(o, "head", head);
	col_u64(o, "width", width < 0 ? -width : width);
	col_bool(o, "left", width < 0);
	col_str(o, "text", strcmp(x, "none") ? x : NULL);
	col_str(o, "from", from);
	col_str(o, "family", fam[f]);
	col_str(o, "labels", labels);
	row_end(o);
}

static void dump_views(struct out *o)
{
	section(o, "views",
		"view key type unit head width left text from family labels");
#define NEIGH_ROW(id, key, type, unit, head, width, text, from, f, labels) \
	view_row(o, "neigh", key, #type, unit, head, width, #text, from,   \
		 F_##f, labels);
	TOE_NEIGH_FIELDS(NEIGH_ROW)
#undef NEIGH_ROW
#define DEVICE_ROW(id, key, type, unit, head, width, text, from, f, labels) \
	view_row(o, "devices", key, #type, unit, head, width, #text, from,  \
		 F_##f, labels);
	TOE_DEVICE_FIELDS(DEVICE_ROW)
#undef DEVICE_ROW
#define FLOW_ROW(id, key, type, unit, head, width, text, from, f, labels) \
	view_row(o, "flows", key, #type, unit, head, width, #text, from,  \
		 F_##f, labels);
	TOE_FLOW_FIELDS(FLOW_ROW)
#undef FLOW_ROW
#define FWD_ROW(id, key, type, unit, head, width, text, from, f, labels)  \
	view_row(o, "flows_routed", key, #type, unit, head, width, #text, \
		 from, F_##f, labels);
	TOE_FWD_FIELDS(FWD_ROW)
#undef FWD_ROW
#define STATUS_ROW(id, key, type, unit)                                        \
	view_row(o, "status", key, #type, unit, NULL, 0, "none", NULL, F_NONE, \
		 NULL);
	TOE_STATUS_FIELDS(STATUS_ROW)
#undef STATUS_ROW
	section_end(o);
	section(o, "view_lines", "view label when template");
#define LINE_ROW(label, when, template)   \
	row(o);                           \
	col_str(o, "view", "status");     \
	col_str(o, "label", label);       \
	col_str(o, "when", when);         \
	col_str(o, "template", template); \
	row_end(o);
	TOE_STATUS_LINES(LINE_ROW)
#undef LINE_ROW
	section_end(o);
}

static int man_list(const char *kind, size_t klen)
{
	bool first = true;
	__u32 r;

	for (r = 1; r < TOE_FR__MAX; r++) {
		const char *k = toe_fwd_reason_kind(r);

		if (strlen(k) != klen || strncmp(k, kind, klen))
			continue;
		printf("%s%s", first ? "" : " \", \" ", toe_fwd_reason_name(r));
		first = false;
	}
	return first ? -1 : 0; /* no such kind */
}

/* s with '-' as roff's "\-" and a line's leading '.' or '\'' kept plain. */
static void man_text(const char *s)
{
	for (; *s; s++) {
		if (*s == '-')
			fputs("\\-", stdout);
		else if (*s == '\\')
			fputs("\\e", stdout);
		else
			putchar(*s);
	}
}

static void man_synopsis(const char *synopsis)
{
	man_text(synopsis);
	putchar('\n');
}

static void man_help(const char *kw, const char *help)
{
	printf(".TP\n.B %s\n", kw);
	man_text(help);
	putchar('\n');
}

/* @statements@ and @statement_help@, from TOE_CFG_STATEMENTS. */
static void man_statements(bool help)
{
#define X(id, kw, synopsis, bounds, h, example, parse, show) \
	help ? man_help(kw, h) : man_synopsis(synopsis);
#define S(id, kw, h, field, names, dflt, hook) \
	help ? man_help(kw, h) : man_synopsis(setting_synopsis(kw, names));
	TOE_CFG_STATEMENTS(X, S)
#undef S
#undef X
}

static int man_line(const char *line, const char *path, int n)
{
	static const char tag[] = "@fwd_reasons ", st[] = "@statements@",
			  sh[] = "@statement_help@";
	const char *p = line + strlen(MAN_MARK), *at, *end;

	while ((at = strchr(p, '@'))) {
		bool is_st = !strncmp(at, st, strlen(st)),
		     is_sh = !strncmp(at, sh, strlen(sh));

		printf("%.*s", (int)(at - p), p);
		if (is_st || is_sh) {
			man_statements(is_sh);
			p = at + strlen(is_st ? st : sh);
			/* (the list ends its own lines) */
			if (*p == '\n')
				p++;
			continue;
		}
		end = strncmp(at, tag, strlen(tag)) ?
			      NULL :
			      strchr(at + strlen(tag), '@');
		if (!end ||
		    man_list(at + strlen(tag), end - at - strlen(tag))) {
			fprintf(stderr, "toe-tables: %s:%d: not a list: %s",
				path, n, at);
			return -1;
		}
		p = end + 1;
	}
	fputs(p, stdout);
	return 0;
}

static int man_page(const char *path)
{
	char line[4096];
	FILE *f = fopen(path, "r");
	int n = 0, ret = 0;

	if (!f) {
		fprintf(stderr, "toe-tables: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (!ret && fgets(line, sizeof(line), f)) {
		n++;
		if (strncmp(line, MAN_MARK, strlen(MAN_MARK)))
			fputs(line, stdout);
		else if (man_line(line, path, n))
			ret = 1;
	}
	fclose(f);
	return ret || ferror(stdout) ? 1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: toe-tables [-j]\n"
		   "       toe-tables --man FILE\n"
		   "Every vocabulary table of include/, user/lib/ctl_cmds.h "
		   "and the configuration\n"
		   "language: the pinned maps, toe_stats' counters and parse "
		   "results, the forward\n"
		   "path's reasons with their columns, the bypass's whys, the "
		   "decision reasons,\n"
		   "toe_reasons' indexes, the event types, the control "
		   "commands and the\n"
		   "configuration's statements and limits.\n"
		   "  -j, --json  one JSON object, a key a table\n"
		   "  --man FILE  the man page FILE with its lists made from "
		   "the tables\n"
		   "  -h, --help  this text\n");
}

int main(int argc, char **argv)
{
	struct out o = {};

	if (argc == 3 && !strcmp(argv[1], "--man"))
		return man_page(argv[2]);
	if (argc > 2) {
		fprintf(stderr, "toe-tables: unexpected argument '%s'\n",
			argv[2]);
		usage(stderr);
		return 2;
	}
	if (argc == 2) {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			usage(stdout);
			return 0;
		}
		if (strcmp(argv[1], "-j") && strcmp(argv[1], "--json")) {
			fprintf(stderr, "toe-tables: unknown option '%s'\n",
				argv[1]);
			usage(stderr);
			return 2;
		}
		o.json = true;
	}
	if (o.json) {
		tj_start(&o.j, stdout);
		tj_obj(&o.j);
	}
	dump_maps(&o);
	dump_stats(&o);
	dump_fwd_reasons(&o);
	dump_bypass_whys(&o);
	dump_reasons(&o);
	dump_rsn(&o);
	dump_events(&o);
	dump_commands(&o);
	dump_config(&o);
	dump_metrics(&o);
	dump_views(&o);
	if (o.json) {
		tj_obj_end(&o.j);
		tj_end(&o.j);
	}
	return ferror(stdout) ? 1 : 0;
}
