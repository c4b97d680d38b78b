// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * bypass_check: both ends of TCP connections, checking every byte, for the
 * local-bypass tests (selftests/bypass).  It forks: the child is the
 * server (in --srv-ns), the parent the client (in --cli-ns); both stay in
 * the caller's cgroup, so opentoe's sock_ops sees both ends.  Prints one
 * JSON line and exits 0 if every check passed.
 *
 *   bypass_check [options] TEST
 *
 * TEST:
 *   sizes     messages of 1 B to 4 MiB, echoed; --method write | writev |
 *             more (sendmsg with MSG_MORE) | sendfile
 *   reads     partial reads, MSG_PEEK, MSG_WAITALL, FIONREAD, both ways
 *   nonblock  non-blocking sockets, 16 MiB echoed; --poller poll | epoll |
 *             epollet
 *   halfclose shutdown(SHUT_WR) seen as EOF; the other side answers after
 *   rst       the server resets (SO_LINGER 0) with data unread; the client
 *             waits in poll(), then reads and writes: ECONNRESET, EPIPE
 *   rstblock  the same with the client blocked in read() when the reset comes
 *   waitall   recv(MSG_WAITALL) of data sent in two writes 200 ms apart
 *   closewrite the server closes while the client writes
 *   killreader the server is killed (SIGKILL) while the client writes
 *   killwriter the server is killed while it writes
 *   splice    the server reads with splice(2) through a pipe
 *   pairs     --count N connections at once, each its own byte pattern
 *   stream    --seconds S of 64 KiB writes, echoed (prints "connected pid
 *             N" first, so a test can act on the live connection; SIGUSR1
 *             to N ends the writing at once, as at the end of S: a test
 *             gives a long S and ends the stream when its checks are done)
 *   slowreader the client writes 2 MiB (prints "written"), the server reads
 *             nothing for --seconds, then all; the client writes 1 MiB more
 *             a second after that
 *
 * v[7] of each side counts blocking reads that returned EAGAIN (a kernel
 * issue of sockmap sockets, see docs/bypass.md); they are retried.
 * Each side reports its socket's tcpi_bytes_acked and tcpi_bytes_received:
 * a bypassed connection moves its data without TCP, so these stay at the
 * handshake's 1 (and the FIN's 1) whatever was sent.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/tcp.h>
#include "../../bench/endpoint_opts.h"
#include "../../bench/pattern.h"
#include "lib/toe_setns.h"

#define MAX_PAIRS 8192

struct opts {
	const char *test;
	struct endpoint_opts ep;
	const char *method;
	const char *poller;
	int count;
	double seconds;
	bool mptcp;
	bool no_fionread; /* --no-fionread: a kernel whose sockmap lacks it */
	int deaf; /* --deaf N: nonblock's epoll watches nothing after N waits */
	int family;
	struct sockaddr_storage sa;
	socklen_t salen;
};

/* What one side reports (the child sends its copy through a pipe). */
struct side {
	int ok;
	char err[400];
	uint64_t sent, recvd;
	uint64_t tcp_acked, tcp_received;
	int64_t v[8]; /* test-specific numbers */
	char note[200];
};

static struct opts O;
static struct pat P;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void failf(struct side *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void failf(struct side *s, const char *fmt, ...)
{
	va_list ap;
	size_t l = strlen(s->err);

	s->ok = 0;
	if (l)
		l += snprintf(s->err + l, sizeof(s->err) - l, "; ");
	if (l >= sizeof(s->err))
		return;
	va_start(ap, fmt);
	vsnprintf(s->err + l, sizeof(s->err) - l, fmt, ap);
	va_end(ap);
}

static void tcpinfo(int fd, struct side *s)
{
	struct tcp_info ti = {};
	socklen_t l = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) == 0 &&
	    l >= offsetof(struct tcp_info, tcpi_bytes_received) + 8) {
		s->tcp_acked = ti.tcpi_bytes_acked;
		s->tcp_received = ti.tcpi_bytes_received;
	}
}

static int new_sock(void)
{
	return socket(O.family, SOCK_STREAM, O.mptcp ? IPPROTO_MPTCP : 0);
}

static int listen_sock(void)
{
	int one = 1, fd = new_sock();

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&O.sa, O.salen) || listen(fd, 4096)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int connect_sock(void)
{
	int fd = new_sock();

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&O.sa, O.salen)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void set_nb(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Write all of buf; 0 or -errno. */
static int writen(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * Read to EOF, checking phase ph from offset *off; echo_fd >= 0: write
 * every byte back.  0 at EOF, -errno on error, -EBADMSG on a wrong byte.
 */
/*
 * One read that must see EOF (0).  A blocking read on a sockmap socket may
 * say EAGAIN when a wakeup finds no data (see read_check): counted in v[7],
 * read again.
 */
static ssize_t read_eof(int fd, struct side *s)
{
	char c;
	ssize_t n;

	while ((n = read(fd, &c, 1)) < 0 &&
	       (errno == EINTR ||
		(errno == EAGAIN && !(fcntl(fd, F_GETFL) & O_NONBLOCK))))
		if (errno == EAGAIN)
			__atomic_add_fetch(&s->v[7], 1, __ATOMIC_RELAXED);
	return n;
}

static int read_check(int fd, uint64_t ph, uint64_t *off, int echo_fd,
		      struct side *s, const char *what)
{
	static __thread char buf[1 << 18];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		long bad;
		int err;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN &&
			    !(fcntl(fd, F_GETFL) & O_NONBLOCK)) {
				/*
				 * A blocking read said EAGAIN: a known kernel issue
				 * of sockmap sockets (tcp_bpf_recvmsg returns it when
				 * a wakeup finds no data).  Counted, read again.
				 */
				__atomic_add_fetch(&s->v[7], 1,
						   __ATOMIC_RELAXED);
				continue;
			}
			return -errno;
		}
		if (n == 0)
			return 0;
		bad = pat_check(&P, ph, *off, buf, n);
		if (bad >= 0) {
			failf(s, "%s: wrong byte at offset %llu", what,
			      (unsigned long long)(*off + bad));
			return -EBADMSG;
		}
		*off += n;
		if (echo_fd >= 0) {
			err = writen(echo_fd, buf, n);
			if (err)
				return err;
			s->sent += n;
		}
	}
}

/* Read exactly len bytes (a loop: no reliance on MSG_WAITALL). */
static ssize_t recv_all(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return got ? (ssize_t)got : n;
		got += n;
	}
	return got;
}

/* ---------------------------------------------------------- echo server */

/* Echo with checks until EOF, then shut the write side down. */
static void srv_echo(int fd, struct side *s)
{
	uint64_t off = 0;
	int err = read_check(fd, pat_phase(0), &off, fd, s, "server");

	s->recvd = off;
	if (err && err != -EBADMSG)
		failf(s, "server: %s", strerror(-err));
	shutdown(fd, SHUT_WR);
	tcpinfo(fd, s);
}

