/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: layouts of the offload devices (toe_devs, toe_dev_live) and of
 * the policy classifier (toe_pol_*), shared by bpf/ and user/
 * (include/opentoe.h).
 */
#ifndef __OPENTOE_POLICY_H
#define __OPENTOE_POLICY_H

#include "opentoe_common.h"

/* enum toe_dev_type: offload device type ids (the patch's TOE_ID_*). */
enum toe_dev_type {
	TOE_DEV_SOFTWARE = 0,
	TOE_DEV_CHELSIO_T1 = 1,
	TOE_DEV_CHELSIO_T1C = 2,
	TOE_DEV_CHELSIO_T3 = 3,
};

/* enum toe_steer: what XDP does with an offloaded flow's packets. */
enum toe_steer {
	TOE_STEER_ACCOUNT = 0, /* count, XDP_PASS */
	TOE_STEER_CPU = 1, /* count, redirect to a cpumap entry */
	TOE_STEER_FORWARD = 2, /* count, rewrite L2, redirect to egress */
};

#define TOE_DEVF_PRESENT (1U << 0) /* entry in use */
#define TOE_DEVF_KMOD (1U << 1) /* from the kernel module */

/* toe_devs: ARRAY[TOE_MAX_DEVS], index = device index. Written by toed. */
struct toe_dev {
	char name[16];
	__u32 type; /* enum toe_dev_type */
	__u32 ifindex; /* lower interface */
	__u32 nconn; /* capacity: max offloaded connections */
	__u32 flags; /* TOE_DEVF_* */
	__u32 steer; /* enum toe_steer */
	__u32 steer_cpu; /* with TOE_STEER_CPU */
	/*
	 * The slots of this device one namespace other than toed's may hold
	 * at once (toe_tenants; "quota slots", a share of nconn); 0: no limit.
	 */
	__u32 tenant_max;
};

/*
 * toe_tenants: HASH, struct toe_tenant_key -> struct toe_tenant.  What one
 * tenant (a network namespace other than toed's, by cookie) holds of what
 * tenants share, so that one cannot take all of it: what < TOE_MAX_DEVS,
 * the slots of device what.  sock_ops adds and takes off with atomic adds
 * (__sync_fetch_and_add: many CPUs decide connections of one namespace at
 * once, so per-CPU counts would need a sum on every decision); an add that
 * overshoots the quota is undone, so concurrent connections never hold more
 * than the quota.  An entry is made on a tenant's first offload and left
 * at zero afterwards (deleting it could race with a concurrent add); a full
 * table refuses new tenants (reason quota), never the ones it holds.
 */
#define TOE_TENANTS_MAX 65536
#define TOE_TQ_FLOWS TOE_MAX_DEVS /* what: its records in toe_flows */
/*
 * The event budget: a tenant's share of the toe_events ring.  what
 * TOE_TQ_EVENTS: held counts the events it put on the ring (atomic adds by
 * the datapath; refused, those dropped at its budget); what
 * TOE_TQ_EVENTS_READ: held counts those toed took off it (written only by
 * toed, after each read of the ring).  The difference is what the tenant
 * has on the ring now, never more than toe_pol_hdr.tenant_events: one
 * tenant's flood fills its share, never the ring, so the others' events
 * (flow_closed, listen_stop) still get out.
 */
#define TOE_TQ_EVENTS (TOE_MAX_DEVS + 1)
#define TOE_TQ_EVENTS_READ (TOE_MAX_DEVS + 2)

struct toe_tenant_key {
	__u64 netns; /* namespace cookie */
	__u32 what; /* < TOE_MAX_DEVS: a device's slots; TOE_TQ_FLOWS */
	__u32 pad;
};

struct toe_tenant {
	__u64 held; /* held now (64 bits: the datapath reads its atomic add) */
	__u64 refused; /* total refused at the quota */
};

/*
 * toe_dev_live: ARRAY[TOE_MAX_DEVS]. Written only by the datapath with
 * atomic adds, so that toed rewriting a device's configuration never
 * clobbers its live count.
 */
struct toe_dev_live {
	__u64 live; /* offloaded connections open now */
	__u64 offloaded; /* total ever offloaded */
	__u64 refused; /* total refused for capacity */
	__u64 released; /* total slots released at close */
	/*
	 * a module device's: TIDs taken from its pool (bpf/tid.h take_tid),
	 * total; toed's count of those it has settled gives the TIDs in
	 * flight (docs/architecture.md, the TID invariant)
	 */
	__u64 tid_taken;
	/* the same for its server TIDs (take_stid), listeners' */
	__u64 stid_taken;
	/*
	 * takes in progress: a TID popped from the pool, its toe_tid_held
	 * entry not yet written (a server TID: its toe_listeners entry).  A
	 * reconcile believes a reserved TID that neither a pool nor an entry
	 * holds orphaned only when this is 0 after it emptied the pools
	 * (docs/architecture.md)
	 */
	__u32 tid_taking, stid_taking;
};

