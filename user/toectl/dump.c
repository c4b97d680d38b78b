// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toectl dump: the packets the fast paths handle (XDP and tc forwarded,
 * and packets of offloaded local flows), to a pcap file tcpdump -r and
 * Wireshark read, or live to stdout.  The protocol with the datapath is
 * in include/opentoe_capture.h: take the pin folder's dump lock (a second
 * dump is refused, naming the first), switch off a stale capture a
 * killed dump left on, set the filter with on = 0, then on = 1; read
 * the ring; on = 0 at the end (a count, a time limit, Ctrl-C, SIGTERM),
 * the rest of the ring read, the losses reported as tcpdump does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "opentoe_common.h"
#include "toe_maps.h"
#include "dump.h"
#include "lib/dplock.h"
#include "lib/err.h"
#include "lib/json.h"
#include "lib/parse_rc.h"
#include "lib/path.h"
#include "lib/pinned.h"

/* The capture maps (and the bypass's counters, dump_bypass.c). */
struct dump_maps {
	int conf, ring, cpu, flows, byp_flows;
};

static const struct toe_pin dump_pins[] = {
	TOE_PIN(struct dump_maps, conf, CAP_CONF),
	TOE_PIN(struct dump_maps, ring, CAP_RING),
	TOE_PIN(struct dump_maps, cpu, CAP_CPU),
	TOE_PIN(struct dump_maps, flows, FLOWS),
	TOE_PIN_OPT(struct dump_maps, byp_flows, BYP_FLOWS),
};
#define N_DUMP_PINS (sizeof(dump_pins) / sizeof(dump_pins[0]))

/* One running dump. */
struct dump {
	struct dump_opts *o;
	struct dump_maps m;
	FILE *out;
	__u32 session;
	__u64 captured; /* records written */
	__u64 mono_to_real; /* CLOCK_REALTIME - CLOCK_MONOTONIC, ns */
	bool live; /* -w -: flushed as it goes */
	bool werr; /* a write failed (EPIPE: the reader went) */
	int werrno;
};

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

static void dump_usage(FILE *f)
{
	fprintf(f,
		"Usage: toectl dump -w FILE|- [-s SNAPLEN] [-c COUNT] [-t SECONDS]\n"
		"                   [--flow A,B] [--port N] [--netns NS] [--dev IFACE]\n"
		"                   [--hook xdp|tc] [--pin-dir DIR] [-j]\n"
		"\n"
		"Capture the packets opentoe's fast paths handle (forwarded by XDP or tc,\n"
		"and packets of offloaded local flows), which tcpdump on the interfaces\n"
		"does not see, to a pcap file (nanosecond timestamps, Ethernet).\n"
		"\n"
		"  -w, --write FILE    the pcap file; - : stdout (toectl dump -w - | tcpdump -r -)\n"
		"  -s, --snaplen N     bytes kept of each packet, 1-65535 (default 65535)\n"
		"  -c, --count N       stop after N packets\n"
		"  -t, --time SECONDS  stop after SECONDS (default: until Ctrl-C or SIGTERM)\n"
		"  -f, --flow A,B      the flow between A and B, both ways: ADDR[:PORT] each,\n"
		"                      [ADDR]:PORT for IPv6 with a port\n"
		"  -p, --port N        packets from or to port N\n"
		"  -n, --netns NS      arrived in network namespace NS (ip netns name, or a\n"
		"                      path such as /proc/PID/ns/net)\n"
		"  -i, --dev IFACE     came in on IFACE (of --netns's namespace, or toectl's)\n"
		"  -H, --hook HOOK     xdp or tc only\n"
		"  -P, --pin-dir DIR   the datapath's pin folder (default " TOE_PIN_DIR_DEFAULT
		")\n"
		"  -j, --json          the summary as JSON (stdout; stderr with -w -)\n"
		"  -h, --help          this text\n"
		"\n"
		"One dump at a time per datapath: a second is refused, naming the first.\n"
		"The ring is toe-loader's --capture-ring; what does not fit is dropped and\n"
		"counted. A bypassed flow (sk_msg) is never a packet: the dump says so and\n"
		"gives its bytes from the counters.\n");
}

/* A number of an option, in [min, max].  0, or -1 after a message. */
static int num_opt(const char *name, const char *arg, double min, double max,
		   double *v)
{
	char *end;

	errno = 0;
	*v = strtod(arg, &end);
	if (errno || end == arg || *end || *v < min || *v > max) {
		toe_err("bad %s '%.64s' (expected %g to %g)", name, arg, min,
			max);
		return -1;
	}
	return 0;
}

