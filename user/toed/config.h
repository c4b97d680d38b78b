/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe configuration file: devices, policy rules and the default action.
 * The format is documented in docs/configuration.md.
 */
#ifndef __TOE_CONFIG_H
#define __TOE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <net/if.h>
#include <linux/types.h>
#include "opentoe_common.h"
/* the values the fields hold: actions, track modes, the rules limit */
#include "opentoe_policy.h"
/* the statements, and the settings' fields (S rows) */
#include "config_stmts.h"

struct toe_json;

struct toe_cfg_dev {
	char name[16];
	__u32 type; /* enum toe_dev_type */
	char ifname[IF_NAMESIZE]; /* lower interface, "" for none */
	__u32 nconn;
	__u32 steer; /* enum toe_steer */
	__u32 steer_cpu;
	int line; /* 0: not from the file (a module device toed added) */
	/*
	 * A device of the kernel module ("device NAME kmod", or one toed
	 * found in the module): written with TOE_DEVF_KMOD.  type, nconn and
	 * ifindex then come from the module (toed fills them in before the
	 * apply); absent: the module has no such device, or no TOM on it, so
	 * it is written without TOE_DEVF_PRESENT (rules naming it leave
	 * connections on the host, reason nodev).
	 */
	bool kmod;
	bool absent;
	__u32 ifindex; /* lower interface by index (kmod), 0: use ifname */
};

#define TOE_CFG_MAX_NETNS 8 /* namespaces one rule names */
/* their names, as toectl policy writes them back: "a,b", "host", "any" */
#define TOE_CFG_NETNS_TEXT (TOE_CFG_MAX_NETNS * 33) /* 32 a name, ',' */

struct toe_cfg_rule {
	__u32 action; /* enum toe_action */
	int dev; /* index into toe_cfg.devs, -1 for none */
	__u8 family; /* 0: both, or TOE_AF_INET / TOE_AF_INET6 */
	__u8 lplen; /* local prefix length (0 with no prefix) */
	__u8 rplen;
	/*
	 * the protocols it matches, TOE_CFG_P_* bits: TCP unless a proto
	 * clause says otherwise (a file written before UDP means what it did)
	 */
	__u8 protos;
	__u32 laddr[4]; /* network order */
	__u32 raddr[4];
	__u16 lport_lo, lport_hi;
	__u16 rport_lo, rport_hi;
	__u64 cgroup; /* cgroup v2 id, 0 for any */
	__u32 ka_idle, ka_intvl, ka_cnt;
	int line;
	/*
	 * The network namespaces the rule matches in, by cookie (resolved
	 * when the file is parsed, so again at every apply): netns_any, or
	 * netns[0..nnetns); no clause: toed's own (toe_cfg.host_netns).
	 */
	bool netns_any;
	__u8 nnetns;
	__u64 netns[TOE_CFG_MAX_NETNS];
	char netns_text[TOE_CFG_NETNS_TEXT]; /* the clause's, "" for none */
};

#define TOE_CFG_P_TCP 1 /* "proto tcp", and no proto clause */
#define TOE_CFG_P_UDP 2 /* "proto udp": routed UDP flows */

struct toe_cfg {
	struct toe_cfg_dev devs[TOE_MAX_DEVS];
	int ndevs;
	struct toe_cfg_rule *rules;
	int nrules;
	int cap;
	__u32 default_action;
	int default_dev; /* index into devs, -1 */
	__u64 host_netns; /* cookie of the parser's (toed's) own namespace */
	__u32 quota_slots; /* "quota slots N%": a tenant's share of nconn */
	__u32 quota_flows; /* "quota flows N%": its share of toe_flows */
	__u32 quota_events; /* "quota events N%": its share of toe_events */
	/* The settings (config_stmts.h's S rows): track (enum toe_track), ... */
#define TOE_CFG_X_NONE(id, kw, syn, bounds, help, example, parse, show)
#define TOE_CFG_S_FIELD(id, kw, help, field, names, dflt, hook) __u32 field;
	TOE_CFG_STATEMENTS(TOE_CFG_X_NONE, TOE_CFG_S_FIELD)
#undef TOE_CFG_S_FIELD
#undef TOE_CFG_X_NONE
};

#define TOE_QUOTA_SLOTS_DEFAULT 50 /* percent of each device's nconn */
#define TOE_QUOTA_FLOWS_DEFAULT 25 /* percent of toe_flows' size */
#define TOE_QUOTA_EVENTS_DEFAULT 50 /* percent of the toe_events ring */

/*
 * Parse a configuration.  On error, returns -1 and writes one line
 * "NAME:LINE:COL: what was expected" into err.  toe_cfg_free() in all cases.
 */
int toe_cfg_parse(const char *name, const char *buf, size_t len,
		  struct toe_cfg *c, char *err, size_t errlen);
/* Read and parse a file; refuses one not owned by root or writable by others. */
int toe_cfg_load(const char *path, struct toe_cfg *c, char *err, size_t errlen);
/* toe_cfg_load, and the text it parsed (*text malloc'd) when it succeeds. */
int toe_cfg_load_text(const char *path, struct toe_cfg *c, char **text,
		      size_t *len, char *err, size_t errlen);
void toe_cfg_free(struct toe_cfg *c);

/*
 * Every statement of c, in config_stmts.h's order, each by its row's show
 * (a setting by its row): j NULL, as the file writes it (fed back to the
 * parser, the same configuration); else its JSON members, into the object
 * j has open.
 */
void toe_cfg_show(const struct toe_cfg *c, FILE *f, struct toe_json *j);
/* Rule i of c as toe_cfg_show writes it: one line, or one JSON object. */
void toe_cfg_show_rule(const struct toe_cfg *c, int i, FILE *f,
		       struct toe_json *j);

/* Network-order mask of a prefix length (IPv4 in word 0). */
void toe_prefix_mask(__u8 family, __u8 plen, __u32 *mask);

const char *toe_action_name(__u32 action);
/* "all" or "policy" (enum toe_track), "?" for anything else. */
const char *toe_track_name(__u32 track);
const char *toe_dev_type_name(__u32 type);

#endif /* __TOE_CONFIG_H */
