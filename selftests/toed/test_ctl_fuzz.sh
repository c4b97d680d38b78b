#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toed's control-request parser (user/toed/ctl_parse.c) under libFuzzer with
# ASan and UBSan, seeded with good and bad requests: every input is a
# request that keeps ctl.c's invariants, one printable error line, or "more"
# while the line is short and has no newline.  6,000,000 runs by default
# (about what 20 s made on this machine; a count, not a time, so that it
# runs in make check's side lane at idle priority and does the same work),
# TOE_CTL_FUZZ_RUNS sets them; TOE_CTL_FUZZ_SECONDS a time instead (make
# fuzz: 60 s).
. "$(dirname "$0")/../lib.sh"
plan 1
limit=-runs="${TOE_CTL_FUZZ_RUNS:-6000000}"
[ -n "${TOE_CTL_FUZZ_SECONDS:-}" ] && limit=-max_total_time="$TOE_CTL_FUZZ_SECONDS"
run_fuzzer ctl/fuzz_ctl selftests/toed/ctl_corpus selftests/toed/ctl_dict.txt 1100 "$limit"
finish