/* One option of dump's; 0, or -1 after a message. */
static int dump_opt(struct dump_opts *o, int c, const char *arg)
{
	double v;

	switch (c) {
	case 'w':
		o->out = arg;
		return 0;
	case 's':
		if (num_opt("--snaplen", arg, 1, TOE_CAP_SNAP_MAX, &v))
			return -1;
		o->conf.snaplen = (__u32)v;
		return 0;
	case 'c':
		if (num_opt("--count", arg, 1, 1e15, &v))
			return -1;
		if (v != (double)(__u64)v) {
			toe_err("bad --count '%.64s' (expected a whole number)",
				arg);
			return -1;
		}
		o->count = (__u64)v;
		return 0;
	case 't':
		return num_opt("--time", arg, 0.001, 1e9, &o->seconds);
	case 'f':
		return dump_set_flow(o, arg);
	case 'p':
		return dump_set_port(o, arg);
	case 'n':
		o->netns = arg;
		return 0;
	case 'i':
		o->dev = arg;
		return 0;
	case 'H':
		return dump_set_hook(o, arg);
	case 'P':
		o->pin_dir = arg;
		return 0;
	case 'j':
		o->json = true;
		return 0;
	}
	return -1;
}

static enum toe_parse_rc dump_parse(int argc, char **argv, struct dump_opts *o)
{
	static const struct option lopts[] = {
		{ "write", required_argument, NULL, 'w' },
		{ "snaplen", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'c' },
		{ "time", required_argument, NULL, 't' },
		{ "flow", required_argument, NULL, 'f' },
		{ "port", required_argument, NULL, 'p' },
		{ "netns", required_argument, NULL, 'n' },
		{ "dev", required_argument, NULL, 'i' },
		{ "hook", required_argument, NULL, 'H' },
		{ "pin-dir", required_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "w:s:c:t:f:p:n:i:H:P:jh", lopts,
				NULL)) != -1) {
		if (c == 'h' || c == '?' || c == ':') {
			dump_usage(c == 'h' ? stdout : stderr);
			return c == 'h' ? TOE_PARSE_DONE : TOE_PARSE_BAD;
		}
		if (dump_opt(o, c, optarg))
			return TOE_PARSE_BAD;
	}
	if (optind < argc) {
		toe_err("dump: unexpected argument '%.64s' (toectl dump --help)",
			argv[optind]);
		return TOE_PARSE_BAD;
	}
	if (!o->out) {
		toe_err("dump: -w FILE is required (-w - for stdout)");
		return TOE_PARSE_BAD;
	}
	return TOE_PARSE_OK;
}

/* The pins, or a message saying why there are none.  0 or -1. */
static int open_maps(struct dump *d)
{
	char err[256], path[4096];

	if (!toe_open_pins(d->o->pin_dir, dump_pins, N_DUMP_PINS, &d->m, err,
			   sizeof(err)))
		return 0;
	toe_join(path, sizeof(path), d->o->pin_dir, TOE_MAP(FLOWS));
	if (access(path, F_OK))
		toe_err("no datapath loaded at %s (toe-loader load first; --pin-dir names another)",
			d->o->pin_dir);
	else
		toe_err("the datapath at %s has no capture maps (loaded by an older toe-loader: reload it): %s",
			d->o->pin_dir, err);
	return -1;
}

static int conf_get(struct dump *d, struct toe_cap_conf *c)
{
	__u32 zero = 0;

	if (!bpf_map_lookup_elem(d->m.conf, &zero, c))
		return 0;
	toe_err("cannot read %s: %s", TOE_MAP(CAP_CONF), strerror(errno));
	return -1;
}

static int conf_put(struct dump *d, const struct toe_cap_conf *c)
{
	__u32 zero = 0;

	if (!bpf_map_update_elem(d->m.conf, &zero, c, BPF_ANY))
		return 0;
	toe_err("cannot write %s: %s", TOE_MAP(CAP_CONF), strerror(errno));
	return -1;
}

/*
 * The dump lock, held until exit (its fd stays open); with it, a capture
 * found on is a killed dump's: switched off.  0, or -1 after a message.
 */
