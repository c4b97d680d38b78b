#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every make bench-* target, in smoke mode (BENCH_SMOKE=1: one short round,
# seconds each; bench/lib.sh), so that a change elsewhere that breaks a
# benchmark fails here instead of at the next person's `make bench`.  The
# figures are ignored; what counts is that each bench ran and proved that
# every variant took the path it names (the bypass's bytes, the fast path's
# packets, the program's run count): a bench whose proof fails exits 1
# with a "PROOF FAILED" line, and so fails here.  The targets are read from
# the Makefile (make list-bench-targets: BENCHES, bench-parser and
# bench-report), so a bench added to BENCHES is covered with no change
# here.  Their CSVs go to a folder of this test (BENCH_RESULTS), never over
# bench/results; bench-report reports on that folder.  Each bench runs
# under an id of its own (TOE_TEST_ID), and after it no namespace, cgroup
# or pin folder of that id may be left, and its output may hold no error
# of the shell, jq or Python (a bench can exit 0 and prove its path while
# one of its own reads fails, as bench-forward's tc_min read opentoe's
# toe_stats, which that variant never loads).
#   TOE_BENCH_SMOKE_TIMEOUT=150  seconds one bench may take
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd make
mapfile -t targets < <(make -s --no-print-directory -C "$TOE_TOP" list-bench-targets | tr ' ' '\n' | grep .)
[ ${#targets[@]} -gt 0 ] || cannot_run "make list-bench-targets named no bench"
plan $((3 * ${#targets[@]} + 1))
T=$(mktemp -d /tmp/opentoe-bench-smoke.XXXXXX)
defer "rm -rf $T"
mkdir "$T/res"
# bench/results as it was: the smoke runs must leave it alone
sums() { (cd "$TOE_TOP/bench/results" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum); }
sums >"$T/before"

# leftovers ID: what a bench of that id left behind (namespaces, cgroups,
# pin folders), one a line; sweep ID removes them.
leftovers() {
	local root; root=$(cgroup2_root)
	ip netns list | awk -v p="$1-" 'index($1, p) == 1 { print "netns " $1 }'
	for d in "$root"/opentoe-"$1"-* /sys/fs/bpf/opentoe-"$1" /sys/fs/bpf/opentoe-"$1"-* /sys/fs/bpf/*-"$1"; do
		[ -e "$d" ] && echo "$d"
	done
	return 0
}
sweep() {
	local l
	while read -r l; do
		case $l in
		"netns "*) ip netns pids "${l#netns }" | xargs -r kill -9; ip netns del "${l#netns }" ;;
		/sys/fs/bpf/opentoe-*) toe-loader unload --pin-dir "$l" --force; rm -rf "$l" ;;
		/sys/fs/bpf/*) rm -rf "$l" ;;
		*) cg_del "$l" ;;
		esac
	done < <(leftovers "$1")
}

total=$SECONDS
for t in "${targets[@]}"; do
	id=$TOE_TEST_ID-${t#bench-}
	defer "sweep $id"
	log=$T/$t.log
	t0=$SECONDS
	# TOE_TEST_ID reaches the bench through make's environment
	TOE_TEST_ID=$id BENCH_SMOKE=1 BENCH_RESULTS=$T/res \
		timeout --kill-after=10 "${TOE_BENCH_SMOKE_TIMEOUT:-150}" \
		make -s --no-print-directory -C "$TOE_TOP" "$t" >"$log" 2>&1
	rc=$?
	secs=$((SECONDS - t0))
	if [ $rc = 0 ] && ! grep -q 'PROOF FAILED' "$log"; then
		ok "make $t (smoke, ${secs} s): exit 0, no PROOF FAILED"
	else
		grep -E 'PROOF FAILED|FAILED|not ok|rror' "$log" | head -20 | sed 's/^/# /'
		tail -5 "$log" | sed 's/^/# /'
		[ $rc = 124 ] && echo "# timed out after ${TOE_BENCH_SMOKE_TIMEOUT:-150} s"
		fail "make $t (smoke, ${secs} s): exit $rc$(grep -q 'PROOF FAILED' "$log" && echo ', a proof failed')"
	fi
	# a shell's error names its script and line; jq's and Python's start so
	errs=$(grep -E '\.sh: line [0-9]+: |^jq: error|^Traceback |^[a-z_./]+\.py:[0-9]+: [A-Z][a-z]+(Error|Warning)' "$log")
	if [ -z "$errs" ]; then
		ok "make $t printed no shell, jq or Python error"
	else
		echo "$errs" | head -10 | sed 's/^/# /'
		fail "make $t printed $(echo "$errs" | wc -l) error line(s) of its own tools"
	fi
	left=$(leftovers "$id")
	if [ -z "$left" ]; then
		ok "make $t left no namespace, cgroup or pin folder behind"
	else
		echo "$left" | sed 's/^/# left: /'
		fail "make $t left things behind"
		sweep "$id"
	fi
done
echo "# every bench in smoke mode: $((SECONDS - total)) s"
sums >"$T/after"
check "bench/results untouched (the smoke runs wrote into $T/res: $(ls "$T/res" | tr '\n' ' '))" \
	cmp -s "$T/before" "$T/after"
finish
