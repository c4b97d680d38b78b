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
#include <sys/un.h>
#include <unistd.h>
#include "util.h"

#define DEFAULT_RUN_DIR	"/run/opentoe"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: toectl [-j] [--run-dir DIR] COMMAND [ARGS]\n"
"\n"
"Query and control the opentoe daemon (toed).\n"
"\n"
"Commands:\n"
"  status                     daemon, policy, interfaces, event totals\n"
"  devices                    offload devices: type, module, interface,\n"
"                             capacity and use (the patch's /proc/net/toe)\n"
"  flows [dev NAME] [port N]  tracked connections: tuple, device, decision,\n"
"                             reason, bytes, segments, XDP packets, RTT, age\n"
"  neigh                      the neighbour entries mirrored into the datapath\n"
"  policy                     the configuration in force, in its own syntax\n"
"  stats                      datapath and daemon counters\n"
"  reload                     re-read the configuration and apply it atomically;\n"
"                             an invalid file is reported, the policy stays\n"
"  monitor                    print events as they happen (like ip monitor)\n"
"\n"
"Options:\n"
"  -j, --json                 JSON: one document (monitor: one per line)\n"
"  -r, --run-dir DIR          toed's run folder (default " DEFAULT_RUN_DIR ")\n"
"  -h, --help                 this text\n"
"\n"
"toed's socket is root's only (mode 0600, and toed checks the caller's uid).\n");
}

static const char *const cmds[] = {
	"status", "devices", "flows", "neigh", "policy", "stats", "reload", "monitor",
};

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "run-dir", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *run_dir = DEFAULT_RUN_DIR;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char req[512], buf[65536];
	bool json = false, first = true, ok = false;
	size_t off = 0, k;
	int c, fd, i, n;
	FILE *err = stderr;

	toe_prog = "toectl";
	while ((c = getopt_long(argc, argv, "+jr:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'r': run_dir = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	if (optind == argc) {
		usage(stderr);
		return 1;
	}
	for (k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++)
		if (!strcmp(argv[optind], cmds[k]))
			break;
	if (k == sizeof(cmds) / sizeof(cmds[0])) {
		if (!strcmp(argv[optind], "help")) {
			usage(stdout);
			return 0;
		}
		toe_err("unknown command '%s' (toectl --help lists them)", argv[optind]);
		return 1;
	}
	off = snprintf(req, sizeof(req), "%s%s", argv[optind], json ? " -j" : "");
	for (i = optind + 1; i < argc; i++) {
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			json = true;
			off += snprintf(req + off, sizeof(req) - off, " -j");
			continue;
		}
		if (!argv[i][0] || strpbrk(argv[i], " \t\n") || strlen(argv[i]) > 64) {
			toe_err("bad argument '%.64s'", argv[i]);
			return 1;
		}
		off += snprintf(req + off, sizeof(req) - off, " %s", argv[i]);
		if (off >= sizeof(req) - 2) {
			toe_err("too many arguments");
			return 1;
		}
	}
	req[off++] = '\n';

	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/toed.sock", run_dir) >=
	    (int)sizeof(sa.sun_path)) {
		toe_err("run folder %s: path too long", run_dir);
		return 1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (errno == ENOENT)
			toe_err("toed is not running (no socket at %s)", sa.sun_path);
		else if (errno == ECONNREFUSED)
			toe_err("toed is not running (nothing listens on %s)", sa.sun_path);
		else if (errno == EACCES)
			toe_err("%s: permission denied (toectl must be run as root)", sa.sun_path);
		else
			toe_err("cannot reach toed at %s: %s", sa.sun_path, strerror(errno));
		return 1;
	}
	/* toed may answer (a refusal) and close before reading: read anyway. */
	if (send(fd, req, off, MSG_NOSIGNAL) != (ssize_t)off && errno != EPIPE &&
	    errno != ECONNRESET) {
		toe_err("cannot send to toed: %s", strerror(errno));
		return 1;
	}
	if (!strcmp(argv[optind], "monitor"))
		setvbuf(stdout, NULL, _IOLBF, 0);
	/* The first line says ok or error; the rest is the answer. */
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		char *p = buf;

		if (first) {
			char *nl = memchr(buf, '\n', n);

			if (!nl) {
				toe_err("malformed answer from toed");
				return 1;
			}
			first = false;
			if (nl - buf == 2 && !strncmp(buf, "ok", 2)) {
				ok = true;
			} else if (!strncmp(buf, "error ", 6)) {
				fprintf(err, "toectl: %.*s\n", (int)(nl - buf - 6), buf + 6);
				return 1;
			} else {
				toe_err("malformed answer from toed");
				return 1;
			}
			n -= nl + 1 - buf;
			p = nl + 1;
		}
		if (n && fwrite(p, 1, n, stdout) != (size_t)n)
			return 1;
		if (!strcmp(argv[optind], "monitor"))
			fflush(stdout);
	}
	if (n < 0) {
		toe_err("reading from toed: %s", strerror(errno));
		return 1;
	}
	if (!ok) {
		toe_err("toed closed the connection without an answer");
		return 1;
	}
	return fflush(stdout) ? 1 : 0;
}
