#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/bench_xdp_steps.sh (issue 49; not a make bench-* target, it builds
# the datapath once per step, minutes): the XDP forward path's cost on a
# forwarded frame, per step, with BPF_PROG_TEST_RUN (bpftool prog run,
# REPEAT repeats, ctx_in: the frame arrives on the router's r0), beside
# the minimal XDP forwarder (bench/progs/min_xdp_fwd_run.bpf.o) on the same
# frame in the same namespace.  A router namespace r (selftests/xdp/
# router.sh), forwarding on, the server a permanent neighbour on r1; for
# each build (STEPS), each round: opentoe loaded with it (XDP on r0 and r1,
# the admission on tc egress: TOE_LOADER_NO_NF=1), the policy applied
# (toed --apply), a TCP flow admitted as the stack would (toe_egress run on
# its SYN r0 -> r1 and SYN-ACK r1 -> r0, as selftests/xdp/
# test_xdp_forward_run.sh does), then its data frame (1,000 bytes, TTL 64)
# run through toe_xdp with a route cached (cached: toe_fwd_gen rt_gen set,
# as toed sets it) and without (lookup: bpf_fib_lookup each frame), then
# unloaded.  Every build has TOE_BENCH_KEEP_TTL (bpf/fwd_xmit.h: the TTL
# is checked, not written, since every repeat sees the same frame; so is
# the minimal forwarder's); the steps, one compiled out each:
#   full     nothing else out
#   nostats  toe_stats counters but xdp_forward (the proof's)
#   noacct   the flow's packet and byte counts (count_pkts)
#   nocap    toectl dump's capture check (CAPTURE=0)
#   noct     the conntrack refresh call (fwd_ct_refresh)
#   noframe  the frame checks (destination MAC, IPv4 header checksum)
#   nonetns  the ingress device's namespace (xdp_netns: four probe reads)
#            read as one array load instead (bpf/ctx.h)
#   nomtu    tc: the egress MTU check (bpf_check_mtu), which a cached
#            route makes only for a segment longer than it passed before
#   bare     all seven
#   probereads  full's build loaded with TOE_LOADER_HIDE_FEATURE=kern_ctx:
#            opentoe.bpf.o, the namespace by four probe reads, where full
#            is opentoe_kctx.bpf.o (plain loads, kernels from 6.3 on); the
#            proof: its toe_xdp and toe_tc have more bpf_probe_read_kernel
#            calls than full's (the same where the kernel lacks the kfunc)
# Proof, every run: toe_xdp returned XDP_REDIRECT and toe_stats'
# xdp_forward grew by REPEAT (cached: xdp_fwd_cached too, but in nostats
# and bare); the minimal forwarder returned XDP_REDIRECT and its count grew
# by REPEAT.  CSV: $BENCH_RESULTS/xdp_steps.csv (variant: BUILD/cached,
# BUILD/lookup, min_forward); report.py --only xdp_steps: the ratio to
# min_forward.
# Then the same for tc (HOOKS="xdp tc"): each build loaded with --hook tc,
# toe_tc run on the skb of the same frame (ctx_in: __sk_buff ifindex and
# ingress_ifindex r0; route cached and looked up, tc/BUILD/cached and
# tc/BUILD/lookup, the proof tc_fwd_route_cached), beside the
# minimal tc forwarder (min_tc_fwd_run.bpf.o, r1 marked a peer: the
# redirect_peer both take); proof: TC_ACT_REDIRECT and tc_forward grown
# by REPEAT; CSV tc_steps.csv, against min_tc_forward.
#   base     (with BASE=COMMIT) full's flags on that commit's tree
#            (git archive into $TOE_BUILD/xsteps/base-src; its own
#            toe-loader and toed), so that a change is measured against
#            the code before it in one invocation; the summary gives
#            base - full, what the working tree saves.  The bench writes
#            toe_fwd_gen and reads toe_stats as the working tree defines
#            them: a BASE with other layouts fails its load or its proof.
# STEPS (default all of the above), ROUNDS (5), REPEAT (1,000,000),
# TOE_BUILD, BENCH_RESULTS; BENCH_SMOKE=1: full only, 1 round, 10,000.
. "$(dirname "$0")/lib.sh"
. "$top/selftests/xdp/router.sh"
if smoke; then ROUNDS=${ROUNDS:-1} REPEAT=${REPEAT:-10000} STEPS=${STEPS:-full}; fi
ROUNDS=${ROUNDS:-5} REPEAT=${REPEAT:-1000000} STEPS=${STEPS:-full nostats noacct nocap noct noframe nonetns nomtu bare probereads}
MINO=$TOE_BUILD/bench/min_xdp_fwd_run.bpf.o MINT=$TOE_BUILD/bench/min_tc_fwd_run.bpf.o
[ -r "$MINO" ] && [ -r "$MINT" ] || cannot_run "$MINO, $MINT not built (make)"
HOOKS=${HOOKS:-xdp tc}
K=BPF_EXTRA=-DTOE_BENCH_KEEP_TTL
declare -A FLAGS=([full]="" [nostats]=-DTOE_BENCH_NO_STATS [noacct]=-DTOE_BENCH_NO_ACCOUNT [nocap]=CAPTURE=0
	[noct]=-DTOE_BENCH_NO_CT [noframe]=-DTOE_BENCH_NO_FRAME_CHECK [nonetns]=-DTOE_BENCH_NO_NETNS [nomtu]=-DTOE_BENCH_NO_MTU_CHECK
	[bare]="-DTOE_BENCH_NO_STATS -DTOE_BENCH_NO_ACCOUNT -DTOE_BENCH_NO_CT -DTOE_BENCH_NO_FRAME_CHECK -DTOE_BENCH_NO_NETNS -DTOE_BENCH_NO_MTU_CHECK"
	[probereads]="")
