// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* toed's control requests, parsed (ctl_parse.h): no I/O, no state. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "ctl_parse.h"

static const struct {
	const char *name;
	bool args; /* takes arguments; the others refuse any */
} cmds[CTL__NCMDS] = {
#define X(id, name, args, help, stream, handler, needs_dp) \
	[CTL_##id] = { name, TOE_CTL_TAKES_ARGS(args) },
	TOE_CTL_CMDS(X)
#undef X
};

const char *ctl_cmd_name(enum ctl_cmd_id id)
{
	return (unsigned int)id < CTL__NCMDS ? cmds[id].name : "?";
}

static enum ctl_parse_res perr(char *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static enum ctl_parse_res perr(char *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, CTL_ERR_MAX, fmt, ap);
	va_end(ap);
	return CTL_PARSE_ERR;
}

/* What line_end says besides a length. */
enum {
	LINE_MORE = -1, /* no newline yet */
	LINE_BAD =
		-2, /* a byte that is not text, or too long: err says which */
};

/*
 * The first line's length (its newline's offset), or LINE_MORE: no newline
 * yet, or LINE_BAD: a byte that is not text, or no newline within
 * TOE_CTL_REQ_MAX (err).
 */
static long line_end(const char *buf, size_t len, char *err)
{
	size_t i;

	for (i = 0; i < len && i < TOE_CTL_REQ_MAX; i++) {
		unsigned char c = buf[i];

		if (c == '\n')
			return (long)i;
		if (c == 0) {
			perr(err, "request has a NUL byte at offset %zu", i);
			return LINE_BAD;
		}
		if (c < 0x20 || c >= 0x7f) {
			perr(err,
			     "request has a non-text byte 0x%02x at offset %zu",
			     c, i);
			return LINE_BAD;
		}
	}
	if (i == TOE_CTL_REQ_MAX) {
		perr(err,
		     "request too long (more than %d bytes without a newline)",
		     TOE_CTL_REQ_MAX);
		return LINE_BAD;
	}
	return LINE_MORE;
}

/* A port: 1 to 5 decimal digits, at most 65535; -1 if s is not one. */
static int parse_port(const char *s)
{
	size_t n = strlen(s), i;
	int v = 0;

	if (n < 1 || n > 5)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v <= 65535 ? v : -1;
}

/*
 * A namespace of "flows netns X": an inode (1 to 20 digits, not 0, no
 * wrap) or a name `ip netns` could have made (letters, digits, '.', '_',
 * '-'; not "." or ".."; at most 64 bytes).  toed looks the name up.
 */
static bool good_netns(const char *s)
{
	size_t n = strlen(s), d = strspn(s, "0123456789");
	unsigned long long v = 0;
	size_t i;

	if (n < 1 || n > 64 || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	if (d < n)
		return strspn(s,
			      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			      "0123456789._-") == n;
	for (i = 0; i < n; i++) {
		unsigned int c = s[i] - '0';

		if (v > (~0ULL - c) / 10)
			return false;
		v = v * 10 + c;
	}
	return v != 0;
}

/* flows [dev NAME] [port N] [netns NAME|INODE]: the filters, after the command. */
static enum ctl_parse_res parse_flows(char **w, int nw, struct ctl_request *req,
				      char *err)
{
	int i;

	for (i = 0; i < nw; i += 2) {
		if (i + 1 >= nw)
			return perr(err, "'%.64s' needs a value", w[i]);
		if (!strcmp(w[i], "dev")) {
			req->dev = w[i + 1];
		} else if (!strcmp(w[i], "port")) {
			req->port = parse_port(w[i + 1]);
			if (req->port < 0)
				return perr(
					err,
					"bad port '%.64s' (expected 0-65535)",
					w[i + 1]);
		} else if (!strcmp(w[i], "netns")) {
			req->netns = w[i + 1];
			if (!good_netns(req->netns))
				return perr(
					err,
					"bad netns '%.64s' (expected a namespace inode or a name in /run/netns)",
					w[i + 1]);
		} else {
			return perr(
				err,
				"unknown filter '%.64s' (expected dev NAME, port N or netns NAME|INODE)",
				w[i]);
		}
	}
	return CTL_PARSE_OK;
}

/* "unknown command 'x' (expected a, b or c)" */
static enum ctl_parse_res unknown_command(const char *name, char *err)
{
	size_t off;
	int i;

	off = snprintf(err, CTL_ERR_MAX, "unknown command '%.64s' (expected ",
		       name);
	for (i = 0; i < CTL__NCMDS && off < CTL_ERR_MAX; i++)
		off += snprintf(err + off, CTL_ERR_MAX - off, "%s%s",
				i == 0		    ? "" :
				i == CTL__NCMDS - 1 ? " or " :
						      ", ",
				cmds[i].name);
	if (off < CTL_ERR_MAX)
		snprintf(err + off, CTL_ERR_MAX - off, ")");
	return CTL_PARSE_ERR;
}

/* The words of req->line (len bytes), -j taken out; how many, or -1 (err). */
static int split_words(struct ctl_request *req, size_t len, char **w, char *err)
{
	size_t i = 0;
	int nw = 0;

	while (i < len) {
		char *word;

		if (req->line[i] == ' ') {
			req->line[i++] = 0;
			continue;
		}
		word = &req->line[i];
		while (i < len && req->line[i] != ' ')
			i++;
		req->line[i < len ? i++ : i] = 0;
		if (!strcmp(word, "-j")) {
			req->json = true;
			continue;
		}
		if (nw == CTL_MAX_WORDS) {
			perr(err, "too many arguments (at most %d words)",
			     CTL_MAX_WORDS);
			return -1;
		}
		w[nw++] = word;
	}
	return nw;
}

enum ctl_parse_res ctl_parse(const char *buf, size_t len,
			     struct ctl_request *req, char *err)
{
	char *w[CTL_MAX_WORDS];
	long end = line_end(buf, len, err);
	int nw, c;

	if (end == LINE_MORE)
		return CTL_PARSE_MORE;
	if (end == LINE_BAD)
		return CTL_PARSE_ERR;
	memset(req, 0, sizeof(*req));
	req->port = -1;
	memcpy(req->line, buf, end);
	req->line[end] = 0;
	nw = split_words(req, end, w, err);
	if (nw < 0)
		return CTL_PARSE_ERR;
	if (nw == 0)
		return perr(err, "empty request");
	for (c = 0; c < CTL__NCMDS && strcmp(w[0], cmds[c].name); c++)
		;
	if ((c == CTL__NCMDS || !cmds[c].args) && nw > 1)
		return perr(err, "'%.64s' takes no argument (got '%.64s')",
			    w[0], w[1]);
	if (c == CTL__NCMDS)
		return unknown_command(w[0], err);
	req->cmd = c;
	for (req->argc = 0; req->argc < nw - 1; req->argc++)
		req->argv[req->argc] = w[req->argc + 1];
	if (c == CTL_FLOWS)
		return parse_flows(w + 1, nw - 1, req, err);
	return CTL_PARSE_OK;
}
