/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed's control requests, parsed: bytes in, a command and its arguments
 * or one error line out.  No I/O and no state: toed (ctl.c) and the
 * libFuzzer target (selftests/toed/fuzz_ctl.c) call the same code.
 *
 * A request is one line of printable ASCII (0x20-0x7e) ended by '\n', at
 * most TOE_CTL_REQ_MAX bytes with its newline: "<command> [-j] [args]", words
 * separated by spaces.
 */
#ifndef __TOE_CTL_PARSE_H
#define __TOE_CTL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include "lib/ctl_cmds.h"
#include "lib/toe_ctl.h"

#define CTL_MAX_WORDS 16 /* words of a request, -j left out */
#define CTL_ERR_MAX 256 /* an error line, with its NUL */

/* CTL_STATUS, ...: the commands of lib/ctl_cmds.h, in its order. */
enum ctl_cmd_id {
#define X(id, name, args, help, stream, handler, needs_dp) CTL_##id,
	TOE_CTL_CMDS(X)
#undef X
		CTL__NCMDS
};

/* What ctl_parse made of the bytes so far. */
enum ctl_parse_res {
	CTL_PARSE_MORE, /* no newline yet, nothing wrong so far */
	CTL_PARSE_OK, /* a request: *req filled */
	CTL_PARSE_ERR, /* err holds the reason (no "error " prefix, no newline) */
};

struct ctl_request {
	enum ctl_cmd_id cmd;
	bool json; /* -j */
	/* flows filters */
	const char *dev; /* NULL: any (points into line) */
	int port; /* -1: any */
	/* NULL: any; digits: a namespace inode, else a /run/netns name */
	const char *netns;
	/*
	 * The words after the command (-j left out), for a command that takes
	 * arguments (its args column) and reads them itself: a RUN handler
	 * answers "error ..." naming a bad one.  They point into line.
	 */
	const char *argv[CTL_MAX_WORDS];
	int argc;
	char line[TOE_CTL_REQ_MAX]; /* the words, NUL-separated */
};

/*
 * Parse buf[0..len): the first line, if it is complete.  Bytes after its
 * newline are ignored.  On CTL_PARSE_ERR err (CTL_ERR_MAX bytes) holds one
 * line of printable text.
 */
enum ctl_parse_res ctl_parse(const char *buf, size_t len,
			     struct ctl_request *req, char *err);

/* The command's name ("status"). */
const char *ctl_cmd_name(enum ctl_cmd_id id);

#endif /* __TOE_CTL_PARSE_H */
