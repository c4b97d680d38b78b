// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * loadgen: a small load generator for stream sockets, both ends in one
 * command.  It forks: the child serves, the parent drives; every byte is
 * checked on both sides (bench/pattern.h), so a fast wrong transport does
 * not pass for a fast one.
 *
 *   loadgen [options]
 *     --mode rr|stream   request/response of --size bytes each way, one
 *                        request in flight; or --size-byte writes one way
 *     --size N           bytes (default 1 for rr, 65536 for stream)
 *     --seconds S        how long the client drives (default 2)
 *     --type tcp|unix    TCP to --addr:--port (the server listens there), or
 *                        an AF_UNIX socketpair between the two processes
 *     --addr A --port P  (tcp; IPv4 or IPv6)
 *     --srv-ns PATH      network namespace file for the server (tcp)
 *     --cli-ns PATH      and for the client
 *     --cpu N            pin both processes to CPU N (default: unpinned)
 *     --srv-cpu N        pin the server to CPU N instead
 *
 * Prints one JSON object: ops (round trips, or writes), bytes (payload moved
 * one way), secs, ops_per_s, mbytes_per_s, usec_per_op (rr: round-trip
 * time), errors (wrong bytes seen; the exit status is 1 if any).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "endpoint_opts.h"
#include "pattern.h"
#include "lib/toe_setns.h"

struct opts {
	bool stream;
	size_t size;
	double seconds;
	bool unix_pair;
	struct endpoint_opts ep;
	int cpu, srv_cpu;
};

static struct opts O = { .seconds = 2,
			 .ep = { .addr = "127.0.0.1", .port = 7700 },
			 .cpu = -1,
			 .srv_cpu = -1 };
static struct pat P;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
}

/*
 * All of len bytes read (rd) or written: 0, or -1 at EOF or an error before
 * that.  EINTR is retried, and so is a read's EAGAIN.
 */
