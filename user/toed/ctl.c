// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed's control socket: one request per connection, "<command> [-j]
 * [args]" on one line (ctl_parse.c), answered "ok\n" then the output, or
 * "error <message>\n"; the connection is then shut down, except for
 * monitor, which streams events until the client goes away.  Only root may
 * ask.
 *
 * Nothing here blocks the epoll loop: every client socket is non-blocking
 * and has a slot in struct ctl's cl (MAX_CLIENTS of them; one more is told so and
 * closed).  A client has CTL_DEADLINE_NS to send its whole request and as
 * long again to read its answer; past either it is dropped and counted.
 * After its answer toed shuts the socket down for writing and reads what
 * the client still sends until it closes (CTL_LINGER_NS at most): closing
 * on unread bytes would reset the connection and lose the answer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/clock.h"
#include "ctl_parse.h"
#include "ep.h"
#include "apply.h"
#include "ctl.h"
#include "show_state.h"
#include "datapath.h"
#include "kmod.h"
#include "mon.h"
#include "log.h"
#include "show_maps.h"
#include "state.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* A command: what it shows (a view) or does, and whether it needs the datapath. */
struct ctl_cmd {
	void (*view)(struct toed *d, FILE *f, bool json); /* NULL: run */
	bool (*run)(struct toed *d, struct client *c,
		    const struct ctl_request *r, FILE *out);
	bool needs_dp;
};

/*
 * The inode of "flows netns X": digits are one (ctl_parse.c checked them),
 * anything else a name in /run/netns; 0 when there is no such name.
 */
static __u64 netns_filter(const char *s)
{
	char path[sizeof(TOE_NETNS_RUN_DIR) + 80];
	struct stat st;

	if (strspn(s, "0123456789") == strlen(s))
		return strtoull(s, NULL, 10);
	snprintf(path, sizeof(path), "%s/%s", TOE_NETNS_RUN_DIR, s);
	return stat(path, &st) ? 0 : st.st_ino;
}

static bool cmd_flows(struct toed *d, struct client *c,
		      const struct ctl_request *r, FILE *out)
{
	struct toe_flow_filter flt = { .dev = r->dev, .port = r->port };

	(void)c;
	if (r->netns) {
		flt.netns = netns_filter(r->netns);
		if (!flt.netns) {
			fprintf(out,
				"error unknown netns '%.64s' (no %s/%.64s)\n",
				r->netns, TOE_NETNS_RUN_DIR, r->netns);
			return true;
		}
	}
	fprintf(out, "ok\n");
	toe_view_flows(out, r->json, &d->m, &flt, tid_of, &d->kmod);
	return true;
}

static bool cmd_reload(struct toed *d, struct client *c,
		       const struct ctl_request *r, FILE *out)
{
	char err[1200];

	(void)c;
	if (do_apply(d, err, sizeof(err))) {
		fprintf(out, "error %s\n", err);
	} else if (r->json) {
		fprintf(out, "ok\n{\"serial\":%llu,\"rules\":%u,\"ms\":%.3f}\n",
			(unsigned long long)d->ap.ast.serial, d->ap.ast.rules,
			d->ap.ast.ms);
	} else {
		fprintf(out,
			"ok\napplied policy %llu: %u rules from %s in %.1f ms\n",
			(unsigned long long)d->ap.ast.serial, d->ap.ast.rules,
			d->config, d->ap.ast.ms);
	}
	return true;
}

static void client_free(struct client *c, bool close_fd);

/* The client becomes a monitor: "ok\n", then events (events.c).  False: kept. */
static bool cmd_monitor(struct toed *d, struct client *c,
			const struct ctl_request *r, FILE *out)
{
	int slot = mon_free_slot(&d->mon);

	if (slot < 0) {
		fprintf(out, "error too many monitors (%d)\n", MAX_MON);
		return true;
	}
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	if (send(c->fd, "ok\n", 3, MSG_NOSIGNAL | MSG_DONTWAIT) == 3)
		mon_attach(&d->mon, slot, c->fd, r->json);
	else
		close(c->fd);
	client_free(c, false);
	return false;
}

