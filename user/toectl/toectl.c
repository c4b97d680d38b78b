// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toectl: ask toed.  A thin client of toed's control socket: it sends one
 * request line and copies the answer to stdout (or the error to stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include "lib/ctl_cmds.h"
#include "lib/toe_ctl.h"
#include "lib/err.h"
#include "lib/parse_rc.h"
#include "dump.h"

/*
 * The commands: toed's, as its control socket knows them (toectl checks
 * the name, passes the arguments on, and copies the answer), and toectl's
 * own (main runs it: dump reads the maps, not toed).
 */
struct ctl_cmd {
	const char *name;
	const char *args; /* in the usage text, "" for none */
	const char *help; /* its lines in the usage text */
	bool stream; /* monitor: answers until interrupted, line by line */
	int (*main)(int argc, char **argv, bool json); /* toectl's own */
};

/* The name, args, help, stream and main columns of lib/ctl_cmds.h. */
static const struct ctl_cmd cmds[] = {
#define X(id, name, args, help, stream, handler, needs_dp) \
	{ name, args, help, stream, NULL },
#define L(id, name, args, help, main) { name, args, help, false, main },
	TOE_CTL_TABLE(X, L)
#undef L
#undef X
		{ NULL }
};

static void usage(FILE *f)
{
	const struct ctl_cmd *c;
	const char *line, *nl;
	char name[128];

	fprintf(f, "Usage: toectl [-j] [--run-dir DIR] COMMAND [ARGS]\n"
		   "\n"
		   "Query and control the opentoe daemon (toed).\n"
		   "\n"
		   "Commands:\n");
	for (c = cmds; c->name; c++) {
		snprintf(name, sizeof(name), "%s%s", c->name, c->args);
		if (strlen(name) >
		    25) { /* a long synopsis: a line of its own */
			fprintf(f, "  %s\n", name);
			name[0] = '\0';
		}
		for (line = c->help; *line; line = nl + 1) {
			nl = strchr(line, '\n');
			fprintf(f, "  %-25s  %.*s\n",
				line == c->help ? name : "", (int)(nl - line),
				line);
		}
	}
	fprintf(f,
		"\n"
		"Options:\n"
		"  -j, --json                 JSON: one document (monitor: one per line)\n"
		"  -r, --run-dir DIR          toed's run folder (default " TOE_RUN_DIR
		")\n"
		"  -V, --version              print the version and exit\n"
		"  -h, --help                 this text\n"
		"\n"
		"toed's socket is root's only (mode 0600, and toed checks the caller's uid).\n");
}

/* toectl's own options, before the command. */
static enum toe_parse_rc parse_opts(int argc, char **argv, bool *json,
				    const char **run_dir)
{
	static const struct option lopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "run-dir", required_argument, NULL, 'r' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "+jr:Vh", lopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			*json = true;
			break;
		case 'r':
			*run_dir = optarg;
			break;
		default: /* -V, -h, or a wrong one */
			return toe_parse_common(c, usage);
		}
	}
	if (optind == argc) {
		usage(stderr);
		return TOE_PARSE_BAD;
	}
	return TOE_PARSE_OK;
}

/* The command named name; NULL if none, *rc saying how that ended. */
static const struct ctl_cmd *find_cmd(const char *name, enum toe_parse_rc *rc)
{
	const struct ctl_cmd *c;

	for (c = cmds; c->name; c++)
		if (!strcmp(name, c->name))
			return c;
	if (!strcmp(name, "help")) {
		usage(stdout);
		*rc = TOE_PARSE_DONE;
		return NULL;
	}
	toe_err("unknown command '%s' (toectl --help lists them)", name);
	*rc = TOE_PARSE_BAD;
	return NULL;
}

/*
 * toed reads one request line of at most REQ_LINE bytes, its newline
 * included; a longer one is refused here, not cut.
 */
#define REQ_LINE TOE_CTL_REQ_MAX
#define ARG_MAX_LEN 64 /* toed names a bad argument by its first 64 bytes */

/*
 * Append " word" to the request req[0..*off) of size len (REQ_LINE): the
 * line is these bytes, the first blank dropped and a newline added, so
 * they may fill req.  0, or -1 after a message.
 */
static int req_add(char *req, size_t len, size_t *off, const char *word)
{
	size_t n = strlen(word);

	if (*off + 1 + n > len) {
		toe_err("request too long (over toed's %zu-byte request line): fewer arguments",
			len);
		return -1;
	}
	req[(*off)++] = ' ';
	memcpy(req + *off, word, n);
	*off += n;
	return 0;
}

/*
 * A port of "flows port N": decimal digits only, 0 to 65535 (no sign, no
 * blank, no hex, nothing that would wrap).  0, or -1 after a message.
 */
static int check_port(const char *arg)
{
	unsigned long v = 0;
	const char *p;

	for (p = arg; *p >= '0' && *p <= '9' && v <= 65535; p++)
		v = v * 10 + (unsigned long)(*p - '0');
	if (p == arg || *p || v > 65535) {
		toe_err("bad port '%.64s' (expected 0-65535)", arg);
		return -1;
	}
	return 0;
}

/* One argument: no blank (toed splits on them), not empty, not too long. */
static int check_arg(const char *arg)
{
	if (!arg[0] || strpbrk(arg, " \t\n") || strlen(arg) > ARG_MAX_LEN) {
		toe_err("bad argument '%.64s'", arg);
		return -1;
	}
	return 0;
}

