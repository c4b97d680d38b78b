#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The configuration parser under libFuzzer with ASan and UBSan, seeded with
# good and bad files: every input parses into a configuration that keeps the
# compiler's invariants, or fails with one FILE:LINE:COL line; a
# configuration parsed, written back as toectl policy writes it, parses to
# the same text.
# TOE_CONFIG_FUZZ_RUNS sets the number of inputs (default 300,000);
# TOE_CONFIG_FUZZ_SECONDS runs for a time instead (make fuzz: 60 s).
. "$(dirname "$0")/../lib.sh"
plan 1
limit=-runs="${TOE_CONFIG_FUZZ_RUNS:-300000}"
[ -n "${TOE_CONFIG_FUZZ_SECONDS:-}" ] && limit=-max_total_time="$TOE_CONFIG_FUZZ_SECONDS"
run_fuzzer config/fuzz_config selftests/config/corpus selftests/config/dict.txt 1024 "$limit"
finish
