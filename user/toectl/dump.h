/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toectl dump: the packets the fast paths handle, to a pcap file
 * (dump.c; the filter's words in dump_filter.c).  Unlike the other
 * commands it does not ask toed: it reads the datapath's pinned capture
 * maps itself (include/opentoe_capture.h).
 */
#ifndef __TOECTL_DUMP_H
#define __TOECTL_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "opentoe_capture.h"

/* What the command line asked for. */
struct dump_opts {
	const char *out; /* -w FILE, "-": stdout */
	const char *pin_dir; /* --pin-dir */
	const char *netns; /* --netns NAME|PATH, for the message */
	const char *dev; /* --dev IFACE, for the message */
	const char *flow; /* --flow A,B, for the message */
	__u64 count; /* -c: 0, no limit */
	double seconds; /* -t: 0, no limit */
	bool json; /* -j: the summary in JSON */
	struct toe_cap_conf conf; /* the filter and snap length to set */
};

/* toectl dump ARGS (argv[0] is "dump"); the exit status. */
int dump_main(int argc, char **argv, bool json);

/*
 * The filter's words (dump_filter.c): each fills o->conf and says what
 * was wrong with the argument (0, or -1 after a message naming it).
 */
int dump_set_flow(struct dump_opts *o, const char *arg);
int dump_set_port(struct dump_opts *o, const char *arg);
int dump_set_hook(struct dump_opts *o, const char *arg);
/* --netns and --dev together: the namespace's cookie, the ifindex in it. */
int dump_resolve_where(struct dump_opts *o);
/*
 * The bypassed flows the filter names (dump_bypass.c): a line each to
 * stderr (j NULL), or a JSON array into j.
 */
struct toe_json;
void dump_bypass_report(const struct dump_opts *o, int byp_flows,
			struct toe_json *j);

#endif /* __TOECTL_DUMP_H */