static int take_capture(struct dump *d, struct toe_cap_conf *cur)
{
	char err[512];

	if (toe_dplock_take(d->o->pin_dir, TOE_LOCK_DUMP, "toectl dump", 0, err,
			    sizeof(err)) < 0) {
		toe_err("another dump runs on the datapath at %s: %s",
			d->o->pin_dir, err);
		return -1;
	}
	if (conf_get(d, cur))
		return -1;
	if (cur->no_capture) {
		toe_err("the datapath at %s was built without the capture (make CAPTURE=0): nothing to dump",
			d->o->pin_dir);
		return -1;
	}
	if (cur->on) {
		fprintf(stderr,
			"toectl: a capture of toectl dump pid %u was left on (the dump was killed): switched off\n",
			cur->owner);
		cur->on = 0;
		if (conf_put(d, cur))
			return -1;
	}
	return 0;
}

static __u64 clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* pcap's file header: nanosecond timestamps, Ethernet. */
static int pcap_header(struct dump *d)
{
	struct {
		__u32 magic;
		__u16 major, minor;
		__s32 thiszone;
		__u32 sigfigs, snaplen, linktype;
	} h = { 0xa1b23c4d, 2, 4, 0, 0, d->o->conf.snaplen, 1 };

	return fwrite(&h, sizeof(h), 1, d->out) == 1 ? 0 : -1;
}

/* A record of the ring: this session's, under the count, to the file. */
static int on_record(void *ctx, void *data, size_t size)
{
	struct dump *d = ctx;
	const struct toe_cap_rec *r = data;
	__u64 ts;
	struct {
		__u32 sec, nsec, incl, orig;
	} h;

	if (size < sizeof(*r) || r->session != d->session ||
	    r->caplen > size - sizeof(*r) || d->werr)
		return 0;
	if (d->o->count && d->captured >= d->o->count)
		return 0;
	ts = r->ts_ns + d->mono_to_real;
	h.sec = (__u32)(ts / 1000000000ULL);
	h.nsec = (__u32)(ts % 1000000000ULL);
	h.incl = r->caplen;
	h.orig = r->len;
	if (fwrite(&h, sizeof(h), 1, d->out) != 1 ||
	    fwrite(r + 1, 1, r->caplen, d->out) != r->caplen) {
		d->werr = true;
		d->werrno = errno;
		return 0;
	}
	d->captured++;
	return 0;
}

/* The counters of every CPU's slot, summed: matched, lost. */
static int cpu_counts(struct dump *d, __u64 *matched, __u64 *lost)
{
	struct toe_cap_cpu *s = malloc(sizeof(*s));
	__u32 i, n = libbpf_num_possible_cpus();

	*matched = *lost = 0;
	if (!s)
		return -1;
	for (i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(d->m.cpu, &i, s))
			continue;
		*matched += s->matched;
		*lost += s->lost;
	}
	free(s);
	return 0;
}

