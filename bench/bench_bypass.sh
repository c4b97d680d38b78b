#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-bypass: the local bypass against TCP over loopback, TCP over a
# veth between two namespaces, and an AF_UNIX socketpair.  Workloads (bench/
# loadgen, every byte checked): request/response of 1 B, 64 B and 1 KiB
# (one request in flight, round trips per second) and a stream of 64 KiB
# writes (MB/s).  Each pinned (both ends on CPU 0, taskset-style
# sched_setaffinity) and unpinned.  Variants alternate inside each round
# and their order rotates; median and min-max over ROUNDS rounds of SECS
# seconds; ratio of medians to TCP loopback.  The TCP and AF_UNIX variants
# run outside opentoe's cgroup (no sock_ops at all); "bypass" runs both ends
# in the cgroup on loopback, "bypass-ns" across the veth.
# CSV: bench/results/bypass.csv.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
export TOE_TOP=$top TOE_BUILD=$top/build
. "$top/selftests/lib.sh"
ROUNDS=${ROUNDS:-5} SECS=${SECS:-1}
LG=$TOE_BUILD/bench/loadgen
[ -x "$LG" ] || skip "not built (make)"
dp_start bench
two_hosts 204 4 || exit 1
NSA=/run/netns/$(ns_name a) NSB=/run/netns/$(ns_name b)
conf=$(mktemp); defer "rm -f $conf"
printf 'default host\nrule bypass lport 7700-7799\nrule bypass rport 7700-7799\n' >"$conf"
chmod 600 "$conf"
defer "toe-loader unload --pin-dir $PIN --force; rm -rf $PIN"
toe-loader load --cgroup "$CG" --pin-dir "$PIN" >/dev/null || exit 1
toed --apply "$conf" --pin-dir "$PIN" >/dev/null || exit 1

port=7700
run() { # VARIANT PIN WORKLOAD -> the figure (round trips/s or MB/s)
	local v=$1 pin=$2 w=$3 args out p
	case $w in
	rr1) args="--mode rr --size 1" ;;
	rr64) args="--mode rr --size 64" ;;
	rr1k) args="--mode rr --size 1024" ;;
	stream) args="--mode stream --size 65536" ;;
	esac
	[ "$pin" = pinned ] && args="$args --cpu 0"
	args="$args --seconds $SECS"
	port=$((port + 1)); [ $port -ge 7800 ] && port=7701
	p=$port
	case $v in
	bypass) out=$( (echo $BASHPID >"$CG/cgroup.procs" &&
		exec nsenter --net="$NSA" "$LG" $args --port $p)) ;;
	bypass-ns) out=$( (echo $BASHPID >"$CG/cgroup.procs" &&
		exec "$LG" $args --addr 10.204.0.2 --port $p --srv-ns "$NSB" --cli-ns "$NSA")) ;;
	tcp-lo) out=$(nsenter --net="$NSA" "$LG" $args --port $((p + 1000))) ;;
	tcp-veth) out=$("$LG" $args --addr 10.204.0.2 --port $((p + 1000)) --srv-ns "$NSB" --cli-ns "$NSA") ;;
	unix) out=$("$LG" $args --type unix) ;;
	esac
	if ! jq -e '.errors == 0' <<<"$out" >/dev/null 2>&1; then
		echo "bench-bypass: $v $pin $w failed: $out" >&2
		echo nan
		return
	fi
	if [ "$w" = stream ]; then jq .mbytes_per_s <<<"$out"; else jq .ops_per_s <<<"$out"; fi
}

raw=$(mktemp); defer "rm -f $raw"
variants=(bypass bypass-ns tcp-lo tcp-veth unix)
nv=${#variants[@]}
for ((r = 1; r <= ROUNDS; r++)); do
	for w in rr1 rr64 rr1k stream; do
		for pin in pinned unpinned; do
			for ((i = 0; i < nv; i++)); do
				v=${variants[$(((i + r) % nv))]}
				echo "$w,$pin,$v,$r,$(run $v $pin $w)" >>"$raw"
			done
		done
	done
	echo "round $r of $ROUNDS done" >&2
done
mkdir -p "$top/bench/results"
python3 - "$raw" "$top/bench/results/bypass.csv" "$ROUNDS" "$SECS" <<'PY'
import csv, statistics, sys, datetime, math
raw, out, rounds, secs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
data = {}
for w, pin, v, r, x in csv.reader(open(raw)):
    x = float(x)
    if not math.isnan(x):
        data.setdefault((w, pin, v), []).append(x)
unit = lambda w: 'MB/s' if w == 'stream' else 'round trips/s'
rows = []
for w in ['rr1', 'rr64', 'rr1k', 'stream']:
    for pin in ['pinned', 'unpinned']:
        base = statistics.median(data.get((w, pin, 'tcp-lo'), [float('nan')]))
        unix = statistics.median(data.get((w, pin, 'unix'), [float('nan')]))
        for v in ['bypass', 'bypass-ns', 'tcp-lo', 'tcp-veth', 'unix']:
            xs = data.get((w, pin, v), [])
            if not xs:
                continue
            m = statistics.median(xs)
            rows.append([w, pin, v, unit(w), round(m, 1), round(min(xs), 1), round(max(xs), 1),
                         round(m / base, 3), round(m / unix, 3), len(xs), secs])
with open(out, 'w') as f:
    c = csv.writer(f)
    c.writerow(['# bench-bypass ' + datetime.date.today().isoformat() + ', rounds ' + rounds + ' x ' + secs + ' s'])
    c.writerow(['workload', 'pinning', 'variant', 'unit', 'median', 'min', 'max',
                'ratio_tcp_lo', 'ratio_unix', 'runs', 'secs'])
    c.writerows(rows)
print('%-7s %-9s %-10s %14s %25s %9s %9s' % ('load', 'pinning', 'variant', 'median', 'min-max', 'x tcp-lo', 'x unix'))
for w, pin, v, u, m, lo, hi, rt, ru, n, s in rows:
    print('%-7s %-9s %-10s %14s %25s %9.3f %9.3f' % (w, pin, v, '%.1f' % m, '%.1f-%.1f %s' % (lo, hi, 'MB/s' if u == 'MB/s' else 'rt/s'), rt, ru))
PY
