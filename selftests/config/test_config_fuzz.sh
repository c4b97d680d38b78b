#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The configuration parser under libFuzzer with ASan and UBSan, seeded with
# good and bad files: every input parses into a configuration that keeps the
# compiler's invariants, or fails with one FILE:LINE:COL line.
# TOE_CONFIG_FUZZ_RUNS sets the number of inputs (default 300,000);
# TOE_CONFIG_FUZZ_SECONDS runs for a time instead (make fuzz: 60 s).
. "$(dirname "$0")/../lib.sh"
plan 1
f=$TOE_BUILD/config/fuzz_config
[ -x "$f" ] || cannot_run "fuzz_config not built (needs clang's libFuzzer: libclang-rt-14-dev)"
work=$(mktemp -d); defer "rm -rf $work"
cp "$TOE_TOP"/selftests/config/corpus/* "$work/"
out=$work/log
limit=(-runs="${TOE_CONFIG_FUZZ_RUNS:-300000}")
[ -n "${TOE_CONFIG_FUZZ_SECONDS:-}" ] && limit=(-max_total_time="$TOE_CONFIG_FUZZ_SECONDS")
if "$f" "${limit[@]}" -max_len=1024 \
	-dict="$TOE_TOP/selftests/config/dict.txt" "$work" >"$out" 2>&1; then
	ok "libFuzzer: $(grep -o 'Done [0-9]* runs' "$out" | tail -1), no crash, no sanitizer report, no broken invariant"
else
	tail -30 "$out"
	fail "libFuzzer found a failing input"
fi
finish
