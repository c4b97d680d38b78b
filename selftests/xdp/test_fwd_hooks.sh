#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The forward path's hook per device, and safe by default.  A client, a
# router and a server whose veths keep the kernel's default offloads (no
# ethtool anywhere: TSO on, CHECKSUM_PARTIAL frames, no NAPI on the far
# ends).  toed runs on the router.
#  - toectl devices lists each interface's hook under the forward device.
#  - toe-loader load with no --hook (auto): the veths get tc, and load,
#    status say so and why; a tap device, whose driver runs XDP natively,
#    gets XDP, a bridge (XDP only in skb mode) tc; --hook xdp and --hook tc
#    force either way; features says what auto would give.
#  - tc: a named flow (64 KiB writes: GSO-sized skbs) arrives byte-exact
#    (sha256) on the fast path, redirected into the server's namespace
#    (redirect_peer), the router's kernel forwarding only its handshake;
#    IPv6 too; with the egress MTU lowered under the segments, the stack
#    takes what no longer fits (tc_fwd_mtu, GSO segments checked).
#  - xdp forced on the same veths: the flow still arrives byte-exact; XDP,
#    which cannot redirect into those veths, leaves it to the stack and
#    counts why (xdp_fwd_stack_only) instead of blackholing it.
#  - pod to pod: a second pod namespace behind another veth of the router,
#    pod to pod through the tc fast path into the destination pod; pod to
#    outside: a namespace behind a bridge of the router (tc on the bridge,
#    no native XDP there), out by bpf_redirect, back by redirect_peer; on
#    both, a FORWARD DROP added under a running flow stops it within
#    100 ms (toed re-judges the flows: the stack drops them).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 37
need_cmd iptables
router_test fwdh || exit 1
fwd_conf "$work/fwd.conf" || exit 1
RUN=$work/run
st() { stat_of "$PIN" "$1"; }
status() { nsx r toe-loader status -j --pin-dir "$PIN"; }
hook_of() { # IFACE -> "hook why" from status -j's hooks
	status | jq -r --arg i "$1" '.hooks[] | select(.iface == $i) | "\(.hook) \(.why)"'
}
nsx r ip tuntap add dev tp0 mode tap && nsx r ip link set tp0 up &&
	nsx r ip link add dm0 type bridge && nsx r ip link set dm0 up ||
	{ fail "a tap and a bridge on the router"; finish; }

# ---- auto: veths tc, tap XDP
feat_says() { nsx r toe-loader features | grep -q '^r0 .*tc (veth)'; }
check "features: what --hook auto gives r0 (tc, veth)" feat_says
# a bridge with another's XDP program on it in skb mode: its attach mode
# says it (no probe), and skb mode is not native
nsx r ip link add dm1 type bridge && nsx r ip link set dm1 up &&
	nsx r xdp-filter load --mode skb dm1 || fail "xdp-filter in skb mode on a bridge"
defer "nsx r ip link del dm1"
out=$(nsx r toe-loader load --dev dm1 --cgroup "$CG" --pin-dir "$PIN-skb" 2>&1)
nsx r toe-loader unload --pin-dir "$PIN-skb" >/dev/null; rm -rf "$PIN-skb"
nsx r xdp-filter unload dm1
check "a bridge already running an XDP program in skb mode: tc (no_native_xdp): $out" \
	grep -q 'tc ingress on dm1 (no_native_xdp)' <<<"$out"
defer "nsx r toe-loader unload --pin-dir $PIN >/dev/null 2>&1; rm -rf $PIN"
out=$(nsx r toe-loader load --dev r0 --dev r1 --dev tp0 --dev dm0 --cgroup "$CG" --pin-dir "$PIN") ||
	{ fail "load (auto)"; finish; }
echo "# $out"
check "load with no --hook: the veths on tc ingress, the tap on XDP, each with why" \
	grep -q 'tc ingress on r0 (veth); tc ingress on r1 (veth); XDP on tp0 (native_xdp)' <<<"$out"