# bdir STEP: the step's build (probereads: full's, loaded otherwise)
bdir() { [ "$1" = probereads ] && echo "$TOE_BUILD/xsteps/full" || echo "$TOE_BUILD/xsteps/$1"; }
for s in $STEPS; do
	[ -n "${FLAGS[$s]+x}" ] || bench_fail "STEPS: no step named $s (${!FLAGS[*]}; base: by BASE=COMMIT)"
done
if [ -n "${BASE:-}" ]; then
	rev=$(git -C "$top" rev-parse --verify -q "$BASE^{commit}") ||
		bench_fail "BASE: $BASE names no commit of $top"
	src=$TOE_BUILD/xsteps/base-src
	rm -rf "$src" && mkdir -p "$src" && git -C "$top" archive "$rev" | tar -x -C "$src" ||
		bench_fail "BASE: cannot unpack $rev"
	make -s -C "$src" O="$TOE_BUILD/xsteps/base" BPF_EXTRA=-DTOE_BENCH_KEEP_TTL -j"$(nproc)" \
		"$TOE_BUILD/xsteps/base/toe-loader" "$TOE_BUILD/xsteps/base/toed" >/dev/null ||
		bench_fail "BASE: cannot build $rev (toe-loader, toed)"
	echo "# base: $(git -C "$top" log -1 --format='%h %s' "$rev")"
	STEPS="$STEPS base"
fi
for s in $STEPS; do
	[ $s = base ] && continue
	[ $s = probereads ] && s=full
	f=${FLAGS[$s]} cap=
	[ "$f" = CAPTURE=0 ] && f= cap=CAPTURE=0
	[ $s = bare ] && cap=CAPTURE=0
	make -s -C "$top" O="$TOE_BUILD/xsteps/$s" $cap BPF_EXTRA="-DTOE_BENCH_KEEP_TTL $f" -j"$(nproc)" \
		"$TOE_BUILD/xsteps/$s/toe-loader" >/dev/null || bench_fail "cannot build $s"
done
bpf_stats_on || bench_fail "cannot turn bpf_stats on (the programs' run counts are the proof)"
router_test bxsteps || exit 1
TOE_LOADER_NO_NF=1
export TOE_LOADER_NO_NF
cat >"$work/fwd.conf" <<EOC
device fwd type software nconn 100 steer forward
rule offload dev fwd rport 5201
EOC
chmod 600 "$work/fwd.conf"
IF0=$(nsx r ip -j link show r0 | jq '.[0].ifindex') IF1=$(nsx r ip -j link show r1 | jq '.[0].ifindex')
MAC_R0=$(nsx r ip -j link show r0 | jq -r '.[0].address')
# the server's MAC, as the router's neighbour table has it: r0's own, so
# that the frame the first repeat rewrote (destination: the next hop's)
# is still addressed to r0 for the next repeat (fwd_frame_ok)
nsx r ip neigh replace $S4 lladdr "$MAC_R0" dev r1 nud permanent || exit 1
RNSC=$(nsx r $PKT netns)
FAR=4611686018427387904	# a lease that does not run out
CP=40001
$PKT tcp "$work/syn.bin" 4 $C4 $S4 $CP 5201 S 1000 0 64 0
$PKT tcp "$work/synack.bin" 4 $S4 $C4 5201 $CP SA 5000 1001 64 0
$PKT tcp "$work/data.bin" 4 $C4 $S4 $CP 5201 PA 1001 5001 64 1000
to_mac "$work/data.bin" "$MAC_R0"
$PKT ctx "$work/data.ctx" $IF0 "$(stat -c %s "$work/data.bin")"
$PKT skbctx "$work/syn.skb" $IF0 $IF1
$PKT skbctx "$work/synack.skb" $IF1 $IF0
$PKT skbctx "$work/data.skb" $IF0 $IF0

