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
#   - it declares its plan, a line "1..N" (lib.sh: plan N) before its first
#     sub-result: a script that then reports fewer or more than N fails (it
#     stopped early), and one with sub-results and no plan fails too;
#   - exit 4 after some sub-results skips the rest, with the SKIP reason;
#   - every other output line is shown as a "# " diagnostic.
# Before the tests it runs `make all` (unless TOE_NO_BUILD=1, as make check
# sets after building): a stale binary is rebuilt, and a build that fails
# fails the run, so one test file run by hand is as safe as make check.
# qemu tests (guest/, kmod/) run beside the others, niced, and are reported
# last; the files that touch nothing of the host's networking (style, docs,
# the package, the parser...) run in a lane of their own beside the host
# tests, at the same priority, and are reported after them; TOE_SERIAL=1
# runs everything one after the other.
# The last lines list the skips with their reasons, then
# "N passed, N failed, N skipped"; exit status 1 if any failed.
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
skipped=()
echo "TAP version 13"

if [ "${TOE_NO_BUILD:-0}" != 1 ]; then
	if ! blog=$(make --no-print-directory -s all 2>&1); then
		sed 's/^/# /' <<<"$blog" | tail -n 30
		echo "not ok 1 - build (make all failed: the tests would run stale binaries)"
		echo "1..1"
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	fi
fi

report() { # status name [reason]
	n=$((n + 1))
	case $1 in
	ok) pass=$((pass + 1)); echo "ok $n - $2" ;;
	skip) skip=$((skip + 1)); skipped+=("$2: $3"); echo "ok $n - $2 # SKIP $3" ;;
	*) fail=$((fail + 1)); echo "not ok $n - $2" ;;
	esac
}

# collect TEST OUT RC SECS: the TAP of one test file from its output.
collect() {
	local t=$1 out=$2 rc=$3 secs=$4 name subs=0 subfail=0 planned="" reason line desc
	name=${t#selftests/}
	name=${name%.sh}
	reason=$(sed -n 's/^SKIP: //p' "$out" | tail -n 1)
	while IFS= read -r line; do
		# the file's plan comes before its first check (a plan printed
		# later belongs to a tool the test ran, e.g. the module's guest)
		if [ $subs -eq 0 ] && [[ $line =~ ^1\.\.([0-9]+)$ ]]; then
			planned=${BASH_REMATCH[1]}
			continue
		fi
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
	elif [ $rc -eq 4 ]; then
		report skip "$name: the rest" "${reason:-no reason given}"
	elif [ -n "$planned" ] && [ "$subs" != "$planned" ]; then
		report fail "$name: planned $planned checks, ran $subs (exit $rc)"
	elif [ -z "$planned" ] && [ $subs -gt 0 ]; then
		report fail "$name: no plan (lib.sh: plan N before its first check)"
	elif [ $rc -ne 0 ] && [ $rc -ne 4 ] && [ $subfail -eq 0 ]; then
		[ $rc -eq 124 ] && echo "# $name: timed out"
		report fail "$name"
	elif [ $subs -eq 0 ]; then
		report ok "$name"
	fi
}

# Test files that boot a kernel of their own under qemu (TCG: CPU-bound,
# minutes long) share nothing with this host's namespaces, pins and
# cgroups: unless TOE_SERIAL=1 they start first and run beside the rest at
# the lowest CPU priority (SCHED_IDLE: a host test that wakes up takes the
# CPU at once, which nice 19 alone does not promise: latency checks such
# as test_nginx_tail's p99 felt it), so they take only the CPU time the
# host tests leave idle (those mostly wait on packets and timers), and are
# reported last.  Their guests get longer time limits for it (the limits catch a
# hung guest, not a slow one).
is_vm_test() {
	case $1 in
	*/guest/test_guest.sh | */kmod/test_kmod.sh) [ "${TOE_SERIAL:-0}" != 1 ] ;;
	*) return 1 ;;
	esac
}