struct reader {
	int fd;
	uint64_t ph;
	uint64_t got;
	int err;
	struct side *s;
};

static void *reader_fn(void *arg)
{
	struct reader *r = arg;

	r->err = read_check(r->fd, r->ph, &r->got, -1, r->s, "client (echo)");
	return NULL;
}

/* ---------------------------------------------------------------- sizes */

static const size_t sizes[] = {
	1,    2,    3,	   7,	  64,	 100,	 1000,	  1448,	   4095,
	4096, 4097, 65535, 65536, 65537, 262144, 1 << 20, 4 << 20,
};
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))

static int send_iov(int fd, struct iovec *iov, int n, int flags)
{
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = n };

	while (m.msg_iovlen) {
		ssize_t w = sendmsg(fd, &m, flags);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (m.msg_iovlen && (size_t)w >= m.msg_iov->iov_len) {
			w -= m.msg_iov->iov_len;
			m.msg_iov++;
			m.msg_iovlen--;
		}
		if (m.msg_iovlen) {
			m.msg_iov->iov_base = (char *)m.msg_iov->iov_base + w;
			m.msg_iov->iov_len -= w;
		}
	}
	return 0;
}

static void cli_sizes(int fd, struct side *s)
{
	uint64_t total = 0, off = 0;
	struct reader r = { .fd = fd, .ph = pat_phase(0), .s = s };
	pthread_t th;
	char *buf;
	int mfd = -1, err = 0;
	unsigned int i;

	for (i = 0; i < N_SIZES; i++)
		total += sizes[i];
	buf = malloc(total);
	pat_fill(&P, pat_phase(0), 0, buf, total);
	if (!strcmp(O.method, "sendfile")) {
		mfd = memfd_create("bypass_check", 0);
		if (mfd < 0 || writen(mfd, buf, total)) {
			failf(s, "memfd: %s", strerror(errno));
			return;
		}
	}
	pthread_create(&th, NULL, reader_fn, &r);
	for (i = 0; i < N_SIZES && !err; i++) {
		size_t len = sizes[i];
		char *p = buf + off;

		if (!strcmp(O.method, "write")) {
			err = writen(fd, p, len);
		} else if (!strcmp(O.method, "writev")) {
			struct iovec iov[3];
			int n = 0;
			size_t a = len / 3, b = len / 3, c = len - a - b;

			if (a)
				iov[n++] = (struct iovec){ p, a };
			if (b)
				iov[n++] = (struct iovec){ p + a, b };
			iov[n++] = (struct iovec){ p + a + b, c };
			err = send_iov(fd, iov, n, 0);
		} else if (!strcmp(O.method, "more")) {
			/* first half corked with MSG_MORE, the rest pushes it */
			struct iovec h1 = { p, len / 2 },
				     h2 = { p + len / 2, len - len / 2 };

			if (h1.iov_len)
				err = send_iov(fd, &h1, 1, MSG_MORE);
			if (!err)
				err = send_iov(fd, &h2, 1, 0);
		} else if (!strcmp(O.method, "sendfile")) {
			off_t fo = off;
			size_t left = len;

			while (left) {
				ssize_t n = sendfile(fd, mfd, &fo, left);

				if (n < 0 && errno == EINTR)
					continue;
				if (n <= 0) {
					err = n < 0 ? -errno : -EIO;
					break;
				}
				left -= n;
			}
		} else {
			failf(s, "unknown --method %s", O.method);
			err = -EINVAL;
		}
		off += len;
	}
	if (err && err != -EINVAL)
		failf(s, "client: send: %s", strerror(-err));
	s->sent = off;
	shutdown(fd, SHUT_WR);
	pthread_join(th, NULL);
	s->recvd = r.got;
	if (r.err && r.err != -EBADMSG)
		failf(s, "client: read: %s", strerror(-r.err));
	if (r.got != total)
		failf(s, "client: echo has %llu bytes, sent %llu",
		      (unsigned long long)r.got, (unsigned long long)total);
	tcpinfo(fd, s);
	if (mfd >= 0)
		close(mfd);
	free(buf);
}

/* ---------------------------------------------------------------- reads */

#define READS_LEN 10000

static int fionread(int fd)
{
	int n = -1;

	ioctl(fd, FIONREAD, &n);
	return n;
}

/* Partial reads, peeks and FIONREAD on READS_LEN queued bytes of phase ph. */
static void check_reads(int fd, uint64_t ph, struct side *s, const char *who)
{
	static const int steps[] = { 1, 7, 100, 1000 };
	char buf[READS_LEN];
	uint64_t off = 0;
	double t0 = now();
	unsigned int i;
	int q = 0;
	ssize_t n;

	/* FIONREAD must come to the whole write (sockmap's known pitfall) */
	while (now() - t0 < 3 &&
	       (q = O.no_fionread ? (int)recv(fd, buf, READS_LEN,
					      MSG_PEEK | MSG_DONTWAIT) :
				    fionread(fd)) < READS_LEN)
		usleep(1000);
	s->v[0] = q;
	if (O.no_fionread)
		s->v[0] = -1; /* not asked */
	else if (q != READS_LEN)
		failf(s, "%s: FIONREAD says %d with %d bytes queued", who, q,
		      READS_LEN);
	n = recv(fd, buf, 100, MSG_PEEK);
	if (n != 100 || pat_check(&P, ph, 0, buf, 100) >= 0)
		failf(s, "%s: MSG_PEEK of 100 returned %zd or wrong bytes", who,
		      n);
	n = recv(fd, buf, 50, MSG_PEEK);
	if (n != 50 || pat_check(&P, ph, 0, buf, 50) >= 0)
		failf(s, "%s: second MSG_PEEK returned %zd or wrong bytes", who,
		      n);
	if (!O.no_fionread && fionread(fd) != READS_LEN)
		failf(s, "%s: FIONREAD after peeking is %d", who, fionread(fd));
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		n = recv(fd, buf, steps[i], 0);
		if (n != steps[i] || pat_check(&P, ph, off, buf, n) >= 0) {
			failf(s,
			      "%s: read of %d at %llu returned %zd or wrong bytes",
			      who, steps[i], (unsigned long long)off, n);
			return;
		}
		off += n;
		if (!O.no_fionread && fionread(fd) != (int)(READS_LEN - off))
			failf(s, "%s: FIONREAD %d after reading %llu", who,
			      fionread(fd), (unsigned long long)off);
	}
	n = recv(fd, buf, 10, MSG_PEEK);
	if (n != 10 || pat_check(&P, ph, off, buf, n) >= 0)
		failf(s,
		      "%s: MSG_PEEK after partial reads returned %zd or wrong bytes",
		      who, n);
	n = recv(fd, buf, READS_LEN - off, MSG_WAITALL);
	if (n != (ssize_t)(READS_LEN - off) ||
	    pat_check(&P, ph, off, buf, n) >= 0)
		failf(s,
		      "%s: MSG_WAITALL read returned %zd (want %llu) or wrong bytes",
		      who, n, (unsigned long long)(READS_LEN - off));
	else
		off += n;
	s->recvd = off;
	if (fionread(fd) != 0)
		failf(s, "%s: FIONREAD %d after reading everything", who,
		      fionread(fd));
}

