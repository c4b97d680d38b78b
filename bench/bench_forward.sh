#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-forward: one TCP flow (iperf3) through a router namespace
# (client c, router r, server s: selftests/xdp/router.sh), forwarded by
#   kernel     the kernel, no rule
#   conntrack  the kernel with a stateful rule loaded
#              (iptables -A FORWARD -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT)
#   xdp        opentoe's XDP fast path ("steer forward", native mode), toed
#              running as deployed, each flow's route cached
#   tc         opentoe's tc fast path (toe-loader load --hook tc, the same
#              toed and policy), where this toe-loader has it: found in
#              `toe-loader features` / `load --help`; otherwise reported
#              "not available" and not run (TC_FORWARD=1 or 0 overrides)
#   xdp_lookup (only with VARIANTS=...) xdp with toed --no-route-cache
#   tc_nopeer  (only with VARIANTS=...) tc with TOE_LOADER_NO_PEER=1: the
#              fast path sends into the router's egress veth (bpf_redirect,
#              its transmit and the peer's backlog), not into the peer's
#              ingress (bpf_redirect_peer); proved by tc_fwd_peer not moving
#   xdp_min    the minimal XDP forwarder (bench/progs/min_xdp_fwd.bpf.c:
#              fib lookup, TTL, MACs, devmap redirect; issue 49) on the
#              router's two devices, native mode, its devmap filled with them
#   tc_min     the minimal tc forwarder (bench/progs/min_tc_fwd.bpf.c: fib
#              lookup, TTL, MACs, bpf_redirect_peer into the peer veth) on
#              the router's two devices, tc ingress (clsact)
#   (the minimal ones: in mtu, tso, udp_mtu, udp_gso and the small
#   packets, tc_min in pod too; not in the masq settings: they do no NAT;
#   each opentoe row is judged against its hook's minimal row of the same
#   round, forward_goals.py's x min)
# in two sender settings, one after the other in the same invocation:
#   mtu  the end hosts send MTU-sized frames (tso, gso and tx checksum off,
#        as a wire brings them)
#   tso  the end hosts keep the kernel's TSO/GSO (as containers send); xdp
#        needs the senders' tx checksum off (a redirected frame loses
#        CHECKSUM_PARTIAL), which turns their TSO off: the row says
#        so (sender_tso)
# GRO on at the router's veths in every variant.  Then pod to pod (a host
# namespace routing between two veth pairs into two pod namespaces, TSO
# on: kernel against tc; setting pod); then the router masquerading the
# client out of r1 (iptables -t nat POSTROUTING MASQUERADE: settings
# masq_mtu and masq_tso, the senders as in mtu and tso; kernel, xdp and
# tc, all with the masquerade, judged against that kernel row; masq6_mtu
# and masq6_tso the same over IPv6, ip6tables masquerading, NAT66); then one
# UDP flow (bench/udpflow: one thread sending as fast as it can, the
# server answering its hello so conntrack sees the reply; the router
# tracking UDP in every variant, which UDP's admission needs, so the
# kernel row is the kernel with conntrack): udp_mtu (1472-byte datagrams,
# the senders as in mtu), udp_gso (UDP GSO, 44 datagrams a send, the
# senders' offloads as in tso) and udp_masq (udp_mtu with the router
# masquerading the client); kernel, xdp and tc, judged against that
# kernel row; all in bench/results/forward.csv (its setting column); and
# 64-byte segments (bench/pktblast; bench/results/forward_pps.csv).
#
# The router's own work, on a CPU of its own: every veth's NAPI is
# threaded; the router's (r0, r1; the host's lxc1, lxc2) are pinned to the
# last CPU ($RCPU) and their RPS points there too (a TSO sender's frames
# skip the veth's NAPI and go through the backlog), the end hosts'
# (iperf3, their veths' NAPI threads and RPS) to CPU 0.  router_s_per_gb:
# the router's NAPI threads' run time (/proc/PID/schedstat) plus the NET_RX
# softirq time on $RCPU outside those threads (tracepoint irq:softirq_entry
# and _exit, with bpftrace), per GB; router_util: that over the run's wall
# time (>= 0.85: the router is the bottleneck).  cpu_s_per_gb: every CPU's
# busy time (/proc/stat), the whole machine's; rcpu_stat_s_per_gb: $RCPU's
# sys+irq+softirq from /proc/stat (the coarser measure, kept to compare).
# rx_s_per_gb: the end hosts' receive the same way (their NAPI threads, the
# NET_RX softirq on CPU 0): redirect_peer runs the server's receive in the
# router's, so router + rx is the figure that compares across variants.
# prog_ns_per_run, prog_s_per_gb: the fast-path program's own time
# (bpf_stats).  Limits: docs/benchmarks.md.
#
# DURATION seconds a run, ROUNDS rounds, the variants' order rotating each
# round; the goals (bench/forward_goals.py) per row against the kernel rows
# of the same round.  SETTINGS: which throughput settings run (default
# "mtu tso pod masq_mtu masq_tso masq6_mtu masq6_tso udp_mtu udp_gso
# udp_masq"); PPS_ROUNDS=0:
# no small packets.
# STEPS="nostats noacct nocap noct noframe" (issue 49's per-step cost;
# none by default): for each, a build of toe-loader with that step of the
# datapath compiled out (make BPF_EXTRA=-DTOE_BENCH_NO_STATS, ..._ACCOUNT,
# CAPTURE=0, ..._CT, ..._FRAME_CHECK; bpf/stats.h says what each leaves
# out), made into $TOE_BUILD/steps/NAME, run as variants xdp-NAME and
# tc-NAME (STEP_HOOKS) in the mtu and tso settings beside xdp and tc;
# forward_goals.py prints each step's cost, the paired difference in the
# program's own ns a run.  nostats keeps the xdp_forward and tc_forward
# counters the proof reads.
# BENCH_PERF=DIR: a `perf record -g` of the router's CPU during each run,
# DIR/SETTING-VARIANT-ROUND.data (perf's own cost lands in the figures:
# for profiles, not for the ratios).
# TOE_BUILD: the build whose toe-loader and toed run; BENCH_RESULTS: the
# results folder (make bench-forward CAPTURE=0: a build without toectl
# dump's capture, its results in bench/results-nocap).
# Proof (bench/lib.sh), every run: kernel and conntrack, the router's
# kernel forwarded at least 1,000 datagrams; xdp, xdp_lookup and tc, the
# fast path forwarded at least 1,000 packets (toe_stats' xdp_forward or
# tc_forward; the minimal programs: their own count, min_fwd_cnt), more
# than the router's kernel did, and (throughput runs)
# its program ran 1,000 times or more (bpf_stats); conntrack, its rule is
# in the router's FORWARD chain.  A run that fails it: no figure, exit 1.
# BENCH_SMOKE=1: one round of 1 s runs, setting mtu, one 1 s small-packet
# round without the minimal forwarders; no bpftrace (router_s_per_gb
# without the softirq time).
. "$(dirname "$0")/lib.sh"
. "$top/selftests/xdp/router.sh"
need_cmd iperf3 iptables ethtool jq taskset
if smoke; then
	ROUNDS=${ROUNDS:-1} DURATION=${DURATION:-1} SETTINGS=${SETTINGS:-mtu}
	PPS_ROUNDS=${PPS_ROUNDS:-1} PPS_SECS=${PPS_SECS:-1}
