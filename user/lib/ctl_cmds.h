/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: the control commands, once.  toectl's command list and usage,
 * toed's parser (user/toed/ctl_parse.c: the names, which take arguments),
 * toed's dispatch (user/toed/ctl.c) and build/toe-tables all come from
 * this table, like the map and counter tables of include/.
 *
 * TOE_CTL_TABLE(X, L): every toectl command, in the order of toectl's usage
 * and toed's "expected ..." list; X for a command toed answers, L for one
 * toectl runs itself (toed never sees it).
 * X(ID, name, args, help, stream, handler, needs_dp)
 *   ID       CTL_<ID> of enum ctl_cmd_id (ctl_parse.h)
 *   name     the request's first word
 *   args     its arguments in toectl's usage; "" for none: toed refuses any
 *   help     its lines in toectl's usage, each ended by '\n'
 *   stream   answers until interrupted, line by line (toectl copies as it reads)
 *   handler  toed: VIEW(fn), fn(d, out, json) writing the answer after
 *            "ok\n"; or RUN(fn), fn(d, client, request, out) answering
 *            itself.  ctl.c declares fn from this column (no header line:
 *            fn is defined, not static, in any of toed's files)
 *   needs_dp toed: refused while the datapath is not loaded
 * L(ID, name, args, help, main)
 *   main     toectl: main(argc, argv, json) runs it, argv[0] its name
 * TOE_CTL_CMDS(X): toed's commands only (the X rows).
 */
#ifndef __TOE_CTL_CMDS_H
#define __TOE_CTL_CMDS_H

#define TOE_CTL_TABLE(X, L)                                                   \
	X(STATUS, "status", "",                                               \
	  "daemon, policy, event totals, every interface\n"                   \
	  "opentoe is on with its hook (xdp, tc)\n",                          \
	  false, VIEW(view_status), false)                                    \
	X(DEVICES, "devices", "",                                             \
	  "offload devices: type, module, interface,\n"                       \
	  "capacity and use (the patch's /proc/net/toe)\n",                   \
	  false, VIEW(view_devices), true)                                    \
	X(FLOWS, "flows", " [dev NAME] [port N] [netns NAME|INODE]",          \
	  "tracked connections: tuple, device, decision,\n"                   \
	  "reason, bytes, segments, XDP packets, RTT, age\n",                 \
	  false, RUN(cmd_flows), true)                                        \
	X(NEIGH, "neigh", "",                                                 \
	  "toed's mirror of the neighbours of XDP's and the\n"                \
	  "named interfaces (none of tc's: ip neigh)\n",                      \
	  false, VIEW(view_neigh), true)                                      \
	X(POLICY, "policy", "",                                               \
	  "the configuration in force, in its own syntax\n", false,           \
	  VIEW(view_policy), true)                                            \
	X(STATS, "stats", "", "datapath and daemon counters\n", false,        \
	  VIEW(view_stats), true)                                             \
	X(REASONS, "reasons", " [NAME]",                                      \
	  "every reason a flow is decided, returned, ended or\n"              \
	  "switched to TCP for: its help and its counts\n",                   \
	  false, RUN(cmd_reasons), true)                                      \
	X(EXPLAIN, "explain",                                                 \
	  " LOCAL REMOTE [proto tcp|udp] [netns NAME|host] [cgroup PATH|ID]", \
	  "what the policy in force decides for a connection\n"               \
	  "of that tuple, by which rule, and whether it is tracked\n",        \
	  false, RUN(cmd_explain), true)                                      \
	X(RELOAD, "reload", "",                                               \
	  "re-read the configuration and apply it atomically;\n"              \
	  "an invalid file is reported, the policy stays\n",                  \
	  false, RUN(cmd_reload), true)                                       \
	X(MONITOR, "monitor", "",                                             \
	  "print events as they happen (like ip monitor)\n", true,            \
	  RUN(cmd_monitor), false)                                            \
	L(DUMP, "dump", " -w FILE|- [FILTER]",                                \
	  "capture the packets the fast paths handle, to pcap\n"              \
	  "(toectl dump --help; reads the maps, not toed)\n",                 \
	  dump_main)

/* The commands toed answers: TOE_CTL_TABLE's X rows. */
#define TOE_CTL_LOCAL_SKIP(id, name, args, help, main)
#define TOE_CTL_CMDS(X) TOE_CTL_TABLE(X, TOE_CTL_LOCAL_SKIP)

/* Whether a command's args (a string literal) say it takes arguments. */
#define TOE_CTL_TAKES_ARGS(args) (sizeof(args) > 1)

#endif /* __TOE_CTL_CMDS_H */
