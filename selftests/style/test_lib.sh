#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftests/lib.sh's own helpers, which every test relies on.
#  - defer: the cleanups run in reverse order on exit; one that hangs (a
#    deferred `sleep`, and one that also ignores TERM, as a stuck
#    `toe-loader unload` might) is stopped after TOE_CLEANUP_TIMEOUT
#    seconds with what it started, reported, and the cleanups after it
#    still run, also when the test is stopped with TERM.
#  - wait_for: polls until the command succeeds, gives up at its limit.
. "$(dirname "$0")/../lib.sh"
plan 9
d=$(mktemp -d) && defer "rm -rf $d"
mark=$((RANDOM + 100000)) # a sleep of this test's own: sleep $mark.5
# child.sh DIR [term]: a test whose cleanups hang; it exits 3 (or is TERMed)
cat >"$d/child.sh" <<EOF
. "$TOE_TOP/selftests/lib.sh"
touched() { touch "\$1/\$2"; }
defer touched "\$1" first
defer "sleep $mark.5"
defer "bash -c 'trap \"\" TERM; sleep $mark.5'"
defer touched "\$1" last
[ "\${2:-}" = term ] && { kill -TERM \$\$; sleep 100; }
exit 3
EOF
left() { pgrep -f "^sleep $mark.5" >/dev/null; }
mkdir "$d/exit" "$d/term"
# (both at once: each takes 1 s, then 1 s and 2 s more for the one that
# ignores TERM)
t0=$EPOCHREALTIME
TOE_CLEANUP_TIMEOUT=1 timeout -k 5 30 bash "$d/child.sh" "$d/term" term >"$d/term/out" 2>&1 &
tpid=$!
TOE_CLEANUP_TIMEOUT=1 timeout -k 5 30 bash "$d/child.sh" "$d/exit" >"$d/exit/out" 2>&1
rc=$?
secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", b - a }')
wait $tpid
trc=$?
check "the test's own exit status is kept through its cleanups (3: $rc)" test $rc = 3
check "  two hung cleanups stopped after TOE_CLEANUP_TIMEOUT=1, each: done in ${secs}s" test "$secs" -lt 25
check "  each reported by name" \
	test "$(grep -c "cleanup stopped after 1s (still running): .*sleep $mark.5" "$d/exit/out")" = 2
check "  the cleanups before and after them ran" test -e "$d/exit/last" -a -e "$d/exit/first"
check "stopped with TERM: status 130 ($trc), the cleanups after the hung ones ran" \
	test $trc = 130 -a -e "$d/term/first" -a -e "$d/term/last"
check "no sleep left behind, also the one that ignored TERM" wait_for 5 eval '! left'
# a quick cleanup is not stopped, nor made to wait for the timeout
t0=$EPOCHREALTIME
(
	. "$TOE_TOP/selftests/lib.sh"
	defer "sleep 0.2; touch $d/quick"
) >"$d/out" 2>&1
ms=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }')
check "a quick cleanup runs to its end, unreported, at once (${ms} ms)" \
	test -e "$d/quick" -a ! -s "$d/out" -a "$ms" -lt 10000
n=0
bump() { n=$((n + 1)); [ $n -ge 3 ]; }
check "wait_for polls until the command succeeds (3rd try)" wait_for 5 bump
check_not "wait_for gives up at its limit" wait_for 1 false
finish