/*
 * Policy: ordered rules, first match wins, looked up without walking the
 * rules (tuple space search, as Open vSwitch's classifier does).
 *
 * Port ranges first become port classes: the boundaries of all the rules'
 * ranges cut 0-65535 into elementary intervals, and two arrays map a local
 * or remote port to the number of its interval (toe_pol_lclass/rclass), so
 * every range is a whole number of classes.  Every rule then becomes cells
 * of one "tuple" (a shape: family, local and remote prefix lengths, whether
 * it matches the local port, the remote port, the cgroup, the network
 * namespace); a cell key is
 * the flow's fields masked by its tuple's masks, its value the lowest
 * (first) rule index among the rules that own the cell.  A lookup masks the
 * flow once per tuple and looks up one hash entry per tuple: its cost grows
 * with the number of distinct shapes (at most TOE_POL_MAX_TUPLES), not with
 * the number of rules.  Tuples are sorted by
 * the lowest rule they hold, so the walk stops at the first tuple that
 * cannot beat the best match found so far.
 *
 * Two generations of every table live side by side (index or key field
 * "gen").  toe_pol_gen says which one connections use; the program reads it
 * once per connection, so no connection is decided by a mix of two rule
 * sets.  A writer fills the other generation, flips toe_pol_gen, then waits
 * for an RCU grace period (an update of the toe_rcu_sync map-in-map, which
 * the kernel follows with synchronize_rcu) before it may touch the old
 * generation again.
 */
#define TOE_POL_MAX_RULES 131072
#define TOE_POL_MAX_TUPLES 64
#define TOE_POL_CELLS_DEFAULT (1U << 20)

/* toe_pol_rules: ARRAY[2 * TOE_POL_MAX_RULES], index gen * MAX + rule. */
struct toe_pol_rule {
	__u32 action; /* enum toe_action */
	__u32 dev; /* device index with TOE_ACT_OFFLOAD */
	__u32 ka_idle; /* keepalive (seconds); 0: leave it alone */
	__u32 ka_intvl;
	__u32 ka_cnt;
	__u32 pad;
};

/* toe_pol_tuples: ARRAY[2 * TOE_POL_MAX_TUPLES], index gen * MAX + t. */
struct toe_pol_tuple {
	__u32 lmask[4]; /* local address mask, network order */
	__u32 rmask[4]; /* remote address mask */
	__u8 family; /* TOE_AF_INET / TOE_AF_INET6 */
	__u8 use_cgroup; /* key carries the cgroup id */
	__u8 use_lport; /* key carries the local port class */
	__u8 use_rport; /* key carries the remote port class */
	__u32 min_rule; /* lowest rule index with a cell here */
	__u8 use_netns; /* key carries the network namespace cookie */
	/*
	 * the protocol its rules match, as toe_flow_key.proto: 0 TCP (a rule
	 * without a proto clause), TOE_IPPROTO_UDP (routed UDP flows)
	 */
	__u8 proto;
	__u8 pad2[2];
};

/* toe_pol_cells: HASH (no prealloc), toe_pol_key -> first rule index. */
struct toe_pol_key {
	__u32 laddr[4];
	__u32 raddr[4];
	__u64 cgroup; /* 0 unless the tuple uses the cgroup */
	__u32 lclass; /* local port class, 0 unless used */
	__u32 rclass;
	__u16 tuple; /* tuple index within the generation */
	__u8 gen;
	__u8 pad[5];
	__u64 netns; /* namespace cookie, 0 unless the tuple uses it */
};

/* toe_pol_lclass / toe_pol_rclass: ARRAY[2 * 65536] u32, gen * 65536 + port. */
#define TOE_POL_PORTS 65536

/* toe_pol_hdr: ARRAY[2], per generation. */
struct toe_pol_hdr {
	__u32 ntuples;
	__u32 nrules;
	__u32 default_action; /* enum toe_action */
	__u32 default_dev; /* with a default of TOE_ACT_OFFLOAD */
	__u64 applied_ns; /* CLOCK_MONOTONIC when it was applied */
	__u64 serial; /* counts applies since the maps were made */
	__u32 track; /* enum toe_track */
	__u32 pad;
	/*
	 * The cookie of toed's own network namespace when it applied: the
	 * namespace of a rule without a netns clause, and the one a flow
	 * with no namespace of its own (a routed flow, netns 0) is decided
	 * in.
	 */
	__u64 host_netns;
	/*
	 * The toe_flows records one namespace other than toed's may hold
	 * ("quota flows N%" of toe_flows' size; 0: no limit): past it, its
	 * connections get no record (host, reason quota), so that they never
	 * evict the others' from the LRU.
	 */
	__u32 tenant_flows;
	/*
	 * The events one namespace other than toed's may have on the
	 * toe_events ring at once ("quota events N%" of the ring; 0: no
	 * limit): past it, its events are dropped and counted
	 * (TOE_S_EVENT_QUOTA, toe_tenants what TOE_TQ_EVENTS refused).
	 */
	__u32 tenant_events;
};

/*
 * Which connections sock_ops tracks (a toe_flows record, state callbacks,
 * a close event): all of them, or only those the policy names (a rule
 * matched, or the default is not host).  A connection the policy does not
 * name is then only counted (TOE_S_UNTRACKED) and left alone.
 */
enum toe_track {
	TOE_TRACK_ALL = 0,
	TOE_TRACK_POLICY = 1,
};

#endif /* __OPENTOE_POLICY_H */
