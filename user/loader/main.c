// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader: load, attach, pin, inspect and unload the opentoe datapath.
 * This file owns the command line: the table of subcommands (cmds[], after
 * xdp-tools' xdp-loader), the options every subcommand has, the parser
 * that gives each subcommand its own getopt_long table and --help, and
 * main.
 *
 * Everything opentoe puts in the kernel is pinned under one bpffs folder
 * (default /sys/fs/bpf/opentoe):
 *   <map name>            every map (toe_flows, toe_devs, ...)
 *   link_sockops          the cgroup sock_ops link
 *   link_skmsg            the sk_msg program's link to the toe_bypass
 *                         sockhash (local bypass)
 *   link_xdp_n<NS>_if<N>  the XDP link on interface index N of the
 *                         network namespace whose inode is NS
 *   link_tc_n<NS>_if<N>   the tcx ingress link there instead (--hook tc)
 *   tc_ingress_n<NS>_if<N>, tc_egress_n<NS>_if<N>
 *                         without tcx (before 6.6): the program of opentoe's
 *                         clsact filter there (tcclassic.c)
 *   chain_n<NS>_if<N>_<mode>  an XDP program that was on that interface
 *                         before opentoe; it now runs after opentoe (tail
 *                         call) and is put back on unload
 *   xdpd_n<NS>_if<N>      with freplace: toe_xdp in the interface's libxdp
 *                         dispatcher instead of a link (xdpdisp.c)
 * Every interface XDP is attached to is also an egress of the forward path:
 * an entry in toe_devmap (the redirect target) and toe_ifaces (its MAC and
 * network namespace), written at load and removed at unload.
 * So the programs keep running when no process holds them, a new loader
 * replaces them in place (bpf_link update, maps kept), and unload knows
 * exactly what is opentoe's.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "opentoe_common.h"
#include "loader.h"
#include "toe_version.h"
#include "lib/err.h"
#include "lib/parse_rc.h"

static int set_pin_dir(struct opts *o, const char *arg)
{
	o->pin_dir = arg;
	return 0;
}

/* clang-format off */
/* The options every subcommand has. */
static const struct loader_opt common_options[] = {
	{ .name = "pin-dir", .has_arg = required_argument, .key = 'p',
	  .set = set_pin_dir, .help =
"  -p, --pin-dir DIR      bpffs folder (default " TOE_PIN_DIR_DEFAULT ")\n" },
	{ .name = "help", .has_arg = no_argument, .key = 'h', .help =
"  -h, --help             this text\n" },
	{ NULL }
};

static const struct loader_cmd cmds[] = {
	{ "load", cmd_load, load_options,
	  "[--dev IFACE]... [--hook auto|xdp|tc] [--xdp-veth-tx] [--xdp-mode native|skb]\n"
"                       [--cgroup PATH] [--pin-dir DIR] [--flows N]\n"
"                       [--capture-ring BYTES] [--wait SECONDS]\n",
	  "load the eBPF object, pin every map and link under the pin folder,\n"
	  "attach sock_ops to the cgroup and XDP to each --dev.  On a loaded\n"
	  "system the programs are replaced in place; maps keep their contents.\n"
	  "An XDP program already on an interface is chained after opentoe's\n"
	  "and put back by unload.  Any failure undoes everything it did.\n"
	  "One load or unload at a time per pin folder: the others wait.\n" },
	{ "status", cmd_status, status_options,
	  "[-j] [--pin-dir DIR]\n",
	  "programs (id, type, attach point, XDP mode) and maps (type, size,\n"
	  "entries in use).  -j: JSON.\n" },
	{ "features", cmd_features, status_options,
	  "[-j] [--pin-dir DIR]\n",
	  "what this kernel offers of what opentoe uses (program, map and\n"
	  "attach types, helpers), each probed, and what opentoe does\n"
	  "without it: refuses to load, or falls back (and to what).\n"
	  "-j: JSON.\n" },
	{ "unload", cmd_unload, unload_options,
	  "[--pin-dir DIR] [--drain-timeout S] [--force] [--wait SECONDS]\n",
	  "detach and unpin everything opentoe attached and pinned.  Bypassed\n"
	  "connections first go over TCP; their readers get up to\n"
	  "--drain-timeout seconds to read what was redirected to them.\n" },
	{ NULL }
};
/* clang-format on */

#define MAX_OPTS 16 /* options of one subcommand, common ones included */

/* Each line of text, the first after first, the others after indent. */
static void print_lines(FILE *f, const char *first, const char *indent,
			const char *text)
{
	const char *nl;

	for (; *text; text = nl + 1, first = indent) {
		nl = strchrnul(text, '\n');
		fprintf(f, "%s%.*s\n", first, (int)(nl - text), text);
		if (!*nl)
			break;
	}
}

/* toe-loader --help: every subcommand, what it does. */
static void usage(FILE *f)
{
	const struct loader_cmd *c;

	for (c = cmds; c->name; c++)
		fprintf(f, "%s toe-loader %s %s",
			c == cmds ? "Usage:" : "      ", c->name, c->synopsis);
	fprintf(f, "       toe-loader --version\n");
	fprintf(f,
		"\nLoad the opentoe datapath, attach it, pin it, inspect it, remove it.\n"
		"\nCommands:\n");
	for (c = cmds; c->name; c++) {
		char first[16];

		snprintf(first, sizeof(first), "  %-8s ", c->name);
		print_lines(f, first, "           ", c->help);
	}
	fprintf(f,
		"\n'toe-loader COMMAND --help' lists the options of COMMAND.\n");
}

/* toe-loader COMMAND --help: its synopsis, what it does, its options. */
static void cmd_usage(const struct loader_cmd *cmd, FILE *f)
{
	const struct loader_opt *lo;

	fprintf(f, "Usage: toe-loader %s %s\n%c", cmd->name, cmd->synopsis,
		toupper(cmd->help[0])); /* a sentence here */
	print_lines(f, "", "", cmd->help + 1);
	fprintf(f, "\nOptions:\n");
	for (lo = cmd->options; lo->name; lo++)
		fputs(lo->help, f);
	for (lo = common_options; lo->name; lo++)
		fputs(lo->help, f);
}

/* The i-th option of cmd: its own, then the common ones; NULL past them. */
static const struct loader_opt *opt_at(const struct loader_cmd *cmd, int i)
{
	const struct loader_opt *lo = cmd->options;

	for (; lo->name && i; lo++, i--)
		;
	if (lo->name)
		return lo;
	for (lo = common_options; lo->name && i; lo++, i--)
		;
	return lo->name ? lo : NULL;
}

/* cmd's getopt_long tables: long options, and the short option letters. */
static void getopt_tables(const struct loader_cmd *cmd, struct option *lopts,
			  char *sopts)
{
	const struct loader_opt *lo;
	int i;

	for (i = 0; (lo = opt_at(cmd, i)); i++) {
		lopts[i] =
			(struct option){ lo->name, lo->has_arg, NULL, lo->key };
		if (lo->key > 255)
			continue;
		*sopts++ = lo->key;
		if (lo->has_arg == required_argument)
			*sopts++ = ':';
	}
	lopts[i] = (struct option){};
	*sopts = '\0';
}

/* Whether cmd has the option of key (a letter, or a long-only value). */
static bool has_key(const struct loader_cmd *cmd, int key)
{
	const struct loader_opt *lo;
	int i;

	for (i = 0; (lo = opt_at(cmd, i)); i++)
		if (lo->key == key)
			return true;
	return false;
}

/*
 * The option of another subcommand that a refused option names, and in
 * *owner that subcommand; or NULL.  key: the letter of a short option, 0
 * for a long one, which arg holds ("--name", "--name=value", or a prefix
 * of exactly one name, as getopt_long takes it).
 */
static const struct loader_opt *foreign_opt(const struct loader_cmd *cmd,
					    int key, const char *arg,
					    const struct loader_cmd **owner)
{
	const struct loader_opt *lo, *found = NULL;
	const struct loader_cmd *c;
	size_t len = 0;
	int i, n = 0;

	if (!key) {
		if (strncmp(arg, "--", 2))
			return NULL;
		arg += 2;
		len = strcspn(arg, "=");
	}
	for (c = cmds; c->name; c++) {
		for (i = 0; (lo = opt_at(c, i)); i++) {
			if (key ? lo->key != key : strncmp(lo->name, arg, len))
				continue;
			if (key || !lo->name[len]) { /* exact: this one */
				found = lo;
				*owner = c;
				n = 1;
				goto out;
			}
			if (lo != found) { /* common options come again */
				found = lo;
				*owner = c;
				n++;
			}
		}
	}
out:
	return n == 1 && !has_key(cmd, found->key) ? found : NULL;
}

/* After getopt's own message: which subcommand has the option, if one does. */
static void refuse_opt(const struct loader_cmd *cmd, char **argv)
{
	const struct loader_cmd *owner = NULL;
	const struct loader_opt *lo;

	if (optopt && has_key(cmd, optopt))
		return; /* its own option, without its argument */
	lo = foreign_opt(cmd, optopt, argv[optind - 1], &owner);
	if (!lo)
		return;
	if (optopt)
		toe_err("-%c is an option of 'toe-loader %s', not of '%s'",
			optopt, owner->name, cmd->name);
	else
		toe_err("--%s is an option of 'toe-loader %s', not of '%s'",
			lo->name, owner->name, cmd->name);
}

/* The options after the subcommand's name (argv[1]), into o. */
static enum toe_parse_rc parse_opts(const struct loader_cmd *cmd, int argc,
				    char **argv, struct opts *o)
{
	struct option lopts[MAX_OPTS + 1];
	char sopts[2 * MAX_OPTS + 1];
	const struct loader_opt *lo;
	int c, i;

	getopt_tables(cmd, lopts, sopts);
	optind = 2;
	while ((c = getopt_long(argc, argv, sopts, lopts, NULL)) != -1) {
		for (i = 0; (lo = opt_at(cmd, i)) && lo->key != c; i++)
			;
		if (!lo) {
			refuse_opt(cmd, argv);
			cmd_usage(cmd, stderr);
			return TOE_PARSE_BAD;
		}
		if (lo->flag) {
			*(bool *)((char *)o + lo->flag) = true;
		} else if (!lo->set) {
			cmd_usage(cmd, stdout);
			return TOE_PARSE_DONE;
		} else if (lo->set(o, optarg)) {
			return TOE_PARSE_BAD;
		}
	}
	if (optind < argc) {
		toe_err("unexpected argument '%s'", argv[optind]);
		return TOE_PARSE_BAD;
	}
	return TOE_PARSE_OK;
}

static const struct loader_cmd *find_cmd(const char *name)
{
	const struct loader_cmd *c;

	for (c = cmds; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* "unknown command 'NAME' (load, status, unload; --help)" */
static void unknown_cmd(const char *name)
{
	char list[64] = "";
	const struct loader_cmd *c;
	size_t off = 0;

	for (c = cmds; c->name && off < sizeof(list); c++)
		off += snprintf(list + off, sizeof(list) - off, "%s%s",
				c == cmds ? "" : ", ", c->name);
	toe_err("unknown command '%s' (%s; --help)", name, list);
}

int main(int argc, char **argv)
{
	struct opts o = { .pin_dir = TOE_PIN_DIR_DEFAULT,
			  .drain_timeout = 10,
			  .wait_ms = 10000 };
	const struct loader_cmd *cmd;
	enum toe_parse_rc rc;

	toe_prog = "toe-loader";
	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("toe-loader %s\n", OPENTOE_VERSION);
		return 0;
	}
	cmd = find_cmd(argv[1]);
	if (!cmd) {
		unknown_cmd(argv[1]);
		return 1;
	}
	rc = parse_opts(cmd, argc, argv, &o);
	if (rc != TOE_PARSE_OK)
		return toe_parse_exit(rc);
	return cmd->func(&o);
}
