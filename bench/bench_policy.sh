#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-policy: connection setup rate (connect, accept, close; 10,000 a
# run) with sock_ops off, and on with 1, 100 and 10,000 policy rules, the
# last also with "track policy" (10000p: the unnamed connections get no
# record, callbacks or events).  The
# connections match no rule, so every rule shape is searched (the worst
# case).  Each run gets a fresh network namespace, so no TIME_WAIT carries
# over; the variants alternate within each round; median and min-max over
# the rounds.  Proof (bench/lib.sh): with rules, toed --apply reports the
# rule count of the variant and toe_stats' "established" (connections
# sock_ops decided) grows by 2 a connection (both ends); with "track
# policy" "untracked" grows as much, with "track all" it stays flat; "off"
# has no sock_ops program on the cgroup.  A variant that fails it: no
# figure, exit 1.  CSV: bench/results/policy.csv.
# BENCH_SMOKE=1: one round of 300 connections.
. "$(dirname "$0")/lib.sh"
if smoke; then ROUNDS=${ROUNDS:-1} N=${N:-300}; fi
ROUNDS=${ROUNDS:-11} N=${N:-10000}
dp_start bench
conf_dir=$work
mkconf() { policy_conf "$conf_dir/r$1${2:-}.conf" "$1" "${2:-}"; } # NRULES [p] (lib.sh)
for r in 1 100 10000; do mkconf $r; done
mkconf 10000 p
defer "toe-loader unload --pin-dir $PIN; rm -rf $PIN"
toe-loader load --cgroup "$CG" --pin-dir "$PIN" >/dev/null || exit 1

run() { # -> conn/s, in a fresh netns, inside the cgroup
	local ns=bench-$TOE_TEST_ID-$RANDOM
	ip netns add $ns && ip -n $ns link set lo up
	(echo $BASHPID >"$CG/cgroup.procs" && exec nsenter --net=/run/netns/$ns "$TOE_BUILD/bench/connrate" -n "$N")
	ip netns del $ns
}
variant() { # off | rules N
	local n
	case $1 in
	off) toe-loader unload --pin-dir "$PIN" >/dev/null || bench_fail "off: toe-loader unload failed"
		proof_grew "off: sock_ops programs on the cgroup" 0 "$(cg_sockops "$CG")" 0 0 || bench_fail "off: sock_ops still attached" ;;
	*) n=$(toed --apply "$conf_dir/r$1.conf" --pin-dir "$PIN" -j | command jq .rules) ||
			bench_fail "$1: toed --apply failed"
		proof_grew "$1: rules in the policy applied" 0 "${n:-x}" "${1%p}" "${1%p}" ||
			bench_fail "$1: the policy in force is not the variant's" ;;
	esac
}
# counters VARIANT: "established untracked" now (off: none)
counters() {
	if [ "$1" = off ]; then echo "0 0"; else
		echo "$(stat_of "$PIN" $STAT_ESTABLISHED) $(stat_of "$PIN" $STAT_UNTRACKED)"; fi
}
# prove VARIANT "BEFORE" "AFTER": the connections went through sock_ops
# and its policy (both ends of each connection)
prove() {
	local v=$1 b a
	[ "$v" = off ] && return 0
	read -ra b <<<"$2"; read -ra a <<<"$3"
	proof_grew "$v: $MAP_STATS established (sock_ops decided both ends)" "${b[0]}" "${a[0]}" $((2 * N)) ||
		bench_fail "$v: the connections did not go through sock_ops"
	if [ "$v" = 10000p ]; then
		proof_grew "$v: $MAP_STATS untracked (track policy)" "${b[1]}" "${a[1]}" $((2 * N))
	else
		proof_grew "$v: $MAP_STATS untracked (track all)" "${b[1]}" "${a[1]}" 0 0
	fi || bench_fail "$v: the policy's track setting did not act"
}
csv=$BENCH_OUT/policy.csv
echo "variant,round,conn_per_s" >"$csv"
# The order of the variants rotates from round to round, so none always
# runs first; "off" unloads opentoe, and the next variant loads it again.
order=(1 100 10000 10000p off)
for ((r = 1; r <= ROUNDS; r++)); do
	for ((i = 0; i < ${#order[@]}; i++)); do
		v=${order[$(((i + r) % ${#order[@]}))]}
		[ "$v" != off ] && { toe-loader load --cgroup "$CG" --pin-dir "$PIN" >/dev/null || exit 1; }
		variant $v
		c0=$(counters $v)
		x=$(run)
		[[ $x =~ ^[0-9.]+$ ]] || bench_fail "$v: connrate gave no figure ($x)"
		prove $v "$c0" "$(counters $v)"
		echo "$v,$r,$x" >>"$csv"
	done
done
bench_publish
python3 "$top/bench/report.py" "$RES" --only policy
