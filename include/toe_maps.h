/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: every pinned map of the datapath, written once.
 *
 * TOE_MAP_TABLE(X) calls X(ID, name) for each map: ID names it in C
 * (TOE_MAP_ID_<ID>, TOE_MAP(<ID>) for its pin name) and name is the map's
 * identifier in bpf/ (its pin name too, at most 15 characters).  The loader
 * checks at compile time that the skeleton has exactly these maps, so the
 * table cannot drift from the eBPF definitions.  Layouts are in opentoe.h.
 */
#ifndef __TOE_MAPS_H
#define __TOE_MAPS_H

/* clang-format off */
#define TOE_MAP_TABLE(X)			\
	X(DEVS,		toe_devs)		\
	X(DEV_LIVE,	toe_dev_live)		\
	X(FLOWS,	toe_flows)		\
	X(FLOW_FILTER,	toe_flow_filter)	\
	X(STATS,	toe_stats)		\
	X(EVENTS,	toe_events)		\
	X(SK_STATE,	toe_sk_state)		\
	X(XDP_NEXT,	toe_xdp_next)		\
	X(XDP_NEXT_NS,	toe_xdp_next_ns)	\
	X(POL_GEN,	toe_pol_gen)		\
	X(POL_HDR,	toe_pol_hdr)		\
	X(POL_TUPLES,	toe_pol_tuples)		\
	X(POL_RULES,	toe_pol_rules)		\
	X(POL_CELLS,	toe_pol_cells)		\
	X(POL_LCLASS,	toe_pol_lclass)		\
	X(POL_RCLASS,	toe_pol_rclass)		\
	X(RCU_SYNC,	toe_rcu_sync)		\
	X(NEIGH,	toe_neigh)		\
	X(LOCAL_ADDR,	toe_local_addr)		\
	X(FWD,		toe_fwd)		\
	X(FWD_HALF,	toe_fwd_half)		\
	X(FWD_NAT,	toe_fwd_nat)		\
	X(FWD_CTOK,	toe_fwd_ctok)		\
	X(FWD_GEN,	toe_fwd_gen)		\
	X(FWD_SCRATCH,	toe_fwd_scratch)	\
	X(DEVMAP,	toe_devmap)		\
	X(IFACES,	toe_ifaces)		\
	X(CPUMAP,	toe_cpumap)		\
	X(XDP_CONF,	toe_xdp_conf)		\
	X(BYPASS,	toe_bypass)		\
	X(BYP_SK,	toe_byp_sk)		\
	X(BYP_FLOWS,	toe_byp_flows)		\
	X(BYP_CONF,	toe_byp_conf)		\
	X(TID_POOL,	toe_tid_pool)		\
	X(TID_HELD,	toe_tid_held)		\
	X(LISTENERS,	toe_listeners)		\
	X(TENANTS,	toe_tenants)		\
	X(REASONS,	toe_reasons)		\
	X(CAP_CONF,	toe_cap_conf)		\
	X(CAP_RING,	toe_cap_ring)		\
	X(CAP_CPU,	toe_cap_cpu)
/* clang-format on */

enum toe_map_id {
#define TOE_MAP_ENUM(id, name) TOE_MAP_ID_##id,
	TOE_MAP_TABLE(TOE_MAP_ENUM)
#undef TOE_MAP_ENUM
		TOE_MAP__N
};

/* The pin name of map ID, e.g. TOE_MAP(FLOWS) is "toe_flows". */
#define TOE_MAP(id) (toe_map_names[TOE_MAP_ID_##id])

#define TOE_MAP_NAME(id, name) [TOE_MAP_ID_##id] = #name,
static const char *const toe_map_names[TOE_MAP__N] = { TOE_MAP_TABLE(
	TOE_MAP_NAME) };
#undef TOE_MAP_NAME

#endif /* __TOE_MAPS_H */