# Test files that load no datapath and make no namespace, pin, cgroup or
# sysctl of this host's (they read the tree, build in folders of their own,
# mount in a namespace of their own): unless TOE_SERIAL=1, and when host
# tests run too, they run one after the other in a second lane beside the
# host tests, at the qemu tests' priority (SCHED_IDLE: they take no CPU a
# host test wants, so no host test's timing feels them), and are reported
# after the host tests.  Mostly CPU-bound, they have no time limit to meet;
# the fuzzers run a count of inputs, not a time (a time-boxed one's runs
# would shrink here).
is_side_test() {
	case $1 in
	*/style/test_style.sh | */style/test_counters.sh | */style/test_lib.sh | \
		*/style/test_includes.sh | */style/test_tables.sh | \
		*/docs/test_docs.sh | */mutants/test_mutants_table.sh | */bench/test_report.sh | \
		*/config/test_limits.sh | */deb/test_deb.sh | */toed/test_install.sh | \
		*/guest/test_kernel_cache.sh | \
		*/toed/test_ctl_fuzz.sh | */config/test_config_fuzz.sh | \
		*/parser/test_parser.sh) [ "${TOE_SERIAL:-0}" != 1 ] ;;
	*) return 1 ;;
	esac
}
side=() host=0
for t in "${tests[@]}"; do
	if is_side_test "$t"; then side+=("$t"); elif ! is_vm_test "$t"; then host=1; fi
done
[ $host = 1 ] || side=()
in_side() { local s; for s in "${side[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }

declare -A vm_pid vm_out vm_start
side_pid=
# stopped with the run: timeout passes the signal on to the test's cleanup
trap 'for p in "${vm_pid[@]}" $side_pid; do pkill -TERM -P "$p"; kill "$p"; done 2>/dev/null; exit 130' INT TERM
for t in "${tests[@]}"; do
	is_vm_test "$t" || continue
	vm_out[$t]=$(mktemp)
	vm_start[$t]=$(date +%s)
	# its status and end time kept: it is reported after the host tests.
	# The guests run at idle priority: the host lanes first.  On a slower
	# machine beside the host lanes, kmod's guest ran 895 s of its 900 and
	# the datapath's guest 1,239 of 1,500 (711 and 753 s on the last): 1200
	# and 1800, each test 2100 in all.  Then (2026-12-07, a clean clone on a
	# slower day) the datapath's guest ran 1,454 s of its 1,800 and kmod's
	# 896 of 1,200: 1500 and 2400, each test 2700 in all (a limit, not a
	# cost: a guest that ends sooner ends sooner).
	(
		TOE_KMOD_TIMEOUT=${TOE_KMOD_TIMEOUT:-1500} \
			TOE_GUEST_TIMEOUT=${TOE_GUEST_TIMEOUT:-2400} \
			chrt --idle 0 nice -n 19 timeout --kill-after=10 "${TOE_VM_TEST_TIMEOUT:-2700}" \
			bash "$t" >"${vm_out[$t]}" 2>&1
		echo "$? $(date +%s)" >"${vm_out[$t]}.end"
	) &
	vm_pid[$t]=$!
done

if [ ${#side[@]} -gt 0 ]; then
	side_dir=$(mktemp -d)
	(
		i=0
		for t in "${side[@]}"; do
			start=$(date +%s)
			chrt --idle 0 nice -n 19 timeout --kill-after=10 "${TOE_TEST_TIMEOUT:-900}" \
				bash "$t" >"$side_dir/$i.out" 2>&1
			echo "$? $(($(date +%s) - start))" >"$side_dir/$i.end"
			i=$((i + 1))
		done
	) &
	side_pid=$!
fi

for t in "${tests[@]}"; do
	is_vm_test "$t" && continue
	in_side "$t" && continue
	out=$(mktemp)
	start=$(date +%s)
	timeout --kill-after=10 "${TOE_TEST_TIMEOUT:-900}" bash "$t" >"$out" 2>&1
	rc=$?
	collect "$t" "$out" $rc $(($(date +%s) - start))
done

if [ -n "$side_pid" ]; then
	wait "$side_pid"
	for i in "${!side[@]}"; do
		read -r rc secs <"$side_dir/$i.end" || { rc=1 secs=0; }
		collect "${side[$i]}" "$side_dir/$i.out" "$rc" "$secs"
	done
	rm -rf "$side_dir"
fi

for t in "${tests[@]}"; do
	is_vm_test "$t" || continue
	wait "${vm_pid[$t]}"
	read -r rc end <"${vm_out[$t]}.end" || { rc=1 end=$(date +%s); }
	rm -f "${vm_out[$t]}.end"
	collect "$t" "${vm_out[$t]}" "$rc" $((end - ${vm_start[$t]}))
done

echo "1..$n"
if [ $skip -gt 0 ]; then
	echo "# skipped ($skip), each with the reason this machine cannot run it:"
	for s in "${skipped[@]}"; do echo "#   $s"; done
fi
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