fi
ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-4}
SETTINGS=${SETTINGS:-mtu tso pod masq_mtu masq_tso masq6_mtu masq6_tso udp_mtu udp_gso udp_masq}
UDPFLOW=$TOE_BUILD/bench/udpflow
[ -x "$UDPFLOW" ] || UDPFLOW=$top/build/bench/udpflow
PPS_ROUNDS=${PPS_ROUNDS:-3} PPS_SECS=${PPS_SECS:-2}
BLAST=$TOE_BUILD/bench/pktblast
[ -x "$BLAST" ] || BLAST=$top/build/bench/pktblast
[ -x "$BLAST" ] || cannot_run "bench/pktblast not built (make)"
MINX=$TOE_BUILD/bench/min_xdp_fwd.bpf.o MINT=$TOE_BUILD/bench/min_tc_fwd.bpf.o
[ "$(nproc)" -ge 2 ] || cannot_run "needs 2 CPUs (the router's and the end hosts')"
RCPU=$(($(nproc) - 1))
GOALS="python3 $top/bench/forward_goals.py"

# tc_forward: does this toe-loader forward at tc?  Its features (a probe
# of bpf_redirect_peer or a tc forward entry) or load --help's --hook tc
# text naming forward without "no ... 'forward' there" (today's text).
tc_forward() {
	case ${TC_FORWARD:-auto} in 1) return 0 ;; 0) return 1 ;; esac
	toe-loader features -j 2>/dev/null | jq -e '[.[] | select((.name | test("redirect_peer|tc_forward|forward_tc")) and .present)] | length > 0' >/dev/null &&
		return 0
	local h
	h=$(toe-loader load --help 2>/dev/null | sed -n '/--hook/,/--xdp-mode/p')
	grep -qi forward <<<"$h" && ! grep -q "'forward' there" <<<"$h"
}
VARIANTS=${VARIANTS:-kernel conntrack xdp tc xdp_min tc_min}
TC_OK=0
if tc_forward; then TC_OK=1; else
	echo "tc: not available ($TOE_BUILD/toe-loader has no forward at tc): its rows are not run" >&2
