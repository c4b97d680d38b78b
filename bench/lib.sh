# SPDX-License-Identifier: GPL-2.0
# Shared by the benchmarks (bench/bench_NAME.sh), sourced first (.
# "$(dirname "$0")/lib.sh"): set -u, $top (the tree), TOE_TOP and
# TOE_BUILD exported (the build folder make bench-NAME names, else
# $top/build), selftests/lib.sh; then the proofs that each variant ran the
# path it names, the results folder, and the smoke mode.
#
# Proofs: a figure is printed only for a variant whose run showed it took
# its path (the bypass's bytes, the fast path's packets, the program's run
# count): a bench reads the counter before and after a run and calls
#   proof_grew WHAT BEFORE AFTER MIN [MAX]
# which fails (a "PROOF FAILED" line on stderr, return 1) unless the counter
# grew by at least MIN (and at most MAX; MAX 0: it must stay flat).  A bench
# that finds a proof failed prints no figure for that variant and exits 1
# (bench_fail, or at its end for those that keep going: bench_proofs_ok).
#
# BENCH_SMOKE=1: one short round of every variant, seconds in all, the
# proofs still checked (selftests/bench/test_bench_smoke.sh runs every
# make bench-* so); the figures mean nothing.  BENCH_RESULTS=DIR: the CSVs
# go there instead of bench/results (a smoke run must not overwrite the
# committed results).  A bench writes its CSVs into $BENCH_OUT (a folder of
# its own) and bench_publish copies them into $RES at the end only, so a
# bench that fails half-way leaves the results of the last good run.

set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export TOE_TOP=$top TOE_BUILD=${TOE_BUILD:-$top/build}
. "$top/selftests/lib.sh"

BENCH_NAME=${BENCH_NAME:-$(basename "$0" .sh)}
BENCH_NAME=${BENCH_NAME#bench_}
BENCH_SMOKE=${BENCH_SMOKE:-0}
RES=${BENCH_RESULTS:-$TOE_TOP/bench/results}
BENCH_OUT=$(mktemp -d /tmp/opentoe-bench-$BENCH_NAME.XXXXXX) && defer "rm -rf $BENCH_OUT"
PROOF_FAILS=0

# smoke: is this a smoke run?
smoke() { [ "$BENCH_SMOKE" = 1 ]; }

# proof_grew WHAT BEFORE AFTER MIN [MAX]
proof_grew() {
	local what=$1 b=$2 a=$3 min=$4 max=${5:-} d
	if ! [[ $b =~ ^-?[0-9]+$ && $a =~ ^-?[0-9]+$ ]]; then
		echo "bench-$BENCH_NAME: PROOF FAILED: $what: could not read the counter (before '$b', after '$a')" >&2
		PROOF_FAILS=$((PROOF_FAILS + 1))
		return 1
	fi
	d=$((a - b))
	if [ "$d" -lt "$min" ] || { [ -n "$max" ] && [ "$d" -gt "$max" ]; }; then
		echo "bench-$BENCH_NAME: PROOF FAILED: $what grew by $d (expected at least $min${max:+, at most $max})" >&2
		PROOF_FAILS=$((PROOF_FAILS + 1))
		return 1
	fi
	return 0
}

# bench_fail WHY: no figure; the reason, exit 1 (the cleanups run).
bench_fail() {
	echo "bench-$BENCH_NAME: FAILED: $* (no figure printed; $RES left as it was)" >&2
	exit 1
}
# bench_proofs_ok: exit 1 if a proof failed (for benches that record a
# failed run and go on, as bench-bypass and bench-apps do).
bench_proofs_ok() {
	[ "$PROOF_FAILS" = 0 ] ||
		bench_fail "$PROOF_FAILS run(s) did not prove the path they name (PROOF FAILED above)"
}

# bench_publish: the staged CSVs into $RES.
bench_publish() {
	mkdir -p "$RES" && cp "$BENCH_OUT"/*.csv "$RES"/ || bench_fail "cannot write the results into $RES"
}

# prog_runs ID...: the run count of these programs (bpf_stats), summed.
prog_runs() {
	local id n=0 c
	for id; do
		c=$(bpftool -j prog show id "$id" | command jq '.run_cnt // 0') || return 1
		n=$((n + c))
	done
	echo $n
}

# bpf_stats_on: the kernel counts the programs' runs (and run time) while
# this bench runs: an fd of BPF_ENABLE_STATS (x86-64 bpf(2) command 32,
# BPF_STATS_RUN_TIME), held by a sleeping python3 until the bench ends:
# counted, so another user's kernel.bpf_stats_enabled=0 does not turn it
# off under this run, and the sysctl is left alone.  Returns 1 if not on.
bpf_stats_on() {
	local f
	f=$(mktemp) && defer "rm -f $f"
	python3 -c '
import ctypes, os, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(struct.pack("I", 0), 8)
if libc.syscall(321, 32, attr, 8) < 0:
    sys.exit("BPF_ENABLE_STATS: " + os.strerror(ctypes.get_errno()))
print("on", flush=True)
time.sleep(86400)' >"$f" &
	defer "kill $!"
	wait_for 5 grep -qs on "$f"
}

# dp_progs NS xdp|tc: the ids of the datapath's programs in $PIN on that
# hook (xdp: its own XDP program, not a chained one; tc: the tc programs),
# as toe-loader status names them, from namespace NS ("-": this one).
dp_progs() {
	local run=()
	[ "$1" = - ] || run=(nsx "$1")
	case $2 in
	xdp) "${run[@]}" toe-loader status -j --pin-dir "$PIN" |
		command jq '[.programs[] | select(.type == "xdp" and (.chained | not)) | .id] | unique | .[]' ;;
	tc) "${run[@]}" toe-loader status -j --pin-dir "$PIN" |
		command jq '[.programs[] | select(.pin // "" | startswith("link_tc")) | .id] | unique | .[]' ;;
	esac
}

# cg_sockops CG: how many sock_ops programs act on cgroup CG ("x" if
# bpftool cannot tell; it prints nothing for a cgroup with none).
cg_sockops() {
	local out
	out=$(bpftool -j cgroup show "$1" effective) || { echo x; return; }
	[ -n "$out" ] || { echo 0; return; }
	command jq '[.[] | select(.attach_type | test("sock_ops"))] | length' <<<"$out" 2>/dev/null || echo x
}

# policy_conf FILE NRULES [p]: bench-policy's policy, NRULES rules of 4
# shapes, none matching the benchmarks' loopback traffic (so every shape
# is searched); with p, "track policy".  Mode 600, as toed wants.
policy_conf() {
	python3 - "$2" "${3:-}" >"$1" <<'PY' && chmod 600 "$1"
import sys
n = int(sys.argv[1])
print('device d0 type chelsio-t3 nconn 1000000')
if sys.argv[2] == 'p':
    print('track policy')
for i in range(n):
    m = ['remote 10.%d.%d.0/24' % ((i >> 8) & 255, i & 255), 'remote 192.0.2.%d/32' % (i & 255),
         'local fd00:%x::/64' % i, 'remote 198.51.%d.0/24' % (i & 255)][i % 4]
    print('rule offload dev d0 %s rport %d' % (m, 1 + i % 60000))
PY
}
