// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * bench/bench_xdp_steps.sh's build of the minimal tc forwarder
 * (min_tc_fwd.bpf.c) for BPF_PROG_TEST_RUN: the TTL computed, not stored,
 * as min_xdp_fwd_run.bpf.c says why.
 */
#define MIN_TEST_RUN 1
#include "min_tc_fwd.bpf.c"