/*
 * The handlers of lib/ctl_cmds.h, declared from its handler column: a
 * command's view or run function needs no header (those above are this
 * file's; the views are show_*.c's and any other toed file's).
 */
#define VIEW(fn) void fn(struct toed *d, FILE *f, bool json);
#define RUN(fn)                                                                \
	bool fn(struct toed *d, struct client *c, const struct ctl_request *r, \
		FILE *out);
#define X(id, name, args, help, stream, handler, needs_dp) handler
TOE_CTL_CMDS(X)
#undef X
#undef RUN
#undef VIEW

/* The dispatch: the handler and needs_dp columns of lib/ctl_cmds.h. */
#define VIEW(fn) fn, NULL
#define RUN(fn) NULL, fn
static const struct ctl_cmd cmds[CTL__NCMDS] = {
#define X(id, name, args, help, stream, handler, needs_dp) \
	[CTL_##id] = { handler, needs_dp },
	TOE_CTL_CMDS(X)
#undef X
};
#undef RUN
#undef VIEW

/* ------------------------------------------------------------ clients */

static int client_epoll(struct ctl *cs, struct client *c, int op, __u32 events)
{
	struct epoll_event ev = {
		.events = events,
		.data.u64 = ((__u64)SRC_CLIENT << 32) | (c->gen << 8) |
			    (__u32)(c - cs->cl),
	};

	return epoll_ctl(*cs->epfd, op, c->fd, &ev);
}

/* Read and drop what the client sent: closing on unread bytes resets it. */
static ssize_t drain(int fd)
{
	char junk[4096];
	ssize_t n, total = 0;

	while ((n = recv(fd, junk, sizeof(junk), MSG_DONTWAIT)) > 0 &&
	       total < (1 << 20))
		total += n;
	return n;
}

static void client_free(struct client *c, bool close_fd)
{
	if (close_fd) {
		drain(c->fd);
		close(c->fd); /* leaves the epoll set with it */
	}
	free(c->out);
	c->out = NULL;
	c->fd = -1;
	c->state = CL_FREE;
}

/* Write what the answer has left; all of it: shut down and linger. */
static void client_flush(struct ctl *cs, struct client *c)
{
	while (c->outoff < c->outlen) {
		ssize_t n = send(c->fd, c->out + c->outoff,
				 c->outlen - c->outoff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return; /* EPOLLOUT brings us back */
		if (n <= 0) {
			client_free(c, true);
			return;
		}
		c->outoff += n;
	}
	free(c->out);
	c->out = NULL;
	shutdown(c->fd, SHUT_WR);
	c->state = CL_LINGER;
	c->deadline = toe_now_ns() + CTL_LINGER_NS;
	if (client_epoll(cs, c, EPOLL_CTL_MOD, EPOLLIN | EPOLLRDHUP))
		client_free(c, true);
}

/* Start writing the answer (body, malloc'd: the client owns it now). */
static void client_answer(struct ctl *cs, struct client *c, char *body,
			  size_t len)
{
	c->out = body;
	c->outlen = len;
	c->outoff = 0;
	c->state = CL_WRITE;
	c->deadline = toe_now_ns() + CTL_DEADLINE_NS;
	if (client_epoll(cs, c, EPOLL_CTL_MOD, EPOLLOUT)) {
		client_free(c, true);
		return;
	}
	client_flush(cs, c);
}

/* An answer made of one line. */
static void client_say(struct ctl *cs, struct client *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void client_say(struct ctl *cs, struct client *c, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		client_free(c, true);
		return;
	}
	client_answer(cs, c, s, n);
}

/* Run a parsed request; its answer, unless the client became a monitor. */
static void client_run(struct toed *d, struct client *c,
		       const struct ctl_request *r)
{
	const struct ctl_cmd *cmd = &cmds[r->cmd];
	char *body = NULL;
	size_t blen = 0;
	bool answer = true;
	FILE *out;

	logm(LOG_DEBUG, "request '%s'", ctl_cmd_name(r->cmd));
	/* a reload or unload under toed is noticed here, before the answer */
	if (!dp_check(d) && cmd->needs_dp) {
		client_say(
			&d->ctl, c,
			"error opentoe is not loaded at %s (toe-loader load)\n",
			d->pin_dir);
		return;
	}
	out = open_memstream(&body, &blen);
	if (!out) {
		client_free(c, true);
		return;
	}
	if (cmd->run) {
		answer = cmd->run(d, c, r, out);
	} else {
		fprintf(out, "ok\n");
		cmd->view(d, out, r->json);
	}
	fclose(out);
	if (answer)
		client_answer(&d->ctl, c, body, blen);
	else
		free(body);
}

/* What the client sent so far: a request, an error, or nothing yet. */
static void client_read(struct toed *d, struct client *c)
{
	struct ctl_request r;
	char err[CTL_ERR_MAX];
	ssize_t n = 1;

	while (c->inlen < sizeof(c->in) &&
	       (n = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen,
			 MSG_DONTWAIT)) > 0)
		c->inlen += n;
	switch (ctl_parse(c->in, c->inlen, &r, err)) {
	case CTL_PARSE_OK:
		d->ctl.cst.requests++;
		client_run(d, c, &r);
		return;
	case CTL_PARSE_ERR:
		d->ctl.cst.requests++;
		d->ctl.cst.requests_bad++;
		client_say(&d->ctl, c, "error %s\n", err);
		return;
	case CTL_PARSE_MORE:
		break;
	}
	if (n == 0) { /* the client half-closed: no newline is coming */
		d->ctl.cst.requests++;
		d->ctl.cst.requests_bad++;
		client_say(
			&d->ctl, c,
			"error request incomplete: no newline before the end\n");
	} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
		client_free(c, true);
	}
}

