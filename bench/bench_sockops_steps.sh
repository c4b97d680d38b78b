#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/bench_sockops_steps.sh (issue 49; not a make bench-* target, it
# builds the datapath once per step): where toe_sockops' time per
# connection goes with the default "track all", step by step, beside
# "track policy".  Each round, for each variant in turn (the order rotating
# from round to round): opentoe loaded with the variant's build on a
# cgroup, the 10,000 rules of bench-policy applied (none matches, every
# shape is searched), N connections by bench/connrate (connect, accept,
# close over loopback, both ends in the cgroup) in a fresh network
# namespace, then unloaded.  bpf_stats' run_time_ns and run_cnt of the
# cgroup's toe_sockops before and after give its time and its runs per
# connection (both ends), connrate the rate.  Variants:
#   full      the default build and configuration ("track all")
#   noevent   no flow_closed event (TOE_BENCH_NO_CLOSE_EVENT)
#   norecord  no toe_flows record: not written when established, so not
#             found at close (TOE_BENCH_NO_FLOW_RECORD)
#   bare      both out: what is left is the state callbacks and the close's
#             socket-storage look-ups
#   policy    the default build, "track policy": no record, callbacks or
#             events for a connection no rule names
# Without toed the event ring fills within the first round, so the event's
# figure here is a reservation that fails (event_dropped); with toed
# reading the ring it costs more (the copy, and toed woken).
# Proof, every run: toe_stats' established grew by 2N (sock_ops decided
# both ends); full and noevent: closed grew by 2N (each close found its
# record); norecord and bare: flow_evicted grew by 2N (none to find) and
# closed not at all; policy: untracked grew by 2N and closed not at all;
# noevent and bare: their toe_sockops calls bpf_ringbuf_reserve fewer
# times than full's (bpftool prog dump xlated).  A failed proof: no CSV,
# exit 1.  CSV: $BENCH_RESULTS/sockops_steps.csv (variant, round,
# ns_per_conn, runs_per_conn, conn_per_s); report.py --only
# sockops_steps.  ROUNDS (5), N (10,000), STEPS, TOE_BUILD, BENCH_RESULTS;
# BENCH_SMOKE=1: 1 round of 300.
. "$(dirname "$0")/lib.sh"
if smoke; then ROUNDS=${ROUNDS:-1} N=${N:-300}; fi
ROUNDS=${ROUNDS:-5} N=${N:-10000} STEPS=${STEPS:-full noevent norecord bare policy}
declare -A FLAGS=([full]="" [noevent]=-DTOE_BENCH_NO_CLOSE_EVENT [norecord]=-DTOE_BENCH_NO_FLOW_RECORD
	[bare]="-DTOE_BENCH_NO_CLOSE_EVENT -DTOE_BENCH_NO_FLOW_RECORD" [policy]="")
# loader STEP: the step's toe-loader (full and policy: the build's own)
loader() {
	case $1 in full | policy) echo "$TOE_BUILD/toe-loader" ;; *) echo "$TOE_BUILD/ssteps/$1/toe-loader" ;; esac
}
for s in $STEPS; do
	[ -n "${FLAGS[$s]+x}" ] || bench_fail "STEPS: no step named $s (${!FLAGS[*]})"
	[ -n "${FLAGS[$s]}" ] || continue
	make -s -C "$top" O="$TOE_BUILD/ssteps/$s" BPF_EXTRA="${FLAGS[$s]}" -j"$(nproc)" \
		"$TOE_BUILD/ssteps/$s/toe-loader" >/dev/null || bench_fail "cannot build $s"
