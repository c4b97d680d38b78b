/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: toed's client of the kernel module's generic-netlink family
 * "opentoe" (ABI: include/opentoe_genl.h).  Devices, TIDs, the L2T, and the
 * module's events.
 *
 * Two NETLINK_GENERIC sockets, as neigh.c has two rtnetlink ones:
 * requests and their replies on one, events on the other (so a dump never
 * interleaves with an event).  The event socket also follows the genetlink
 * controller's "notify" group, so a module loaded or unloaded while toed
 * runs is seen: the family is then resolved again (or forgotten).
 */
#ifndef __TOE_GENL_H
#define __TOE_GENL_H

#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include <linux/types.h>
#include "opentoe_flows.h"
#include "opentoe_genl.h"

/* A device of the module, as DEV_GET reports it. */
struct toe_genl_dev {
	__u32 index; /* the module's device index */
	char name[OPENTOE_NAMSIZ];
	__u32 ttid; /* enum opentoe_ttid */
	__u32 nconn;
	__u32 ifindex; /* lower net_device, 0: none */
	char ifname[IF_NAMESIZE];
	char tom[OPENTOE_TOM_NAMSIZ]; /* attached TOM, "" for none */
	__u32 tids_used, listeners, l2t_size, l2t_used;
	__u32 tids_reserved; /* TID_RESERVE'd, bound to no flow yet */
	__u32 stids_reserved; /* server TIDs reserved, on no listener yet */
	__u32 tids_host; /* the host's: reserved or bound, until TID_FREE */
};

/* A TID in use, from TID_GET; the tuple as a flow key of this host. */
struct toe_genl_tid {
	__u32 dev; /* the module's device index */
	__u32 tid;
	__u32 state; /* OPENTOE_TID_F_* */
	__u32 l2t;
	struct toe_flow_key key; /* local = source; ports in host order */
};

/* An L2T entry in use, from L2T_GET. */
struct toe_genl_l2t {
	__u32 dev, index, ifindex, refcnt;
	__u16 state; /* NUD_* */
	__u8 family; /* TOE_AF_INET / TOE_AF_INET6 */
	__u8 has_mac;
	__u32 addr[4]; /* next hop, network order */
	__u8 mac[6];
};

struct toe_genl_stats {
	__u64 events; /* messages read on the event socket */
	__u64 dev_events; /* DEV_NEW/DEL/CHANGE_NTF */
	__u64 l2t_events; /* L2T_CHANGE_NTF */
	__u64 family_events; /* the family appeared or went */
	__u64 overruns; /* event socket overran (ENOBUFS) */
};

struct toe_genl {
	int fd; /* requests */
	int ev_fd; /* events (nonblocking) */
	__u16 family; /* 0: the module is not loaded */
	__u32 mcgrp; /* the family's "events" group */
	__u32 ctrl_grp; /* nlctrl's "notify" group */
	__u32 seq;
	/*
	 * requests that may change the module's connection TIDs (TID_RESERVE,
	 * TID_ALLOC, TID_FREE; not SERVER) sent: equal before and after a read of the module, the
	 * read saw what toed's counts say (docs/architecture.md, the TID
	 * invariant)
	 */
	__u64 changes;
	__u64 changed_ns; /* CLOCK_MONOTONIC of the last of them */
	/* the same for the server TIDs: TID_RESERVE + SERVER, TID_FREE +
	 * SERVER, LISTEN_START, LISTEN_STOP */
	__u64 schanges;
	struct toe_genl_stats st;
};

/* What toe_genl_process() reports. */
enum toe_genl_ev {
	TOE_GENL_EV_DEV = 1, /* a device appeared, changed or went */
	TOE_GENL_EV_L2T, /* an L2T entry changed */
	TOE_GENL_EV_UP, /* the family appeared (module loaded) */
	TOE_GENL_EV_DOWN, /* the family went (module unloaded) */
	TOE_GENL_EV_LOST, /* events were lost: re-read everything */
};

