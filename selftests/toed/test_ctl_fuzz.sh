#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toed's control-request parser (user/toed/ctl_parse.c) under libFuzzer with
# ASan and UBSan, seeded with good and bad requests: every input is a
# request that keeps ctl.c's invariants, one printable error line, or "more"
# while the line is short and has no newline.  20 s by default;
# TOE_CTL_FUZZ_SECONDS sets the time (make fuzz: 60 s).
. "$(dirname "$0")/../lib.sh"
plan 1
run_fuzzer ctl/fuzz_ctl selftests/toed/ctl_corpus selftests/toed/ctl_dict.txt 1100 \
	-max_total_time="${TOE_CTL_FUZZ_SECONDS:-20}"
finish