# the minimal forwarder, loaded once, its devmap holding r1
MPIN=/sys/fs/bpf/min_xsteps-$TOE_TEST_ID
defer "rm -rf $MPIN"
mkdir -p "$MPIN" && bpftool prog load "$MINO" "$MPIN/prog" type xdp pinmaps "$MPIN" || exit 1
minid=$(bpftool -j prog show pinned "$MPIN/prog" | jq .id)
nsx r bpftool map update pinned "$MPIN/min_tx" key $IF1 0 0 0 value $IF1 0 0 0 || exit 1
mkdir -p "$MPIN/tc" && bpftool prog load "$MINT" "$MPIN/tc/prog" type classifier pinmaps "$MPIN/tc" || exit 1
mintc=$(bpftool -j prog show pinned "$MPIN/tc/prog" | jq .id)
bpftool map update pinned "$MPIN/tc/min_peer" key $IF1 0 0 0 value 1 0 0 0 || exit 1
min_cnt() { bpftool -j map lookup pinned "$MPIN/${1:-}min_fwd_cnt" key 0 0 0 0 | jq '[.formatted.values[].value] | add'; }

# rt RT_GEN: toe_fwd_gen as toed writes it (0: no route cached)
rt() { bpftool map update pinned "$PIN/$MAP_FWD_GEN" key 0 0 0 0 value hex $($PKT gen 0 $FAR "$1" "$RNSC"); }
# up BUILD HOOK: that build's datapath in r on HOOK, the flow admitted;
# $prog its toe_xdp or toe_tc
declare -A NREADS # STEP.HOOK: the loaded program's bpf_probe_read_kernel calls
up() {
	local L=$(bdir $1)/toe-loader ep h=--xdp-veth-tx hide=()
	defer "nsx r $L unload --pin-dir $PIN >/dev/null 2>&1; rm -rf $PIN"
	[ $2 = tc ] && h=
	[ $1 = probereads ] && hide=(env TOE_LOADER_HIDE_FEATURE=kern_ctx)
	nsx r "${hide[@]}" "$L" load --cgroup "$CG" --pin-dir "$PIN" --hook $2 $h --dev r0 --dev r1 >/dev/null &&
		$([ $1 = base ] && echo "$(bdir base)/toed" || echo toed) --apply "$work/fwd.conf" --pin-dir "$PIN" >/dev/null || return 1
	prog=$(nsx r "$L" status -j --pin-dir "$PIN" | jq --arg n toe_$2 '[.programs[] | select(.name == $n) | .id][0]')
	NREADS[$1.$2]=$(bpftool prog dump xlated id "$prog" | grep -c 'call bpf_probe_read_kernel')
	ep=$(nsx r "$L" status -j --pin-dir "$PIN" | jq '[.programs[] | select(.name == "toe_egress") | .id][0]')
	rt 0	# (the router's namespace the datapath's home: admissions there only)
	nsx r bpftool prog run id "$ep" data_in "$work/syn.bin" ctx_in "$work/syn.skb" >/dev/null 2>&1 &&
		nsx r bpftool prog run id "$ep" data_in "$work/synack.bin" ctx_in "$work/synack.skb" >/dev/null 2>&1
}
down() { nsx r "$(bdir $1)/toe-loader" unload --pin-dir "$PIN" >/dev/null; rm -rf "$PIN"; }

