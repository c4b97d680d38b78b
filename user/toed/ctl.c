// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed's control socket: one request per connection, "<command> [-j]
 * [args]" on one line, answered "ok\n" then the output, or "error
 * <message>\n"; the connection is then closed, except for monitor, which
 * streams events until the client goes away.  Only root may ask.  The
 * commands are the rows of one table (cmds[]).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include "toed.h"

#define REQ_MAX 512 /* a request line, its newline included */
#define MAX_WORDS 16 /* words of a request, -j left out */

/* A parsed request. */
struct ctl_req {
	const struct ctl_cmd *cmd; /* its row of cmds[] */
	int fd; /* the client */
	char *w[MAX_WORDS]; /* the command, then its arguments */
	int nw;
	bool json; /* -j */
};

/* What a command did with the client: answered it, or kept it (monitor). */
enum ctl_done { CTL_REPLY, CTL_KEPT };

struct ctl_cmd;

/* What reading a request gave. */
enum ctl_read { CTL_READ_OK, CTL_READ_BAD };

struct ctl_cmd {
	const char *name;
	enum ctl_done (*run)(struct ctl_req *r, FILE *out);
	void (*view)(FILE *f, bool json); /* what cmd_view shows */
	bool args; /* takes arguments; the others refuse any */
	const char *help; /* what it answers (not sent: for the reader) */
};

/* A view: "ok\n", then the view, text or JSON. */
static enum ctl_done cmd_view(struct ctl_req *r, FILE *out)
{
	fprintf(out, "ok\n");
	r->cmd->view(out, r->json);
	return CTL_REPLY;
}

static void view_neigh(FILE *f, bool json)
{
	toe_view_neigh(f, json, &D->m);
}

static bool is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* flows [dev NAME] [port N] */
static enum ctl_done cmd_flows(struct ctl_req *r, FILE *out)
{
	struct toe_flow_filter flt = { .dev = NULL, .port = -1 };
	int i;

	for (i = 1; i < r->nw; i += 2) {
		if (i + 1 >= r->nw) {
			fprintf(out, "error '%.64s' needs a value\n", r->w[i]);
			return CTL_REPLY;
		}
		if (!strcmp(r->w[i], "dev")) {
			flt.dev = r->w[i + 1];
		} else if (!strcmp(r->w[i], "port")) {
			if (!is_number(r->w[i + 1]) ||
			    atoi(r->w[i + 1]) > 65535) {
				fprintf(out,
					"error bad port '%.64s' (expected 0-65535)\n",
					r->w[i + 1]);
				return CTL_REPLY;
			}
			flt.port = atoi(r->w[i + 1]);
		} else {
			fprintf(out,
				"error unknown filter '%.64s' (expected dev NAME or port N)\n",
				r->w[i]);
			return CTL_REPLY;
		}
	}
	fprintf(out, "ok\n");
	toe_view_flows(out, r->json, &D->m, &flt, tid_of, NULL);
	return CTL_REPLY;
}

static enum ctl_done cmd_reload(struct ctl_req *r, FILE *out)
{
	char err[1200];

	if (do_apply(err, sizeof(err))) {
		fprintf(out, "error %s\n", err);
	} else if (r->json) {
		fprintf(out, "ok\n{\"serial\":%llu,\"rules\":%u,\"ms\":%.3f}\n",
			(unsigned long long)D->ast.serial, D->ast.rules,
			D->ast.ms);
	} else {
		fprintf(out,
			"ok\napplied policy %llu: %u rules from %s in %.1f ms\n",
			(unsigned long long)D->ast.serial, D->ast.rules,
			D->config, D->ast.ms);
	}
	return CTL_REPLY;
}

/* The client becomes a monitor: "ok\n", then events (events.c). */
static enum ctl_done cmd_monitor(struct ctl_req *r, FILE *out)
{
	int slot = mon_free_slot();

	if (slot < 0) {
		fprintf(out, "error too many monitors (%d)\n", MAX_MON);
		return CTL_REPLY;
	}
	if (send(r->fd, "ok\n", 3, MSG_NOSIGNAL) != 3)
		close(r->fd);
	else
		mon_attach(slot, r->fd, r->json);
	return CTL_KEPT;
}