typedef void (*toe_genl_cb)(struct toe_genl *g, enum toe_genl_ev ev, __u32 dev,
			    void *ctx);

/*
 * Open both sockets and resolve the family.  0 with g->family 0 when the
 * module is not loaded (not an error); -1 with err set when netlink itself
 * fails.
 */
int toe_genl_open(struct toe_genl *g, char *err, size_t errlen);
void toe_genl_close(struct toe_genl *g);
static inline bool toe_genl_up(const struct toe_genl *g)
{
	return g->family != 0;
}

/* Devices in this network namespace; *n set.  0 or -errno (err set). */
int toe_genl_devs(struct toe_genl *g, struct toe_genl_dev *out, int max, int *n,
		  char *err, size_t errlen);
/*
 * TID_ALLOC for the flow k (local end = source) on device dev.  0 with
 * *tid and *l2t, or -errno with err set (the kernel's extended ACK message
 * when it gave one).
 */
int toe_genl_tid_alloc(struct toe_genl *g, __u32 dev,
		       const struct toe_flow_key *k, __u32 *tid, __u32 *l2t,
		       char *err, size_t errlen);
/* TID_ALLOC binding reserved TID tid to the flow k; refused, it stays reserved. */
int toe_genl_tid_bind(struct toe_genl *g, __u32 dev,
		      const struct toe_flow_key *k, __u32 tid, __u32 *l2t,
		      char *err, size_t errlen);
/* TID_RESERVE: a TID for a flow to come, in *tid. */
int toe_genl_tid_reserve(struct toe_genl *g, __u32 dev, __u32 *tid, char *err,
			 size_t errlen);
int toe_genl_tid_free(struct toe_genl *g, __u32 dev, __u32 tid, char *err,
		      size_t errlen);
/* The same with SERVER: a server TID, for a listener to come. */
int toe_genl_stid_reserve(struct toe_genl *g, __u32 dev, __u32 *stid, char *err,
			  size_t errlen);
int toe_genl_stid_free(struct toe_genl *g, __u32 dev, __u32 stid, char *err,
		       size_t errlen);
/* Every TID in use (dev 0: of every device); *out is malloc'd, free it. */
int toe_genl_tids(struct toe_genl *g, __u32 dev, struct toe_genl_tid **out,
		  int *n, char *err, size_t errlen);
/* Every L2T entry in use (dev 0: of every device); *out is malloc'd. */
int toe_genl_l2t(struct toe_genl *g, __u32 dev, struct toe_genl_l2t **out,
		 int *n, char *err, size_t errlen);

/* A listener of the module's, from LISTEN_GET: a server TID in use. */
struct toe_genl_listener {
	__u32 dev; /* the module's device index */
	__u32 stid; /* server TID */
	struct toe_flow_key key; /* local address and port; netns 0 */
};

/*
 * LISTEN_START (start) or LISTEN_STOP of k's local address and port on
 * module device dev alone: a server TID there, the reserved stid if not
 * TOE_TID_NONE (ENOENT: not reserved).  0 or -errno, err set.
 */
int toe_genl_listen(struct toe_genl *g, bool start, __u32 dev,
		    const struct toe_flow_key *k, __u32 stid, char *err,
		    size_t errlen);
/*
 * Every listener (dev 0: of every device); reserved: the server TIDs
 * reserved for listeners to come instead (stid and dev only).  *out is
 * malloc'd, free it.
 */
int toe_genl_listeners(struct toe_genl *g, __u32 dev, bool reserved,
		       struct toe_genl_listener **out, int *n, char *err,
		       size_t errlen);

/* Read every pending event and report it through cb.  0 or -1. */
int toe_genl_process(struct toe_genl *g, toe_genl_cb cb, void *ctx);

/* enum opentoe_ttid -> enum toe_dev_type (an unknown id: software). */
__u32 toe_genl_dev_type(__u32 ttid);

#endif /* __TOE_GENL_H */
