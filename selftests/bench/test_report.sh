#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/report.py on the committed results: a summary line per comparison,
# ratios against the baseline each benchmark names, and an SVG per
# comparison that gnuplot actually drew.
. "$(dirname "$0")/../lib.sh"
plan 27
need_cmd python3 gnuplot
T=$(mktemp -d /tmp/opentoe-report.XXXXXX)
defer "rm -rf $T"
cp "$TOE_TOP"/bench/results/*.csv "$T/"
out=$(python3 "$TOE_TOP/bench/report.py" "$T") || { fail "report.py runs"; finish; }
echo "$out" | sed 's/^/# /'
check "xdp: the floor is the baseline (ratio 1.00)" grep -qE "^  floor +[0-9.e+]+ .* 1\.00$" <<<"$out"
check "policy: sock_ops off is the baseline" grep -qE "^  off +[0-9.e+]+ .* 1\.00$" <<<"$out"
for f in "$T"/*.csv; do
	n=$(basename "$f" .csv)
	case $n in neigh_rate | mem | apps_runs) continue ;; esac	# tables, not comparisons
	check "$n.svg drawn by gnuplot" grep -q "<svg" "$T/$n.svg"
done
check "markdown table for docs/benchmarks.md" grep -q "^| variant | median | min-max | ratio |" < <(python3 "$TOE_TOP/bench/report.py" "$T" --markdown --no-plots)
one=$(python3 "$TOE_TOP/bench/report.py" "$T" --only xdp)
check "--only xdp: that table and nothing else" \
	test "$(grep -c 'is better)' <<<"$one")" = 1 -a -n "$(grep '^XDP per-packet cost' <<<"$one")"
# paired: the median of the per-round ratios (2, 4, 1.5 -> 2.00), not the
# ratio of the medians (60 / 20 = 3.00).
mkdir "$T/p"
printf 'variant,round,ns_per_packet\nfloor,1,10\nhost_flow,1,20\nfloor,2,20\nhost_flow,2,80\nfloor,3,40\nhost_flow,3,60\n' >"$T/p/xdp.csv"
pr=$(python3 "$TOE_TOP/bench/report.py" "$T/p" --only xdp)
echo "$pr" | sed 's/^/# /'
check "paired ratio: median of per-round ratios, beside the ratio of medians" \
	grep -qE "^  host_flow +60 +20-80 +3\.00 +2\.00$" <<<"$pr"
check "paired ratio of the baseline is 1.00" grep -qE "^  floor +20 +10-40 +1\.00 +1\.00$" <<<"$pr"
# apps.csv (make bench-apps): its own units per row, a comment first, a
# failed variant reported as such.
mkdir "$T/a"
cat >"$T/a/apps.csv" <<'EOC'
"# bench-apps 2026-12-03, rounds 3 x 5 s"
app,variant,unit,median,min,max,ratio_plain,paired_ratio,runs,secs,p50_ms,p99_ms,max_ms,errors,byp_share,to_tcp,status
redis-get,plain,req/s,40000.0,39000.0,41000.0,1.0,1.0,3,5,0.6,5.0,9.0,0,0.0,0,ok
redis-get,bypass,req/s,50000.0,48000.0,52000.0,1.25,1.3,3,5,0.4,4.0,8.0,0,0.99,0,ok
iperf3-1,plain,Gbit/s,15.0,14.0,16.0,1.0,1.0,3,5,,,,,0.0,0,ok
iperf3-1,bypass,Gbit/s,,,,,,0,5,,,,,,0,FAILED 3 of 3 runs (iperf3: x)
EOC
ap=$(python3 "$TOE_TOP/bench/report.py" "$T/a")
echo "$ap" | sed 's/^/# /'
check "apps: each server's plain and bypass figures, ratio, paired, bypassed share; a failed row says so; plot drawn" \
	bash -c 'grep -qE "^  redis-get +req/s +40000.0 +50000.0 +1.25 +1.3 +99% +ok$" <<<"$1" &&
		grep -qE "^  iperf3-1 .*bypass FAILED 3 of 3 runs" <<<"$1" && grep -q "<svg" "$2"' _ "$ap" "$T/a/apps.svg"
check_not "--only with an unknown name fails" python3 "$TOE_TOP/bench/report.py" "$T" --only nope
# the benchmarks' own tools: --help on stdout, exit 0, every option named
helps() {
	local t out
	for t in loadgen connrate pktblast neighlat; do
		out=$("$TOE_BUILD/bench/$t" --help) || { echo "$t --help failed"; return 1; }
		grep -q "^usage: $t" <<<"$out" || { echo "$t --help: no usage line"; return 1; }
	done
}
check "bench tools answer --help (exit 0, a usage line)" helps
lg_opts() {
	local out o
	out=$("$TOE_BUILD/bench/loadgen" --help) || return 1
	for o in --mode --size --seconds --type --addr --port --srv-ns --cli-ns --cpu --srv-cpu; do
		grep -q -- "$o" <<<"$out" || { echo "loadgen --help lacks $o"; return 1; }
	done
	"$TOE_BUILD/bench/loadgen" --mode bogus 2>/dev/null
	[ $? = 2 ] || { echo "loadgen --mode bogus: not exit status 2"; return 1; }
}
check "loadgen --help names each of its options; a bad --mode exits 2" lg_opts

# bench-forward's goals, on one made-up round: tc 1.2x the kernel with half
# conntrack's router time, conntrack router-bound; xdp below on every goal
cat >"$T/goals.csv" <<'EOF2'
setting,variant,round,gbit_s,router_s_per_gb,router_util,rx_s_per_gb
mtu,kernel,1,10,1.0,0.5,0.5
mtu,conntrack,1,8,2.0,0.9,0.5
mtu,tc,1,12,1.0,0.4,0.5
mtu,xdp,1,9,1.5,0.6,0.5
EOF2
gout=$(python3 "$TOE_TOP/bench/forward_goals.py" tput "$T/goals.csv")
goalrow() { python3 -c 'import csv,sys; r={x["variant"]: x for x in csv.DictReader(open(sys.argv[1]))}[sys.argv[2]]; print(",".join(r[c] for c in ("vs_kernel","goal_kernel","router_cpu_vs","goal_router_cpu","vs_conntrack","router_bound","goal_conntrack")))' "$T/goals.csv" "$1"; }
check "forward_goals: tc 1.2x the kernel, 0.5x conntrack's router CPU, 1.5x conntrack where it is router-bound: PASS on all three" \
	test "$(goalrow tc)" = "1.200,PASS,0.500,PASS,1.500,yes,PASS"
check "forward_goals: xdp 0.9x, 0.75x, 1.125x: MISS on all three" \
	test "$(goalrow xdp)" = "0.900,MISS,0.750,MISS,1.125,yes,MISS"
baselines() { [ "$(goalrow kernel)" = ",-,,-,,,-" ] && grep -q "^tc " <<<"$gout" && grep -q "^conntrack " <<<"$gout"; }
check "forward_goals: the baselines are not judged, the summary names each variant" baselines

# the minimal forwarders (issue 49): tc at 1.2x tc_min's throughput but 2x
# its program time misses (at most 1.5x); xdp at 1.2x xdp_min's program
# time passes (at most 1.3x); the minimal rows get their x kernel only
cat >"$T/min.csv" <<'EOF2'
setting,variant,round,gbit_s,router_s_per_gb,router_util,rx_s_per_gb,prog_ns_per_run
mtu,kernel,1,10,1.0,0.5,0.5,0
mtu,tc,1,12,1.0,0.4,0.5,1000
mtu,tc_min,1,10,1.0,0.4,0.5,500
mtu,xdp,1,9,1.5,0.6,0.5,360
mtu,xdp_min,1,12,1.5,0.6,0.5,300
EOF2
nout=$(python3 "$TOE_TOP/bench/forward_goals.py" tput "$T/min.csv")
echo "$nout" | sed 's/^/# /'
minrow() { python3 -c 'import csv,sys; r={x["variant"]: x for x in csv.DictReader(open(sys.argv[1]))}[sys.argv[2]]; print(",".join(r[c] for c in ("vs_min","prog_vs_min","goal_min","vs_kernel")))' "$T/min.csv" "$1"; }
check "forward_goals: tc 1.2x tc_min's throughput, 2x its program time: MISS; xdp 1.2x xdp_min's program time: PASS" \
	test "$(minrow tc)" = "1.200,2.000,MISS,1.200" -a "$(minrow xdp)" = "0.750,1.200,PASS,0.900"
check "forward_goals: the minimal rows: x kernel, no goal; the summary's x min columns" \
	test "$(minrow tc_min)" = ",,-,1.000" -a "$(grep -c '^tc .* 1.20 *2.00 MISS$' <<<"$nout")" = 1

# the NAT rows (issue 33): each variant with the masquerade against the
# kernel with it, whose CPU 0.6x is the goal (no conntrack row there): tc
# at 1.2x the kernel's throughput and 0.5x its router CPU passes; xdp at
# 1.0x and 0.65x misses the CPU goal only, even beside mtu's conntrack row
cat >"$T/masq.csv" <<'EOF2'
setting,variant,round,gbit_s,router_s_per_gb,router_util,rx_s_per_gb
mtu,kernel,1,10,1.0,0.5,0.5
mtu,conntrack,1,8,2.0,0.9,0.5
masq_tso,kernel,1,10,2.0,0.9,0.5
masq_tso,tc,1,12,1.0,0.4,0.5
masq_tso,xdp,1,10,1.3,0.6,0.5
EOF2
mout=$(python3 "$TOE_TOP/bench/forward_goals.py" tput "$T/masq.csv")
masqrow() { python3 -c 'import csv,sys; r=[x for x in csv.DictReader(open(sys.argv[1])) if x["setting"] == "masq_tso" and x["variant"] == sys.argv[2]][0]; print(",".join(r[c] for c in ("vs_kernel","goal_kernel","router_cpu_vs","goal_router_cpu","goal_conntrack")))' "$T/masq.csv" "$1"; }
check "forward_goals, masq_tso: tc 1.2x the kernel with masquerade, 0.5x its router CPU: PASS on both" \
	test "$(masqrow tc)" = "1.200,PASS,0.500,PASS,-"
check "forward_goals, masq_tso: xdp 1.0x, 0.65x the kernel's router CPU: PASS, MISS (the summary too)" \
	test "$(masqrow xdp)" = "1.000,PASS,0.650,MISS,-" -a "$(grep -A9 '^== masq_tso' <<<"$mout" | grep -c '^xdp .* PASS .* 0.65 MISS')" = 1

finish