check "status -j: r0 tc (veth)" test "$(hook_of r0)" = "tc veth"
check "status -j: tp0 xdp (native_xdp)" test "$(hook_of tp0)" = "xdp native_xdp"
check "status -j: dm0, a bridge (XDP only in skb mode), tc (no_native_xdp)" test "$(hook_of dm0)" = "tc no_native_xdp"
peer_said() { nsx r toe-loader status --pin-dir "$PIN" | grep -q '^r1 .*tc .*redirect_peer.*tcpdump'; }
check "status: r1 delivers into its peer's namespace (redirect_peer: no transmit on r1)" peer_said
# status -j says the same, interface by interface (a veth's peer in
# another namespace: redirect_peer; the tap and the bridge: not)
peers() { status | jq -r '[.hooks[] | "\(.iface)=\(.redirect_peer)"] | sort | join(",")'; }
check "status -j: redirect_peer for the veths r0 and r1 only ($(peers))" test "$(peers)" = "dm0=false,r0=true,r1=true,tp0=false"
fwd_toed || { fail "toed starts"; cat "$work/toed.log"; finish; }
devhooks() { toectl --run-dir "$RUN" -j devices | jq -r '.[] | select(.device == "fwd") | [.hooks[] | "\(.iface)=\(.hook)"] | sort | join(",")'; }
check "toectl devices: the forward device's interfaces and their hooks ($(devhooks))" \
	test "$(devhooks)" = "dm0=tc,r0=tc,r1=tc,tp0=xdp"
fwd_server s 5201 || { fail "server"; finish; }
wait_for 5 nsx c ping -c1 -W1 $S4 >/dev/null
wait_for 5 nsx c ping -6 -c1 -W1 $S6 >/dev/null

# measure NAME ADDR BYTES: transfer; K kernel-forwarded, T tc-forwarded
# skbs, G their segments, P redirect_peer skbs
measure() {
	local k0 t0 g0 p0
	k0=$(ip_forwarded) t0=$(st $STAT_TC_FORWARD) g0=$(st $STAT_TC_FWD_SEGS) p0=$(st $STAT_TC_FWD_PEER)
	nsx_t 60 c python3 "$XFER" client --addr "$2" --port 5201 --bytes "$3" >"$work/$1.json"
	sleep 0.2
	K=$(($(ip_forwarded) - k0)) T=$(($(st $STAT_TC_FORWARD) - t0))
	G=$(($(st $STAT_TC_FWD_SEGS) - g0)) P=$(($(st $STAT_TC_FWD_PEER) - p0))
	echo "# $1: $(cat "$work/$1.json"); kernel $K, tc $T skbs ($G segments), peer $P"
}
# (the 6.1 guest, TCG: TOE_SLOW times less)
N=$((30000000 / ${TOE_SLOW:-1})) N2=$((10000000 / ${TOE_SLOW:-1}))
measure tc4 $S4 $N
check "tc, default offloads: $N bytes arrive byte-exact (sha256)" intact tc4
check "  tc forwarded them ($G segments >= $((N / 1500 / 2)))" test $G -ge $((N / 1500 / 2))
check "  as GSO skbs (more than one segment a skb: $T skbs)" test $((G / (T > 0 ? T : 1))) -ge 2
check "  into the peer's namespace (redirect_peer: $P)" test $P -ge $((T * 9 / 10)) -a $P -gt 0
check "  the kernel forwarded a handful ($K) " test $((K * 100)) -lt $G
measure tc6 $S6 $N
check "tc, IPv6: byte-exact" intact tc6
check "  tc forwarded it ($G segments)" test $G -ge $((N / 1500 / 2))

# The server's side's MTU lowered under the flow's segments: the stack
# takes the skbs whose segments no longer fit (tc_fwd_mtu) and sends the
# client ICMP fragmentation needed; with the smaller segments tc forwards
# again, and the data arrives byte-exact.
nsx r ip link set r1 mtu 1400
m0=$(st $STAT_TC_FWD_MTU)
measure mtu4 $S4 $N2
M=$(($(st $STAT_TC_FWD_MTU) - m0))
nsx r ip link set r1 mtu 1500
check "egress MTU 1400 under 1448-byte segments: byte-exact" intact mtu4
check "  the stack took what no longer fit ($M tc_fwd_mtu), tc the rest ($G segments)" \
	test $M -gt 0 -a $G -gt $((N2 / 10000))
# (a GSO skb whose segments do not fit must go to the stack too, not only
# a full-size frame: the client learns the path MTU only from the ICMP the
# stack sends for it)
pmtu=$(nsx c ip route get $S4 | grep -o 'mtu [0-9]*')
check "  the client learned the path MTU from the stack's ICMP ($pmtu)" test "$pmtu" = "mtu 1400"
nsx c ip route flush cache

