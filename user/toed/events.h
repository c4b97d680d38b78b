/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: the datapath's events (events.c), handed on by type (evtypes.c);
 * rtnetlink's neighbour and link callbacks; which interfaces are mirrored.
 */
#ifndef __TOE_EVENTS_H
#define __TOE_EVENTS_H

struct toed;

#include <stdbool.h>
#include <stddef.h>
#include "log.h"
#include "neigh.h"
#include "nlat.h"
#include "opentoe_common.h"
#include "opentoe_events.h"
#include "opentoe_forward.h"
#include "show_maps.h"

/*
 * What is done with an event of one type (evtypes.c's toed_ev_table, by
 * type): the forward path's are fwd's whole; a listener's and a flow's
 * (flow) are counted, logged and streamed by events.c, with the part of
 * the concern that owns them before (it may make the event another) and
 * after (the flow's TID read first).
 */
struct ev_type {
	void (*fwd)(struct toed *d, const struct toe_event *e);
	bool flow;
	void (*before)(struct toed *d, struct toe_event *e);
	void (*after)(struct toed *d, const struct toe_event *e);
};
#define TOE_EV__N (TOE_EV_FWD_ENDED + 1)
struct ev_table {
	struct ev_type type[TOE_EV__N];
	/* the TID a flow holds, for its log line (kmod.c's tid_of; ctx the
	 * struct kmod) */
	toe_tid_fn tid;
};
extern const struct ev_table toed_ev_table;

/* The event budget's credit: what toed read of a tenant's events. */
struct ev_credit {
	__u64 tenant;
	__u64 n;
};
#define CREDIT_SLOTS 32

/*
 * The datapath's events as toed reads them (events.c): the ring, the
 * table that hands each on, the counts, the tenants' credit (the event
 * budget, include/opentoe_policy.h's TOE_TQ_EVENTS: told to the datapath
 * after each read of the ring, one update per tenant rather than per
 * event), and the log lines' rate limits by type.  events_init gives it
 * the datapath's maps.
 */
struct events {
	struct toe_maps *m;
	struct ring_buffer *rb; /* toe_events (datapath.c opens it) */
	const struct ev_table *evt; /* who takes each event type (evtypes.c) */
	__u64 ev[TOE_EV_FLOW_CLOSED + 1]; /* events read, by type */
	__u64 ev_bad;
	__u64 closed_by[TOE_ACT_BYPASS + 1]; /* flow_closed events by decision */
	__u64 refused_by[TOE_R__MAX]; /* flow_refused events by reason */
	struct nlat nlat; /* neighbour event read -> map write (nlat.h) */
	struct ev_credit credit[CREDIT_SLOTS];
	struct log_rl ev_rl[TOE_EV_FLOW_CLOSED + 1];
};

void events_init(struct events *es, struct toe_maps *m);

/* ring_buffer__new's callback, ctx toed's state (its evt the table). */
int on_event(void *ctx, void *data, size_t len);
/* What is on the ring now, read (each reconcile reads it first). */
void events_consume(struct events *es);
void on_neigh(struct toe_nl *nl, enum toe_nl_op op,
	      const struct toe_neigh_key *k, const struct toe_neigh *v);
void on_link(struct toe_nl *nl, int ifindex, bool gone);
void retrack(struct toed *d, bool force);

#endif /* __TOE_EVENTS_H */
