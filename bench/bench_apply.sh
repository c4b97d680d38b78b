#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-apply: time to apply a policy atomically (issue 8, comparison
# 7): 1, 10,000 and 100,000 rules of four shapes (remote prefix + remote
# port, local port, remote port, both ports), each applied ROUNDS times with
# `toed --apply -j` (compile, fill the idle generation, flip, RCU grace
# period), variants alternating.  CSV: bench/results/apply.csv (ms).
# Proof (bench/lib.sh), every apply: toed reports the variant's rule count
# and a policy serial one past the last (the flip happened).  A run that
# fails it: no figure, exit 1.  BENCH_SMOKE=1: one round.
. "$(dirname "$0")/lib.sh"
if smoke; then ROUNDS=${ROUNDS:-1}; fi
ROUNDS=${ROUNDS:-3}
dp_start bapply
dp_load - || exit 1
for n in 1 10000 100000; do
	python3 - "$n" >"$work/r$n.conf" <<'PY'
import sys
n = int(sys.argv[1])
print('device t3 type chelsio-t3 nconn 1000')
print('device sw0 type software nconn 1000')
for i in range(n):
    dev = 't3' if i % 2 else 'sw0'
    k = i % 4
    if k == 0:
        m = 'remote 10.%d.%d.0/24 rport %d' % ((i >> 8) & 255, i & 255, 1024 + i % 60000)
    elif k == 1:
        m = 'lport %d' % (1024 + i % 60000)
    elif k == 2:
        m = 'rport %d' % (1024 + i % 60000)
    else:
        m = 'lport %d rport %d' % (1024 + i % 60000, 2048 + i % 60000)
    print('rule offload dev %s %s' % (dev, m))
PY
	chmod 600 "$work/r$n.conf"
done
csv=$BENCH_OUT/apply.csv
echo "variant,round,ms" >"$csv"
serial=$(toed --apply "$work/r1.conf" --pin-dir "$PIN" -j | command jq .serial)
for ((r = 1; r <= ROUNDS; r++)); do
	for n in 1 10000 100000; do
		out=$(toed --apply "$work/r$n.conf" --pin-dir "$PIN" -j) || bench_fail "rules_$n: toed --apply failed"
		proof_grew "rules_$n: the rules toed applied" 0 "$(command jq .rules <<<"$out")" $n $n &&
			proof_grew "rules_$n: the policy serial (one apply, one flip)" "$serial" "$(command jq .serial <<<"$out")" 1 1 ||
			bench_fail "rules_$n: not the policy the variant names"
		serial=$(command jq .serial <<<"$out")
		echo "rules_$n,$r,$(command jq .ms <<<"$out")" >>"$csv"
	done
done
bench_publish
python3 "$top/bench/report.py" "$RES" --only apply