static const struct ctl_cmd cmds[] = {
	{ "status", cmd_view, view_status, false,
	  "the daemon, the policy in force, the interfaces mirrored, the module" },
	{ "devices", cmd_view, view_devices, false,
	  "the datapath's devices, with the kernel module's counts for its own" },
	{ "flows", cmd_flows, NULL, true,
	  "the connections and the routed flows; filters: dev NAME, port N" },
	{ "neigh", cmd_view, view_neigh, false,
	  "the mirrored neighbour table" },
	{ "policy", cmd_view, view_policy, false,
	  "the configuration in force, in the file's syntax" },
	{ "stats", cmd_view, view_stats, false,
	  "the datapath's counters and toed's" },
	{ "reload", cmd_reload, NULL, false,
	  "read the configuration file again and apply it" },
	{ "monitor", cmd_monitor, NULL, false,
	  "events, streamed until the client goes away" },
};
#define N_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static const struct ctl_cmd *cmd_find(const char *name)
{
	size_t i;

	for (i = 0; i < N_CMDS; i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

/* "error unknown command ..." naming the table's commands: "a, b or c". */
static void unknown_command(FILE *out, const char *name)
{
	size_t i;

	fprintf(out, "error unknown command '%.64s' (expected ", name);
	for (i = 0; i < N_CMDS; i++) {
		const char *sep = i == N_CMDS - 1 ? " or " : ", ";

		fprintf(out, "%s%s", i ? sep : "", cmds[i].name);
	}
	fprintf(out, ")\n");
}

/* The client is root, or it is told no (and counted, and logged). */
static bool client_allowed(int fd, struct ucred *cred, FILE *out)
{
	socklen_t cl = sizeof(*cred);

	if (!getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &cl) &&
	    cred->uid == 0)
		return true;
	D->refused_clients++;
	logm(LOG_WARN, "refused a control client: uid %d pid %d is not root",
	     (int)cred->uid, (int)cred->pid);
	fprintf(out,
		"error permission denied: toectl must be run as root (you are uid %d)\n",
		(int)cred->uid);
	return false;
}

/* One text line into req (REQ_MAX + 1 bytes), its newline cut; or an error in out. */
static enum ctl_read read_request(int fd, char *req, FILE *out)
{
	size_t got = 0;
	char *nl;

	while (got < REQ_MAX) {
		ssize_t n = recv(fd, req + got, REQ_MAX - got, 0);

		if (n <= 0)
			break;
		got += n;
		if (memchr(req, '\n', got))
			break;
	}
	req[got] = 0;
	nl = memchr(req, '\n', got);
	if (!nl) {
		fprintf(out, "error request too long or incomplete\n");
		return CTL_READ_BAD;
	}
	/* strchr would stop at it and find no newline: toed crashed. */
	if (memchr(req, 0, nl - req)) {
		fprintf(out, "error request has a NUL byte\n");
		return CTL_READ_BAD;
	}
	*nl = 0;
	return CTL_READ_OK;
}

/* The words of a request, -j taken out as r->json; or an error in out. */
static enum ctl_read split_words(char *req, struct ctl_req *r, FILE *out)
{
	char *save = NULL, *tok;

	for (tok = strtok_r(req, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		if (!strcmp(tok, "-j")) {
			r->json = true;
			continue;
		}
		if (r->nw == MAX_WORDS) {
			fprintf(out, "error too many arguments\n");
			return CTL_READ_BAD;
		}
		r->w[r->nw++] = tok;
	}
	if (!r->nw) {
		fprintf(out, "error empty request\n");
		return CTL_READ_BAD;
	}
	return CTL_READ_OK;
}

/* Read, check and run one request; what became of the client. */
static enum ctl_done handle(int fd, FILE *out)
{
	struct ctl_req r = { .fd = fd };
	const struct ctl_cmd *c;
	char req[REQ_MAX + 1];
	struct ucred cred;

	if (!client_allowed(fd, &cred, out) ||
	    read_request(fd, req, out) != CTL_READ_OK)
		return CTL_REPLY;
	D->requests++;
	if (split_words(req, &r, out) != CTL_READ_OK)
		return CTL_REPLY;
	logm(LOG_DEBUG, "request '%s' from pid %d", r.w[0], (int)cred.pid);
	c = r.cmd = cmd_find(r.w[0]);
	if ((!c || !c->args) && r.nw > 1) {
		fprintf(out, "error '%s' takes no argument (got '%.64s')\n",
			r.w[0], r.w[1]);
		return CTL_REPLY;
	}
	if (!c) {
		unknown_command(out, r.w[0]);
		return CTL_REPLY;
	}
	return c->run(&r, out);
}

/* Send the whole reply; a client that stalls past the send timeout loses it. */
static void send_reply(int fd, const char *body, size_t blen)
{
	size_t off = 0;

	while (off < blen) {
		ssize_t n = send(fd, body + off, blen - off, MSG_NOSIGNAL);

		if (n <= 0) {
			logm(LOG_WARN, "control client went away or stalled");
			break;
		}
		off += n;
	}
}

/*
 * One control client: read its request (2 s at most), answer it and close
 * it, unless it became a monitor.
 */
void serve(int fd)
{
	struct timeval tv = { .tv_sec = 2 };
	char *body = NULL;
	size_t blen = 0;
	FILE *out;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	out = open_memstream(&body, &blen);
	if (!out) {
		close(fd);
		return;
	}
	if (handle(fd, out) == CTL_KEPT) {
		fclose(out);
		free(body);
		return;
	}
	fclose(out);
	send_reply(fd, body, blen);
	free(body);
	close(fd);
}
