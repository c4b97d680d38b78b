/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe datapath, maps of the kernel module's TIDs: each module device's
 * pool of reserved TIDs (toe_tid_pool, toed fills it) and the TID each
 * live connection took from it (toe_tid_held).  Layouts and who owns
 * what: include/opentoe.h.
 */
#ifndef __TOE_MAPS_TID_H
#define __TOE_MAPS_TID_H

#include "common.h"

/* clang-format off */
/* toed creates each device's queue and puts it here. */
struct toe_tid_queue {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, TOE_TID_POOL_MAX);
	__type(value, __u32);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2 * TOE_MAX_DEVS); /* TOE_STID_POOL: listeners */
	__type(key, __u32);
	__array(values, struct toe_tid_queue);
} toe_tid_pool SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TOE_TID_HELD_MAX);
	__type(key, __u64);
	__type(value, struct toe_tid_held);
} toe_tid_held SEC(".maps");
/* clang-format on */

#endif /* __TOE_MAPS_TID_H */
