// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Test helper: short TCP connections at a steady rate, for toed's soak.
 * Each connection: connect, send one byte (0x03, the first byte of tcpx's
 * pattern), shut the write side, read to EOF, close; as tcpx.py's storm
 * does, but in C, so that 1,000 a second fit on a small machine.
 *
 * Usage: connstorm -a ADDR -p PORT -r PER_SECOND -s SECONDS [-t THREADS]
 * Prints one JSON line: {"done": N, "errors": N, "secs": S, "per_s": R}.
 * Exit 0 if every connection went through, 1 otherwise, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

static struct sockaddr_storage dst;
static socklen_t dst_len;
static double rate, seconds;
static int nthreads = 4;

struct worker {
	pthread_t th;
	int idx;
	long done;
	long errors;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One connection, start to end; 0 or -1. */
static int one(void)
{
	struct timeval tv = { .tv_sec = 10 };
	char b = 0x03, buf[256];
	int fd, n;

	fd = socket(dst.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&dst, dst_len) ||
	    send(fd, &b, 1, MSG_NOSIGNAL) != 1 || shutdown(fd, SHUT_WR))
		goto err;
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		;
	if (n < 0)
		goto err;
	close(fd);
	return 0;
err:
	close(fd);
	return -1;
}

/*
 * Thread idx of nthreads takes connection k when k % nthreads == idx and
 * starts it no earlier than k / rate seconds after t0: the whole run keeps
 * the rate, and a slow connection delays only its own thread.
 */
static void *run(void *arg)
{
	struct worker *w = arg;
	double t0 = now(), due;
	struct timespec ts;
	long k;

	for (k = w->idx;; k += nthreads) {
		due = t0 + k / rate;
		if (due >= t0 + seconds)
			break;
		while (now() < due) {
			double d = due - now();

			ts.tv_sec = (time_t)d;
			ts.tv_nsec = (long)((d - ts.tv_sec) * 1e9);
			nanosleep(&ts, NULL);
		}
		if (one())
			w->errors++;
		else
			w->done++;
	}
	return NULL;
}

static int parse_addr(const char *a, int port)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)&dst;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&dst;

	if (port <= 0 || port > 65535)
		return -1;
	if (inet_pton(AF_INET, a, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		dst_len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, a, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		dst_len = sizeof(*s6);
		return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct worker w[MAX_THREADS] = {};
	const char *addr = NULL;
	long done = 0, errors = 0;
	int port = 0, opt, i;
	double t0, secs;

	while ((opt = getopt(argc, argv, "a:p:r:s:t:h")) != -1) {
		switch (opt) {
		case 'a':
			addr = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 'r':
			rate = atof(optarg);
			break;
		case 's':
			seconds = atof(optarg);
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: connstorm -a ADDR -p PORT -r PER_SECOND -s SECONDS [-t THREADS]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (!addr || parse_addr(addr, port)) {
		fprintf(stderr,
			"connstorm: need -a ADDR and -p PORT (1-65535)\n");
		return 2;
	}
	if (rate <= 0 || seconds <= 0 || nthreads < 1 ||
	    nthreads > MAX_THREADS) {
		fprintf(stderr, "connstorm: -r and -s must be > 0, -t 1-%d\n",
			MAX_THREADS);
		return 2;
	}
	t0 = now();
	for (i = 0; i < nthreads; i++) {
		w[i].idx = i;
		if (pthread_create(&w[i].th, NULL, run, &w[i])) {
			fprintf(stderr, "connstorm: pthread_create: %s\n",
				strerror(errno));
			return 1;
		}
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(w[i].th, NULL);
		done += w[i].done;
		errors += w[i].errors;
	}
	secs = now() - t0;
	printf("{\"done\": %ld, \"errors\": %ld, \"secs\": %.3f, \"per_s\": %.1f}\n",
	       done, errors, secs, done / secs);
	return errors ? 1 : 0;
}
