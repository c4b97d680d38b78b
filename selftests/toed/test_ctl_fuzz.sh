#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toed's control-request parser (user/toed/ctl_parse.c) under libFuzzer with
# ASan and UBSan, seeded with good and bad requests: every input is a
# request that keeps ctl.c's invariants, one printable error line, or "more"
# while the line is short and has no newline.  20 s by default;
# TOE_CTL_FUZZ_SECONDS sets the time (make fuzz: 60 s).
. "$(dirname "$0")/../lib.sh"
plan 1
f=$TOE_BUILD/ctl/fuzz_ctl
[ -x "$f" ] || cannot_run "fuzz_ctl not built (needs clang's libFuzzer: libclang-rt-14-dev)"
work=$(mktemp -d); defer "rm -rf $work"
cp "$TOE_TOP"/selftests/toed/ctl_corpus/* "$work/"
out=$work/log
if "$f" -max_total_time="${TOE_CTL_FUZZ_SECONDS:-20}" -max_len=1100 \
	-dict="$TOE_TOP/selftests/toed/ctl_dict.txt" "$work" >"$out" 2>&1; then
	ok "libFuzzer: $(grep -o 'Done [0-9]* runs' "$out" | tail -1), no crash, no sanitizer report, no broken invariant"
else
	tail -30 "$out"
	fail "libFuzzer found a failing input"
fi
finish