static void cli_reads(int fd, struct side *s)
{
	char buf[READS_LEN];

	pat_fill(&P, pat_phase(0), 0, buf, READS_LEN);
	if (writen(fd, buf, READS_LEN))
		failf(s, "client: write: %s", strerror(errno));
	s->sent = READS_LEN;
	check_reads(fd, pat_phase(1), s, "client");
	shutdown(fd, SHUT_WR);
	if (read_eof(fd, s) != 0)
		failf(s, "client: no EOF at the end");
	tcpinfo(fd, s);
}

static void srv_reads(int fd, struct side *s)
{
	char buf[READS_LEN];

	check_reads(fd, pat_phase(0), s, "server");
	pat_fill(&P, pat_phase(1), 0, buf, READS_LEN);
	if (writen(fd, buf, READS_LEN))
		failf(s, "server: write: %s", strerror(errno));
	s->sent = READS_LEN;
	if (read_eof(fd, s) != 0)
		failf(s, "server: no EOF at the end");
	shutdown(fd, SHUT_WR);
	tcpinfo(fd, s);
}

/* ------------------------------------------------------------- nonblock */

#define NB_TOTAL (16 << 20)
#define NB_BUF (4 << 20)

/*
 * One event loop for both ends: "out" is what is still to be written
 * (client: the pattern, server: the echo), written whenever writable; reads
 * are checked against phase 0.  A missed wakeup fails instead of hanging
 * (see nb_wait).
 */
struct nb {
	int fd, ep;
	bool client;
	char *buf; /* server: echo buffer */
	size_t bstart, bend;
	uint64_t written, rd;
	bool wr_done, rd_eof;
	long spurious, waits, late;
};

/* TOE_SLOW: how much slower than this host the machine is (the qemu guest's) */
static double slow(void)
{
	const char *e = getenv("TOE_SLOW");
	double f = e ? atof(e) : 1;

	return f >= 1 ? f : 1;
}

/* the poller once: 1 with *in / *out set, 0 on timeout, -1 on error */
static int nb_once(struct nb *b, bool use_poll, bool want_in, bool want_out,
		   int ms, bool *in, bool *out)
{
	int n;

	if (use_poll) {
		struct pollfd p = { .fd = b->fd,
				    .events = (want_in ? POLLIN : 0) |
					      (want_out ? POLLOUT : 0) };

		n = poll(&p, 1, ms);
		if (n > 0) {
			*in = p.revents & (POLLIN | POLLHUP | POLLERR);
			*out = p.revents & (POLLOUT | POLLERR);
		}
	} else {
		struct epoll_event ev;

		n = epoll_wait(b->ep, &ev, 1, ms);
		if (n > 0) {
			*in = ev.events &
			      (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP);
			*out = ev.events & (EPOLLOUT | EPOLLERR);
		}
	}
	return n;
}

#define NB_QUIET_MS 5000
#define NB_PATIENCE 20 /* s of no readiness at all, times TOE_SLOW */

/*
 * Wait for readiness.  Silence is not taken as a missed wakeup by the
 * clock alone: a guest starved of CPU (qemu at SCHED_IDLE beside a busy
 * host) can sleep through a 5 s timeout while its peer's write is still
 * on its way.  After NB_QUIET_MS of silence the poller is asked again
 * without waiting (a late wakeup is in epoll's ready list by then), then
 * the socket itself with poll(2).  A socket that is ready while epoll stays
 * silent for another NB_QUIET_MS missed its wakeup: fail.  A socket that
 * is not ready is waited for, NB_PATIENCE s times TOE_SLOW in all.  With
 * --poller poll the second look is the same system call, so a late poll
 * is only counted (v[2]): the wakeup it would miss is the socket's, which
 * the epoll runs check.  Returns 0, or -1 after failf.
 */
static int nb_wait(struct nb *b, struct side *s, bool want_in, bool want_out,
		   bool *in, bool *out)
{
	bool use_poll = !strcmp(O.poller, "poll");
	bool et = !strcmp(O.poller, "epollet");
	const char *who = b->client ? "client" : "server";
	double t0 = now(), patience = NB_PATIENCE * slow();
	bool ready_in, ready_out;
	int n;

	*in = *out = false;
	if (!use_poll) {
		/* level: refresh the interest; edge: set once and keep it */
		struct epoll_event ev = {
			.events = et ? EPOLLIN | EPOLLOUT | EPOLLET :
				       (want_in ? EPOLLIN : 0) |
						  (want_out ? EPOLLOUT : 0),
			.data.fd = b->fd
		};

		/* --deaf: a missed wakeup made on purpose (the checker's test) */
		bool deaf = O.deaf && b->waits >= O.deaf;

		if (deaf)
			ev.events = et ? EPOLLET : 0;
		if ((!et || !b->waits || (deaf && b->waits == O.deaf)) &&
		    epoll_ctl(b->ep, b->waits ? EPOLL_CTL_MOD : EPOLL_CTL_ADD,
			      b->fd, &ev)) {
			failf(s, "%s: epoll_ctl: %s", who, strerror(errno));
			return -1;
		}
	}
	for (;;) {
		n = nb_once(b, use_poll, want_in, want_out, NB_QUIET_MS, in,
			    out);
		if (n > 0)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			failf(s, "%s: %s: %s", who, O.poller, strerror(errno));
			return -1;
		}
		/* NB_QUIET_MS of silence: a wakeup that came late is here now */
		if (nb_once(b, use_poll, want_in, want_out, 0, in, out) > 0) {
			b->late++;
			return 0;
		}
		if (!use_poll && nb_once(b, true, want_in, want_out, 0,
					 &ready_in, &ready_out) > 0) {
			n = nb_once(b, false, want_in, want_out, NB_QUIET_MS,
				    in, out);
			if (n > 0) {
				b->late++;
				return 0;
			}
			failf(s,
			      "%s: the socket is ready (%s%s) but %s said nothing for %d s (read %llu, written %llu): a missed wakeup",
			      who, ready_in ? "in" : "", ready_out ? "out" : "",
			      O.poller, 2 * NB_QUIET_MS / 1000,
			      (unsigned long long)b->rd,
			      (unsigned long long)b->written);
			return -1;
		}
		if (now() - t0 > patience) {
			failf(s,
			      "%s: no readiness for %.0f s (read %llu, written %llu): the peer stopped",
			      who, now() - t0, (unsigned long long)b->rd,
			      (unsigned long long)b->written);
			return -1;
		}
	}
}

