// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed: the opentoe daemon.  It owns offload policy: it reads the
 * configuration file and compiles it into the datapath's maps.
 *
 * This version validates (--check) and applies (--apply) a configuration;
 * the long-running daemon (neighbour propagation, events, control socket)
 * builds on the same two calls.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "config.h"
#include "policy.h"
#include "util.h"

#define DEFAULT_CONFIG "/etc/opentoe/opentoe.conf"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: toed --check [FILE]\n"
"       toed --apply [FILE] [--pin-dir DIR] [-j]\n"
"\n"
"The opentoe daemon: offload policy.\n"
"\n"
"  -c, --config FILE   configuration file (default " DEFAULT_CONFIG ")\n"
"  -C, --check         validate the file and exit: 0 valid, 1 not (the error\n"
"                      names file, line and column)\n"
"  -a, --apply         validate, then apply it to the loaded datapath\n"
"                      atomically and exit; on error the policy in force stays\n"
"  -p, --pin-dir DIR   bpffs folder of the datapath (default " TOE_PIN_DIR_DEFAULT ")\n"
"  -j, --json          JSON summary\n"
"  -h, --help          this text\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'C' },
		{ "apply", no_argument, NULL, 'a' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *config = DEFAULT_CONFIG, *pin_dir = TOE_PIN_DIR_DEFAULT;
	bool check = false, apply = false, json = false;
	struct toe_apply_stats st;
	struct toe_cfg cfg;
	struct toe_json j;
	char err[1024];
	int c;

	toe_prog = "toed";
	while ((c = getopt_long(argc, argv, "c:Cap:jh", lopts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'C': check = true; break;
		case 'a': apply = true; break;
		case 'p': pin_dir = optarg; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	/* "toed --check FILE": the file may follow the flag. */
	if (optind < argc && (check || apply) && optind == argc - 1)
		config = argv[optind++];
	if (optind < argc) {
		toe_err("unexpected argument '%s'", argv[optind]);
		return 1;
	}
	if (!check && !apply) {
		toe_err("the daemon mode is not built yet: use --check or --apply (--help)");
		return 1;
	}
	if (toe_cfg_load(config, &cfg, err, sizeof(err))) {
		fprintf(stderr, "toed: %s\n", err);
		toe_cfg_free(&cfg);
		return 1;
	}
	if (check) {
		printf("%s: valid: %d device%s, %d rule%s, default %s\n", config, cfg.ndevs,
		       cfg.ndevs == 1 ? "" : "s", cfg.nrules, cfg.nrules == 1 ? "" : "s",
		       toe_action_name(cfg.default_action));
		toe_cfg_free(&cfg);
		return 0;
	}
	if (geteuid() != 0) {
		toe_err("must be run as root to apply a policy");
		toe_cfg_free(&cfg);
		return 1;
	}
	if (toe_policy_apply(pin_dir, &cfg, &st, err, sizeof(err))) {
		fprintf(stderr, "toed: %s: %s; the policy in force is unchanged\n", config, err);
		toe_cfg_free(&cfg);
		return 1;
	}
	toe_cfg_free(&cfg);
	if (json) {
		tj_start(&j, stdout);
		tj_obj(&j);
		tj_kstr(&j, "config", config);
		tj_ku64(&j, "rules", st.rules);
		tj_ku64(&j, "tuples", st.tuples);
		tj_ku64(&j, "cells", st.cells);
		tj_ku64(&j, "generation", st.gen);
		tj_ku64(&j, "serial", st.serial);
		tj_key(&j, "ms");
		tj_f64(&j, st.ms);
		tj_obj_end(&j);
		tj_end(&j);
	} else {
		printf("%s: applied policy %llu: %u rules, %u shapes, %u cells in %.1f ms\n",
		       config, (unsigned long long)st.serial, st.rules, st.tuples, st.cells, st.ms);
	}
	return 0;
}
