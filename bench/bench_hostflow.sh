#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-hostflow: what opentoe costs a flow it does not offload (issue
# 4's "stateless offloads carry the host path", issue 8's comparison 2).
# iperf3 across a veth between two namespaces, 3 s a run, the variants
# alternating for ROUNDS rounds: without opentoe; with opentoe (sock_ops on
# the iperf3 processes' cgroup, policy default host, XDP on the receiving
# interface) in native mode; the same in skb mode; the same with the
# accounting program on tc ingress (toe-loader --hook tc).  Native XDP on a
# veth turns off TSO on its peer (the kernel's veth rule for programs
# without multi-buffer support) and skb-mode XDP copies every GRO packet
# into a linear buffer, which the figures show; tc runs after GRO.
# CSV: bench/results/hostflow.csv (variant,round,gbit_s).  Goal: >= 0.97x.
# Proof (bench/lib.sh), every run: "without" has no XDP program on vb and
# no sock_ops on the cgroup; native and skb have XDP on vb in that mode
# (ip link's xdp mode) and tc none; in native, skb and tc opentoe's
# program on that hook ran on the flow at least 1,000 times (its run
# count, bpf_stats; a host flow writes no toe_stats counter).  A run that
# fails it: no figure, exit 1.  BENCH_SMOKE=1: one round of 1 s runs.
. "$(dirname "$0")/lib.sh"
need_cmd iperf3 jq
if smoke; then ROUNDS=${ROUNDS:-1} SECS=${SECS:-1}; fi
ROUNDS=${ROUNDS:-5} SECS=${SECS:-3}
dp_start bhost
bpf_stats_on || bench_fail "cannot turn bpf_stats on (the programs' run counts are the proof)"
two_hosts 212 4 || exit 1
printf 'default host\n' >"$work/c.conf"; chmod 600 "$work/c.conf"
in_cg() { local ns=$1; shift; (echo $BASHPID >"$CG/cgroup.procs" && exec nsenter --net=/run/netns/$(ns_name "$ns") "$@"); }
in_cg b iperf3 -s -p 5201 >/dev/null 2>&1 &
defer "kill $!"
sleep 0.5
defer "nsx b toe-loader unload --pin-dir $PIN >/dev/null 2>&1; rm -rf $PIN"
run() { # VARIANT ROUND
	case $1 in
	without) nsx b toe-loader unload --pin-dir "$PIN" >/dev/null 2>&1 ;;
	native|skb|tc)
		nsx b toe-loader unload --pin-dir "$PIN" >/dev/null 2>&1
		if [ "$1" = tc ]; then set -- "$1" "$2" --hook tc; else set -- "$1" "$2" --xdp-mode "$1"; fi
		nsx b toe-loader load --dev vb "${@:3}" --cgroup "$CG" --pin-dir "$PIN" >/dev/null &&
			toed --apply "$work/c.conf" --pin-dir "$PIN" >/dev/null || return 1 ;;
	esac
	local v=$1 hook=xdp mode ids=() b g
	[ "$v" = tc ] && hook=tc
	# the hook as the variant names it: ip link's XDP mode on vb (1
	# native, 2 skb; none: no XDP) and, for the rest, the sock_ops
	mode=$(nsx b ip -d -j link show vb | command jq '.[0].xdp.mode // 0')
	case $v in
	without) proof_grew "$v: XDP mode on vb (0: none)" 0 "$mode" 0 0 &&
		proof_grew "$v: sock_ops programs on the cgroup" 0 "$(cg_sockops "$CG")" 0 0 ;;
	native) proof_grew "$v: XDP mode on vb (1: native)" 0 "$mode" 1 1 ;;
	skb) proof_grew "$v: XDP mode on vb (2: skb)" 0 "$mode" 2 2 ;;
	tc) proof_grew "$v: XDP mode on vb (0: none)" 0 "$mode" 0 0 ;;
	esac || bench_fail "$v: not the hook the variant names"
	if [ "$v" != without ]; then
		mapfile -t ids < <(dp_progs b $hook)
		[ ${#ids[@]} -gt 0 ] || bench_fail "$v: toe-loader status names no $hook program"
		b=$(prog_runs "${ids[@]}")
	fi
	g=$(in_cg a iperf3 -c 10.212.0.2 -p 5201 -t "$SECS" -J | jq '.end.sum_received.bits_per_second / 1e9')
	if [ "$v" != without ]; then
		proof_grew "$v: the $hook program's run count (bpf_stats)" "$b" "$(prog_runs "${ids[@]}")" 1000 ||
			bench_fail "$v: opentoe's $hook program did not see the flow"
	fi
	[[ $g =~ ^[0-9.e+-]+$ ]] || bench_fail "$v: iperf3 gave no figure"
	echo "$v,$2,$g" >>"$csv"
}
csv=$BENCH_OUT/hostflow.csv
echo "variant,round,gbit_s" >"$csv"
variants=(without native skb tc)
for ((r = 1; r <= ROUNDS; r++)); do
	for ((i = 0; i < ${#variants[@]}; i++)); do
		run "${variants[(i + r) % ${#variants[@]}]}" "$r" || exit 1
	done
done
bench_publish
python3 "$top/bench/report.py" "$RES" --only hostflow
