// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed's monitor clients (toectl monitor): the control clients that asked
 * for it (ctl.c attaches them), each streamed every event line, in text
 * or JSON, until it goes away; a slow one loses lines, and is told how
 * many before the next.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "ep.h"
#include "mon.h"

static void mon_close(struct mon_set *ms, struct mon *c)
{
	epoll_ctl(ms->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
}

/*
 * Tell a client how many lines it lost, before the next: false if that
 * cannot be sent now either (one more lost).
 */
static bool mon_tell_lost(struct mon_set *ms, struct mon *c)
{
	unsigned long long lost = c->lost;
	char line[96];
	int l;

	if (c->json)
		l = snprintf(line, sizeof(line),
			     "{\"event\":\"lost\",\"count\":%llu}\n", lost);
	else
		l = snprintf(line, sizeof(line),
			     "[lost] %llu events (client too slow)\n", lost);
	if (send(c->fd, line, l, MSG_DONTWAIT | MSG_NOSIGNAL) != l) {
		c->lost++;
		ms->lost++;
		return false;
	}
	c->lost = 0;
	return true;
}

/* Send one line to every monitor client: text and JSON versions. */
void mon_send(struct mon_set *ms, const char *text, const char *json)
{
	int i;

	for (i = 0; i < MAX_MON; i++) {
		struct mon *c = &ms->c[i];
		const char *s = c->json ? json : text;
		ssize_t n;

		if (c->fd < 0 || (c->lost && !mon_tell_lost(ms, c)))
			continue;
		n = send(c->fd, s, strlen(s), MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
			mon_close(ms, c);
		} else if (n != (ssize_t)strlen(s)) {
			/* A partial line would corrupt the stream: close it. */
			if (n > 0) {
				mon_close(ms, c);
				continue;
			}
			c->lost++;
			ms->lost++;
		}
	}
}

bool mon_any(const struct mon_set *ms)
{
	int i;

	for (i = 0; i < MAX_MON; i++)
		if (ms->c[i].fd >= 0)
			return true;
	return false;
}

/* A free monitor slot, or -1: MAX_MON clients already. */
int mon_free_slot(const struct mon_set *ms)
{
	int i;

	for (i = 0; i < MAX_MON && ms->c[i].fd >= 0; i++)
		;
	return i == MAX_MON ? -1 : i;
}

/* A control client that asked for monitor, told "ok": it streams from now. */
void mon_attach(struct mon_set *ms, int slot, int fd, bool json)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP,
				  .data.u64 = ((__u64)SRC_MON << 32) | slot };

	ms->c[slot].fd = fd;
	ms->c[slot].json = json;
	ms->c[slot].lost = 0;
	if (epoll_ctl(ms->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		close(fd);
		ms->c[slot].fd = -1;
	}
}

/* A monitor says nothing: input or hangup means it is gone. */
void mon_input(struct mon_set *ms, int slot, __u32 events)
{
	struct mon *c = &ms->c[slot];
	char junk[256];

	if (c->fd >= 0 && (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR) ||
			   recv(c->fd, junk, sizeof(junk), MSG_DONTWAIT) <= 0))
		mon_close(ms, c);
}

void mon_exit(struct mon_set *ms)
{
	int i;

	for (i = 0; i < MAX_MON; i++)
		if (ms->c[i].fd >= 0)
			mon_close(ms, &ms->c[i]);
}

void mon_init(struct mon_set *ms, int epfd)
{
	int i;

	ms->epfd = epfd;
	for (i = 0; i < MAX_MON; i++)
		ms->c[i].fd = -1;
}