static int io_all(int fd, char *p, size_t len, bool rd)
{
	while (len) {
		ssize_t n = rd ? read(fd, p, len) : write(fd, p, len);

		if (n < 0 && (errno == EINTR || (rd && errno == EAGAIN)))
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static int writen(int fd, const void *buf, size_t len)
{
	return io_all(fd, (char *)buf, len, false);
}

/* Read exactly len bytes; 0, or -1 at EOF/error before that. */
static int readn(int fd, void *buf, size_t len)
{
	return io_all(fd, buf, len, true);
}

static void tune(int fd)
{
	int one = 1;

	if (!O.unix_pair)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/*
 * Server: rr: read a request, check it (phase 0), answer --size bytes of
 * phase 1, until EOF.  stream: read and check to EOF.  Then it writes its
 * count of wrong bytes and bytes read (16 bytes) back on the socket.
 */
static void serve(int fd)
{
	uint64_t off = 0, bad = 0, out[2];
	size_t cap = O.stream ? (1 << 20) : O.size;
	char *buf = malloc(cap), *ans = malloc(O.size);

	tune(fd);
	for (;;) {
		ssize_t n;

		if (O.stream) {
			n = read(fd, buf, cap);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
		} else {
			if (readn(fd, buf, O.size))
				break;
			n = O.size;
		}
		if (pat_check(&P, pat_phase(0), off, buf, n) >= 0)
			bad++;
		if (!O.stream) {
			pat_fill(&P, pat_phase(1), off, ans, O.size);
			if (writen(fd, ans, O.size))
				break;
		}
		off += n;
	}
	out[0] = bad;
	out[1] = off;
	if (writen(fd, out, sizeof(out)))
		exit(1);
	close(fd);
	exit(0);
}

static int client(int fd, uint64_t *ops, uint64_t *bad, double *secs,
		  uint64_t *srv)
{
	char *req = malloc(O.size), *ans = malloc(O.size), *block = NULL;
	uint64_t off = 0, n = 0, out[2];
	double t0, end;
	size_t blen = 0;

	tune(fd);
	if (O.stream) {
		/* writes of --size from a precomputed stretch: no fill per write */
		blen = O.size + PAT_PERIOD;
		block = malloc(blen);
		pat_fill(&P, pat_phase(0), 0, block, blen);
	}
	t0 = now();
	end = t0 + O.seconds;
	while ((n & 63) || now() < end) {
		if (O.stream) {
			if (writen(fd, block + off % PAT_PERIOD, O.size))
				return -1;
		} else {
			pat_fill(&P, pat_phase(0), off, req, O.size);
			if (writen(fd, req, O.size) || readn(fd, ans, O.size))
				return -1;
			if (pat_check(&P, pat_phase(1), off, ans, O.size) >= 0)
				(*bad)++;
		}
		off += O.size;
		n++;
	}
	shutdown(fd, SHUT_WR);
	if (readn(fd, out, sizeof(out)))
		return -1;
	*secs = now() - t0; /* stream: until the server had read everything */
	*ops = n;
	*bad += out[0];
	*srv = out[1];
	free(req);
	free(ans);
	free(block);
	return 0;
}

static void usage_to(FILE *f, int status)
{
	fprintf(f,
		"usage: loadgen [--mode rr|stream] [--size N] [--seconds S] [--type tcp|unix]\n"
		"               [--addr A] [--port P] [--srv-ns PATH] [--cli-ns PATH]\n"
		"               [--cpu N] [--srv-cpu N]\n");
	if (f == stdout)
		fprintf(f,
			"\nA client and a server over one connection (TCP, or an AF_UNIX\n"
			"socketpair), every byte checked; prints one JSON line.\n"
			"  --mode rr       one request of SIZE bytes in flight, echoed (default)\n"
			"  --mode stream   SIZE-byte writes one way (SIZE default 65536)\n"
			"  --seconds S     how long (default 2)\n"
			"  --addr, --port  the server's address (default 127.0.0.1) and port\n"
			"  --srv-ns, --cli-ns  network namespace files for the two ends\n"
			"  --cpu N         pin both ends to CPU N (--srv-cpu: the server elsewhere)\n"
			"Exit status 0; 1 on a data error (\"errors\" in the JSON); 2 on a\n"
			"bad option or a set-up failure.\n");
	exit(status);
}

static void usage(void)
{
	usage_to(stderr, 2);
}

/* arg is yes (true) or no (false); anything else: usage. */
static bool one_of(const char *arg, const char *yes, const char *no)
{
	if (strcmp(arg, yes) && strcmp(arg, no))
		usage();
	return !strcmp(arg, yes);
}

static void parse_opts(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "size", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "type", required_argument, NULL, 'T' },
		ENDPOINT_OPTIONS,
		{ "cpu", required_argument, NULL, 'c' },
		{ "srv-cpu", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (endpoint_opt(&O.ep, c, optarg))
			continue;
		switch (c) {
		case 'm':
			if (one_of(optarg, "stream", "rr"))
				O.stream = true;
			break;
		case 's':
			O.size = strtoul(optarg, NULL, 0);
			break;
		case 't':
			O.seconds = atof(optarg);
			break;
		case 'T':
			if (one_of(optarg, "unix", "tcp"))
				O.unix_pair = true;
			break;
		case 'c':
			O.cpu = atoi(optarg);
			break;
		case 'k':
			O.srv_cpu = atoi(optarg);
			break;
		case 'h':
			usage_to(stdout, 0);
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (!O.size)
		O.size = O.stream ? 65536 : 1;
	if (O.size > (64 << 20))
		usage();
}

/*
 * The forked child: serves one connection (the socketpair's end sp, or one
 * accepted on sa) and exits; "r" on ready once it can take it.
 */
static void server_child(int ready, const int *sp,
			 const struct sockaddr_storage *sa, socklen_t salen)
{
	int ls, fd, one = 1;

	pin(O.srv_cpu >= 0 ? O.srv_cpu : O.cpu);
	if (O.unix_pair) {
		close(sp[0]);
		if (write(ready, "r", 1) != 1)
			exit(2);
		serve(sp[1]);
	}
	if (toe_enter_netns(O.ep.srv_ns))
		exit(2);
	ls = socket(sa->ss_family, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (const struct sockaddr *)sa, salen) ||
	    listen(ls, 16)) {
		perror("loadgen: listen");
		exit(2);
	}
	if (write(ready, "r", 1) != 1)
		exit(2);
	fd = accept(ls, NULL, NULL);
	if (fd < 0)
		exit(2);
	serve(fd);
}

/*
 * The client's end: the socketpair's, or a connection to sa; -1 if none
 * (the server, srv, is then killed if it waits for a connection that failed).
 */
static int client_sock(pid_t srv, const int *sp,
		       const struct sockaddr_storage *sa, socklen_t salen)
{
	int fd;

	if (O.unix_pair) {
		close(sp[1]);
		return sp[0];
	}
	if (toe_enter_netns(O.ep.cli_ns))
		return -1;
	fd = socket(sa->ss_family, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (const struct sockaddr *)sa, salen)) {
		fprintf(stderr, "loadgen: connect %s port %d: %s\n", O.ep.addr,
			O.ep.port, strerror(errno));
		kill(srv, SIGKILL);
		return -1;
	}
	return fd;
}

static void report(uint64_t ops, uint64_t bad, double secs)
{
	printf("{\"mode\":\"%s\",\"type\":\"%s\",\"size\":%zu,\"ops\":%llu,\"bytes\":%llu,"
	       "\"secs\":%.6f,\"ops_per_s\":%.1f,\"mbytes_per_s\":%.1f,\"usec_per_op\":%.3f,"
	       "\"errors\":%llu}\n",
	       O.stream ? "stream" : "rr", O.unix_pair ? "unix" : "tcp", O.size,
	       (unsigned long long)ops, (unsigned long long)(ops * O.size),
	       secs, ops / secs, ops * O.size / secs / 1e6, secs / ops * 1e6,
	       (unsigned long long)bad);
}

int main(int argc, char **argv)
{
	struct sockaddr_storage sa = {};
	socklen_t salen = 0;
	uint64_t ops = 0, bad = 0, srv = 0;
	double secs = 0;
	int ready[2], sp[2], fd, st;
	pid_t pid;
	char ch;

	parse_opts(argc, argv);
	salen = endpoint_addr(&O.ep, &sa);
	if (!salen)
		usage();
	pat_init(&P);
	signal(SIGPIPE, SIG_IGN);
	if (pipe(ready) ||
	    (O.unix_pair && socketpair(AF_UNIX, SOCK_STREAM, 0, sp)))
		return 2;
	pid = fork();
	if (pid == 0)
		server_child(ready[1], sp, &sa, salen);
	pin(O.cpu);
	close(ready[1]); /* a server that exits before ready: EOF, not a hang */
	if (read(ready[0], &ch, 1) != 1) {
		fprintf(stderr, "loadgen: the server did not start\n");
		return 2;
	}
	fd = client_sock(pid, sp, &sa, salen);
	if (fd < 0)
		return 2;
	if (client(fd, &ops, &bad, &secs, &srv)) {
		fprintf(stderr, "loadgen: the connection ended early: %s\n",
			strerror(errno));
		kill(pid, SIGKILL);
		return 1;
	}
	close(fd);
	waitpid(pid, &st, 0);
	if (srv != ops * O.size)
		bad++;
	report(ops, bad, secs);
	return bad ? 1 : 0;
}