fi
has() { [[ " $VARIANTS " == *" $1 "* ]] && { [ "$1" != tc ] || [ $TC_OK = 1 ]; }; }
# the minimal forwarders, loaded once (pinned in $MPIN), attached per run
MPIN=/sys/fs/bpf/min_fwd-$TOE_TEST_ID
if has xdp_min || has tc_min; then
	[ -r "$MINX" ] && [ -r "$MINT" ] || cannot_run "bench/progs' minimal forwarders not built (make)"
	defer "rm -rf $MPIN"
	mkdir -p "$MPIN/xdp" "$MPIN/tc" &&
		bpftool prog load "$MINX" "$MPIN/xdp/prog" type xdp pinmaps "$MPIN/xdp" &&
		bpftool prog load "$MINT" "$MPIN/tc/prog" type classifier pinmaps "$MPIN/tc" ||
		bench_fail "cannot load the minimal forwarders"
fi
# the per-step builds (STEPS, above)
STEPS=${STEPS:-} STEP_HOOKS=${STEP_HOOKS:-xdp tc}
declare -A STEP_MAKE=([nostats]=BPF_EXTRA=-DTOE_BENCH_NO_STATS [noacct]=BPF_EXTRA=-DTOE_BENCH_NO_ACCOUNT
	[nocap]=CAPTURE=0 [noct]=BPF_EXTRA=-DTOE_BENCH_NO_CT [noframe]=BPF_EXTRA=-DTOE_BENCH_NO_FRAME_CHECK)
STEP_VARS=
for s in $STEPS; do
	[ -n "${STEP_MAKE[$s]:-}" ] || bench_fail "STEPS: no step named $s (${!STEP_MAKE[*]})"
	make -s -C "$top" O="$TOE_BUILD/steps/$s" ${STEP_MAKE[$s]} -j"$(nproc)" "$TOE_BUILD/steps/$s/toe-loader" >/dev/null ||
		bench_fail "STEPS: cannot build $s"
	for h in $STEP_HOOKS; do
		[ $h = tc ] && [ $TC_OK = 0 ] && continue
		STEP_VARS+=" $h-$s"
	done
done
# loader VARIANT: the toe-loader that loads it (a step's own build)
loader() { case $1 in *-*) echo "$TOE_BUILD/steps/${1#*-}/toe-loader" ;; *) echo toe-loader ;; esac; }
min_pin() { case $1 in xdp_min) echo "$MPIN/xdp" ;; tc_min) echo "$MPIN/tc" ;; esac; }

router_test bfwd || exit 1
pod_topology || exit 1
printf 'device fwd type software nconn 100 steer forward\nrule offload dev fwd rport 5201\nrule offload dev fwd rport 5202\nrule offload dev fwd rport 5301 proto udp\n' >"$work/fwd.conf"
chmod 600 "$work/fwd.conf"
# bpf_stats on while the bench runs (bench/lib.sh): the fast paths'
# run time and count, which the proof reads
bpf_stats_on || bench_fail "cannot turn bpf_stats on (the programs' run counts are the proof)"
hz=$(getconf CLK_TCK)

# The topology a run uses: router namespace, its two devices, the client
# and server namespaces and devices, the server's address.
topo() {
	case $1 in
	router) RNS=r RDEVS="r0 r1" CNS=c CDEV=c0 SNS=s SDEV=s1 SADDR=$S4 ;;
	pod) RNS=h RDEVS="lxc1 lxc2" CNS=p1 CDEV=e1 SNS=p2 SDEV=e2 SADDR=$P2_4 ;;
	esac
	PIN=$TOE_PIN_DIR-$RNS
}

