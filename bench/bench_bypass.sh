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
# in the cgroup on loopback, "bypass-ns" across the veth.  The endpoints
# run in the bench's namespaces, so the policy names them (netns any: a
# rule without netns matches only in toed's own namespace, and the bypass
# then carries nothing).  Proof (bench/lib.sh): toe_stats' bypassed bytes
# grow in every bypass run, by at least the bytes the client sent in a
# request/response run (half of what moved) and a tenth of them in a stream
# (flow control sends part of a stream over TCP: the share is in the CSV),
# and stay flat in every other run; a run that fails it gives no figure,
# its row says FAILED, and the script exits 1.
# CSV: bench/results/bypass.csv.  BENCH_SMOKE=1: one round of 0.1 s runs.
. "$(dirname "$0")/lib.sh"
if smoke; then ROUNDS=${ROUNDS:-1} SECS=${SECS:-0.1}; fi
ROUNDS=${ROUNDS:-5} SECS=${SECS:-1}
LG=$TOE_BUILD/bench/loadgen
[ -x "$LG" ] || skip "not built (make)"
dp_start bench
two_hosts 204 4 || exit 1
NSA=/run/netns/$(ns_name a) NSB=/run/netns/$(ns_name b)
conf=$(mktemp); defer "rm -f $conf"
printf 'default host\nrule bypass lport 7700-7799 netns any\nrule bypass rport 7700-7799 netns any\n' >"$conf"
chmod 600 "$conf"
defer "toe-loader unload --pin-dir $PIN --force; rm -rf $PIN"
toe-loader load --cgroup "$CG" --pin-dir "$PIN" >/dev/null || exit 1
toed --apply "$conf" --pin-dir "$PIN" >/dev/null || exit 1

port=7700
# run VARIANT PIN WORKLOAD ROUND: one run, its line into $raw:
# workload,pinning,variant,round,figure (round trips/s or MB/s; nan if the
# run failed),bypassed bytes,bytes the client sent,status
run() {
	local v=$1 pin=$2 w=$3 r=$4 args out p b0 b1 sent x status=ok min
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
	b0=$(stat_of "$PIN" $STAT_BYP_BYTES)
	case $v in
	bypass) out=$( (echo $BASHPID >"$CG/cgroup.procs" &&
		exec nsenter --net="$NSA" "$LG" $args --port $p)) ;;
	bypass-ns) out=$( (echo $BASHPID >"$CG/cgroup.procs" &&
		exec "$LG" $args --addr 10.204.0.2 --port $p --srv-ns "$NSB" --cli-ns "$NSA")) ;;
	tcp-lo) out=$(nsenter --net="$NSA" "$LG" $args --port $((p + 1000))) ;;
	tcp-veth) out=$("$LG" $args --addr 10.204.0.2 --port $((p + 1000)) --srv-ns "$NSB" --cli-ns "$NSA") ;;
	unix) out=$("$LG" $args --type unix) ;;
	esac
	b1=$(stat_of "$PIN" $STAT_BYP_BYTES)
	sent=$(jq '.bytes // 0' <<<"$out" 2>/dev/null)
	if ! jq -e '.errors == 0' <<<"$out" >/dev/null 2>&1; then
		status="FAILED: loadgen: ${out//[,\"$'\n']/;}"
	else
		case $v in
		bypass*) min=$sent; [ "$w" = stream ] && min=$((sent / 10))
			proof_grew "$v $pin $w: bypassed bytes ($MAP_STATS)" "$b0" "$b1" $((min > 0 ? min : 1)) ||
				status="FAILED: the bypass did not carry the load" ;;
		*) proof_grew "$v $pin $w: bypassed bytes ($MAP_STATS)" "$b0" "$b1" 0 0 ||
				status="FAILED: bypassed bytes grew in a run outside the bypass" ;;
		esac
	fi
	x=nan
	[ "$status" = ok ] || fails=$((fails + 1))
	if [ "$status" = ok ]; then
		if [ "$w" = stream ]; then x=$(jq .mbytes_per_s <<<"$out"); else x=$(jq .ops_per_s <<<"$out"); fi
	else
		echo "bench-bypass: $v $pin $w: $status" >&2
	fi
	echo "$w,$pin,$v,$r,$x,$((b1 - b0)),${sent:-0},$status" >>"$raw"
}