echo "variant,round,ns_per_packet" >"$BENCH_OUT/xdp_steps.csv"
echo "variant,round,ns_per_packet" >"$BENCH_OUT/tc_steps.csv"
# run VARIANT PROG ROUND: one test run of REPEAT, proved, its CSV line
run() {
	local v=$1 id=$2 r=$3 out x ret f0 c0 m0 f1 c1 m1 hk=xdp want=4 fst=$STAT_XDP_FORWARD ctx=data.ctx mp=
	local cst=$STAT_XDP_FWD_CACHED
	[[ $v == tc* || $v == min_tc* ]] && hk=tc want=7 fst=$STAT_TC_FORWARD ctx=data.skb mp=tc/ cst=$STAT_TC_FWD_CACHED
	local csv=$BENCH_OUT/${hk}_steps.csv
	if [[ $v != min_* ]]; then
		f0=$(stat_of "$PIN" $fst) c0=$(stat_of "$PIN" $cst)
	fi
	m0=$(min_cnt $mp)
	out=$(nsx r bpftool prog run id "$id" data_in "$work/data.bin" ctx_in "$work/$ctx" repeat "$REPEAT" 2>&1)
	x=$(sed -n 's/.*duration (average): \([0-9]*\)ns.*/\1/p' <<<"$out")
	ret=$(sed -n 's/.*Return value: \([0-9]*\).*/\1/p' <<<"$out")
	[ -n "$x" ] || bench_fail "$v: bpftool prog run gave no duration ($out)"
	proof_grew "$v: the return value ($want: XDP_REDIRECT, TC_ACT_REDIRECT)" 0 "${ret:-x}" $want $want ||
		bench_fail "$v: not forwarded"
	if [[ $v == min_* ]]; then
		proof_grew "$v: min_fwd_cnt" "$m0" "$(min_cnt $mp)" "$REPEAT" "$REPEAT" || bench_fail "$v: not forwarded"
	else
		f1=$(stat_of "$PIN" $fst) c1=$(stat_of "$PIN" $cst)
		proof_grew "$v: $MAP_STATS ${hk}_forward" "$f0" "$f1" "$REPEAT" "$REPEAT" || bench_fail "$v: not forwarded"
		case $v in
		nostats/* | bare/* | tc/nostats/* | tc/bare/*) ;;
		*/cached) proof_grew "$v: $MAP_STATS ${hk}_fwd_route_cached (all but the first)" "$c0" "$c1" $((REPEAT - 1)) "$REPEAT" ;;
		*/lookup) proof_grew "$v: $MAP_STATS ${hk}_fwd_route_cached" "$c0" "$c1" 0 0 ;;
		esac || bench_fail "$v: not the route it names"
	fi
	echo "$v,$r,$x" >>"$csv"
}
for ((r = 1; r <= ROUNDS; r++)); do
	for hk in $HOOKS; do
		if [ $hk = xdp ]; then run min_forward "$minid" $r; else run min_tc_forward "$mintc" $r; fi
		for s in $STEPS; do
			up $s $hk || bench_fail "$s: cannot load, apply or admit ($hk)"
			if [ $hk = xdp ]; then
				rt 7
				run $s/cached "$prog" $r	# (the first packet looks the route up: one in REPEAT)
				rt 0
				run $s/lookup "$prog" $r
			else
				rt 7
				run tc/$s/cached "$prog" $r
				rt 0
				run tc/$s/lookup "$prog" $r
			fi
			down $s
		done
	done
done
# probereads took the other object: more probe reads than full's
if [[ " $STEPS " == *" probereads "* && " $STEPS " == *" full "* ]] &&
	toe-loader features -j | jq -e '.[] | select(.name == "kern_ctx") | .present' >/dev/null; then
	for hk in $HOOKS; do
		[ "${NREADS[probereads.$hk]}" -gt "${NREADS[full.$hk]}" ] ||
			bench_fail "probereads ($hk): ${NREADS[probereads.$hk]} probe reads, full ${NREADS[full.$hk]}: not opentoe.bpf.o"
		echo "# $hk: full (opentoe_kctx.bpf.o) ${NREADS[full.$hk]} probe reads, probereads (opentoe.bpf.o) ${NREADS[probereads.$hk]}"
	done
fi
bench_publish
python3 "$top/bench/report.py" "$RES" --only xdp_steps
python3 "$top/bench/report.py" "$RES" --only tc_steps
# each step's cost: what compiling it out saved, paired by round
echo "== each step: ns a frame saved by compiling it out (median of the rounds' differences; the rounds'); probereads: negative, what opentoe.bpf.o's probe reads cost over full's plain loads; base: what the working tree saves over BASE"
python3 - "$RES/xdp_steps.csv" "$RES/tc_steps.csv" <<'EOP'
import csv, statistics, sys
for f in sys.argv[1:]:
    rows = list(csv.DictReader(open(f)))
    by = {}
    for r in rows:
        by.setdefault(r["round"], {})[r["variant"]] = float(r["ns_per_packet"])
    for v in dict.fromkeys(r["variant"] for r in rows):
        if "/" not in v or "/full/" in v or v.startswith("full/"):
            continue
        full = "tc/full/" + v.split("/")[2] if v.startswith("tc/") else "full/" + v.split("/")[1]
        sign = -1 if v.split("/")[-2] == "base" else 1
        d = [sign * (x[full] - x[v]) for x in by.values() if v in x and full in x]
        if d:
            print("  %-20s %4.0f ns  (%s)" % (v, statistics.median(d), " ".join("%.0f" % x for x in d)))
EOP