# place: GRO on at every veth, threaded NAPI, the router's threads and RPS
# on $RCPU, the end hosts' on CPU 0 (again before each run: attaching XDP
# may make a veth's NAPI anew).
napi_pids() { ps -eo pid=,comm= | awk -v d="napi/$1-" 'index($2, d) == 1 { print $1 }'; }
place() {
	local x p n
	for x in "$CNS $CDEV 0" "$RNS ${RDEVS% *} $RCPU" "$RNS ${RDEVS#* } $RCPU" "$SNS $SDEV 0"; do
		set -- $x
		nsx $1 ethtool -K $2 gro on >/dev/null 2>&1
		ip netns exec "$(ns_name $1)" sh -c "echo 1 >/sys/class/net/$2/threaded; echo $(printf %x $((1 << $3))) >/sys/class/net/$2/queues/rx-0/rps_cpus" ||
			return 1
		n=0
		for p in $(napi_pids $2); do taskset -pc $3 $p >/dev/null && n=$((n + 1)); done
		[ $n = 1 ] || echo "place: $n NAPI threads named napi/$2-*" >&2
	done
}
# endpoints SETTING VARIANT: the end hosts' offloads (pod: as tso;
# masq_mtu, masq_tso: as mtu, tso).
endpoints() {
	local t=off x=off s=${1#masq_}
	s=${s#masq6_}
	s=${s#udp_}
	case $s in gso) s=tso ;; masq) s=mtu ;; esac
	[ $s != mtu ] && t=on x=on
	[ $s != mtu ] && [[ $2 == xdp* ]] && x=off	# see the header
	nsx $CNS ethtool -K $CDEV tx $x tso $t gso $t >/dev/null 2>&1
	nsx $SNS ethtool -K $SDEV tx $x tso $t gso $t >/dev/null 2>&1
	return 0
}

# hook_args VARIANT: toe-loader's hook options (a toe-loader that picks the
# hook per device, tc on a veth, has XDP redirect into veths only with
# --xdp-veth-tx: the end hosts are set up for it, as endpoints does).
XDP_ARGS="--hook xdp"
toe-loader load --help 2>/dev/null | grep -q -- --xdp-veth-tx && XDP_ARGS="--hook xdp --xdp-veth-tx"
hook_args() { case $1 in tc | tc_nopeer | tc-*) echo --hook tc ;; xdp*) echo "$XDP_ARGS" ;; esac; }
ifidx() { nsx $RNS ip -j link show "$1" | jq '.[0].ifindex'; }
on() {
	local d i
	case $1 in
	xdp_min)
		for d in $RDEVS; do
			i=$(ifidx $d)
			nsx $RNS bpftool map update pinned "$MPIN/xdp/min_tx" key $i 0 0 0 value $i 0 0 0 &&
				nsx $RNS bpftool net attach xdpdrv pinned "$MPIN/xdp/prog" dev $d || return 1
		done
		nsx $CNS ping -c1 -W1 $SADDR >/dev/null ;;
	tc_min)
		for d in $RDEVS; do
			i=$(ifidx $d)
			# a veth whose peer is another namespace's: bpf_redirect_peer
			bpftool map update pinned "$MPIN/tc/min_peer" key $i 0 0 0 value 1 0 0 0 &&
				nsx $RNS tc qdisc add dev $d clsact &&
				nsx $RNS tc filter add dev $d ingress bpf da object-pinned "$MPIN/tc/prog" || return 1
		done
		nsx $CNS ping -c1 -W1 $SADDR >/dev/null ;;
	xdp | xdp_lookup | tc | tc_nopeer | xdp-* | tc-*)
		nsx $RNS env $([ $1 = tc_nopeer ] && echo TOE_LOADER_NO_PEER=1) \
			"$(loader $1)" load $(hook_args $1) --dev ${RDEVS% *} --dev ${RDEVS#* } \
			--cgroup "$CG" --pin-dir "$PIN" >/dev/null || return 1
		nsx_bg $RNS toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$work/run-$RNS" \
			$([ "$1" = xdp_lookup ] && echo --no-route-cache) >/dev/null 2>&1
		TOED=$NSX_PID
		wait_for 10 test -S "$work/run-$RNS/toed.sock" || return 1
		if [ $RNS = r ]; then fill_neigh "$PIN"; else nsx $CNS ping -c1 -W1 $SADDR >/dev/null; fi ;;
	conntrack)
		nsx $RNS iptables -A FORWARD -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT ;;
	esac
}
off() {
	local d
	case $1 in
	xdp_min) for d in $RDEVS; do nsx $RNS bpftool net detach xdpdrv dev $d; done ;;
	tc_min) for d in $RDEVS; do nsx $RNS tc qdisc del dev $d clsact; done ;;
	xdp | xdp_lookup | tc | tc_nopeer | xdp-* | tc-*)
		kill "$TOED" && wait "$TOED" 2>/dev/null
		nsx $RNS toe-loader unload --pin-dir "$PIN" >/dev/null ;;
	conntrack) nsx $RNS iptables -D FORWARD -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT ;;
	esac
}
defer 'for d in $TOE_PIN_DIR-r $TOE_PIN_DIR-h; do [ -d $d ] && toe-loader unload --pin-dir $d >/dev/null 2>&1; rm -rf $d; done'
# (a run that failed half-way: the minimal programs off the router's devices)
defer 'for x in "r r0" "r r1" "h lxc1" "h lxc2"; do set -- $x; nsx $1 bpftool net detach xdpdrv dev $2 2>/dev/null; nsx $1 tc qdisc del dev $2 clsact 2>/dev/null; done; true'

