// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Test helper: print opentoe's ring-buffer events as JSON lines, one per
 * event, until SIGTERM/SIGINT or -t SECONDS.  Usage: toe_events PIN_DIR [-t S]
 */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "opentoe.h"

static volatile sig_atomic_t stop;

static void on_sig(int sig)
{
	(void)sig;
	stop = 1;
}

static int on_event(void *ctx, void *data, size_t len)
{
	const struct toe_event *e = data;
	char l[INET6_ADDRSTRLEN], r[INET6_ADDRSTRLEN];
	int af = e->key.family == TOE_AF_INET6 ? AF_INET6 : AF_INET;

	(void)ctx;
	if (len < sizeof(*e))
		return 0;
	inet_ntop(af, e->key.laddr, l, sizeof(l));
	inet_ntop(af, e->key.raddr, r, sizeof(r));
	printf("{\"type\":\"%s\",\"family\":%u,\"laddr\":\"%s\",\"lport\":%u,"
	       "\"raddr\":\"%s\",\"rport\":%u,\"dev\":%d,\"rule\":%d,\"decision\":%u,"
	       "\"reason\":%u,\"direction\":%u,\"bytes_acked\":%llu,"
	       "\"bytes_received\":%llu,\"segs_in\":%u,\"segs_out\":%u,"
	       "\"total_retrans\":%u,\"policy\":%u,\"netns_cookie\":%llu,"
	       "\"netns\":%llu}\n",
	       toe_event_name(e->type), e->key.family, l, e->key.lport, r,
	       e->key.rport, (int)e->dev, (int)e->rule, e->decision, e->reason,
	       e->direction, (unsigned long long)e->bytes_acked,
	       (unsigned long long)e->bytes_received, e->segs_in, e->segs_out,
	       e->total_retrans, e->policy, (unsigned long long)e->key.netns,
	       (unsigned long long)e->netns_ino);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096];
	struct ring_buffer *rb;
	double secs = 0;
	time_t end;
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: toe_events PIN_DIR [-t SECONDS]\n");
		return 1;
	}
	if (argc == 4 && !strcmp(argv[2], "-t"))
		secs = atof(argv[3]);
	snprintf(path, sizeof(path), "%s/%s", argv[1], TOE_MAP(EVENTS));
	fd = bpf_obj_get(path);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	rb = ring_buffer__new(fd, on_event, NULL, NULL);
	if (!rb) {
		perror("ring_buffer__new");
		return 1;
	}
	signal(SIGTERM, on_sig);
	signal(SIGINT, on_sig);
	end = time(NULL) + (time_t)secs;
	while (!stop && (!secs || time(NULL) < end))
		ring_buffer__poll(rb, 100);
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	return 0;
}
