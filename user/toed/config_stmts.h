/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: the statements of the configuration language, one table (the
 * shape of xdp-tools' DEFINE_OPTION: keyword, arguments, bounds, help), for
 * the parser's dispatch and its "expected ..." list (config.c), toectl
 * policy's text and JSON (config.c renders every statement from it),
 * build/toe-tables (statements), and through it toed.8's CONFIGURATION
 * synopsis and list (made from it) and the docs check, which holds
 * docs/configuration.md's sections to it.
 *
 * TOE_CFG_STATEMENTS(X, S), in the order of the parser's "expected ..."
 * list and of toectl policy's text (a device before what names it):
 *
 * X(ID, keyword, synopsis, bounds, help, example, parse, show): a
 * statement of its own syntax
 *   keyword   the statement's first word
 *   synopsis  its forms, a line each ('\n' between; a continuation line
 *             indented), as toed.8 writes them
 *   bounds    the limits of config_limits.h its values are held to, by ID,
 *             blank-separated
 *   help      what it says (toed.8's list; docs/configuration.md's comment)
 *   example   a line of it with every option it has, valid after the
 *             examples of the rows above it (the device it names; a
 *             namespace "host", an interface "lo"): the round trip test
 *             (selftests/toed/test_policy_roundtrip.sh) writes them all
 *   parse     config.c: parse(ctx, words, nwords) takes the line
 *   show      config.c, beside parse: show(cfg, out) writes the statement
 *             back as the file would have it (text), or its JSON members
 *
 * S(ID, keyword, help, field, names, dflt, hook): a setting, "keyword
 * NAME", parsed and shown by config.c from the row alone (its example:
 * the name after its default)
 *   field     struct toe_cfg's __u32 member (config.h declares it from
 *             here): the index in names of the name given
 *   names     the names it takes, blank-separated ("all policy"): its
 *             synopsis is "keyword all | policy"
 *   dflt      field's value when the file does not say
 *   hook      NO_HOOK, or HOOK(fn): toed calls fn(value) whenever a
 *             configuration becomes its own (read at start, reloaded;
 *             apply.c's adopt), toed --check and --apply never (apply.c
 *             declares fn from this column: any of toed's files may
 *             define it)
 */
#ifndef __TOE_CONFIG_STMTS_H
#define __TOE_CONFIG_STMTS_H

/* clang-format off */
#define TOE_CFG_STATEMENTS(X, S)					\
	X(DEVICE, "device",						\
	  "device NAME type software|chelsio-t1|chelsio-t1c|chelsio-t3 nconn N\n" \
	  "       [dev IFACE] [steer account|cpu N|forward]\n"		\
	  "device NAME kmod [steer account|cpu N|forward]",		\
	  "DEV_NAME NCONN IF_NAME CPU DEVS",				\
	  "an offload device: a software one declared here, or one of the kernel module (kmod)", \
	  "device d0 type chelsio-t3 nconn 100 dev lo steer cpu 1",	\
	  st_device, sh_device)						\
	X(DEFAULT, "default", "default offload dev NAME | bypass | host", \
	  "", "what a connection matching no rule gets (default: host)", \
	  "default offload dev d0", st_default, sh_default)					\
	X(RULE, "rule",							\
	  "rule offload dev NAME | bypass | host\n"			\
	  "     [family inet|inet6] [local PREFIX] [remote PREFIX]\n"	\
	  "     [lport P[-Q]] [rport P[-Q]] [cgroup PATH|ID]\n"		\
	  "     [keepalive IDLE INTVL CNT]\n"				\
	  "     [netns NAME[,NAME...] | host | any]\n"			\
	  "     [proto tcp|udp|any]",					\
	  "PREFIX4 PREFIX6 PORT CGROUP_ID KA_IDLE KA_INTVL KA_CNT NETNS_NAME RULES", \
	  "ordered rules, first match wins",				\
	  "rule offload dev d0 family inet local 10.0.0.0/8 remote 192.0.2.0/24" \
	  " lport 1024-65535 rport 443 cgroup 1 keepalive 60 10 5 netns host", \
	  st_rule, sh_rule)						\
	S(TRACK, "track",						\
	  "which connections sock_ops tracks (default: all)",		\
	  track, "all policy", TOE_TRACK_ALL, NO_HOOK)			\
	X(QUOTA, "quota", "quota [slots N%] [flows N%] [events N%]",	\
	  "SHARE",							\
	  "what one namespace other than toed's may hold (default: slots 50% flows 25% events 50%)", \
	  "quota slots 40% flows 30% events 20%", st_quota, sh_quota)	\
	S(LOG, "log",							\
	  "what toed logs, unless toed --log-level says (default: info)", \
	  log_level, "error warning info debug", 2 /* info */,		\
	  HOOK(log_cfg_level))
/* clang-format on */

#endif /* __TOE_CONFIG_STMTS_H */