static void nb_loop(struct nb *b, struct side *s)
{
	static const size_t wsz[] = { 1, 100, 4096, 65536, 333, 1 << 20, 7 };
	static char rbuf[1 << 17];
	char *src = NULL;
	unsigned int wi = 0;
	bool in, out, et = !strcmp(O.poller, "epollet");
	bool rd_again = false, wr_again = false; /* the last try hit EAGAIN */

	if (b->client) {
		src = malloc(NB_TOTAL);
		pat_fill(&P, pat_phase(0), 0, src, NB_TOTAL);
	}
	b->ep = epoll_create1(0);
	set_nb(b->fd);
	while (!(b->rd_eof && b->wr_done)) {
		bool have_out = b->client ? b->written < NB_TOTAL :
					    b->bend > b->bstart;
		bool room = b->client || b->bend < NB_BUF;

		if (!b->wr_done && !have_out && (b->client || b->rd_eof)) {
			shutdown(b->fd, SHUT_WR);
			b->wr_done = true;
			continue;
		}
		/*
		 * Edge-triggered: an edge only comes for new data or new room,
		 * so wait only once both directions ran into EAGAIN.
		 */
		if (et && ((room && !b->rd_eof && !rd_again) ||
			   (have_out && !wr_again))) {
			in = out = false;
		} else {
			if (nb_wait(b, s, room && !b->rd_eof, have_out, &in,
				    &out))
				break;
			b->waits++;
			rd_again = wr_again = false;
		}
		if (in || et) {
			bool got = false;

			while (!b->rd_eof) {
				char *dst = b->client ? rbuf : b->buf + b->bend;
				size_t cap = b->client ? sizeof(rbuf) :
							 NB_BUF - b->bend;
				ssize_t n;

				if (!cap)
					break;
				n = read(b->fd, dst, cap);
				if (n < 0) {
					if (errno == EAGAIN) {
						rd_again = true;
						break;
					}
					failf(s, "read: %s", strerror(errno));
					goto out;
				}
				got = true;
				if (n == 0) {
					b->rd_eof = true;
					break;
				}
				if (pat_check(&P, pat_phase(0), b->rd, dst,
					      n) >= 0) {
					failf(s,
					      "%s: wrong byte near offset %llu",
					      b->client ? "client" : "server",
					      (unsigned long long)b->rd);
					goto out;
				}
				b->rd += n;
				if (!b->client)
					b->bend += n;
			}
			if (in && !got)
				b->spurious++;
		}
		if (out || et) {
			for (;;) {
				const char *p;
				size_t len;
				ssize_t n;

				if (b->client) {
					len = NB_TOTAL - b->written;
					if (len > wsz[wi % 7])
						len = wsz[wi % 7];
					p = src + b->written;
				} else {
					len = b->bend - b->bstart;
					p = b->buf + b->bstart;
				}
				if (!len)
					break;
				n = write(b->fd, p, len);
				if (n < 0) {
					if (errno == EAGAIN) {
						wr_again = true;
						break;
					}
					failf(s, "write: %s", strerror(errno));
					goto out;
				}
				b->written += n;
				wi++;
				if (!b->client) {
					b->bstart += n;
					if (b->bstart == b->bend)
						b->bstart = b->bend = 0;
				}
			}
			if (!b->client && b->bstart && b->bend == NB_BUF) {
				memmove(b->buf, b->buf + b->bstart,
					b->bend - b->bstart);
				b->bend -= b->bstart;
				b->bstart = 0;
			}
		}
	}
out:
	s->sent = b->written;
	s->recvd = b->rd;
	s->v[0] = b->spurious;
	s->v[1] = b->waits;
	s->v[2] = b->late;
	if (b->client && b->rd != NB_TOTAL)
		failf(s, "client: echo has %llu bytes, want %u",
		      (unsigned long long)b->rd, NB_TOTAL);
	tcpinfo(b->fd, s);
	free(src);
	close(b->ep);
}

static void cli_nonblock(int fd, struct side *s)
{
	struct nb b = { .fd = fd, .client = true };

	nb_loop(&b, s);
}

static void srv_nonblock(int fd, struct side *s)
{
	struct nb b = { .fd = fd, .buf = malloc(NB_BUF) };

	nb_loop(&b, s);
	free(b.buf);
}

/* ------------------------------------------------------------ halfclose */

#define HC_LEN (1 << 20)

static void cli_halfclose(int fd, struct side *s)
{
	char *buf = malloc(HC_LEN);
	uint64_t off = 0;
	int err;

	pat_fill(&P, pat_phase(0), 0, buf, HC_LEN);
	if (writen(fd, buf, HC_LEN))
		failf(s, "client: write: %s", strerror(errno));
	s->sent = HC_LEN;
	shutdown(fd, SHUT_WR);
	err = read_check(fd, pat_phase(1), &off, -1, s, "client");
	if (err && err != -EBADMSG)
		failf(s, "client: read after its shutdown: %s", strerror(-err));
	s->recvd = off;
	if (off != HC_LEN)
		failf(s, "client: got %llu bytes after its shutdown, want %u",
		      (unsigned long long)off, HC_LEN);
	tcpinfo(fd, s);
	free(buf);
}

static void srv_halfclose(int fd, struct side *s)
{
	char *buf = malloc(HC_LEN);
	uint64_t off = 0;
	int err = read_check(fd, pat_phase(0), &off, -1, s, "server");

	if (err && err != -EBADMSG)
		failf(s, "server: read: %s", strerror(-err));
	s->recvd = off;
	if (off != HC_LEN)
		failf(s, "server: EOF after %llu bytes, want %u",
		      (unsigned long long)off, HC_LEN);
	/* the client's half is closed; ours is open: answer */
	pat_fill(&P, pat_phase(1), 0, buf, HC_LEN);
	if (writen(fd, buf, HC_LEN))
		failf(s, "server: write after the client's shutdown: %s",
		      strerror(errno));
	s->sent = HC_LEN;
	tcpinfo(fd, s);
	free(buf);
}

/*
 * waitall: recv(MSG_WAITALL) of 2000 bytes that come in two writes 200 ms
 * apart.  TCP waits for all 2000; v[0] is what recv returned.
 */
static void cli_waitall(int fd, struct side *s)
{
	char buf[2000];

	pat_fill(&P, pat_phase(0), 0, buf, sizeof(buf));
	if (writen(fd, buf, 1000))
		failf(s, "client: write: %s", strerror(errno));
	usleep(200 * 1000);
	if (writen(fd, buf + 1000, 1000))
		failf(s, "client: write: %s", strerror(errno));
	s->sent = 2000;
	shutdown(fd, SHUT_WR);
	if (read_eof(fd, s) != 0)
		failf(s, "client: no EOF");
	tcpinfo(fd, s);
}