# prog_stats VARIANT -> "run_time_ns run_cnt" of opentoe's fast-path
# programs (bpf_stats; each program once).
prog_stats() {
	local ids id t=0 n=0 a b
	case $1 in
	xdp_min | tc_min) ids=$(bpftool -j prog show pinned "$(min_pin $1)/prog" | jq .id) ;;
	xdp*) ids=$(dp_progs $RNS xdp) ;;
	tc*) ids=$(dp_progs $RNS tc) ;;
	*) echo "0 0"; return ;;
	esac
	for id in $ids; do
		read -r a b < <(bpftool -j prog show id "$id" | jq -r '"\(.run_time_ns // 0) \(.run_cnt // 0)"')
		t=$((t + a)) n=$((n + b))
	done
	echo "$t $n"
}
# peer_count VARIANT: toe_stats tc_fwd_peer (0 for the others; tc_min
# runs without opentoe, so without its toe_stats)
peer_count() { case $1 in tc_min) echo 0 ;; tc*) stat_of "$PIN" $STAT_TC_FWD_PEER ;; *) echo 0 ;; esac; }
fast_count() {
	case $1 in
	xdp_min | tc_min) bpftool -j map lookup pinned "$(min_pin $1)/min_fwd_cnt" key 0 0 0 0 | jq '[.formatted.values[].value] | add' ;;
	xdp*) stat_of "$PIN" $STAT_XDP_FORWARD ;;
	tc*) if [ -n "${STAT_TC_FORWARD:-}" ]; then stat_of "$PIN" $STAT_TC_FORWARD; else echo 0; fi ;;
	*) echo 0 ;;
	esac
}
fwded() {	# datagrams the router's kernel forwarded (IPv4 + IPv6)
	nsx $RNS awk '/^Ip: [0-9]/ { v4 = $7 } END { print v4 }' /proc/net/snmp |
		{ read -r v4; echo $((v4 + $(nsx $RNS awk '$1 == "Ip6OutForwDatagrams" { print $2 }' /proc/net/snmp6))); }
}
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
rbusy() { awk -v c=cpu$RCPU '$1 == c { print $4 + $6 + $7; exit }' /proc/stat; }