/* One ready client: its slot and generation in data. */
void ctl_event(struct toed *d, __u32 data, __u32 events)
{
	struct client *c = &d->ctl.cl[data & 0xff];

	if ((data & 0xff) >= MAX_CLIENTS || c->state == CL_FREE ||
	    (c->gen & 0xffffff) != data >> 8)
		return; /* a slot closed (and maybe reused) earlier in this batch */
	switch (c->state) {
	case CL_READ:
		client_read(d, c);
		break;
	case CL_WRITE:
		if (events & (EPOLLERR | EPOLLHUP))
			client_free(c, true);
		else
			client_flush(&d->ctl, c);
		break;
	case CL_LINGER: {
		ssize_t n = drain(c->fd);

		if (n == 0 || (n < 0 && errno != EAGAIN) ||
		    (events & (EPOLLERR | EPOLLHUP | EPOLLRDHUP)))
			client_free(c, true);
		break;
	}
	case CL_FREE:
		break;
	}
}

/* One line to a client toed will not serve, then close it. */
static void refuse(int fd, const char *msg)
{
	send(fd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT);
	shutdown(fd, SHUT_WR);
	drain(fd);
	close(fd);
}

static struct client *client_new(struct ctl *cs, int fd)
{
	static __u32 gen;
	int i;

	for (i = 0; i < MAX_CLIENTS && cs->cl[i].state != CL_FREE; i++)
		;
	if (i == MAX_CLIENTS)
		return NULL;
	cs->cl[i] = (struct client){
		.state = CL_READ,
		.fd = fd,
		.gen = ++gen & 0xffffff,
		.deadline = toe_now_ns() + CTL_DEADLINE_NS,
	};
	return &cs->cl[i];
}

/* The listening socket in epoll (on) or out of it until a second has gone. */
static void listen_watch(struct ctl *cs, bool on)
{
	struct epoll_event ev = { .events = on ? EPOLLIN : 0,
				  .data.u64 = (__u64)SRC_LISTEN << 32 };

	if (*cs->lsock < 0)
		return;
	cs->listen_off_ns = on ? 0 : toe_now_ns() + 1000000000ULL;
	epoll_ctl(*cs->epfd, EPOLL_CTL_MOD, *cs->lsock, &ev);
}

/*
 * accept4 failed for want of a descriptor: the first client waiting is
 * accepted on the spare one, told why and closed (toectl says so at once
 * instead of waiting for an answer that never comes).  True if one was;
 * false with the listening socket paused when even that cannot be done.
 */