static bool is_json_opt(const char *arg)
{
	return !strcmp(arg, "-j") || !strcmp(arg, "--json");
}

/*
 * The request line: the command, -j (once, wherever it was given), and
 * its arguments argv[0..argc), each checked (the value after "port" is a
 * port); its length, or 0 after a message.
 */
static size_t build_request(char *req, size_t len, const char *name, bool json,
			    int argc, char **argv)
{
	const char *prev = NULL;
	size_t off = 0;
	int i;

	for (i = 0; i < argc; i++)
		json = json || is_json_opt(argv[i]);
	if (req_add(req, len, &off, name) ||
	    (json && req_add(req, len, &off, "-j")))
		return 0;
	for (i = 0; i < argc; i++) {
		if (is_json_opt(argv[i]))
			continue;
		if ((prev && !strcmp(prev, "port") && check_port(argv[i])) ||
		    check_arg(argv[i]) || req_add(req, len, &off, argv[i]))
			return 0;
		/* a filter's name, or the value after one */
		prev = prev ? NULL : argv[i];
	}
	memmove(req, req + 1, off - 1); /* the command's leading blank */
	req[off - 1] = '\n';
	return off;
}

/* A socket connected to toed's, or -1 after a message. */
static int connect_toed(const char *run_dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/" TOE_CTL_SOCK,
		     run_dir) >= (int)sizeof(sa.sun_path)) {
		toe_err("run folder %s: path too long", run_dir);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return fd;
	if (errno == ENOENT)
		toe_err("toed is not running (no socket at %s)", sa.sun_path);
	else if (errno == ECONNREFUSED)
		toe_err("toed is not running (nothing listens on %s)",
			sa.sun_path);
	else if (errno == EACCES)
		toe_err("%s: permission denied (toectl must be run as root)",
			sa.sun_path);
	else
		toe_err("cannot reach toed at %s: %s", sa.sun_path,
			strerror(errno));
	return -1;
}

/*
 * The answer's first line says ok or error: buf[0..n) holds it.
 * TOE_PARSE_OK (ok: *skip bytes of it are the line), or TOE_PARSE_BAD (said).
 */
static enum toe_parse_rc answer_status(const char *buf, int n, int *skip)
{
	const char *nl = memchr(buf, '\n', n);

	if (!nl) {
		toe_err("malformed answer from toed");
		return TOE_PARSE_BAD;
	}
	if (nl - buf == 2 && !strncmp(buf, "ok", 2)) {
		*skip = nl + 1 - buf;
		return TOE_PARSE_OK;
	}
	if (!strncmp(buf, "error ", 6)) {
		fprintf(stderr, "toectl: %.*s\n", (int)(nl - buf - 6), buf + 6);
		return TOE_PARSE_BAD;
	}
	toe_err("malformed answer from toed");
	return TOE_PARSE_BAD;
}

/*
 * How long toectl waits for toed between two reads of an answer (a
 * stream's, such as monitor's, only for its first line): a toed that
 * accepted nothing or hangs is said so, instead of toectl waiting for good.
 */
#define ANSWER_WAIT_S 10

static void answer_wait(int fd, int secs)
{
	struct timeval tv = { .tv_sec = secs };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* Copy the rest of the answer to stdout; the exit status. */
static int copy_answer(int fd, bool stream)
{
	char buf[65536];
	bool first = true;
	int n, skip;

	answer_wait(fd, ANSWER_WAIT_S);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		skip = 0;
		if (first) {
			if (answer_status(buf, n, &skip) != TOE_PARSE_OK)
				return 1;
			first = false;
			if (stream)
				answer_wait(fd,
					    0); /* events come when they come */
		}
		n -= skip;
		if (n && fwrite(buf + skip, 1, n, stdout) != (size_t)n)
			return 1;
		if (stream)
			fflush(stdout);
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		toe_err("toed did not answer within %d s: it is stuck or overloaded (see its log; toectl status again)",
			ANSWER_WAIT_S);
		return 1;
	}
	if (n < 0) {
		toe_err("reading from toed: %s", strerror(errno));
		return 1;
	}
	if (first) {
		toe_err("toed closed the connection without an answer");
		return 1;
	}
	return fflush(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *run_dir = TOE_RUN_DIR;
	const struct ctl_cmd *cmd;
	bool json = false;
	char req[REQ_LINE];
	size_t len;
	enum toe_parse_rc rc;
	int fd;

	toe_prog = "toectl";
	rc = parse_opts(argc, argv, &json, &run_dir);
	if (rc != TOE_PARSE_OK)
		return toe_parse_exit(rc);
	cmd = find_cmd(argv[optind], &rc);
	if (!cmd)
		return toe_parse_exit(rc);
	if (cmd->main) /* toectl's own: dump reads the maps, not toed */
		return cmd->main(argc - optind, argv + optind, json);
	len = build_request(req, sizeof(req), cmd->name, json,
			    argc - optind - 1, argv + optind + 1);
	if (!len)
		return 1;
	fd = connect_toed(run_dir);
	if (fd < 0)
		return 1;
	/* toed may answer (a refusal) and close before reading: read anyway. */
	if (send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len &&
	    errno != EPIPE && errno != ECONNRESET) {
		toe_err("cannot send to toed: %s", strerror(errno));
		return 1;
	}
	if (cmd->stream)
		setvbuf(stdout, NULL, _IOLBF, 0);
	return copy_answer(fd, cmd->stream);
}