# drop_stops NAME CLIENT ADDR SERVER IFACE: a flow from namespace
# CLIENT to ADDR:5201 on the fast path, then a FORWARD DROP for it on the
# router; LAT: ms from the command's return to the last 10 ms in which
# IFACE (in namespace SERVER: a packet socket, since a redirect_peer skips
# the device's statistics before 6.8) received more than a stray frame;
# RAN: bytes it received before the command
rx_runs() { awk 'NR == 1 { b = $2 } END { exit !($2 - b > 1000000) }' "$1"; }
drop_stops() {
	local name=$1 t0 t1 last cpid rxp rule="FORWARD -d $3 -p tcp --dport 5201 -j DROP"
	# (the flow and the sampler run until the measure is done, 60 s at
	# most: a loaded machine delays the command, it does not end them)
	nsx_bg "$2" python3 "$XFER" client --addr "$3" --port 5201 --seconds 60 >"$work/$name.json"
	cpid=$NSX_PID
	nsx_bg "$4" python3 "$TOE_TOP/selftests/xdp/forge.py" rxtap "$5" 0.01 60 >"$work/$name.rx"
	rxp=$NSX_PID
	# the sampler sees the flow (python starts slowly in the 6.1 guest)
	sleep 0.7 && wait_for 10 rx_runs "$work/$name.rx"
	t0=$(date +%s.%N); nsx r iptables -I $rule; t1=$(date +%s.%N)
	sleep 1.3
	kill "$rxp" 2>/dev/null
	nsx r iptables -D $rule
	kill "$cpid" 2>/dev/null # (the stalled flow: not on the fast path again)
	last=$(awk -v t0="$t0" 'NR > 1 && $2 - p > 2000 && $1 >= t0 { l = $1 } { p = $2 } END { printf "%.4f", l ? l : t0 }' "$work/$name.rx")
	LAT=$(awk -v l="$last" -v t1="$t1" 'BEGIN { printf "%d", (l - t1) * 1000 }')
	RAN=$(awk -v t0="$t0" '$1 < t0 { b = $2 } END { print b + 0 }' "$work/$name.rx")
}
defer "nsx r iptables -F FORWARD"

# ---- pod to pod: pod p2 behind r2, a second veth of the router
P4=10.211.3.1 R4c=10.211.3.254
ns_add p && veth_pair r r2 p p2 && nsx p ip addr add $P4/24 dev p2 && nsx p ip link set p2 up &&
	nsx r ip addr add $R4c/24 dev r2 && nsx r ip link set r2 up && nsx p ip route add default via $R4c ||
	{ fail "pod p"; finish; }
out=$(nsx r toe-loader load --dev r0 --dev r1 --dev r2 --cgroup "$CG" --pin-dir "$PIN")
echo "# $out"
check "load again with a pod's veth: r0, r1 keep tc (veth, kept), r2 gets tc (veth)" \
	grep -q 'tc ingress on r0 (veth, kept); tc ingress on r1 (veth, kept); tc ingress on r2 (veth)' <<<"$out"
check "  status -j still says why r0 has tc (veth), not only that it was kept" test "$(hook_of r0)" = "tc veth"
fwd_server p 5201 "$work/pod.out"
wait_for 5 nsx s ping -c1 -W1 $P4 >/dev/null
k0=$(ip_forwarded) p0=$(st $STAT_TC_FWD_PEER)
nsx_t 60 s python3 "$XFER" client --addr $P4 --port 5201 --bytes $N >"$work/pod.json"
sleep 0.2
K=$(($(ip_forwarded) - k0)) P=$(($(st $STAT_TC_FWD_PEER) - p0))
check "pod to pod (s -> p through r): byte-exact ($(jq .bytes "$work/pod.json") bytes)" \
	intact pod "$work/pod.out"
check "  by the tc fast path into the pod's namespace ($P peer redirects, kernel $K)" \
	test $P -gt 100 -a $((K * 100)) -lt $((P * 10))
drop_stops poddrop s $P4 p p2
check "a FORWARD DROP under a running pod-to-pod flow: no byte into the pod after $LAT ms (< 100)" test "$LAT" -lt 100
check "  the flow ran into the pod before ($RAN bytes)" test "$RAN" -gt 1000000

# ---- pod to outside: the outside (namespace o) behind a bridge of the
# router (br0, with the veth rb3 to o as its port): tc on br0 (auto: no
# native XDP there), the pod's packets go out by bpf_redirect to br0
O4=10.211.4.1 R4d=10.211.4.254
ns_add o && veth_pair r rb3 o o3 && nsx r ip link add br0 type bridge && nsx r ip link set rb3 master br0 &&
	nsx r ip link set rb3 up && nsx r ip link set br0 up && nsx r ip addr add $R4d/24 dev br0 &&
	nsx o ip addr add $O4/24 dev o3 && nsx o ip link set o3 up && nsx o ip route add default via $R4d ||
	{ fail "outside o"; finish; }