static void srv_waitall(int fd, struct side *s)
{
	char buf[2000];
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_WAITALL), m;

	s->v[0] = n;
	if (n < 0 || pat_check(&P, pat_phase(0), 0, buf, n) >= 0)
		failf(s, "server: recv returned %zd or wrong bytes", n);
	m = n > 0 ? recv_all(fd, buf + n, sizeof(buf) - n) : 0;
	s->recvd = n + (m > 0 ? m : 0);
	if (s->recvd != sizeof(buf) ||
	    pat_check(&P, pat_phase(0), 0, buf, sizeof(buf)) >= 0)
		failf(s, "server: got %llu bytes or wrong ones",
		      (unsigned long long)s->recvd);
	if (n != (ssize_t)sizeof(buf))
		snprintf(s->note, sizeof(s->note),
			 "MSG_WAITALL returned %zd of 2000", n);
	shutdown(fd, SHUT_WR);
	tcpinfo(fd, s);
}

/* ------------------------------------------------------ rst, close, kill */

/*
 * Keep writing 64 KiB until a write fails; return its errno (0 if none
 * within 10 s: a hang).
 */
static int write_until_error(int fd, struct side *s)
{
	static char buf[65536];
	double t0 = now();
	struct timeval tv = { .tv_sec = 1 };

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (now() - t0 < 10) {
		ssize_t n;

		pat_fill(&P, pat_phase(0), s->sent, buf, sizeof(buf));
		n = write(fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return errno;
		s->sent += n;
	}
	return 0;
}

static bool reset_errno(int e)
{
	return e == EPIPE || e == ECONNRESET;
}

#define RST_LEN 65536

/*
 * rst: the client waits for the reset with poll(), then reads.  rstblock:
 * the client is already blocked in read() when the reset comes (5 s
 * SO_RCVTIMEO: EAGAIN at once means the reset woke it without an error,
 * EAGAIN after 5 s that it did not wake it).
 */
static void cli_rst(int fd, struct side *s, bool block)
{
	char buf[RST_LEN];
	struct timeval tv = { .tv_sec = 5 };
	ssize_t n;
	double t0;
	int e;

	pat_fill(&P, pat_phase(0), 0, buf, RST_LEN);
	if (writen(fd, buf, RST_LEN))
		failf(s, "client: write: %s", strerror(errno));
	s->sent = RST_LEN;
	if (!block) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };

		if (poll(&pf, 1, 5000) != 1)
			failf(s,
			      "client: poll saw nothing of the reset in 5 s");
		s->v[2] = pf.revents;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	t0 = now();
	n = read(fd, buf, sizeof(buf));
	e = n < 0 ? errno : 0;
	s->v[0] = n < 0 ? -e : n;
	if (n < 0 && e == EAGAIN && now() - t0 < 4.5)
		failf(s, "client: read after the reset: EAGAIN at once");
	else if (n < 0 && e == EAGAIN)
		failf(s, "client: read after the reset hangs (5 s)");
	else if (n > 0)
		failf(s, "client: read after the reset returned %zd bytes", n);
	else if (n < 0 && e != ECONNRESET)
		failf(s, "client: read after the reset: %s", strerror(e));
	e = write_until_error(fd, s);
	s->v[1] = -e;
	if (!reset_errno(e))
		failf(s, "client: writes after the reset: %s",
		      e ? strerror(e) : "no error in 10 s");
	tcpinfo(fd, s);
}

static void srv_rst(int fd, struct side *s)
{
	char buf[RST_LEN];
	struct linger l = { 1, 0 };
	ssize_t n = recv_all(fd, buf, RST_LEN / 2);

	if (n != RST_LEN / 2 || pat_check(&P, pat_phase(0), 0, buf, n) >= 0)
		failf(s, "server: read %zd or wrong bytes", n);
	s->recvd = n > 0 ? n : 0;
	usleep(100 * 1000); /* the rest is queued, unread */
	tcpinfo(fd, s);
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
}

static void cli_closewrite(int fd, struct side *s)
{
	int e = write_until_error(fd, s);

	s->v[0] = -e;
	if (!reset_errno(e))
		failf(s, "client: writes after the server closed: %s",
		      e ? strerror(e) : "no error in 10 s");
	tcpinfo(fd, s);
}

#define CW_LEN (1 << 20)

static void srv_closewrite(int fd, struct side *s)
{
	char *buf = malloc(CW_LEN);
	ssize_t n = recv_all(fd, buf, CW_LEN);

	if (n != CW_LEN || pat_check(&P, pat_phase(0), 0, buf, n) >= 0)
		failf(s, "server: read %zd or wrong bytes", n);
	s->recvd = n > 0 ? n : 0;
	tcpinfo(fd, s);
	free(buf);
}

/* killreader: the server signals after 1 MiB and keeps reading; killed. */
static int sig_fd = -1; /* server -> client: progress, in the kill tests */

static void srv_killreader(int fd, struct side *s)
{
	char *buf = malloc(CW_LEN), c = 'k';
	ssize_t n = recv_all(fd, buf, CW_LEN);

	if (n != CW_LEN || pat_check(&P, pat_phase(0), 0, buf, n) >= 0)
		failf(s, "server: read %zd or wrong bytes", n);
	if (write(sig_fd, &c, 1) != 1)
		failf(s, "server: cannot signal");
	for (;;)
		pause(); /* killed here */
}

static void cli_killwriter(int fd, struct side *s, pid_t child, int prog_fd)
{
	uint64_t off = 0, last = 0, v;
	static char buf[1 << 16];
	int killed = 0, err = 0;

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : 0;
			break;
		}
		if (pat_check(&P, pat_phase(0), off, buf, n) >= 0) {
			failf(s, "client: wrong byte near %llu",
			      (unsigned long long)off);
			break;
		}
		off += n;
		if (!killed && off >= (1 << 20)) {
			kill(child, SIGKILL);
			killed = 1;
		}
	}
	/* the writer's last word: how much its writes returned */
	while (read(prog_fd, &v, sizeof(v)) == sizeof(v))
		last = v;
	s->recvd = off;
	s->v[0] = last;
	s->v[1] = -err;
	if (err && !reset_errno(err))
		failf(s, "client: read: %s", strerror(err));
	if (off < last)
		failf(s,
		      "client: got %llu bytes, the killed writer had written %llu",
		      (unsigned long long)off, (unsigned long long)last);
	tcpinfo(fd, s);
}

static void srv_killwriter(int fd, struct side *s)
{
	static char buf[1 << 16];
	uint64_t off = 0;

	(void)s;
	for (;;) {
		pat_fill(&P, pat_phase(0), off, buf, sizeof(buf));
		if (writen(fd, buf, sizeof(buf)))
			pause();
		off += sizeof(buf);
		if (write(sig_fd, &off, sizeof(off)) != sizeof(off))
			pause();
	}
}

/* --------------------------------------------------------------- splice */

#define SP_LEN (1 << 20)

