/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: what toectl shows, read from the pinned maps and written as a
 * text table or as one JSON document.
 */
#ifndef __TOE_SHOW_MAPS_H
#define __TOE_SHOW_MAPS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "opentoe_policy.h"
#include "opentoe_flows.h"
#include "view.h"

struct toe_maps {
	int devs, live, flows, stats, hdr, gen, neigh, local, events;
	int fwd; /* optional (-1): a datapath without the forward path */
	int byp; /* optional (-1): toe_byp_flows, without the bypass */
	int tid_pool; /* optional (-1): the module's TID pools (older datapath) */
	int tid_held; /* optional (-1): and the TIDs connections took */
	int listeners; /* optional (-1): toe_listeners, an older datapath */
	int ifaces; /* optional (-1): toe_ifaces, the interfaces' hooks */
	int tenants; /* optional (-1): toe_tenants, the event budget's */
	int reasons; /* optional (-1): toe_reasons, an older datapath */
};

int toe_maps_open(const char *pin_dir, struct toe_maps *m, char *err,
		  size_t len);
void toe_maps_close(struct toe_maps *m);

/* Where `ip netns` names network namespaces (bind mounts of their nsfs files). */
#define TOE_NETNS_RUN_DIR "/run/netns"

struct toe_flow_filter {
	const char *dev; /* device name, NULL for any */
	int port; /* local or remote port, -1 for any */
	__u64 netns; /* network namespace inode, 0 for any */
};

/*
 * What toed knows of a device of the kernel module (TOE_DEVF_KMOD), by
 * toe_devs index, from the module's DEV_GET and its own TID table.
 */
struct toe_view_kmod {
	bool valid;
	char tom[32]; /* the TOM the module attached */
	__u32 index; /* the module's device index */
	__u32 tids_used; /* TIDs the module has in use on it */
	__u32 tids_held; /* of which toed holds for its flows */
	__u32 tids_reserved; /* in the datapath's pool, or being bound */
	__u32 l2t_used, l2t_size;
	__u32 listeners; /* listeners (server TIDs) the module has on it */
	__u32 listeners_held; /* of which toed holds for offloaded listeners */
	/* the TID invariant: tids_host = tid_pool + tids_held + tid_in_flight */
	__u32 tids_host; /* the module's TIDs the host holds (DEV_TIDS_HOST) */
	long long tid_pool; /* TIDs in the datapath's pool */
	long long tid_in_flight; /* taken by the datapath, not yet settled */
	__u64 tid_seq; /* toed's requests that may change the module's TIDs */
	__u64 tid_changed_ms; /* CLOCK_MONOTONIC ms of the last of them */
	__u64 tid_event_ms; /* of the last datapath event with a TID read */
	__u64 tid_settled_ms; /* toed's last settle or let-go of a bound TID */
	/*
	 * the server TIDs' invariant: listeners + stids_reserved = stid_pool
	 * + listeners_held + stid_in_flight
	 */
	__u32 stids_reserved; /* the module's server TIDs on no listener */
	long long stid_pool; /* server TIDs in the datapath's server pool */
	long long stid_in_flight; /* taken by a listener, not yet settled */
	__u64 stid_seq; /* toed's requests that may change them */
};

/* A device of toe_devs as read once: its entry and its live counters. */
struct toe_dev_row {
	__u32 index; /* in toe_devs */
	char name[17];
	struct toe_dev d;
	struct toe_dev_live l;
};

/*
 * The devices present, in index order, into rows (TOE_MAX_DEVS of them):
 * how many.  What toectl devices and toed's metrics show.
 */
int toe_devs_read(const struct toe_maps *m, struct toe_dev_row *rows);

/*
 * The patch's /proc/net/toe/devices.  kv: TOE_MAX_DEVS entries by device
 * index, or NULL (no module).
 */
void toe_view_devices(FILE *f, bool json, const struct toe_maps *m,
		      const struct toe_view_kmod *kv);
/* toectl devices' fields (fields.h), and a device's cells (DF__N) for
 * them: ifn (IF_NAMESIZE) and st (16) hold its strings (metrics.c too). */
extern const struct tv_field toe_device_fields[];
void toe_device_cells(struct tv_cell *c, const struct toe_dev_row *r,
		      const struct toe_view_kmod *kv, const int *ifaces,
		      char *ifn, char *st);
/* The TID toed holds for a flow in the kernel module, or -1. */
typedef long long (*toe_tid_fn)(const struct toe_flow_key *k, void *ctx);
/*
 * The patch's TCPDIAG_OFFLOAD: this host's connections (toe_flows), then the
 * routed flows XDP forwards (toe_fwd, decision "forward").  Returns the
 * number of flows shown.
 */
int toe_view_flows(FILE *f, bool json, const struct toe_maps *m,
		   const struct toe_flow_filter *flt, toe_tid_fn tid,
		   void *ctx);
/* The mirrored neighbour table. */
void toe_view_neigh(FILE *f, bool json, const struct toe_maps *m);

/* Datapath counters summed over CPUs; names[i] NULL for unused slots. */
int toe_stats_read(const struct toe_maps *m, __u64 *out, int n);
const char *toe_stat_name(int i);

/* Policy header of the generation in force. */
int toe_policy_hdr(const struct toe_maps *m, __u32 *gen, struct toe_pol_hdr *h);

const char *toe_reason_name(__u32 r);
/* Device dev's name into buf (17 bytes): "-" for none, "?" for no device. */
void toe_dev_name(const struct toe_maps *m, __u32 dev, char *buf);
/* "10.0.0.1:80" or "[fe80::1]:80" */
const char *toe_endpoint_str(__u8 family, const __u32 *addr, __u16 port,
			     char *buf, size_t len);
/* "3.2s", "5m", "2h" */
const char *toe_age_str(__u64 ns, char *buf, size_t len);

#endif /* __TOE_SHOW_MAPS_H */
