#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-xdp: XDP per-packet cost with BPF_PROG_TEST_RUN (bpftool prog
# run, repeat 1,000,000): an XDP_PASS-only program (the floor), opentoe's
# program on a host flow, an offloaded flow and a malformed packet.  The
# variants alternate within each round; median and min-max of the ns/packet
# over the rounds, and the ratio to the floor.  CSV: bench/results/xdp.csv.
# Proof (bench/lib.sh), every run: the program's run count (bpf_stats)
# grows by REPEAT, and so does the toe_stats counter of the path the
# variant names: xdp_flow_hit for the offloaded flow, bad_ihl for the
# malformed packet; the host flow (which writes no counter by design)
# returns XDP_PASS and leaves xdp_flow_hit and bad_ihl flat; min_forward
# returns XDP_REDIRECT and its count of redirected frames (min_fwd_cnt)
# grows by REPEAT.  A run that fails it: no figure, exit 1.
# BENCH_SMOKE=1: one round of 10,000 repeats.
# TOE_BUILD, BENCH_RESULTS: the build and the results folder (make
# bench-xdp CAPTURE=0: without toectl dump's capture, bench/results-nocap)
. "$(dirname "$0")/lib.sh"
if smoke; then ROUNDS=${ROUNDS:-1} REPEAT=${REPEAT:-10000}; fi
ROUNDS=${ROUNDS:-7} REPEAT=${REPEAT:-1000000}
MINO=$TOE_BUILD/bench/min_xdp_fwd_run.bpf.o
[ -r "$MINO" ] || cannot_run "$MINO not built (make)"
P="python3 $top/selftests/tools/pkt.py"
dp_start bxdp
bpf_stats_on || bench_fail "cannot turn bpf_stats on (the programs' run counts are the proof)"
veth_loop || exit 1
dp_load a --dev va || exit 1
toe=$(nsx a toe-loader status -j --pin-dir "$PIN" | jq '.programs[] | select(.type == "xdp") | .id')
defer "rm -f /sys/fs/bpf/xdp_pass-$TOE_TEST_ID"
bpftool prog load "$TOE_BUILD/selftests/xdp_pass.bpf.o" /sys/fs/bpf/xdp_pass-$TOE_TEST_ID type xdp || exit 1
floor=$(bpftool -j prog show pinned /sys/fs/bpf/xdp_pass-$TOE_TEST_ID | jq .id)
for p in v4off v4host badihl; do $P $p "$work/$p.bin"; done
# the minimal forwarder, in namespace m: fwb -> fwa, 10.0.0.1 a neighbour on fwa
ns_add m && veth_pair m fwa m fwb || exit 1
nsx m ip link set fwa up && nsx m ip link set fwb up && nsx m sysctl -qw net.ipv4.ip_forward=1 &&
	nsx m ip addr add 10.0.0.254/24 dev fwa && nsx m ip addr add 10.9.0.254/24 dev fwb &&
	nsx m ip neigh replace 10.0.0.1 lladdr 02:00:00:00:00:01 dev fwa nud permanent || exit 1
MPIN=/sys/fs/bpf/min_xdp_fwd-$TOE_TEST_ID
defer "rm -rf $MPIN"
mkdir -p "$MPIN" && bpftool prog load "$MINO" "$MPIN/prog" type xdp pinmaps "$MPIN" || exit 1
minid=$(bpftool -j prog show pinned "$MPIN/prog" | jq .id)
fwa=$(nsx m ip -j link show fwa | jq '.[0].ifindex') fwb=$(nsx m ip -j link show fwb | jq '.[0].ifindex')
nsx m bpftool map update pinned "$MPIN/min_tx" key $fwa 0 0 0 value $fwa 0 0 0 || exit 1
cp "$work/v4host.bin" "$work/v4fwd.bin"
$P ctx "$work/v4fwd.ctx" $fwb "$(stat -c %s "$work/v4fwd.bin")"
min_cnt() { bpftool -j map lookup pinned "$MPIN/min_fwd_cnt" key 0 0 0 0 | jq '[.formatted.values[].value] | add'; }
bpftool map update pinned "$PIN/$MAP_FLOWS" key hex $($P key 4 10.0.0.1 10.0.0.2 80 12345) value hex $($P flow 1)
# (an offloaded record written by hand: its toe_flow_filter slot too)
bpftool map update pinned "$PIN/$MAP_FLOW_FILTER" $($P filter 4 10.0.0.1 10.0.0.2 80 12345)

# the counters of a run: the program's run count, then toe_stats'
# xdp_flow_hit and the parser's bad_ihl, then the minimal forwarder's count
counters() {
	echo "$(prog_runs "$1") $(stat_of "$PIN" $STAT_XDP_FLOW_HIT) $(stat_of "$PIN" $PARSE_BAD_IHL) $(min_cnt)"
}
# run VARIANT PROG PKT ROUND: one run of REPEAT, proved, its line in the CSV
run() {
	local v=$1 id=$2 pkt=$3 r=$4 b a x out ret
	read -ra b <<<"$(counters "$id")"
	if [ "$v" = min_forward ]; then	# in m, from fwb
		out=$(nsx m bpftool prog run id "$id" data_in "$work/$pkt.bin" ctx_in "$work/$pkt.ctx" repeat "$REPEAT" 2>&1)
	else
		out=$(bpftool prog run id "$id" data_in "$work/$pkt.bin" repeat "$REPEAT" 2>&1)
	fi
	read -ra a <<<"$(counters "$id")"
	x=$(sed -n 's/.*duration (average): \([0-9]*\)ns.*/\1/p' <<<"$out")
	ret=$(sed -n 's/.*Return value: \([0-9]*\).*/\1/p' <<<"$out")
	[ -n "$x" ] || bench_fail "$v: bpftool prog run gave no duration"
	proof_grew "$v: the program's run count (bpf_stats)" "${b[0]}" "${a[0]}" "$REPEAT" || bench_fail "$v: the program did not run"
	case $v in
	host_flow)
		proof_grew "$v: the return value (2: XDP_PASS)" 0 "${ret:-x}" 2 2 &&
			proof_grew "$v: $MAP_STATS xdp_flow_hit" "${b[1]}" "${a[1]}" 0 0 &&
			proof_grew "$v: $MAP_STATS bad_ihl" "${b[2]}" "${a[2]}" 0 0 ;;
	offloaded_flow) proof_grew "$v: $MAP_STATS xdp_flow_hit" "${b[1]}" "${a[1]}" "$REPEAT" ;;
	malformed) proof_grew "$v: $MAP_STATS bad_ihl" "${b[2]}" "${a[2]}" "$REPEAT" ;;
	min_forward)
		proof_grew "$v: the return value (4: XDP_REDIRECT)" 0 "${ret:-x}" 4 4 &&
			proof_grew "$v: min_fwd_cnt (frames it redirected)" "${b[3]}" "${a[3]}" "$REPEAT" "$REPEAT" ;;
	esac || bench_fail "$v: the packets did not take the path the variant names"
	echo "$v,$r,$x" >>"$csv"
}
csv=$BENCH_OUT/xdp.csv
echo "variant,round,ns_per_packet" >"$csv"
for ((r = 1; r <= ROUNDS; r++)); do
	run floor "$floor" v4host $r
	run host_flow "$toe" v4host $r
	run offloaded_flow "$toe" v4off $r
	run malformed "$toe" badihl $r
	run min_forward "$minid" v4fwd $r
done
bench_publish
python3 "$top/bench/report.py" "$RES" --only xdp
