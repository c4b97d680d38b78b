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
# Proof (bench/lib.sh): toed's neigh_set counter (toectl stats) grows by
# the updates each part made (in a burst that overran, by at least one and
# the resync counted); otherwise no figure, exit 1.
#   N=2000 RATES="1000 5000 10000 20000 50000"
# BENCH_SMOKE=1: N=200, RATES=10000.
. "$(dirname "$0")/lib.sh"
dp_start bneigh
if smoke; then N=${N:-200} RATES=${RATES:-10000}; fi
N=${N:-2000} RATES=${RATES:-1000 5000 10000 20000 50000}
veth_loop || exit 1
dp_load a --dev va || exit 1
printf 'default host\n' >"$work/c.conf"; chmod 600 "$work/c.conf"
nsenter --net=/run/netns/"$(ns_name a)" toed -c "$work/c.conf" -p "$PIN" -r "$work/run" -l warning &
defer "kill $!"
wait_for 10 test -S "$work/run/toed.sock" || exit 1
VA=$(nsx a ip -j link show va | jq '.[0].ifindex')
NL="$TOE_BUILD/bench/neighlat"

nset() { toectl -r "$work/run" -j stats | command jq .daemon.neigh_set; }
s0=$(nset)
nsx a "$NL" latency "$PIN" "$VA" "$N" >"$work/lat" || bench_fail "neighlat latency failed"
proof_grew "latency: toed's neigh_set" "$s0" "$(nset)" "$N" || bench_fail "toed did not write the updates"
{ echo "sample,to_map_write_ns,to_reader_ns"; awk '{ print NR "," $1 "," $2 }' "$work/lat"; } \
	>"$BENCH_OUT/neigh_latency.csv"
echo "rate_per_s,achieved_per_s,count,catchup_ms,overruns,resyncs" >"$BENCH_OUT/neigh_rate.csv"
for rate in $RATES; do
	count=$((rate < 10000 ? 5000 : rate))
	s0=$(toectl -r "$work/run" -j stats)
	out=$(nsx a "$NL" rate "$PIN" "$VA" "$count" "$rate") || exit 1
	s1=$(toectl -r "$work/run" -j stats)
	ov=$(( $(jq .daemon.netlink_overruns <<<"$s1") - $(jq .daemon.netlink_overruns <<<"$s0") ))
	rs=$(( $(jq .daemon.resyncs <<<"$s1") - $(jq .daemon.resyncs <<<"$s0") ))
	proof_grew "rate $rate/s: toed's neigh_set" "$(jq .daemon.neigh_set <<<"$s0")" "$(jq .daemon.neigh_set <<<"$s1")" \
		$((rs > 0 ? 1 : count)) || bench_fail "rate $rate/s: toed did not write the updates"
	echo "$rate,${out% *},$count,${out#* },$ov,$rs" >>"$BENCH_OUT/neigh_rate.csv"
	nsx a ip neigh flush dev va
	sleep 0.5
done
bench_publish
python3 - "$RES/neigh_latency.csv" "$RES/neigh_rate.csv" <<'PY'
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