/* The output: the file, or stdout (never a terminal). 0 or -1. */
static int open_out(struct dump *d)
{
	int fd;

	if (!strcmp(d->o->out, "-")) {
		if (isatty(STDOUT_FILENO)) {
			toe_err("dump: will not write pcap to a terminal (-w - | tcpdump -r -, or -w FILE)");
			return -1;
		}
		d->out = stdout;
		d->live = true;
		return 0;
	}
	/*
	 * 0600: a capture holds the traffic of every flow it saw, for root's
	 * eyes (a file already there keeps the mode its owner gave it).
	 */
	fd = open(d->o->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	d->out = fd < 0 ? NULL : fdopen(fd, "w");
	if (!d->out) {
		if (fd >= 0)
			close(fd);
		toe_err("dump: cannot write %s: %s", d->o->out,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* The reader: until a limit or a signal.  Returns the ring's reader. */
static void read_until_done(struct dump *d, struct ring_buffer *rb)
{
	__u64 end = d->o->seconds ? clock_ns(CLOCK_MONOTONIC) +
					    (__u64)(d->o->seconds * 1e9) :
				    0;
	__u64 now;
	int ms, n;

	while (!stop_sig && !d->werr &&
	       !(d->o->count && d->captured >= d->o->count)) {
		ms = 100;
		if (end) {
			now = clock_ns(CLOCK_MONOTONIC);
			if (now >= end)
				break;
			if (end - now < 100000000ULL)
				ms = (int)((end - now) / 1000000) + 1;
		}
		n = ring_buffer__poll(rb, ms);
		if (n < 0 && n != -EINTR) {
			toe_err("reading %s: %s", TOE_MAP(CAP_RING),
				strerror(-n));
			break;
		}
		if (d->live && fflush(d->out)) {
			d->werr = true;
			d->werrno = errno;
		}
	}
}

/* Signals end the dump cleanly; a reader that goes (EPIPE) too. */
static void set_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/*
 * The summary, tcpdump's words (stderr) or JSON (stdout; stderr when
 * stdout is the pcap), with the bypassed flows the filter names.
 */
static void summary(struct dump *d, __u64 matched, __u64 lost, double secs)
{
	struct toe_json j;

	if (!d->o->json) {
		fprintf(stderr,
			"%llu packets captured\n%llu packets received by filter\n%llu packets dropped (capture ring full)\n",
			(unsigned long long)d->captured,
			(unsigned long long)matched, (unsigned long long)lost);
		dump_bypass_report(d->o, d->m.byp_flows, NULL);
		return;
	}
	tj_start(&j, d->live ? stderr : stdout);
	tj_obj(&j);
	tj_kstr(&j, "file", d->o->out);
	tj_ku64(&j, "captured", d->captured);
	tj_ku64(&j, "matched", matched);
	tj_ku64(&j, "dropped", lost);
	tj_ku64(&j, "snaplen", d->o->conf.snaplen);
	tj_key(&j, "seconds");
	tj_f64(&j, secs);
	tj_key(&j, "bypassed");
	dump_bypass_report(d->o, d->m.byp_flows, &j);
	tj_obj_end(&j);
	tj_end(&j);
}

/*
 * Capture: the filter with on = 0, then on = 1 (a program never sees on
 * with half a filter), the ring read until done, on = 0, the rest read.
 */
static int run_capture(struct dump *d, struct toe_cap_conf *c)
{
	struct ring_buffer *rb;
	__u64 m0, l0, m1, l1, t0;
	int err;

	rb = ring_buffer__new(d->m.ring, on_record, d, NULL);
	if (!rb) {
		toe_err("cannot read %s: %s", TOE_MAP(CAP_RING),
			strerror(errno));
		return -1;
	}
	d->session = c->session + 1; /* what is left on the ring: older */
	ring_buffer__consume(rb);
	cpu_counts(d, &m0, &l0);
	*c = d->o->conf;
	c->session = d->session;
	c->owner = (__u32)getpid();
	t0 = clock_ns(CLOCK_MONOTONIC);
	c->start_ns = t0;
	d->mono_to_real = clock_ns(CLOCK_REALTIME) - t0;
	err = conf_put(d, c);
	c->on = 1;
	if (!err)
		err = conf_put(d, c);
	if (!err)
		read_until_done(d, rb);
	c->on = 0;
	conf_put(d, c); /* whatever ended it */
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	cpu_counts(d, &m1, &l1);
	if (!err)
		summary(d, m1 - m0, l1 - l0,
			(double)(clock_ns(CLOCK_MONOTONIC) - t0) / 1e9);
	return err;
}

/* The output flushed and closed; 0, or -1 after a message. */
static int close_out(struct dump *d)
{
	int rc = fflush(d->out) ? -1 : 0;

	if (rc && !d->werr) {
		d->werr = true;
		d->werrno = errno;
	}
	if (!d->live && fclose(d->out) && !d->werr) {
		d->werr = true;
		d->werrno = errno;
	}
	if (!d->werr || (d->live && d->werrno == EPIPE))
		return 0; /* the reader of -w - went: its choice */
	toe_err("dump: writing %s: %s", d->live ? "stdout" : d->o->out,
		strerror(d->werrno));
	return -1;
}

int dump_main(int argc, char **argv, bool json)
{
	struct dump_opts o = { .pin_dir = TOE_PIN_DIR_DEFAULT, .json = json };
	struct dump d = { .o = &o };
	struct toe_cap_conf cur;
	enum toe_parse_rc rc;
	int err;

	o.conf.snaplen = TOE_CAP_SNAP_DEFAULT;
	rc = dump_parse(argc, argv, &o);
	if (rc != TOE_PARSE_OK)
		return toe_parse_exit(rc);
	if (geteuid()) {
		toe_err("dump: must be run as root (the datapath's pinned maps)");
		return 1;
	}
	if (dump_resolve_where(&o) || open_maps(&d))
		return 1;
	if (take_capture(&d, &cur) || open_out(&d))
		return 1;
	dump_bypass_report(&o, d.m.byp_flows, NULL);
	set_signals();
	if (pcap_header(&d)) {
		toe_err("dump: writing %s: %s", o.out, strerror(errno));
		return 1;
	}
	err = run_capture(&d, &cur);
	if (close_out(&d))
		err = -1;
	toe_close_pins(dump_pins, N_DUMP_PINS, &d.m);
	return err ? 1 : 0;
}
