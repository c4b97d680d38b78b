#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-neigh: neighbour propagation through toed (issue 8, comparison 5).
#  - latency: 2,000 MAC replaces one at a time (rtnetlink, as ip neigh
#    replace), each timed from just before the request to toed's map write
#    (the entry's updated_ns) and to a reader spinning on the map: p50, p99.
#  - rate: bursts of distinct updates paced at 1k .. 50k per second, toed
#    at its default receive buffer: whether the socket overran (an overrun
#    costs a full resync, not a lost update) and how long the map took to
#    catch up after the last request.
# CSV: bench/results/neigh_latency.csv, bench/results/neigh_rate.csv.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
export TOE_TOP=$top TOE_BUILD=$top/build
. "$top/selftests/lib.sh"
dp_start bneigh
N=${N:-2000}
veth_loop || exit 1
dp_load a --dev va || exit 1
printf 'default host\n' >"$work/c.conf"; chmod 600 "$work/c.conf"
nsenter --net=/run/netns/"$(ns_name a)" toed -c "$work/c.conf" -p "$PIN" -r "$work/run" -l warning &
defer "kill $!"
wait_for 10 test -S "$work/run/toed.sock" || exit 1
VA=$(nsx a ip -j link show va | jq '.[0].ifindex')
NL="$TOE_BUILD/bench/neighlat"

nsx a "$NL" latency "$PIN" "$VA" "$N" >"$work/lat" || exit 1
{ echo "sample,to_map_write_ns,to_reader_ns"; awk '{ print NR "," $1 "," $2 }' "$work/lat"; } \
	>"$top/bench/results/neigh_latency.csv"
echo "rate_per_s,achieved_per_s,count,catchup_ms,overruns,resyncs" >"$top/bench/results/neigh_rate.csv"
for rate in 1000 5000 10000 20000 50000; do
	count=$((rate < 10000 ? 5000 : rate))
	s0=$(toectl -r "$work/run" -j stats)
	out=$(nsx a "$NL" rate "$PIN" "$VA" "$count" "$rate") || exit 1
	s1=$(toectl -r "$work/run" -j stats)
	ov=$(( $(jq .daemon.netlink_overruns <<<"$s1") - $(jq .daemon.netlink_overruns <<<"$s0") ))
	rs=$(( $(jq .daemon.resyncs <<<"$s1") - $(jq .daemon.resyncs <<<"$s0") ))
	echo "$rate,${out% *},$count,${out#* },$ov,$rs" >>"$top/bench/results/neigh_rate.csv"
	nsx a ip neigh flush dev va
	sleep 0.5
done
python3 - "$top/bench/results/neigh_latency.csv" "$top/bench/results/neigh_rate.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(len(xs) * p))]
w = [int(r['to_map_write_ns']) / 1000 for r in rows]
s = [int(r['to_reader_ns']) / 1000 for r in rows]
print('neighbour propagation latency, %d samples (us):' % len(rows))
print('  %-28s p50 %7.1f  p99 %7.1f  max %7.1f' % ('request -> toed map write', pct(w, .5), pct(w, .99), max(w)))
print('  %-28s p50 %7.1f  p99 %7.1f  max %7.1f' % ('request -> reader sees it', pct(s, .5), pct(s, .99), max(s)))
print('sustained rate (default receive buffer):')
print('  %10s %10s %8s %11s %9s' % ('asked/s', 'achieved/s', 'updates', 'catch-up ms', 'overruns'))
for r in csv.DictReader(open(sys.argv[2])):
    print('  %10s %10s %8s %11s %9s' % (r['rate_per_s'], r['achieved_per_s'], r['count'], r['catchup_ms'], r['overruns']))
PY
