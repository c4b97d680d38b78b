// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * make bench-xdp's build of the minimal XDP forwarder (min_xdp_fwd.bpf.c)
 * for BPF_PROG_TEST_RUN: every repeat of a run sees the same buffer, so
 * the TTL it lowered would expire the frame after 254 repeats (and the
 * rest would measure XDP_PASS).  Here the TTL and its checksum are read,
 * checked and computed as there, but not stored: the two stores are the
 * whole difference (the MACs are written, the same cache line).
 */
#define MIN_TEST_RUN 1
#include "min_xdp_fwd.bpf.c"
