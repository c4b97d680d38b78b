// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed: the opentoe daemon.  It owns offload policy (the configuration file,
 * compiled into the datapath's maps), mirrors the kernel's neighbour and
 * address tables into BPF maps (the patch's neighbour.c hooks), consumes
 * the datapath's events, and answers toectl on a unix socket (the patch's
 * /proc/net/toe).
 *
 * toed is the control plane only.  The datapath (programs, links, maps) is
 * pinned by toe-loader and keeps running while toed is stopped, killed or
 * restarted; a new toed adopts the pinned state as it finds it and resets
 * no counter and no flow.
 *
 * This file: the options, usage, toed --check and --apply (one shot); the
 * daemon's state is state.c's, its log log.c's, the daemon itself
 * loop.c's.  Each part says what it offers in a header of its own name
 * (ep.h, apply.h, kmod.h...), and each file includes the headers of what
 * it uses.  The parts:
 *
 *   main.c    options, usage, --check / --apply
 *   state.c   the daemon's one state and its defaults
 *   log.c     the log: "toed: LEVEL: ..." on stderr, within --log-level
 *   loop.c    daemon_run: start-up, the epoll loop, the one teardown
 *   apply.c   applying the configuration (start, SIGHUP, toectl reload,
 *             the kernel module's devices changing)
 *   ctl.c     the control socket: clients read and answered without
 *             blocking, each with a deadline; requests dispatched by a table
 *   ctl_parse.c  a request's bytes to a command (no I/O: fuzzed)
 *   datapath.c   which datapath toed serves: noticing a reload or unload
 *             by the ids behind the pins, and opening it again
 *   show_state.c  what toectl status, stats, policy and devices show
 *   show_maps.c   what toectl flows and neigh show, from the maps alone
 *   config.c  the configuration file's parser (fuzzed), each statement
 *             written back beside its parse (config_stmts.h's table)
 *   config_show.c  toectl policy: the configuration in force, every
 *             statement written back
 *   policy.c  the configuration into the datapath's maps: devices.c,
 *             cpumap.c, classify.c; srcrec.c records where it came from
 *   neigh.c   rtnetlink: the neighbour table mirrored into toe_neigh
 *   genl.c    the kernel module's generic netlink family
 *   kmod.c    the kernel module: its devices, the TIDs toed holds there
 *   listen.c  the server TIDs toed holds there for offloaded listeners
 *   events.c  ring-buffer events, neighbour and link callbacks, which
 *             interfaces are mirrored
 *   evtypes.c who takes each event type (the table events.c hands on by)
 *   mon.c     the monitor clients (toectl monitor)
 *   ep.c      the one epoll set loop.c waits on
 *   nlat.c    the neighbour propagation latency histogram
 *   fwdev.c   the forward path's flow events and per-reason counters
 *   metrics.c --metrics: /metrics for Prometheus, served from the loop
 *   reconcile.c  lost events made good: TIDs and listeners reconciled
 *   tidpool.c the datapath's TID pools, filled from the kernel module
 *   attached.c   where opentoe is attached, for toectl status
 *   capture.c    a killed toectl dump's capture switched off
 *   nft.c, ct.c  the firewall's warden and conntrack kept true
 *
 * toed is one thread.  Its state (state.h's struct toed) is state.c's one
 * instance, which main takes (D, this file's only) and sets the options
 * of before anything else runs; no part reads a global.  A part with a
 * state of its own has it in its header, with its init (and exit), the
 * kernel's way: mon.h's struct mon_set, kmod.h's struct kmod (kmod.c and
 * tidpool.c), listen.h's struct listeners, fwdev.h's struct fwdev,
 * events.h's struct events, ctl.h's struct ctl, metrics.h's struct
 * metrics, apply.h's struct apply (the policy in force), reconcile.h's
 * and capture.h's; state.c's toed_state_init
 * calls the inits, giving each pointers to what it works with of the
 * rest.  Its functions take that state; what joins several parts (the
 * loop, an apply, a command, a view, a reconcile, the event table's
 * handlers) takes struct toed *d and hands each part its own.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/err.h"
#include "lib/parse_rc.h"
#include "lib/json.h"
#include "lib/dplock.h"
#include "lib/toe_ctl.h"
#include "opentoe_common.h"
#include "devices.h"
#include "apply.h"
#include "config.h"
#include "genl.h"
#include "kmod.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
#include "state.h"
#include "nft.h"

#define APPLY_WAIT_MS 10000 /* toed --apply: for a load or another apply */

/* The daemon's state (state.c's), set first thing in main and handed on. */
static struct toed *D;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: toed [--config FILE] [--pin-dir DIR] [--run-dir DIR] [options]\n"
		"       toed --check [FILE]\n"
		"       toed --apply [FILE] [--pin-dir DIR] [-j]\n"
		"\n"
		"The opentoe daemon: offload policy, neighbour propagation into the\n"
		"datapath's maps, events, and the control socket toectl talks to.  It runs in\n"
		"the foreground (systemd: Type=notify); SIGHUP reloads the configuration,\n"
		"SIGTERM stops toed and leaves the datapath running.\n"
		"\n"
		"  -c, --config FILE     configuration file (default " DEFAULT_CONFIG
		")\n"
		"  -C, --check           validate the file and exit: 0 valid, 1 not (the error\n"
		"                        names file, line and column)\n"
		"  -a, --apply           validate, apply it to the loaded datapath atomically and\n"
		"                        exit; on error the policy in force stays\n"
		"  -p, --pin-dir DIR     bpffs folder of the datapath (default " TOE_PIN_DIR_DEFAULT
		")\n"
		"  -r, --run-dir DIR     control socket and lock (default " TOE_RUN_DIR
		")\n"
		"  -i, --interface IFACE also mirror IFACE's neighbours (repeatable); by default\n"
		"                        the interfaces opentoe's XDP is attached to in this\n"
		"                        network namespace and those the devices name\n"
		"      --rcvbuf BYTES    rtnetlink receive buffer (default 4 MiB, set with\n"
		"                        SO_RCVBUFFORCE; an overrun costs a full resync)\n"
		"  -m, --metrics [ADDR:]PORT\n"
		"                        serve /metrics for Prometheus on ADDR:PORT (off by\n"
		"                        default; ADDR 127.0.0.1 unless named: an IPv4 address,\n"
		"                        [IPv6] or localhost)\n"
		"      --no-route-cache  the forward path looks every packet's route up (by\n"
		"                        default it caches each routed flow's route, made\n"
		"                        stale by every routing change toed sees)\n"
		"  -l, --log-level L     error, warning, info or debug (default: the file's log,\n"
		"                        else info): it wins over the file's for this run\n"
		"  -j, --json            JSON summary (with --apply)\n"
		"  -V, --version         print the version and exit\n"
		"  -h, --help            this text\n");
}

/* What the command line asks for, besides the state's own options. */
struct opts {
	bool check; /* --check: validate the file, exit */
	bool apply; /* --apply: apply the file once, exit */
	bool json; /* -j: --apply's summary in JSON */
};

/*
 * The options that take a value that can be wrong: --interface, --rcvbuf,
 * --log-level, --metrics.
 */
static enum toe_parse_rc parse_value(int c, const char *arg)
{
	char *end, err[512];
	int i;

	switch (c) {
	case 'm':
		if (metrics_parse(&D->met, arg, err, sizeof(err))) {
			toe_err("%s", err);
			return TOE_PARSE_BAD;
		}
		break;
	case 'i':
		if (D->nifaces == MAX_IFACES) {
			toe_err("at most %d --interface", MAX_IFACES);
			return TOE_PARSE_BAD;
		}
		if (!if_nametoindex(arg)) {
			toe_err("unknown interface '%s'", arg);
			return TOE_PARSE_BAD;
		}
		D->ifaces[D->nifaces++] = arg;
		break;
	case 'R':
		errno = 0;
		D->rcvbuf = (int)strtol(arg, &end, 10);
		if (errno || *end || D->rcvbuf < 256) {
			toe_err("bad --rcvbuf '%s' (expected a number of bytes, at least 256)",
				arg);
			return TOE_PARSE_BAD;
		}
		break;
	case 'l':
		i = log_level_parse(arg);
		if (i < 0) {
			toe_err("bad --log-level '%s' (expected error, warning, info or debug)",
				arg);
			return TOE_PARSE_BAD;
		}
		log_set_level(i);
		break;
	}
	return TOE_PARSE_OK;
}

static enum toe_parse_rc parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'C' },
		{ "apply", no_argument, NULL, 'a' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "run-dir", required_argument, NULL, 'r' },
		{ "interface", required_argument, NULL, 'i' },
		{ "rcvbuf", required_argument, NULL, 'R' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "no-route-cache", no_argument, NULL, 'N' },
		{ "json", no_argument, NULL, 'j' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static const char sopts[] = "c:Cap:r:i:l:m:jVh";
	int c;

	while ((c = getopt_long(argc, argv, sopts, lopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			D->config = optarg;
			break;
		case 'C':
			o->check = true;
			break;
		case 'a':
			o->apply = true;
			break;
		case 'p':
			D->pin_dir = optarg;
			break;
		case 'r':
			D->run_dir = optarg;
			break;
		case 'i':
		case 'R':
		case 'l':
		case 'm':
			if (parse_value(c, optarg) != TOE_PARSE_OK)
				return TOE_PARSE_BAD;
			break;
		case 'j':
			o->json = true;
			break;
		case 'N':
			nft_route_cache(false);
			break;
		default: /* -V, -h, or a wrong one */
			return toe_parse_common(c, usage);
		}
	}
	/* "toed --check FILE": the file may follow the flag. */
	if (optind < argc && (o->check || o->apply) && optind == argc - 1)
		D->config = argv[optind++];
	if (optind < argc) {
		toe_err("unexpected argument '%s'", argv[optind]);
		return TOE_PARSE_BAD;
	}
	return TOE_PARSE_OK;
}

/* toed --apply -j */
static void print_applied_json(const struct toe_apply_stats *st)
{
	struct toe_json j;

	tj_start(&j, stdout);
	tj_obj(&j);
	tj_kstr(&j, "config", D->config);
	tj_ku64(&j, "rules", st->rules);
	tj_ku64(&j, "tuples", st->tuples);
	tj_ku64(&j, "cells", st->cells);
	tj_ku64(&j, "generation", st->gen);
	tj_ku64(&j, "serial", st->serial);
	tj_key(&j, "ms");
	tj_f64(&j, st->ms);
	tj_obj_end(&j);
	tj_end(&j);
}

/* toed --apply: the file, merged with the kernel module's devices, applied once. */
static int apply_once(struct toe_cfg *cfg, const char *text, size_t len,
		      bool json)
{
	struct apply_src src = {
		.cfg = cfg, .file = D->config, .text = text, .len = len
	};
	struct toe_apply_stats st;
	struct toe_cfg merged;
	char err[1024];

	if (geteuid() != 0) {
		toe_err("must be run as root to apply a policy");
		toe_cfg_free(cfg);
		return 1;
	}
	/* The kernel module's devices, as the daemon merges them. */
	if (toe_genl_open(&D->gl, err, sizeof(err)) == 0) {
		D->gl_open = true;
		kmod_read_devs(&D->kmod);
	}
	src.kdevs = D->kmod.kdevs;
	src.nkdevs = D->kmod.nkdevs;
	src.kmod_up = toe_genl_up(&D->gl);
	if (D->gl_open)
		toe_genl_close(&D->gl);
	if (apply_locked(D->pin_dir, &src, -1, "toed --apply", APPLY_WAIT_MS,
			 &merged, &st, err, sizeof(err))) {
		fprintf(stderr,
			"toed: %s: %s; the policy in force is unchanged\n",
			D->config, err);
		toe_cfg_free(cfg);
		return 1;
	}
	toe_cfg_free(cfg);
	if (json)
		print_applied_json(&st);
	else
		printf("%s: applied policy %llu: %u rules, %u shapes, %u cells in %.1f ms\n",
		       D->config, (unsigned long long)st.serial, st.rules,
		       st.tuples, st.cells, st.ms);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct toe_cfg cfg;
	char err[1024], *text = NULL;
	size_t len = 0;
	enum toe_parse_rc rc;
	int ret;

	D = toed_state_init();
	toe_prog = "toed";
	rc = parse_args(argc, argv, &o);
	if (rc != TOE_PARSE_OK)
		return toe_parse_exit(rc);
	if (!o.check && !o.apply)
		return daemon_run(D);
	if (toe_cfg_load_text(D->config, &cfg, &text, &len, err, sizeof(err))) {
		fprintf(stderr, "toed: %s\n", err);
		toe_cfg_free(&cfg);
		return 1;
	}
	if (o.apply && !o.check) {
		ret = apply_once(&cfg, text, len, o.json);
		free(text);
		return ret;
	}
	free(text);
	printf("%s: valid: %d device%s, %d rule%s, default %s\n", D->config,
	       cfg.ndevs, cfg.ndevs == 1 ? "" : "s", cfg.nrules,
	       cfg.nrules == 1 ? "" : "s", toe_action_name(cfg.default_action));
	toe_cfg_free(&cfg);
	return 0;
}
