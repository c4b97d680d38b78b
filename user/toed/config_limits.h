/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: every numeric and length limit of the configuration language, one
 * table for the parser (config.c) and its boundary test
 * (selftests/config/test_limits.sh, through build/selftests/cfg_limits,
 * which prints the table): what is changed here is tested at the new
 * limit, one below and one above.
 *
 * X(ID, KIND, LO, HI, WHAT, TEMPLATE): the limit's values LO..HI, what the
 * parser calls it, and a configuration that puts a value where '@' is:
 *   TOE_LK_NUM    the number itself;
 *   TOE_LK_LEN    a word of that many characters ('a' .. 'z' repeated);
 *   TOE_LK_LINE   '@' is the whole line: a comment of that many characters;
 *   TOE_LK_WORDS  '@' is a line of that many words;
 *   TOE_LK_COUNT  the template's last line repeated that many times ('@':
 *                  its number from 1).
 * The test tries LO - 1, LO, LO + 1 (NUM and LEN) and HI - 1, HI, HI + 1
 * (all), expecting the values in LO..HI valid (WORDS: only the error
 * "too many words" at HI + 1, since 64 words make no valid statement).
 */
#ifndef __TOE_CONFIG_LIMITS_H
#define __TOE_CONFIG_LIMITS_H

#include <net/if.h>
#include "opentoe_common.h"
#include "opentoe_policy.h"

enum toe_lim_kind {
	TOE_LK_NUM,
	TOE_LK_LEN,
	TOE_LK_LINE,
	TOE_LK_WORDS,
	TOE_LK_COUNT,
};

#define TOE_CFG_DEV "device d type chelsio-t3 nconn 1\n"
#define TOE_CFG_MAX_LINE 4096 /* characters a line */
#define TOE_CFG_MAX_WORDS 64 /* words a statement */
#define TOE_CFG_MAX_NETNS_NAME 32 /* characters of a name under /run/netns */

#define TOE_CFG_LIMITS(X)                                                      \
	X(PORT, TOE_LK_NUM, 0, 65535, "a port", "rule host rport @")           \
	X(PREFIX4, TOE_LK_NUM, 0, 32, "a prefix length",                       \
	  "rule host remote 0.0.0.0/@")                                        \
	X(PREFIX6, TOE_LK_NUM, 0, 128, "a prefix length",                      \
	  "rule host remote ::/@")                                             \
	X(CGROUP_ID, TOE_LK_NUM, 1, 0xffffffffULL, "a cgroup path or id",      \
	  "rule host cgroup @")                                                \
	X(SHARE, TOE_LK_NUM, 1, 100, "a share in percent", "quota slots @%")   \
	X(CPU, TOE_LK_NUM, 0, 4095, "a CPU number",                            \
	  "device d type chelsio-t3 nconn 1 steer cpu @")                      \
	X(NCONN, TOE_LK_NUM, 1, 16777216, "nconn",                             \
	  "device d type chelsio-t3 nconn @")                                  \
	X(KA_IDLE, TOE_LK_NUM, 1, 32767, "keepalive idle seconds",             \
	  TOE_CFG_DEV "rule offload dev d keepalive @ 1 1")                    \
	X(KA_INTVL, TOE_LK_NUM, 1, 32767, "keepalive interval seconds",        \
	  TOE_CFG_DEV "rule offload dev d keepalive 1 @ 1")                    \
	X(KA_CNT, TOE_LK_NUM, 1, 127, "keepalive probe count",                 \
	  TOE_CFG_DEV "rule offload dev d keepalive 1 1 @")                    \
	X(DEV_NAME, TOE_LK_LEN, 1, 15, "a device name",                        \
	  "device @ type chelsio-t3 nconn 1")                                  \
	X(IF_NAME, TOE_LK_LEN, 1, IF_NAMESIZE - 1, "an interface name",        \
	  "device d type chelsio-t3 nconn 1 dev @")                            \
	X(NETNS_NAME, TOE_LK_LEN, 1, TOE_CFG_MAX_NETNS_NAME,                   \
	  "a namespace name", "rule host netns @")                             \
	X(LINE, TOE_LK_LINE, 1, TOE_CFG_MAX_LINE, "characters a line", "@")    \
	X(WORDS, TOE_LK_WORDS, 1, TOE_CFG_MAX_WORDS, "words a statement", "@") \
	X(DEVS, TOE_LK_COUNT, 0, TOE_MAX_DEVS, "devices",                      \
	  "device d@ type chelsio-t3 nconn 1")                                 \
	X(RULES, TOE_LK_COUNT, 0, TOE_POL_MAX_RULES, "rules",                  \
	  "rule host rport 1")

enum toe_lim_id {
#define TOE_LIM_ENUM(id, kind, lo, hi, what, tpl) TOE_LIM_##id,
	TOE_CFG_LIMITS(TOE_LIM_ENUM)
#undef TOE_LIM_ENUM
		TOE_LIM__N
};

struct toe_cfg_limit {
	const char *id;
	enum toe_lim_kind kind;
	unsigned long long lo, hi;
	const char *what, *tpl;
};

static const struct toe_cfg_limit toe_cfg_limits[TOE_LIM__N]
	__attribute__((unused)) = {
#define TOE_LIM_ROW(id, kind, lo, hi, what, tpl) \
	[TOE_LIM_##id] = { #id, kind, lo, hi, what, tpl },
		TOE_CFG_LIMITS(TOE_LIM_ROW)
#undef TOE_LIM_ROW
	};

/* The limits as the parser uses them: LIM_LO(PORT), LIM_HI(NCONN). */
#define LIM_LO(id) ((__u32)toe_cfg_limits[TOE_LIM_##id].lo)
#define LIM_HI(id) ((__u32)toe_cfg_limits[TOE_LIM_##id].hi)

#endif /* __TOE_CONFIG_LIMITS_H */
