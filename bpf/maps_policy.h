/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, maps of the policy: the devices policy offloads to
 * (toe_devs, from the configuration) with their live slot counts
 * (toe_dev_live), the classifier's two generations (toe_pol_*), and the
 * RCU barrier policy writers wait on (toe_rcu_sync).  Layouts and the
 * classifier: include/opentoe.h.
 */
#ifndef __TOE_MAPS_POLICY_H
#define __TOE_MAPS_POLICY_H

#include "common.h"

/* clang-format off */
/* What each tenant holds (include/opentoe_policy.h), policy.h's quotas. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TOE_TENANTS_MAX);
	__type(key, struct toe_tenant_key);
	__type(value, struct toe_tenant);
} toe_tenants SEC(".maps");

/* Devices: see include/opentoe.h; toe_dev_live is policy.h's slot count. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TOE_MAX_DEVS);
	__type(key, __u32);
	__type(value, struct toe_dev);
} toe_devs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TOE_MAX_DEVS);
	__type(key, __u32);
	__type(value, struct toe_dev_live);
} toe_dev_live SEC(".maps");

/* Policy: see include/opentoe.h for the classifier and its generations. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} toe_pol_gen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct toe_pol_hdr);
} toe_pol_hdr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * TOE_POL_MAX_TUPLES);
	__type(key, __u32);
	__type(value, struct toe_pol_tuple);
} toe_pol_tuples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * TOE_POL_MAX_RULES);
	__type(key, __u32);
	__type(value, struct toe_pol_rule);
} toe_pol_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * TOE_POL_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} toe_pol_lclass SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * TOE_POL_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} toe_pol_rclass SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, TOE_POL_CELLS_DEFAULT);
	__type(key, struct toe_pol_key);
	__type(value, __u32);
} toe_pol_cells SEC(".maps");

/*
 * Never read by a program: a policy writer updates it to wait for an RCU
 * grace period (the kernel runs synchronize_rcu after a map-in-map update),
 * after which no connection still uses the previous policy generation.
 */
struct toe_rcu_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct toe_rcu_inner);
} toe_rcu_sync SEC(".maps");
/* clang-format on */

#endif /* __TOE_MAPS_POLICY_H */
