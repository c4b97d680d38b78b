#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Parser test (make check): include/toe_parse.h compiled into an XDP program
# and into user space, run over a crafted corpus with expected verdicts and
# over random/mutated packets through BPF_PROG_TEST_RUN and the user-space
# copy, which must agree on every field.  See selftests/parser/parse_diff.c.
#
# Environment: TOE_PARSER_N random/mutated packets (default 500000, about 1 s),
# TOE_PARSER_SEED to replay a run (its seed is printed).
. "$(dirname "$0")/../lib.sh"
plan 20

need_root
need_cmd make clang bpftool
[ -r /sys/kernel/btf/vmlinux ] || skip "no kernel BTF at /sys/kernel/btf/vmlinux"

dir=$TOE_TOP/selftests/parser
out=$TOE_BUILD/parser
n=${TOE_PARSER_N:-500000}
seed=${TOE_PARSER_SEED:+-s $TOE_PARSER_SEED}
log=$(mktemp)
defer "rm -f $log"

mk() { make -C "$dir" O="$TOE_BUILD" "$@" >"$log" 2>&1; }

if mk; then
	ok "build (BPF harness, skeleton, tester, sanitizer build)"
else
	sed 's/^/  /' "$log"
	fail "build (BPF harness, skeleton, tester, sanitizer build)"
	finish
fi
check "incremental: a second make has nothing to do" mk -q all

# The tester prints its own "ok -"/"not ok -" lines, one per corpus group,
# for the fuzz run and its verdict coverage, plus the benchmark figures.
# shellcheck disable=SC2086
"$out/parse_diff" -n "$n" -b $seed
rc=$?
if [ $rc -ne 0 ]; then
	_toe_failed=1
	[ $rc -eq 1 ] || fail "parse_diff exited with status $rc"
fi

# The user-space copy under ASan/UBSan, each packet in an exactly-sized heap
# buffer: any read past data_end aborts.  One sub-result; details on failure.
desc="asan+ubsan: user-space parser reads nothing past data_end (corpus + 20000 fuzz packets)"
# shellcheck disable=SC2086
if "$out/parse_diff_san" -n 20000 $seed >"$log" 2>&1 && ! grep -q '^not ok' "$log"; then
	ok "$desc"
else
	sed -n 's/^/  /; /not ok\|ERROR\|SUMMARY\|runtime error\|seed/p' "$log" | head -n 40
	fail "$desc"
fi

finish
