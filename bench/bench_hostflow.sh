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
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
export TOE_TOP=$top TOE_BUILD=$top/build
. "$top/selftests/lib.sh"
need_cmd iperf3 jq
ROUNDS=${ROUNDS:-5} SECS=${SECS:-3}
dp_start bhost
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
	g=$(in_cg a iperf3 -c 10.212.0.2 -p 5201 -t "$SECS" -J | jq '.end.sum_received.bits_per_second / 1e9')
	echo "$1,$2,$g" >>"$csv"
}
csv=$top/bench/results/hostflow.csv
echo "variant,round,gbit_s" >"$csv"
variants=(without native skb tc)
for ((r = 1; r <= ROUNDS; r++)); do
	for ((i = 0; i < ${#variants[@]}; i++)); do
		run "${variants[(i + r) % ${#variants[@]}]}" "$r" || exit 1
	done
done
python3 "$top/bench/report.py" --only hostflow