static void cli_splice(int fd, struct side *s)
{
	char *buf = malloc(SP_LEN);

	pat_fill(&P, pat_phase(0), 0, buf, SP_LEN);
	if (writen(fd, buf, SP_LEN))
		failf(s, "client: write: %s", strerror(errno));
	s->sent = SP_LEN;
	shutdown(fd, SHUT_WR);
	if (read_eof(fd, s) != 0)
		failf(s, "client: no EOF");
	tcpinfo(fd, s);
	free(buf);
}

/* splice(socket -> pipe), read the pipe; no progress for 3 s: stalled. */
static void srv_splice(int fd, struct side *s)
{
	static char buf[1 << 16];
	uint64_t off = 0;
	double last = now();
	int p[2];

	if (pipe(p)) {
		failf(s, "pipe: %s", strerror(errno));
		return;
	}
	set_nb(fd);
	for (;;) {
		ssize_t n = splice(fd, NULL, p[1], NULL, sizeof(buf),
				   SPLICE_F_NONBLOCK);

		if (n < 0 && errno == EAGAIN) {
			struct pollfd pf = { .fd = fd, .events = POLLIN };

			if (now() - last > 3) {
				s->v[0] = 1; /* stalled */
				failf(s,
				      "server: splice sees no data for 3 s after %llu bytes (FIONREAD %d)",
				      (unsigned long long)off, fionread(fd));
				break;
			}
			poll(&pf, 1, 100);
			if (pf.revents & POLLIN)
				usleep(1000); /* readable, yet splice finds nothing */
			continue;
		}
		if (n < 0) {
			failf(s, "server: splice: %s", strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if (read(p[0], buf, n) != n ||
		    pat_check(&P, pat_phase(0), off, buf, n) >= 0) {
			failf(s, "server: wrong bytes through splice near %llu",
			      (unsigned long long)off);
			break;
		}
		off += n;
		last = now();
	}
	s->recvd = off;
	if (!s->v[0] && off != SP_LEN)
		failf(s, "server: spliced %llu bytes, want %u",
		      (unsigned long long)off, SP_LEN);
	tcpinfo(fd, s);
	close(p[0]);
	close(p[1]);
}

/* ---------------------------------------------------------------- pairs */

#define PAIR_LEN 65536

/*
 * N connections at once, both ends in one epoll loop each.  The client
 * sends a 4-byte index, then PAIR_LEN bytes of phase index; the server
 * checks them and answers PAIR_LEN bytes of phase index + N, which the
 * client checks: a byte from any other connection is caught.
 */
struct conn {
	int fd;
	uint32_t id; /* server: learnt from the first 4 bytes */
	uint32_t idb; /* bytes of the id received */
	uint64_t wr, rd;
	bool rd_done;
	bool bypassed;
};

static void pairs_loop(struct conn *c, int n, bool client, struct side *s)
{
	static char buf[PAIR_LEN + 4];
	int ep = epoll_create1(0), left = n, i;
	struct epoll_event ev[256];

	for (i = 0; i < n; i++) {
		struct epoll_event e = { .events = EPOLLIN | EPOLLOUT,
					 .data.u32 = i };

		set_nb(c[i].fd);
		epoll_ctl(ep, EPOLL_CTL_ADD, c[i].fd, &e);
	}
	while (left > 0) {
		int k = epoll_wait(ep, ev, 256, 10000);

		if (k <= 0) {
			failf(s, "%s: %d connections stuck for 10 s",
			      client ? "client" : "server", left);
			break;
		}
		for (i = 0; i < k; i++) {
			struct conn *x = &c[ev[i].data.u32];
			uint64_t wph = client ? pat_phase(x->id) :
						pat_phase(x->id + O.count);
			uint64_t rph = client ? pat_phase(x->id + O.count) :
						pat_phase(x->id);
			bool can_write = client || x->idb == 4;
			ssize_t r;

			/* write what is due */
			while (can_write &&
			       x->wr < PAIR_LEN + (client ? 4 : 0)) {
				size_t hdr = client ? 4 : 0, len;
				char *p = buf;

				if (client && x->wr < 4) {
					memcpy(buf, &x->id, 4);
					pat_fill(&P, wph, 0, buf + 4, PAIR_LEN);
					p = buf + x->wr;
					len = PAIR_LEN + 4 - x->wr;
				} else {
					pat_fill(&P, wph, x->wr - hdr, buf,
						 PAIR_LEN + hdr - x->wr);
					len = PAIR_LEN + hdr - x->wr;
				}
				r = write(x->fd, p, len);
				if (r < 0) {
					if (errno != EAGAIN)
						failf(s, "write: %s",
						      strerror(errno));
					break;
				}
				x->wr += r;
			}
			/* read */
			while (!x->rd_done) {
				if (!client && x->idb < 4) {
					r = read(x->fd, (char *)&x->id + x->idb,
						 4 - x->idb);
					if (r <= 0)
						break;
					x->idb += r;
					if (x->idb == 4 &&
					    x->id >= (uint32_t)O.count) {
						failf(s,
						      "server: bad connection id %u",
						      x->id);
						x->rd_done = true;
						left--;
					}
					continue;
				}
				rph = client ? pat_phase(x->id + O.count) :
					       pat_phase(x->id);
				r = read(x->fd, buf, PAIR_LEN - x->rd);
				if (r < 0 && errno == EAGAIN)
					break;
				if (r <= 0) {
					failf(s,
					      "%s: connection %u ended after %llu bytes: %s",
					      client ? "client" : "server",
					      x->id, (unsigned long long)x->rd,
					      r ? strerror(errno) : "EOF");
					x->rd_done = true;
					left--;
					break;
				}
				if (pat_check(&P, rph, x->rd, buf, r) >= 0) {
					failf(s,
					      "%s: connection %u got another's bytes near %llu",
					      client ? "client" : "server",
					      x->id, (unsigned long long)x->rd);
					s->v[2]++;
					x->rd_done = true;
					left--;
					break;
				}
				x->rd += r;
				s->recvd += r;
				if (x->rd == PAIR_LEN) {
					x->rd_done = true;
					left--;
				}
			}
		}
	}
	/* everything answered: count the bypassed ones, then close */
	for (i = 0; i < n; i++) {
		struct side t = {};

		if (!client && c[i].idb == 4 && c[i].wr < PAIR_LEN) {
			/* finish our answer (blocking) */
			fcntl(c[i].fd, F_SETFL,
			      fcntl(c[i].fd, F_GETFL) & ~O_NONBLOCK);
			pat_fill(&P, pat_phase(c[i].id + O.count), c[i].wr, buf,
				 PAIR_LEN - c[i].wr);
			if (writen(c[i].fd, buf, PAIR_LEN - c[i].wr))
				failf(s, "server: write: %s", strerror(errno));
			c[i].wr = PAIR_LEN;
		}
		tcpinfo(c[i].fd, &t);
		if (t.tcp_acked <= 2 && t.tcp_received <= 2)
			s->v[0]++; /* data moved without TCP */
		s->sent += c[i].wr;
	}
	if (!client) {
		/* wait for the client to close, then close */
		for (i = 0; i < n; i++) {
			char ch;

			fcntl(c[i].fd, F_SETFL,
			      fcntl(c[i].fd, F_GETFL) & ~O_NONBLOCK);
			if (read(c[i].fd, &ch, 1) != 0)
				failf(s, "server: connection %u: no EOF",
				      c[i].id);
		}
	}
	for (i = 0; i < n; i++)
		close(c[i].fd);
	s->v[1] = n;
	close(ep);
}

static void cli_pairs(struct side *s)
{
	struct conn *c = calloc(O.count, sizeof(*c));
	int i;

	for (i = 0; i < O.count; i++) {
		c[i].fd = connect_sock();
		c[i].id = i;
		if (c[i].fd < 0) {
			failf(s, "client: connect %d: %s", i, strerror(errno));
			O.count = i;
			break;
		}
	}
	pairs_loop(c, O.count, true, s);
	free(c);
}

static void srv_pairs(int ls, struct side *s)
{
	struct conn *c = calloc(O.count, sizeof(*c));
	int i;

	for (i = 0; i < O.count; i++) {
		c[i].fd = accept(ls, NULL, NULL);
		if (c[i].fd < 0) {
			failf(s, "server: accept: %s", strerror(errno));
			break;
		}
	}
	pairs_loop(c, i, false, s);
	free(c);
}

/* --------------------------------------------------------------- stream */

static volatile sig_atomic_t stream_stop; /* SIGUSR1: end the writing */

static void on_stream_stop(int sig)
{
	(void)sig;
	stream_stop = 1;
}

static void cli_stream(int fd, struct side *s)
{
	static char buf[65536];
	struct reader r = { .fd = fd, .ph = pat_phase(0), .s = s };
	double end = now() + O.seconds;
	pthread_t th;
	int err = 0;

	signal(SIGUSR1, on_stream_stop);
	printf("connected pid %d\n", (int)getpid());
	fflush(stdout);
	pthread_create(&th, NULL, reader_fn, &r);
	while (now() < end && !stream_stop) {
		pat_fill(&P, pat_phase(0), s->sent, buf, sizeof(buf));
		err = writen(fd, buf, sizeof(buf));
		if (err) {
			failf(s, "client: write: %s", strerror(-err));
			break;
		}
		s->sent += sizeof(buf);
	}
	shutdown(fd, SHUT_WR);
	pthread_join(th, NULL);
	s->recvd = r.got;
	if (r.err && r.err != -EBADMSG)
		failf(s, "client: read: %s", strerror(-r.err));
	if (r.got != s->sent)
		failf(s, "client: echo has %llu bytes, sent %llu",
		      (unsigned long long)r.got, (unsigned long long)s->sent);
	tcpinfo(fd, s);
}

/* ----------------------------------------------------------- slowreader */

/*
 * The client writes 2 MiB at once, then 1 MiB more --seconds + 1 later;
 * the server reads nothing for --seconds, then everything to EOF.  For
 * unload while redirected data waits unread.
 */
#define SR_FIRST (2 << 20)
#define SR_SECOND (1 << 20)

static void cli_slowreader(int fd, struct side *s)
{
	char *buf = malloc(SR_FIRST + SR_SECOND);

	pat_fill(&P, pat_phase(0), 0, buf, SR_FIRST + SR_SECOND);
	if (writen(fd, buf, SR_FIRST))
		failf(s, "client: write: %s", strerror(errno));
	printf("written\n");
	fflush(stdout);
	usleep((useconds_t)((O.seconds + 1) * 1e6));
	if (writen(fd, buf + SR_FIRST, SR_SECOND))
		failf(s, "client: second write: %s", strerror(errno));
	s->sent = SR_FIRST + SR_SECOND;
	shutdown(fd, SHUT_WR);
	if (read_eof(fd, s) != 0)
		failf(s, "client: no EOF");
	tcpinfo(fd, s);
	free(buf);
}

static void srv_slowreader(int fd, struct side *s)
{
	uint64_t off = 0;
	int err;

	usleep((useconds_t)(O.seconds * 1e6));
	err = read_check(fd, pat_phase(0), &off, -1, s, "server");
	if (err && err != -EBADMSG)
		failf(s, "server: read: %s", strerror(-err));
	s->recvd = off;
	if (off != SR_FIRST + SR_SECOND)
		failf(s, "server: got %llu bytes, want %u",
		      (unsigned long long)off, SR_FIRST + SR_SECOND);
	shutdown(fd, SHUT_WR);
	tcpinfo(fd, s);
}

/* ----------------------------------------------------------------- main */

static void print_side(const char *name, const struct side *s)
{
	int i;

	printf("\"%s\":{\"ok\":%s,\"sent\":%llu,\"recvd\":%llu,\"tcp_acked\":%llu,"
	       "\"tcp_received\":%llu,\"v\":[",
	       name, s->ok ? "true" : "false", (unsigned long long)s->sent,
	       (unsigned long long)s->recvd, (unsigned long long)s->tcp_acked,
	       (unsigned long long)s->tcp_received);
	for (i = 0; i < 8; i++)
		printf("%s%lld", i ? "," : "", (long long)s->v[i]);
	printf("],\"err\":\"");
	for (i = 0; s->err[i]; i++)
		putchar(s->err[i] == '"' ? '\'' : s->err[i]);
	printf("\"}");
}

static void server(int ls, int res_fd)
{
	struct side s = { .ok = 1 };
	const char *t = O.test;
	int fd = -1;

	if (strcmp(t, "pairs")) {
		fd = accept(ls, NULL, NULL);
		if (fd < 0)
			failf(&s, "accept: %s", strerror(errno));
	}
	if (fd < 0 && strcmp(t, "pairs"))
		;
	else if (!strcmp(t, "sizes") || !strcmp(t, "stream"))
		srv_echo(fd, &s);
	else if (!strcmp(t, "reads"))
		srv_reads(fd, &s);
	else if (!strcmp(t, "nonblock"))
		srv_nonblock(fd, &s);
	else if (!strcmp(t, "halfclose"))
		srv_halfclose(fd, &s);
	else if (!strcmp(t, "rst") || !strcmp(t, "rstblock"))
		srv_rst(fd, &s);
	else if (!strcmp(t, "waitall"))
		srv_waitall(fd, &s);
	else if (!strcmp(t, "closewrite"))
		srv_closewrite(fd, &s);
	else if (!strcmp(t, "killreader"))
		srv_killreader(fd, &s);
	else if (!strcmp(t, "killwriter"))
		srv_killwriter(fd, &s);
	else if (!strcmp(t, "splice"))
		srv_splice(fd, &s);
	else if (!strcmp(t, "slowreader"))
		srv_slowreader(fd, &s);
	else if (!strcmp(t, "pairs"))
		srv_pairs(ls, &s);
	if (write(res_fd, &s, sizeof(s)) != sizeof(s))
		exit(2);
	if (fd >= 0)
		close(fd);
	exit(s.ok ? 0 : 1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bypass_check [--addr A] [--port P] [--srv-ns PATH] [--cli-ns PATH]\n"
		"                    [--method write|writev|more|sendfile] [--poller poll|epoll|epollet]\n"
		"                    [--count N] [--seconds S] [--mptcp] [--deaf N] TEST\n"
		"TEST: sizes reads nonblock halfclose rst rstblock waitall closewrite\n"
		"      killreader killwriter splice pairs stream slowreader\n"
		"--deaf N: this checker's own test: after N waits nonblock's epoll\n"
		"      watches nothing, a missed wakeup it must report\n");
	exit(2);
}

static void parse_opts(int argc, char **argv)
{
	static const struct option lo[] = {
		ENDPOINT_OPTIONS,
		{ "method", required_argument, NULL, 'm' },
		{ "poller", required_argument, NULL, 'P' },
		{ "count", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 's' },
		{ "mptcp", no_argument, NULL, 'M' },
		{ "no-fionread", no_argument, NULL, 'F' },
		{ "deaf", required_argument, NULL, 'D' },
		{}
	};
	int c;

	O.ep.addr = "127.0.0.1";
	O.ep.port = 7000;
	O.method = "write";
	O.poller = "poll";
	O.count = 1000;
	O.seconds = 3;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (endpoint_opt(&O.ep, c, optarg))
			continue;
		switch (c) {
		case 'm':
			O.method = optarg;
			break;
		case 'P':
			O.poller = optarg;
			break;
		case 'n':
			O.count = atoi(optarg);
			break;
		case 's':
			O.seconds = atof(optarg);
			break;
		case 'M':
			O.mptcp = true;
			break;
		case 'F':
			O.no_fionread = true;
			break;
		case 'D':
			O.deaf = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || O.count < 1 || O.count > MAX_PAIRS)
		usage();
	O.test = argv[optind];
	O.salen = endpoint_addr(&O.ep, &O.sa);
	if (!O.salen)
		usage();
	O.family = O.sa.ss_family;
}

/* killreader: write until the reader has 1 MiB, kill it, keep writing. */
static void cli_killreader(int fd, struct side *cs, pid_t pid, int sig_fd0)
{
	struct timeval tv = { .tv_sec = 1 };
	char ch;
	int e;

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	fcntl(sig_fd0, F_SETFL, O_NONBLOCK);
	for (;;) {
		static char buf[65536];
		ssize_t n;

		pat_fill(&P, pat_phase(0), cs->sent, buf, sizeof(buf));
		n = write(fd, buf, sizeof(buf));
		if (n > 0)
			cs->sent += n;
		if (read(sig_fd0, &ch, 1) == 1)
			break;
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			failf(cs, "client: write before the kill: %s",
			      strerror(errno));
			break;
		}
	}
	kill(pid, SIGKILL);
	e = write_until_error(fd, cs);
	cs->v[0] = -e;
	if (!reset_errno(e))
		failf(cs, "client: writes after the reader was killed: %s",
		      e ? strerror(e) : "no error in 10 s");
	tcpinfo(fd, cs);
}

/* The client's side of test O.test on fd (the server is pid). */
static void run_client(int fd, struct side *cs, pid_t pid, int sig_fd0)
{
	if (!strcmp(O.test, "sizes")) {
		cli_sizes(fd, cs);
	} else if (!strcmp(O.test, "reads")) {
		cli_reads(fd, cs);
	} else if (!strcmp(O.test, "nonblock")) {
		cli_nonblock(fd, cs);
	} else if (!strcmp(O.test, "halfclose")) {
		cli_halfclose(fd, cs);
	} else if (!strcmp(O.test, "rst") || !strcmp(O.test, "rstblock")) {
		cli_rst(fd, cs, !strcmp(O.test, "rstblock"));
	} else if (!strcmp(O.test, "waitall")) {
		cli_waitall(fd, cs);
	} else if (!strcmp(O.test, "closewrite")) {
		cli_closewrite(fd, cs);
	} else if (!strcmp(O.test, "killreader")) {
		cli_killreader(fd, cs, pid, sig_fd0);
	} else if (!strcmp(O.test, "killwriter")) {
		cli_killwriter(fd, cs, pid, sig_fd0);
	} else if (!strcmp(O.test, "splice")) {
		cli_splice(fd, cs);
	} else if (!strcmp(O.test, "slowreader")) {
		cli_slowreader(fd, cs);
	} else if (!strcmp(O.test, "pairs")) {
		cli_pairs(cs);
	} else if (!strcmp(O.test, "stream")) {
		cli_stream(fd, cs);
	} else {
		kill(pid, SIGKILL);
		usage();
	}
}

int main(int argc, char **argv)
{
	struct side cs = { .ok = 1 }, ss = {};
	int ready[2], res[2], sig[2], fd = -1, ls, st;
	pid_t pid;
	char ch;

	parse_opts(argc, argv);
	pat_init(&P);
	signal(SIGPIPE, SIG_IGN);
	if (pipe(ready) || pipe(res) || pipe(sig))
		return 2;
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		close(res[0]);
		close(sig[0]);
		sig_fd = sig[1];
		if (toe_enter_netns(O.ep.srv_ns))
			exit(2);
		ls = listen_sock();
		if (ls < 0) {
			perror("listen");
			exit(2);
		}
		if (write(ready[1], "r", 1) != 1)
			exit(2);
		server(ls, res[1]);
	}
	close(ready[1]);
	close(res[1]);
	close(sig[1]);
	if (read(ready[0], &ch, 1) != 1) {
		fprintf(stderr, "bypass_check: the server did not start\n");
		return 2;
	}
	if (toe_enter_netns(O.ep.cli_ns))
		return 2;
	if (strcmp(O.test, "pairs")) {
		fd = connect_sock();
		if (fd < 0) {
			fprintf(stderr,
				"bypass_check: connect %s port %d: %s\n",
				O.ep.addr, O.ep.port, strerror(errno));
			kill(pid, SIGKILL);
			return 2;
		}
	}
	run_client(fd, &cs, pid, sig[0]);
	if (fd >= 0)
		close(fd);
	waitpid(pid, &st, 0);
	if (!strncmp(O.test, "kill", 4)) {
		ss.ok = 1; /* killed on purpose: nothing to report */
	} else if (read(res[0], &ss, sizeof(ss)) != sizeof(ss)) {
		ss.ok = 0;
		snprintf(ss.err, sizeof(ss.err),
			 "server exited without a report (status %d)", st);
	}
	printf("{\"test\":\"%s\",\"ok\":%s,", O.test,
	       cs.ok && ss.ok ? "true" : "false");
	print_side("client", &cs);
	putchar(',');
	print_side("server", &ss);
	printf("}\n");
	return cs.ok && ss.ok ? 0 : 1;
}
