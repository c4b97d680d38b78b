/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: map layouts shared by the eBPF programs (bpf/) and user space
 * (user/), one header a concern (the headers below).  Every struct there is
 * the key or value of a pinned map, so its layout is ABI between a running
 * datapath and a newer toe-loader/toed: fields are only ever appended,
 * holes are explicit.
 *
 * eBPF: include after "vmlinux.h".
 */
#ifndef __OPENTOE_H
#define __OPENTOE_H

/* As bpf/ is split: maps_<concern>.h declares the maps of each. */
#include "opentoe_common.h"
#include "opentoe_policy.h"
#include "opentoe_flows.h"
#include "opentoe_stats.h"
#include "opentoe_events.h"
#include "opentoe_forward.h"
#include "opentoe_xdp.h"
#include "opentoe_bypass.h"
#include "opentoe_tid.h"
#include "opentoe_reasons.h"
#include "opentoe_capture.h"

#endif /* __OPENTOE_H */