nsx r toe-loader load --dev r0 --dev r1 --dev r2 --dev br0 --cgroup "$CG" --pin-dir "$PIN" >/dev/null ||
	fail "load with br0"
fwd_server o 5201 "$work/out.out"
wait_for 5 nsx p ping -c1 -W1 $O4 >/dev/null
t0=$(st $STAT_TC_FORWARD) p0=$(st $STAT_TC_FWD_PEER) n0=$(st $STAT_TC_FWD_NEIGH)
nsx_t 60 p python3 "$XFER" client --addr $O4 --port 5201 --bytes $N >"$work/outside.json"
T=$(($(st $STAT_TC_FORWARD) - t0)) P=$(($(st $STAT_TC_FWD_PEER) - p0)) NB=$(($(st $STAT_TC_FWD_NEIGH) - n0))
check "pod to outside (p -> o through r's bridge): byte-exact ($(jq .bytes "$work/outside.json") bytes)" \
	intact outside "$work/out.out"
check "  by the tc fast path, out by bpf_redirect to br0 ($((T - P - NB)) skbs) and back into the pod by redirect_peer ($P)" \
	test $((T - P - NB)) -gt 100 -a $P -gt 10
drop_stops outdrop p $O4 o o3
check "a FORWARD DROP under a running pod-to-outside flow: no byte outside after $LAT ms (< 100)" test "$LAT" -lt 100
check "  the flow ran outside before ($RAN bytes)" test "$RAN" -gt 1000000

# ---- TOE_LOADER_NO_PEER=1 (bench-forward's tc_nopeer): the same devices
# loaded again in place; tc sends through r1's own transmit (bpf_redirect)
nsx r env TOE_LOADER_NO_PEER=1 toe-loader load --dev r0 --dev r1 --dev r2 --dev br0 --cgroup "$CG" \
	--pin-dir "$PIN" >/dev/null || fail "load again with TOE_LOADER_NO_PEER=1"
nopeer_said() { ! nsx r toe-loader status --pin-dir "$PIN" | grep -q '^r1 .*redirect_peer'; }
check "TOE_LOADER_NO_PEER=1: status no longer says r1 delivers into its peer" nopeer_said
check "  nor does status -j for any interface ($(peers))" test "$(peers)" = "br0=false,dm0=false,r0=false,r1=false,r2=false,tp0=false"
measure np4 $S4 $N2
check "  a flow through r1: byte-exact, by tc ($T skbs) through r1's transmit, none into the peer ($P)" \
	eval 'intact np4 && test $T -gt 10 -a $P = 0'

# ---- xdp forced on the same veths (default offloads: no NAPI on the peers)
kill "$(cat "$RUN/toed.pid" 2>/dev/null)" 2>/dev/null
nsx r toe-loader unload --pin-dir "$PIN" >/dev/null
check "--hook xdp: forced on the veths" nsx r toe-loader load --hook xdp --dev r0 --dev r1 --cgroup "$CG" --pin-dir "$PIN"
check "  status -j says so (forced)" test "$(hook_of r0)" = "xdp forced"
nsx r toed --apply "$work/fwd.conf" --pin-dir "$PIN" >/dev/null && fill_neigh "$PIN"
s0=$(st $STAT_XDP_FWD_STACK_ONLY) x0=$(st $STAT_XDP_FORWARD)
nsx_t 60 c python3 "$XFER" client --addr $S4 --port 5201 --bytes $N2 --connect-timeout 3 >"$work/xdp4.json"
S=$(($(st $STAT_XDP_FWD_STACK_ONLY) - s0)) X=$(($(st $STAT_XDP_FORWARD) - x0))
echo "# xdp4: $(cat "$work/xdp4.json"); stack_only $S, XDP forwarded $X"
check "xdp, default offloads: the flow arrives byte-exact (not blackholed)" intact xdp4
check "  XDP left it to the stack and counted why ($S xdp_fwd_stack_only, $X redirected)" \
	test $S -gt 0 -a $X = 0
nsx r toe-loader unload --pin-dir "$PIN" >/dev/null
nsx r toe-loader load --hook tc --dev tp0 --cgroup "$CG" --pin-dir "$PIN" >/dev/null
check "--hook tc: forced on the tap, a native XDP device (status: tc forced)" test "$(hook_of tp0)" = "tc forced"
finish
