#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# opentoe selftest runner (kselftest style).
#
# Runs every selftests/test_*.sh and selftests/*/test_*.sh (or the ones named on
# the command line), as root, and prints TAP.  Contract for a test script:
#   - exit 0: passed; exit 4 (KSFT_SKIP): skipped, the reason on a line
#     "SKIP: <reason>"; any other status: failed;
#   - it may print its own sub-results as "ok - <desc>" / "not ok - <desc>"
#     (numbers optional, "# SKIP <reason>" allowed): each then counts as one
#     test named "<script>: <desc>"; a non-zero exit with no "not ok" line adds
#     one more failure for the script itself;
#   - every other output line is shown as a "# " diagnostic.
# The last line is "N passed, N failed, N skipped"; exit status 1 if any failed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
export TOE_TOP=$top
export TOE_BUILD=${TOE_BUILD:-$top/build}
export PATH=$TOE_BUILD:$PATH
cd "$top" || exit 1

if [ $# -gt 0 ]; then
	tests=("$@")
else
	mapfile -t tests < <(ls selftests/test_*.sh selftests/*/test_*.sh 2>/dev/null | sort)
fi

n=0 pass=0 fail=0 skip=0
echo "TAP version 13"

report() { # status name [reason]
	n=$((n + 1))
	case $1 in
	ok) pass=$((pass + 1)); echo "ok $n - $2" ;;
	skip) skip=$((skip + 1)); echo "ok $n - $2 # SKIP $3" ;;
	*) fail=$((fail + 1)); echo "not ok $n - $2" ;;
	esac
}

for t in "${tests[@]}"; do
	name=${t#selftests/}
	name=${name%.sh}
	out=$(mktemp)
	start=$(date +%s)
	timeout --kill-after=10 "${TOE_TEST_TIMEOUT:-900}" bash "$t" >"$out" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	subs=0 subfail=0
	reason=$(sed -n 's/^SKIP: //p' "$out" | tail -n 1)
	while IFS= read -r line; do
		case $line in
		"not ok"*)
			desc=$(sed -E 's/^not ok( [0-9]+)?( -)? ?//' <<<"$line")
			subs=$((subs + 1)); subfail=$((subfail + 1))
			report fail "$name: $desc" ;;
		"ok "*|ok)
			desc=$(sed -E 's/^ok( [0-9]+)?( -)? ?//' <<<"$line")
			subs=$((subs + 1))
			if [[ $desc == *"# SKIP"* ]]; then
				report skip "$name: ${desc%%# SKIP*}" "${desc#*# SKIP }"
			else
				report ok "$name: $desc"
			fi ;;
		*) echo "# $line" ;;
		esac
	done <"$out"
	rm -f "$out"
	echo "# $name: exit $rc after ${secs}s"
	if [ $rc -eq 4 ] && [ $subs -eq 0 ]; then
		report skip "$name" "${reason:-no reason given}"
	elif [ $rc -ne 0 ] && [ $rc -ne 4 ] && [ $subfail -eq 0 ]; then
		[ $rc -eq 124 ] && echo "# $name: timed out"
		report fail "$name"
	elif [ $subs -eq 0 ]; then
		report ok "$name"
	fi
done

echo "1..$n"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
