// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Connection setup rate: N x (connect, accept, close) over TCP loopback
 * in one thread, timed with CLOCK_MONOTONIC.  Prints connections/second.
 * Usage: connrate [-n COUNT] [-6]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_storage ss = {};
	socklen_t len;
	struct timespec a, b;
	int n = 10000, v6 = 0, one = 1, i, l, c, s, opt;
	double secs;

	if (argc > 1 && !strcmp(argv[1], "--help")) {
		printf("usage: connrate [-n COUNT] [-6]\n\n"
		       "COUNT (default 10000) connections over loopback, each connected,\n"
		       "accepted and closed in turn; prints the connections per second.\n"
		       "  -6   over ::1 instead of 127.0.0.1\n");
		return 0;
	}
	while ((opt = getopt(argc, argv, "n:6")) != -1) {
		if (opt == 'n')
			n = atoi(optarg);
		else if (opt == '6')
			v6 = 1;
		else
			return fprintf(stderr,
				       "usage: connrate [-n COUNT] [-6]\n"),
			       1;
	}
	l = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6) {
		struct sockaddr_in6 *s6 = (void *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_loopback;
		len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (void *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*s4);
	}
	if (bind(l, (void *)&ss, len) || listen(l, 1024) ||
	    getsockname(l, (void *)&ss, &len)) {
		perror("listen");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		c = socket(ss.ss_family, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (void *)&ss, len)) {
			perror("connect");
			return 1;
		}
		s = accept(l, NULL, NULL);
		if (s < 0) {
			perror("accept");
			return 1;
		}
		close(c);
		close(s);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	printf("%.0f\n", n / secs);
	return 0;
}