# The NET_RX softirq time on $RCPU outside the NAPI threads (whose own
# time is in their schedstat), counted by bpftrace in a mount namespace of
# its own (tracefs mounted there only); empty: not counted.
BT=$work/bt.out
if smoke; then BT=; else
unshare -m --propagation private sh -c 'mount -t tracefs nodev /sys/kernel/tracing && exec bpftrace -B line -e "$0"' "
tracepoint:irq:softirq_entry /args->vec == 3 && strncmp(comm, \"napi/\", 5) != 0/ { @t0[cpu] = nsecs; }
tracepoint:irq:softirq_exit /args->vec == 3 && @t0[cpu] != 0/ { @ns[cpu == $RCPU] += nsecs - @t0[cpu]; @t0[cpu] = 0; }
interval:ms:100 { printf(\"T %lld %lld\\n\", @ns[1], @ns[0]); }" >"$BT" 2>&1 &
BT_PID=$!
defer "kill $BT_PID"
wait_for 30 grep -qs '^T ' "$BT" || { echo "bpftrace: $(head -c 300 "$BT"); router_s_per_gb without the softirq time" >&2; BT=; }
fi
# softirq_ns FIELD: 2, the router's CPU; 3, CPU 0 (the end hosts').
softirq_ns() { [ -n "$BT" ] && sleep 0.25 && awk -v f=$1 '/^T / { v = $f } END { printf "%.0f\n", v }' "$BT" || echo 0; }
threads_ns() {	# DEV...: their NAPI threads' run time
	local d p s=0
	for d; do
		for p in $(napi_pids $d); do s=$((s + $(cut -d' ' -f1 /proc/$p/schedstat 2>/dev/null || echo 0))); done
	done
	echo $s
}
router_ns() { echo $(($(threads_ns $RDEVS) + $(softirq_ns 2))); }
# rx_ns: the end hosts' receive (their NAPI threads, the NET_RX softirq
# on CPU 0): with redirect_peer the server's receive runs in the router's
# instead, so router + rx is what compares across variants.
rx_ns() { echo $(($(threads_ns $CDEV $SDEV) + $(softirq_ns 3))); }

HDR=setting,variant,round,gbit_s,cpu_s_per_gb,router_s_per_gb,router_util,rcpu_stat_s_per_gb,sender_tso,kernel_forwarded,fast_forwarded,prog_ns_per_run,prog_s_per_gb,rx_s_per_gb
# tput CSV SETTING VARIANT ROUND: one iperf3 run, its row into CSV.
tput() {
	local csv=$1 set=$2 v=$3 r=$4 pp p0 p k0 x0 rt0 rc0 rt1 rc1 b0 r0 s0 b1 r1 s1 e0 e1 k x tso
	endpoints $2 $v
	on $v || { echo "cannot set up $v" >&2; exit 1; }
	place || { echo "cannot place the NAPI threads" >&2; exit 1; }
	tso=$(nsx $CNS ethtool -k $CDEV | awk '$1 == "tcp-segmentation-offload:" { print $2 }')
	k0=$(fwded) x0=$(fast_count $v) p0=$(peer_count $v)
	read -r rt0 rc0 < <(prog_stats $v)
	b0=$(busy) r0=$(router_ns) e0=$(rx_ns) s0=$(rbusy)
	pp=
	if [ -n "${BENCH_PERF:-}" ]; then
		perf record -q -C $RCPU -g -o "$BENCH_PERF/$set-$v-$r.data" -- sleep "$DURATION" >/dev/null 2>&1 &
		pp=$!
	fi
	case $set in
	udp_*) udp_load $set || { echo "$set $v: udpflow failed" >&2; exit 1; } ;;
	masq6_*) nsx $CNS taskset -c 0 iperf3 -c $S6 -p 5201 -t "$DURATION" -J >"$work/out.json" ;;
	*) nsx $CNS taskset -c 0 iperf3 -c $SADDR -p 5201 -t "$DURATION" -J >"$work/out.json" ;;
	esac
	[ -z "$pp" ] || wait "$pp"
	r1=$(router_ns) e1=$(rx_ns) b1=$(busy) s1=$(rbusy)
	k=$(($(fwded) - k0)) x=$(($(fast_count $v) - x0)) p=$(($(peer_count $v) - p0))
	read -r rt1 rc1 < <(prog_stats $v)
	local ct=0
	[ $v = conntrack ] && ct=$(nsx $RNS iptables -S FORWARD | grep -c -- '--ctstate RELATED,ESTABLISHED -j ACCEPT')
	off $v
	jq -e '.end.sum_received.bytes > 0' "$work/out.json" >/dev/null ||
		{ echo "$v: iperf3 failed: $(jq -c .error "$work/out.json")" >&2; exit 1; }
	prove_fwd "$set $v round $r" $v $k $x $((rc1 - rc0)) $ct
	# tc_nopeer: every skb by the veth's own transmit, none into the peer
	if [ $v = tc_nopeer ]; then
		proof_grew "$set $v round $r: tc_fwd_peer (none)" 0 $p 0 0 ||
			bench_fail "$set $v round $r: tc_nopeer sent into the peer's ingress"
	fi
	python3 -c '
import json, sys
a = sys.argv[1:]
j = json.load(open(a[0]))["end"]["sum_received"]
gb = j["bytes"] / 1e9
hz, busy, rns, rst, pt, pn = float(a[3]), float(a[4]), float(a[5]), float(a[6]), float(a[7]), float(a[8])
print("%s,%s,%s,%.3f,%.3f,%.4f,%.3f,%.4f,%s,%s,%s,%.1f,%.5f,%.4f" % (a[12], a[1], a[2], j["bits_per_second"] / 1e9,
      busy / hz / gb, rns / 1e9 / gb, rns / 1e9 / j["seconds"], rst / hz / gb, a[9], a[10], a[11], pt / pn if pn else 0,
      pt / 1e9 / gb, float(a[13]) / 1e9 / gb))
' "$work/out.json" $v $r $hz $((b1 - b0)) $((r1 - r0)) $((s1 - s0)) $((rt1 - rt0)) $((rc1 - rc0)) "$tso" $k $x $set $((e1 - e0)) >>"$csv"
	tail -n 1 "$csv"
}
# udp_load SETTING: one UDP flow for DURATION seconds (bench/udpflow),
# what the server received into $work/out.json in iperf3's shape
# (end.sum_received: bytes, bits_per_second, seconds).
udp_load() {
	local rp
	rm -f "$work/urecv.json"
	nsx $SNS taskset -c 0 "$UDPFLOW" recv -p 5301 -t "$DURATION" >"$work/urecv.json" 2>&1 &
	rp=$!
	wait_for 5 grep -q ready "$work/urecv.json" || return 1
	nsx $CNS taskset -c 0 "$UDPFLOW" send -a $SADDR -p 5301 -t "$DURATION" \
		$([ $1 = udp_gso ] && echo -g) >"$work/usend.json" || return 1
	wait $rp
	tail -n 1 "$work/urecv.json" | jq -e '{end: {sum_received: {bytes: .bytes, bits_per_second: (.gbit_s * 1e9), seconds: .seconds}}}' >"$work/out.json"
}
# prove_fwd WHAT VARIANT KERNEL_FORWARDED FAST_FORWARDED PROG_RUNS CT_RULES:
# the run took the path the variant names (the header's Proof); PROG_RUNS
# "-": not counted (the small packets).
prove_fwd() {
	local w=$1 v=$2 k=$3 x=$4 n=$5 ct=$6
	case $v in
	kernel | conntrack)
		proof_grew "$w: datagrams the router's kernel forwarded" 0 "$k" 1000 &&
			proof_grew "$w: packets the fast path forwarded" 0 "$x" 0 0 &&
			{ [ $v = kernel ] || proof_grew "$w: the conntrack rule in FORWARD" 0 "$ct" 1 1; } ;;
	*)
		proof_grew "$w: packets the fast path forwarded ($MAP_STATS)" 0 "$x" 1000 &&
			proof_grew "$w: fast path's packets over the kernel's ($k)" "$k" "$x" 1 &&
			{ [ "$n" = - ] || proof_grew "$w: the fast path's run count (bpf_stats)" 0 "$n" 1000; } ;;
	esac || bench_fail "$w: the traffic did not take the path the variant names"
}
# rounds CSV SETTING VARIANT...: ROUNDS rounds of the variants, rotating.
rounds() {
	local csv=$1 set=$2 r i
	shift 2
	local order=("$@")
	for ((r = 1; r <= ROUNDS; r++)); do
		for ((i = 0; i < ${#order[@]}; i++)); do
			tput "$csv" $set ${order[$(((i + r) % ${#order[@]}))]} $r
		done
	done
}
variants() { local v; for v; do has $v && echo $v; done; }

topo pod
nsx_bg p2 taskset -c 0 iperf3 -s -p 5201 >/dev/null 2>&1
topo router
nsx_bg s taskset -c 0 iperf3 -s -p 5201 >/dev/null 2>&1
sleep 0.5
# the CSVs are written into $BENCH_OUT, published into $RES (make
# bench-forward CAPTURE=0: bench/results-nocap) when every run is proved
res=$BENCH_OUT
echo "$HDR" >"$res/forward.csv"
run_set() { [[ " $SETTINGS " == *" $1 "* ]]; }
if run_set mtu; then
	echo "== MTU frames from the senders (setting mtu)"
	rounds "$res/forward.csv" mtu $(variants kernel xdp_lookup conntrack xdp tc tc_nopeer xdp_min tc_min) $STEP_VARS
fi
if run_set tso; then
	echo "== TSO/GSO at the senders (setting tso)"
	rounds "$res/forward.csv" tso $(variants kernel xdp_lookup conntrack xdp tc tc_nopeer xdp_min tc_min) $STEP_VARS
fi
if run_set pod; then
	topo pod
	echo "== pod to pod through a host, TSO/GSO at the pods (setting pod)"
	rounds "$res/forward.csv" pod kernel $(variants tc tc_min)
	topo router
fi
# NAT: the router masquerades the client out of r1 in every variant of
# these settings (the kernel's row: the kernel with the masquerade);
# masq6_*: NAT66, the same with IPv6 (ip6tables)
# masq_rounds IPTABLES PREFIX WHAT: the settings PREFIX_mtu and PREFIX_tso
# asked for, under IPTABLES' masquerade
masq_rounds() {
	local ipt=$1 pre=$2 what=$3 s
	run_set ${pre}_mtu || run_set ${pre}_tso || return 0
	nsx r $ipt -t nat -A POSTROUTING -o r1 -j MASQUERADE || exit 1
	defer "nsx r $ipt -t nat -F"
	for s in ${pre}_mtu ${pre}_tso; do
		run_set $s || continue
		echo "== $what, ${s#"${pre}"_} senders (setting $s)"
		rounds "$res/forward.csv" $s $(variants kernel xdp tc)
	done
	nsx r $ipt -t nat -F
}
masq_rounds iptables masq masquerade
masq_rounds ip6tables masq6 "IPv6 masquerade (NAT66)"
# UDP: the router tracks UDP in every variant (a UDP flow is admitted only
# once conntrack has seen its reply); the kernel row is the kernel with it
if run_set udp_mtu || run_set udp_gso || run_set udp_masq; then
	nsx r iptables -A FORWARD -p udp -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT || exit 1
	defer "nsx r iptables -D FORWARD -p udp -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT 2>/dev/null"
	for s in udp_mtu udp_gso udp_masq; do
		run_set $s || continue
		echo "== one UDP flow, setting $s"
		[ $s = udp_masq ] && { nsx r iptables -t nat -A POSTROUTING -o r1 -j MASQUERADE || exit 1; }
		rounds "$res/forward.csv" $s $(variants kernel xdp tc $([ $s = udp_masq ] || echo xdp_min tc_min))
		[ $s = udp_masq ] && nsx r iptables -t nat -F
	done
fi
echo "== bench/results/forward.csv: medians; x kernel, cpu x (router CPU per GB / conntrack's) and x conntrack: medians of the per-round ratios"
$GOALS tput "$res/forward.csv"
[ $TC_OK = 1 ] || echo "tc: not available in $TOE_BUILD (no forward at tc): no tc rows"

# ---- small packets: frames per second through the router
# bench/pktblast (pinned to CPU 0) sends 64-byte TCP segments of an open
# connection (client -> server port 5202, which the fast path knows) as
# fast as one thread can; the frames per second the server's interface
# received (the segments carry a wrong TCP checksum, so the server drops
# them without an answer), and the router's time per frame.  The server
# end of port 5202 accepts, echoes one message and holds the connection;
# the client end has its 1,000 bytes echoed (the stack forwards the
# handshake, which admits the flow to the fast path) and holds it.
nsx_bg s python3 -c '
import socket, threading
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("0.0.0.0", 5202)); l.listen(16)
def serve(c):
    c.sendall(c.recv(4096))
    while c.recv(65536): pass
while True:
    threading.Thread(target=serve, args=(l.accept()[0],), daemon=True).start()
' >/dev/null 2>&1
wait_for 5 bash -c "nsenter --net=/run/netns/$(ns_name s) ss -Hltn 'sport = :5202' | grep -q ." ||
	{ echo "pps: server does not listen" >&2; exit 1; }
cmac=$(nsx c ip -j link show c0 | jq -r '.[0].address') rmac=$(nsx r ip -j link show r0 | jq -r '.[0].address')
pcsv=$res/forward_pps.csv
echo "variant,round,sent_pps,delivered_pps,kernel_forwarded,fast_forwarded,router_ns_per_frame,router_util" >"$pcsv"
rx_s1() { nsx s ip -s -j link show s1 | jq '.[0].stats64.rx.packets'; }
pps() {	# VARIANT ROUND: one pktblast run, its row into $pcsv
	local v=$1 r=$2 hold k0 x0 s0 n0 out k x rx n
	endpoints mtu $v
	on $v || { echo "cannot set up $v" >&2; exit 1; }
	place || exit 1
	rm -f "$work/hold"
	nsx c taskset -c 0 python3 -c '
import socket, sys, time
c = socket.create_connection(("'$S4'", 5202)); c.sendall(b"x" * 1000)
got = 0
while got < 1000: got += len(c.recv(4096))
open(sys.argv[1], "w").write("%d\n" % c.getsockname()[1]); time.sleep(600)
' "$work/hold" &
	hold=$!
	wait_for 5 test -s "$work/hold" || { echo "pps: no connection through the router ($v)" >&2; exit 1; }
	k0=$(fwded) x0=$(fast_count $v) s0=$(rx_s1) n0=$(router_ns)
	out=$(nsx c taskset -c 0 "$BLAST" -i c0 -s "$cmac" -d "$rmac" -S $C4 -D $S4 -p "$(cat "$work/hold")" -P 5202 -t "$PPS_SECS") ||
		{ echo "pps: pktblast failed ($v)" >&2; exit 1; }
	n=$(($(router_ns) - n0))
	k=$(($(fwded) - k0)) x=$(($(fast_count $v) - x0)) rx=$(($(rx_s1) - s0))
	kill $hold; wait $hold 2>/dev/null
	local ct=0
	[ $v = conntrack ] && ct=$(nsx $RNS iptables -S FORWARD | grep -c -- '--ctstate RELATED,ESTABLISHED -j ACCEPT')
	off $v
	prove_fwd "pps $v round $r" $v $k $x - $ct
	jq -r --arg v $v --argjson r $r --argjson k $k --argjson x $x --argjson rx $rx --argjson n $n \
		'"\($v),\($r),\(.pps),\(($rx / .secs) | floor),\($k),\($x),\(if $rx > 0 then ($n / $rx | floor) else 0 end),\($n / 1e9 / .secs * 1000 | round / 1000)"' <<<"$out" >>"$pcsv"
	tail -n 1 "$pcsv"
}
porder=($(variants kernel conntrack xdp tc $(smoke || echo xdp_min tc_min)))	# (smoke: seconds)
for ((r = 1; r <= PPS_ROUNDS; r++)); do
	for ((i = 0; i < ${#porder[@]}; i++)); do
		pps ${porder[$(((i + r) % ${#porder[@]}))]} $r
	done
done
echo "== forward_pps: delivered frames per second; the router's time per frame"
$GOALS pps "$pcsv"
bench_publish
