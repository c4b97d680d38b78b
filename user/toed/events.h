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
#include "neigh.h"
#include "opentoe.h"
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

/* ring_buffer__new's callback, ctx toed's state (its evt the table). */
int on_event(void *ctx, void *data, size_t len);
/* What is on the ring now, read (each reconcile reads it first). */
void events_consume(struct toed *d);
void on_neigh(struct toe_nl *nl, enum toe_nl_op op,
	      const struct toe_neigh_key *k, const struct toe_neigh *v);
void on_link(struct toe_nl *nl, int ifindex, bool gone);
void retrack(struct toed *d, bool force);

#endif /* __TOE_EVENTS_H */