done
[ -x "$TOE_BUILD/bench/connrate" ] || cannot_run "$TOE_BUILD/bench/connrate not built (make)"
dp_start bench
bpf_stats_on || bench_fail "cannot turn bpf_stats on (the program's run time is the figure)"
# bench-policy's 10,000 rules (lib.sh), with "track policy" for policy
policy_conf "$work/r.conf" 10000 && policy_conf "$work/rp.conf" 10000 p || bench_fail "cannot write the policies"
defer "toe-loader unload --pin-dir $PIN >/dev/null 2>&1; rm -rf $PIN"
up() { # STEP: loaded, its policy applied; ID its toe_sockops
	local c=r.conf
	[ "$1" = policy ] && c=rp.conf
	"$(loader "$1")" load --cgroup "$CG" --pin-dir "$PIN" >/dev/null &&
		toed --apply "$work/$c" --pin-dir "$PIN" >/dev/null || return 1
	ID=$(bpftool -j cgroup show "$CG" | jq '[.[] | select(.attach_type | test("sock_ops")) | .id][0]')
	[[ $ID =~ ^[0-9]+$ ]]
}
down() { "$(loader "$1")" unload --pin-dir "$PIN" >/dev/null; rm -rf "$PIN"; }
# the cgroup's toe_sockops: "run_time_ns run_cnt"
prog_time() { bpftool -j prog show id "$1" | jq -r '"\(.run_time_ns // 0) \(.run_cnt // 0)"'; }
# reserves STEP: bpf_ringbuf_reserve calls in its toe_sockops
reserves() {
	local n
	up "$1" || return 1
	n=$(bpftool prog dump xlated id "$ID" | grep -c 'call bpf_ringbuf_reserve')
	down "$1"
	echo "$n"
}
# the builds without the event have fewer reservations in toe_sockops
rf=$(reserves full) || bench_fail "full: load or apply failed"
for s in $STEPS; do
	case $s in noevent | bare)
		n=$(reserves "$s") || bench_fail "$s: load or apply failed"
		proof_grew "$s: bpf_ringbuf_reserve calls in toe_sockops fewer than full's ($n, full $rf)" "$n" "$rf" 1 ||
			bench_fail "$s: its build still emits flow_closed"
		;;
	esac
done
st() { stat_of "$PIN" "$1"; }

csv=$BENCH_OUT/sockops_steps.csv
echo "variant,round,ns_per_conn,runs_per_conn,conn_per_s" >"$csv"
read -ra order <<<"$STEPS"
for ((r = 1; r <= ROUNDS; r++)); do
	for ((i = 0; i < ${#order[@]}; i++)); do
		v=${order[$(((i + r) % ${#order[@]}))]}
		up "$v" || bench_fail "$v: load or apply failed"
		id=$ID
		e0=$(st "$STAT_ESTABLISHED") c0=$(st "$STAT_CLOSED") f0=$(st "$STAT_FLOW_EVICTED") u0=$(st "$STAT_UNTRACKED")
		read -r t0 n0 <<<"$(prog_time "$id")"
		ns=bench-$TOE_TEST_ID-$RANDOM
		ip netns add "$ns" && ip -n "$ns" link set lo up || bench_fail "cannot make a namespace"
		x=$( (echo $BASHPID >"$CG/cgroup.procs" && exec nsenter --net=/run/netns/"$ns" "$TOE_BUILD/bench/connrate" -n "$N"))
		read -r t1 n1 <<<"$(prog_time "$id")"
		ip netns del "$ns"
		[[ $x =~ ^[0-9.]+$ ]] || bench_fail "$v: connrate gave no figure ($x)"
		proof_grew "$v: $MAP_STATS established (sock_ops decided both ends)" "$e0" "$(st "$STAT_ESTABLISHED")" $((2 * N)) || bench_fail "$v"
		case $v in
		full | noevent)
			proof_grew "$v: $MAP_STATS closed (each close found its record)" "$c0" "$(st "$STAT_CLOSED")" $((2 * N)) ;;
		norecord | bare)
			proof_grew "$v: $MAP_STATS flow_evicted (no record to find)" "$f0" "$(st "$STAT_FLOW_EVICTED")" $((2 * N)) &&
				proof_grew "$v: $MAP_STATS closed" "$c0" "$(st "$STAT_CLOSED")" 0 0 ;;
		policy)
			proof_grew "$v: $MAP_STATS untracked (track policy)" "$u0" "$(st "$STAT_UNTRACKED")" $((2 * N)) &&
				proof_grew "$v: $MAP_STATS closed" "$c0" "$(st "$STAT_CLOSED")" 0 0 ;;
		esac || bench_fail "$v: the variant did not take its path"
		down "$v"
		[ "$n1" -gt "$n0" ] || bench_fail "$v: toe_sockops did not run (run_cnt $n0 -> $n1)"
		echo "$v,$r,$(((t1 - t0) / N)),$(awk -v a="$n0" -v b="$n1" -v n="$N" 'BEGIN { printf "%.1f", (b - a) / n }'),$x" >>"$csv"
	done
done
bench_publish
python3 "$top/bench/report.py" "$RES" --only sockops_steps
