#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-xdp: XDP per-packet cost with BPF_PROG_TEST_RUN (bpftool prog
# run, repeat 1,000,000): an XDP_PASS-only program (the floor), opentoe's
# program on a host flow, an offloaded flow and a malformed packet.  The
# variants alternate within each round; median and min-max of the ns/packet
# over the rounds, and the ratio to the floor.  CSV: bench/results/xdp.csv.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
# TOE_BUILD, BENCH_RESULTS: the build and the results folder (make
# bench-xdp CAPTURE=0: without toectl dump's capture, bench/results-nocap)
export TOE_TOP=$top TOE_BUILD=${TOE_BUILD:-$top/build}
. "$top/selftests/lib.sh"
ROUNDS=${ROUNDS:-7} REPEAT=${REPEAT:-1000000}
P="python3 $top/selftests/tools/pkt.py"
dp_start bxdp
veth_loop || exit 1
dp_load a --dev va || exit 1
toe=$(nsx a toe-loader status -j --pin-dir "$PIN" | jq '.programs[] | select(.type == "xdp") | .id')
defer "rm -f /sys/fs/bpf/xdp_pass-$TOE_TEST_ID"
bpftool prog load "$TOE_BUILD/selftests/xdp_pass.bpf.o" /sys/fs/bpf/xdp_pass-$TOE_TEST_ID type xdp || exit 1
floor=$(bpftool -j prog show pinned /sys/fs/bpf/xdp_pass-$TOE_TEST_ID | jq .id)
for p in v4off v4host badihl; do $P $p "$work/$p.bin"; done
bpftool map update pinned "$PIN/$MAP_FLOWS" key hex $($P key 4 10.0.0.1 10.0.0.2 80 12345) value hex $($P flow 1)
# (an offloaded record written by hand: its toe_flow_filter slot too)
bpftool map update pinned "$PIN/$MAP_FLOW_FILTER" $($P filter 4 10.0.0.1 10.0.0.2 80 12345)

ns() { # PROG PKT -> ns per run
	bpftool prog run id "$1" data_in "$work/$2.bin" repeat "$REPEAT" 2>&1 |
		sed -n 's/.*duration (average): \([0-9]*\)ns.*/\1/p'
}
res=${BENCH_RESULTS:-$top/bench/results}
mkdir -p "$res" || exit 1
csv=$res/xdp.csv
echo "variant,round,ns_per_packet" >"$csv"
for ((r = 1; r <= ROUNDS; r++)); do
	echo "floor,$r,$(ns $floor v4host)" >>"$csv"
	echo "host_flow,$r,$(ns $toe v4host)" >>"$csv"
	echo "offloaded_flow,$r,$(ns $toe v4off)" >>"$csv"
	echo "malformed,$r,$(ns $toe badihl)" >>"$csv"
done
python3 "$top/bench/report.py" "$res" --only xdp
