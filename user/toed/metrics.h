/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: --metrics: /metrics for Prometheus, served from the loop
 * (metrics.c).
 */
#ifndef __TOE_METRICS_H
#define __TOE_METRICS_H

struct toed;
struct MHD_Daemon;

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <linux/types.h>

struct metrics;

int metrics_parse(struct metrics *mt, const char *arg, char *err,
		  size_t errlen);
int metrics_open(struct toed *d);
void metrics_run(struct toed *d);
int metrics_timeout_ms(struct metrics *mt, int ms);
void metrics_close(struct metrics *mt);
struct metrics_stats {
	__u64 bind_failed; /* binds failed (each retried later) */
	__u64 deadline; /* connections shut at the request deadline */
	__u64 evicted; /* the stalest, for a new one over a limit */
	__u64 refused; /* a new one over a limit, none to evict */
	__u64 connections; /* open now */
};
#define CONN_MAX 64 /* MHD's limit on connections: a backstop */

/*
 * MHD's connections as toed tracks them (metrics.c's own, one thread: no
 * lock): since is when the connection was accepted or last answered; a
 * request not answered REQ_DEADLINE_MS after it is shut down, however
 * slowly its bytes keep coming (MHD's own timeout restarts on each byte).
 */
struct mconn {
	bool used, dead; /* dead: shut down, MHD has yet to close it */
	int fd;
	long long since; /* ms */
	struct sockaddr_storage peer;
};

/*
 * The /metrics server (metrics.c): its address, libmicrohttpd's daemon,
 * the connections it tracks, its counters.  metrics_init: not serving.
 */
struct metrics {
	struct sockaddr_storage sa; /* --metrics, parsed */
	socklen_t salen;
	const char *arg; /* as given */
	struct MHD_Daemon *mhd; /* NULL: not serving */
	char error[160]; /* why the last bind failed */
	long long next_try_ms; /* !mhd: when to bind again */
	int backoff_ms;
	struct metrics_stats st;
	struct mconn conns[CONN_MAX];
	/*
	 * MHD could not accept for want of a descriptor (its log said so):
	 * its epoll fd stays readable, and in toed's epoll it would spin the
	 * loop, so it is left out of it until paused_until_ms (mhd_epfd:
	 * the fd to put back).
	 */
	bool no_fd;
	long long paused_until_ms;
	int mhd_epfd;
};

void metrics_init(struct metrics *mt);
const char *metrics_state(struct metrics *mt, const char **addr,
			  const char **error, long long *retry_ms);
const struct metrics_stats *metrics_stats(struct metrics *mt);

#endif /* __TOE_METRICS_H */