static bool accept_no_fd(struct ctl *cs, int why)
{
	char msg[160];
	int fd = -1;

	if (cs->spare >= 0) {
		close(cs->spare);
		cs->spare = -1;
		fd = accept4(*cs->lsock, NULL, NULL,
			     SOCK_CLOEXEC | SOCK_NONBLOCK);
	}
	if (fd >= 0) {
		cs->cst.clients_no_fd++;
		snprintf(
			msg, sizeof(msg),
			"error toed is out of file descriptors (%s): see its RLIMIT_NOFILE (prlimit --pid %d)\n",
			strerror(why), (int)getpid());
		refuse(fd, msg);
	}
	cs->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	logm_rl(LOG_WARN, "control socket: cannot accept a client: %s%s",
		strerror(why),
		fd >= 0 ? " (told so)" : "; not listening for a second");
	if (fd < 0)
		listen_watch(cs, false);
	return fd >= 0;
}

/* Every client waiting on the listening socket: a slot each, or told no. */
void ctl_accept(struct ctl *cs)
{
	struct client *c;
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int fd;

	for (;;) {
		fd = accept4(*cs->lsock, NULL, NULL,
			     SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE) &&
		    accept_no_fd(cs, errno))
			continue;
		if (fd < 0)
			break;
		c = client_new(cs, fd);
		if (!c) {
			cs->cst.clients_over_limit++;
			refuse(fd, "error too many control clients (" STR(
					   MAX_CLIENTS) ")\n");
			continue;
		}
		if (client_epoll(cs, c, EPOLL_CTL_ADD, EPOLLIN | EPOLLRDHUP)) {
			client_free(c, true);
			continue;
		}
		cl = sizeof(cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) ||
		    cred.uid != 0) {
			cs->cst.clients_refused++;
			logm(LOG_WARN,
			     "refused a control client: uid %d pid %d is not root",
			     (int)cred.uid, (int)cred.pid);
			client_say(
				cs, c,
				"error permission denied: toectl must be run as root (you are uid %d)\n",
				(int)cred.uid);
		}
	}
}

/* Milliseconds to the next client deadline, or -1: none. */
int ctl_timeout_ms(struct ctl *cs)
{
	__u64 now = toe_now_ns(), first = 0;
	int i;

	for (i = 0; i < MAX_CLIENTS; i++)
		if (cs->cl[i].state != CL_FREE &&
		    (!first || cs->cl[i].deadline < first))
			first = cs->cl[i].deadline;
	if (cs->listen_off_ns && (!first || cs->listen_off_ns < first))
		first = cs->listen_off_ns;
	if (!first)
		return -1;
	return first <= now ? 0 : (int)((first - now + 999999) / 1000000);
}

/* Clients past their deadline: told so (a request) or dropped (an answer). */
void ctl_expire(struct ctl *cs)
{
	__u64 now = toe_now_ns();
	int i;

	if (cs->listen_off_ns && now >= cs->listen_off_ns)
		listen_watch(cs, true); /* paused for want of a descriptor */
	for (i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = &cs->cl[i];

		if (c->state == CL_FREE || c->deadline > now)
			continue;
		if (c->state == CL_READ) {
			cs->cst.clients_timed_out++;
			logm(LOG_DEBUG,
			     "control client: no request within 2 s");
			client_say(
				cs, c,
				"error request not complete within %llu s (timed out)\n",
				CTL_DEADLINE_NS / 1000000000ULL);
		} else {
			if (c->state == CL_WRITE) {
				cs->cst.clients_timed_out++;
				logm(LOG_WARN,
				     "control client did not read its answer within 2 s");
			}
			client_free(c, true);
		}
	}
}

void ctl_close_all(struct ctl *cs)
{
	int i;

	for (i = 0; i < MAX_CLIENTS; i++)
		if (cs->cl[i].state != CL_FREE)
			client_free(&cs->cl[i], true);
	if (cs->spare >= 0)
		close(cs->spare);
	cs->spare = -1;
}

void ctl_init(struct ctl *cs, const int *epfd, const int *lsock,
	      struct mon_set *mon)
{
	int i;

	memset(cs, 0, sizeof(*cs));
	cs->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	cs->epfd = epfd;
	cs->lsock = lsock;
	cs->mon = mon;
	for (i = 0; i < MAX_CLIENTS; i++)
		cs->cl[i].fd = -1;
}
