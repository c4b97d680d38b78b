/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: the statements of the configuration language, one table (the
 * shape of xdp-tools' DEFINE_OPTION: keyword, arguments, bounds, help), for
 * the parser's dispatch and its "expected ..." list (config.c),
 * build/toe-tables (statements), and through it the docs check, which
 * holds toed.8's CONFIGURATION synopsis and the docs' list of statements
 * to it.
 *
 * X(ID, keyword, synopsis, bounds, help, parse)
 *   keyword   the statement's first word
 *   synopsis  its forms, a line each ('\n' between; a continuation line
 *             indented), as toed.8 writes them
 *   bounds    the limits of config_limits.h its values are held to, by ID,
 *             blank-separated
 *   help      what it says (docs/configuration.md's comment on it)
 *   parse     config.c: parse(ctx, words, nwords) takes the line
 * The order is the parser's "expected ..." list.
 */
#ifndef __TOE_CONFIG_STMTS_H
#define __TOE_CONFIG_STMTS_H

/* clang-format off */
#define TOE_CFG_STATEMENTS(X)						\
	X(DEFAULT, "default", "default offload dev NAME | bypass | host", \
	  "", "what a connection matching no rule gets (default: host)", \
	  st_default)							\
	X(DEVICE, "device",						\
	  "device NAME type software|chelsio-t1|chelsio-t1c|chelsio-t3 nconn N\n" \
	  "       [dev IFACE] [steer account|cpu N|forward]\n"		\
	  "device NAME kmod [steer account|cpu N|forward]",		\
	  "DEV_NAME NCONN IF_NAME CPU DEVS",				\
	  "an offload device: a software one declared here, or one of the kernel module (kmod)", \
	  st_device)							\
	X(RULE, "rule",							\
	  "rule offload dev NAME | bypass | host\n"			\
	  "     [family inet|inet6] [local PREFIX] [remote PREFIX]\n"	\
	  "     [lport P[-Q]] [rport P[-Q]] [cgroup PATH|ID]\n"		\
	  "     [keepalive IDLE INTVL CNT]\n"				\
	  "     [netns NAME[,NAME...] | host | any]\n"			\
	  "     [proto tcp|udp|any]",					\
	  "PREFIX4 PREFIX6 PORT CGROUP_ID KA_IDLE KA_INTVL KA_CNT NETNS_NAME RULES", \
	  "ordered rules, first match wins", st_rule)			\
	X(TRACK, "track", "track all | policy", "",			\
	  "which connections sock_ops tracks (default: all)", st_track)	\
	X(QUOTA, "quota", "quota [slots N%] [flows N%] [events N%]",	\
	  "SHARE",							\
	  "what one namespace other than toed's may hold (default: slots 50% flows 25% events 50%)", \
	  st_quota)
/* clang-format on */

#endif /* __TOE_CONFIG_STMTS_H */