raw=$(mktemp); defer "rm -f $raw"
fails=0
variants=(bypass bypass-ns tcp-lo tcp-veth unix)
nv=${#variants[@]}
for ((r = 1; r <= ROUNDS; r++)); do
	for w in rr1 rr64 rr1k stream; do
		for pin in pinned unpinned; do
			for ((i = 0; i < nv; i++)); do
				v=${variants[$(((i + r) % nv))]}
				run $v $pin $w $r
			done
		done
	done
	echo "round $r of $ROUNDS done" >&2
done
python3 - "$raw" "$BENCH_OUT/bypass.csv" "$ROUNDS" "$SECS" <<'PY'
import csv, statistics, sys, datetime, math
raw, out, rounds, secs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
data, share, bad = {}, {}, {}
for w, pin, v, r, x, byp, sent, status in csv.reader(open(raw)):
    k = (w, pin, v)
    if status != 'ok':
        bad.setdefault(k, []).append(status)
        continue
    data.setdefault(k, []).append(float(x))
    # the share of the bytes moved that the bypass carried (a request and
    # its echo: twice what the client sent)
    moved = int(sent) * (1 if w == 'stream' else 2)
    if moved:
        share.setdefault(k, []).append(min(1.0, int(byp) / moved))
unit = lambda w: 'MB/s' if w == 'stream' else 'round trips/s'
r3 = lambda x, n=3: '' if x is None or math.isnan(x) else round(x, n)
rows = []
for w in ['rr1', 'rr64', 'rr1k', 'stream']:
    for pin in ['pinned', 'unpinned']:
        base = statistics.median(data.get((w, pin, 'tcp-lo'), [float('nan')]))
        unix = statistics.median(data.get((w, pin, 'unix'), [float('nan')]))
        for v in ['bypass', 'bypass-ns', 'tcp-lo', 'tcp-veth', 'unix']:
            k = (w, pin, v)
            xs, nb = data.get(k, []), len(bad.get(k, []))
            if not xs and not nb:
                continue
            status = 'ok' if not nb else 'FAILED %d of %d runs (%s)' % (nb, nb + len(xs), bad[k][0][8:])
            if not xs:
                rows.append([w, pin, v, unit(w), '', '', '', '', '', 0, secs, '', status])
                continue
            m = statistics.median(xs)
            sh = statistics.median(share[k]) if share.get(k) else None
            rows.append([w, pin, v, unit(w), round(m, 1), round(min(xs), 1), round(max(xs), 1),
                         r3(m / base), r3(m / unix), len(xs), secs, r3(sh), status])
with open(out, 'w') as f:
    c = csv.writer(f)
    c.writerow(['# bench-bypass ' + datetime.date.today().isoformat() + ', rounds ' + rounds + ' x ' + secs + ' s'])
    c.writerow(['workload', 'pinning', 'variant', 'unit', 'median', 'min', 'max',
                'ratio_tcp_lo', 'ratio_unix', 'runs', 'secs', 'byp_share', 'status'])
    c.writerows(rows)
s = lambda x, f='%.3f': '-' if x == '' else f % x
print('%-7s %-9s %-10s %14s %25s %9s %9s %7s  %s' % ('load', 'pinning', 'variant', 'median', 'min-max', 'x tcp-lo', 'x unix', 'bypass', 'status'))
for w, pin, v, u, m, lo, hi, rt, ru, n, _, sh, st in rows:
    if m == '':
        print('%-7s %-9s %-10s %14s %25s %9s %9s %7s  %s' % (w, pin, v, '-', '-', '-', '-', '-', st))
        continue
    print('%-7s %-9s %-10s %14s %25s %9s %9s %7s  %s' % (w, pin, v, '%.1f' % m, '%.1f-%.1f %s' % (lo, hi, 'MB/s' if u == 'MB/s' else 'rt/s'),
          s(rt), s(ru), '-' if sh == '' else '%.0f%%' % (100 * sh), st))
PY
# no figure of a run that failed its proof: the CSV is kept out of $RES
bench_proofs_ok
[ $fails = 0 ] || bench_fail "$fails run(s) failed"
bench_publish
