#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The forward path's admission (issue 16): no packet opens a fast path the
# firewall refused.  Client, router and server namespaces, opentoe's XDP
# and toe_egress on both router interfaces, toed running on the router.
#  - Forged handshakes (scapy), against iptables -A FORWARD -p tcp --dport
#    PORT -j DROP: from the client alone (SYN, SYN-ACK in the server's name,
#    ACK, data), from both sides (the SYN-ACK really sent from the server's
#    side), from the server's side alone (toward a port on the client): no
#    payload byte reaches the other end, nothing enters toe_fwd.  The same
#    with conntrack and a --ctstate INVALID DROP rule.
#  - A running fast-path flow, then iptables -I FORWARD ... -j DROP for it:
#    the server's received bytes (sampled every 10 ms) stop within 100 ms
#    of the command; the rule removed, a new connection is admitted again.
#  - An RST (and an RST-ACK) forged in the client's name, out of its
#    window, sent from the server's side of the router to a running
#    fast-path flow: the fast path judges it on the wrong interface and
#    leaves it to the stack; the flow stays established in toe_fwd, its
#    fast-path counters growing, and arrives intact.
#  - 100,000 spoofed SYNs policy names while a fast-path flow runs: the
#    flow stays in the fast path (its toe_fwd counters grow, the kernel
#    forwards under 1 % of its packets), the SYNs never enter toe_fwd.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 30
need_cmd iptables
# Debian's python3-scapy is for Debian's python3, which another python3
# earlier in PATH may not be.
SPY=$(for p in python3 /usr/bin/python3; do $p -c 'import scapy.all' 2>/dev/null && { echo $p; break; }; done)
[ -n "$SPY" ] || cannot_run "python3-scapy missing (make deps)"
FORGE="$SPY $TOE_TOP/selftests/xdp/forge.py"
router_test fwdadm || exit 1
endpoints_for_native || exit 1
RUN=$work/run
fwd_conf "$work/fwd.conf" || exit 1
defer "nsx r toe-loader unload --pin-dir $PIN; rm -rf $PIN"
# A pin folder an older opentoe left: toe_fwd with its old 56-byte record.
mkdir -p "$PIN" && bpftool map create "$PIN/$MAP_FWD" type lru_hash key 40 value 56 entries 16 name $MAP_FWD ||
	{ fail "an old $MAP_FWD pin"; finish; }
err=$(nsx r toe-loader load --dev r0 --dev r1 --cgroup "$CG" --pin-dir "$PIN" 2>&1)
check "an older $MAP_FWD pin (56-byte record) is refused by name" grep -q "pinned map $PIN/$MAP_FWD is not this opentoe's" <<<"$err"
check "  and unload cleans the folder" nsx r toe-loader unload --pin-dir "$PIN"
check "  (gone)" test ! -e "$PIN"
nsx r toe-loader load --dev r0 --dev r1 --cgroup "$CG" --pin-dir "$PIN" $DP_HOOK_ARGS >/dev/null || { fail "load"; finish; }
if [ "$(fwd_proof)" = netfilter ]; then
	check "status shows toe_nf_fwd at netfilter FORWARD, IPv4 and IPv6" \
		test "$(nsx r toe-loader status -j --pin-dir "$PIN" | jq '[.programs[] | select(.name == "toe_nf_fwd" and .xdp_mode == "netfilter")] | length')" = 2
else
	TCM=$(tc_mode) # tcx, or clsact on a kernel without tcx
	check "status shows toe_egress on $TCM egress of both router interfaces" \
		test "$(nsx r toe-loader status -j --pin-dir "$PIN" | jq --arg m "$TCM-egress" '[.programs[] | select(.name == "toe_egress" and .xdp_mode == $m)] | length')" = 2
fi
fill_neigh "$PIN" || { fail "neighbours"; finish; }
nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$RUN" --log-level debug >"$work/toed.log" 2>&1
wait_for 10 test -S "$RUN/toed.sock" || { fail "toed starts"; cat "$work/toed.log"; finish; }
defer "nsx r iptables -F FORWARD"
R0MAC=$(nsx r ip -j link show r0 | jq -r '.[0].address') R1MAC=$(nsx r ip -j link show r1 | jq -r '.[0].address')
st() { stat_of "$PIN" "$1"; }
gen() { bpftool -j map lookup pinned "$PIN/$MAP_FWD_GEN" key 0 0 0 0 | jq '.formatted.value.gen'; }
n_fwd() { bpftool -j map dump pinned "$PIN/$MAP_FWD" | jq length; }
fwd_entry() { # PORT CPORT -> "state packets" of the toe_fwd entry of that flow
	bpftool -j map dump pinned "$PIN/$MAP_FWD" |
		jq -r --argjson p "$1" --argjson c "${2:-0}" '[.[] | .formatted.key as $k |
			select(($k.lport == $p and $k.rport == $c) or ($k.rport == $p and $k.lport == $c)) |
			.formatted.value] | select(length == 1) | .[0] | "\(.state) \(.dir_packets | add)"'
}
# An earlier flow's entry of the same server port (a killed flow's readmit,
# an ended flow's) may still be in toe_fwd: each check follows its own flow
# by its client port, which xfer.py writes to NAME.lport once connected.
# flow_est NAME PORT: the flow NAME is established in toe_fwd
flow_est() {
	local c
	c=$(cat "$work/$1.lport" 2>/dev/null) && [ -n "$c" ] || return 1
	set -- $(fwd_entry "$2" "$c")
	test "${1:-0}" = 3
}

# ---- forged handshakes against a FORWARD DROP
g0=$(gen)
nsx r iptables -A FORWARD -p tcp --dport 5201 -j DROP
bumped() { test "$(gen)" -gt "$g0"; }
wait_for 10 bumped
check "toed saw the ruleset change ($MAP_FWD_GEN $g0 -> $(gen))" bumped
# One commit: one bump at once and one TOE_FWD_AGAIN_MS (50 ms) later, for
# a packet the old ruleset forwarded that was still on its way to egress.
sleep 0.5
check "  and bumped it a second time after it, two in all ($MAP_FWD_GEN $g0 -> $(gen))" \
	test "$(gen)" = $((g0 + 2))

# forged NAME SIDE_NS IFACE PORT SETUP...: capture payload bytes to PORT on
# IFACE in SIDE_NS (the other end) while SETUP's commands run, and 0.5 s
# after; in $work/NAME.
forged() {
	local name=$1 ns=$2 ifc=$3 port=$4 cpid; shift 4
	nsx $ns $FORGE count $ifc $port "$(slow 60)" "$work/$name.sent" >"$work/$name" &
	cpid=$!
	wait_for 10 test -e "$work/$name.sent.ready"
	"$@"
	touch "$work/$name.sent"
	wait $cpid
}
flows0=$(st $STAT_XDP_FWD_FLOWS)
round() { # TAG BASE_PORT: the three forgeries, client ports BASE.., the checks
	local tag=$1 b=$2
	forged ${tag}_client s s1 5201 nsx c $FORGE handshake c0 $R0MAC sakd $C4 $b $S4 5201 20000
	check "$tag: client alone (SYN, SYN-ACK in the server's name, ACK, 20 kB): no byte at the server ($(cat "$work/${tag}_client"))" \
		test "$(cat "$work/${tag}_client")" = 0
	forged ${tag}_both s s1 5201 bash -c "nsx() { nsenter --net=/run/netns/$TOE_TEST_ID-\$1 \"\${@:2}\"; }
		nsx c $FORGE handshake c0 $R0MAC s $C4 $((b + 1)) $S4 5201 &&
		nsx s $FORGE synack s1 $R1MAC $S4 5201 $C4 $((b + 1)) 1000 && sleep 0.1 &&
		nsx c $FORGE handshake c0 $R0MAC kd $C4 $((b + 1)) $S4 5201 20000"
	check "$tag: SYN-ACK really from the server's side: no byte at the server ($(cat "$work/${tag}_both"))" \
		test "$(cat "$work/${tag}_both")" = 0
	forged ${tag}_server c c0 5201 nsx s $FORGE handshake s1 $R1MAC sakd $S4 $((b + 2)) $C4 5201 20000
	check "$tag: server side alone, toward the client's port 5201: no byte at the client ($(cat "$work/${tag}_server"))" \
		test "$(cat "$work/${tag}_server")" = 0
	check "$tag: nothing entered $MAP_FWD ($(n_fwd) entries), no admission counted" \
		test "$(n_fwd)" = 0 -a "$(st $STAT_XDP_FWD_FLOWS)" = "$flows0"
}
round drop 40100
# The same with conntrack tracking the forwarded packets, INVALID dropped.
nsx r iptables -A FORWARD -m conntrack --ctstate INVALID -j DROP
check "conntrack is tracking on the router" test -r /proc/sys/net/netfilter/nf_conntrack_count
round conntrack 40200
# Control: without the DROP rule the same client-alone forgery still opens
# nothing (the forged SYN-ACK comes in on the client's side, where the stack
# sends it back out: not from the server's interface).
nsx r iptables -F FORWARD
forged nodrop_client s s1 5201 nsx c $FORGE handshake c0 $R0MAC sakd $C4 40300 $S4 5201 20000
check "no FORWARD rule, client alone: nothing enters $MAP_FWD (the data is the stack's: $(cat "$work/nodrop_client") bytes)" \
	test "$(n_fwd)" = 0 -a "$(st $STAT_XDP_FWD_FLOWS)" = "$flows0"

# ---- a running fast-path flow, then a DROP rule for it
nsx_bg s python3 "$XFER" server --port 5301 >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
# (the flow and the sampler run until the checks are done with them, 60 s
# at most: a loaded machine, or the guest, slows the checks, it does not
# end the flow or the sampling under them)
nsx_bg c python3 "$XFER" client --addr $S4 --port 5301 --seconds 60 --lport-file "$work/long.lport" >"$work/long.json"
check "a real flow is admitted ($MAP_FWD: established)" wait_for 10 flow_est long 5301
nsx_bg s $FORGE rx s1 0.01 60 >"$work/rx"
RXP=$NSX_PID
# the sampler sees the flow (python starts slowly in the 6.1 guest)
rx_runs() { awk 'NR == 1 { b = $2 } END { exit !($2 - b > 1000000) }' "$work/rx"; }
sleep 0.5 && wait_for 10 rx_runs
t0=$(date +%s.%N)
nsx r iptables -I FORWARD -p tcp --dport 5301 -j DROP
t1=$(date +%s.%N)
sleep 1.5
# the last 10 ms sample in which the server's interface received more than
# a stray frame, after the command started
last=$(awk -v t0="$t0" 'NR > 1 && $2 - p > 2000 && $1 >= t0 { l = $1 } { p = $2 } END { printf "%.4f", l ? l : t0 }' "$work/rx")
lat=$(awk -v l="$last" -v t1="$t1" 'BEGIN { printf "%d", (l - t1) * 1000 }')
kill $RXP
echo "iptables -I took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", (b - a) * 1000 }') ms; the server's bytes last grew $lat ms after it returned"
check "DROP for the running flow: the server's bytes stop within 100 ms of the command ($lat ms)" test "$lat" -lt 100
check "  the server received data before it (the flow was running)" \
	awk -v t0="$t0" '$1 < t0 && NR > 1 && $2 - p > 100000 { ok = 1 } { p = $2 } END { exit !ok }' "$work/rx"
set -- $(fwd_entry 5301 "$(cat "$work/long.lport")")
check "  its $MAP_FWD entry waits for re-admission (state ${1:-none}: 4 readmit)" test "${1:-0}" = 4
nsx r iptables -D FORWARD -p tcp --dport 5301 -j DROP
kill $(ip netns pids "$(ns_name c)") 2>/dev/null # the stalled first flow
a0=$(st $STAT_XDP_FWD_FLOWS) x0=$(st $FWD_STAT)
# (the stream starts once the flow is the fast path's: fwd_go, router.sh)
nsx_bg c timeout "$(slow 20)" python3 "$XFER" client --addr $S4 --port 5301 --bytes 20000000 \
	--connect-timeout "$(slow 3)" --lport-file "$work/after.lport" --go-file "$work/after.go" >"$work/after.json"
cpid=$NSX_PID
fwd_go after || echo "# after: not the fast path's within 10 s"
timeout "$(slow 25)" tail --pid=$cpid -f /dev/null
a1=$(st $STAT_XDP_FWD_FLOWS) x1=$(st $FWD_STAT)
check "the rule removed: a new connection gets through intact" intact after
check "  and is admitted to the fast path again ($((a1 - a0)) admission, $FWD_HOOK forwarded $((x1 - x0)) packets)" \
	test $((a1 - a0)) -ge 1 -a $((x1 - x0)) -ge $((20000000 / 1500 / 2))

# ---- an RST forged in the client's name on the server's side
nsx_bg c python3 "$XFER" client --addr $S4 --port 5301 --seconds 60 --lport-file "$work/rst_flow.lport" >"$work/rst_flow.json"
RSTF=$NSX_PID
wait_for 10 flow_est rst_flow 5301 || fail "the flow before the forged RST is admitted"
cport=$(cat "$work/rst_flow.lport")
sleep "$(slow 0.5)"
w0=$(st $STAT_XDP_FWD_WRONG_IF)
set -- $(fwd_entry 5301 "$cport"); p0=${2:-0}
nsx s $FORGE rst s1 $R1MAC $C4 "$cport" $S4 5301 305419896
sleep "$(slow 0.5)"
set -- $(fwd_entry 5301 "$cport"); st1=${1:-none} p1=${2:-0}
w1=$(st $STAT_XDP_FWD_WRONG_IF)
check "forged RST and RST-ACK in the client's name (port $cport) on the server's side: judged on the wrong interface ($((w1 - w0)) counted)" \
	test $((w1 - w0)) -ge 2
check "  the flow stays established in $MAP_FWD (state $st1), its fast path growing ($p0 -> $p1 packets)" \
	test "$st1" = 3 -a $((p1 - p0)) -gt 10
kill -USR1 $RSTF
wait_for 30 test -s "$work/rst_flow.json"
check "  and arrives intact" intact rst_flow

# ---- SYN flood while a fast-path flow runs
# (the flow runs until it is read after the flood, 120 s at most: a loaded
# machine sent the flood in 38 s, not 1.7, and a 40 s flow ended under it)
nsx r iptables -A FORWARD -p tcp --dport 5301
nsx r iptables -A FORWARD -p tcp --sport 5301
nsx_bg c python3 "$XFER" client --addr $S4 --port 5301 --seconds "$(slow 120)" --lport-file "$work/flood_flow.lport" >"$work/flood_flow.json"
FLOW=$NSX_PID
wait_for 10 flow_est flood_flow 5301 || fail "the flow before the flood is admitted"
fcport=$(cat "$work/flood_flow.lport")
sleep 0.5
set -- $(fwd_entry 5301 "$fcport"); p0=${2:-0}
k0=$(nsx r iptables -L FORWARD -vnx | awk '/dpt:5301|spt:5301/ { n += $1 } END { print n + 0 }')
h0=$(st $STAT_FWD_HALF); n0=$(n_fwd)
read -r sent secs < <(nsx c $FORGE flood c0 $R0MAC 100000 10.211.1 $S4 5201)
sleep 0.5
set -- $(fwd_entry 5301 "$fcport"); st1=${1:-none} p1=${2:-0}
k1=$(nsx r iptables -L FORWARD -vnx | awk '/dpt:5301|spt:5301/ { n += $1 } END { print n + 0 }')
h1=$(st $STAT_FWD_HALF); n1=$(n_fwd)
kill $FLOW 2>/dev/null
K=$((k1 - k0)) X=$((p1 - p0))
echo "flood: $sent SYNs in $secs s; the stack forwarded $((h1 - h0)) of them into $MAP_FWD_HALF; the flow: $FWD_HOOK $X packets, kernel $K; $MAP_FWD $n0 -> $n1 entries"
check "the flood was sent (100000 SYNs) and the stack forwarded most of them" test "$sent" = 100000 -a $((h1 - h0)) -ge 50000
check "  the running flow stayed established in $MAP_FWD, its counters growing ($p0 -> $p1)" test "$st1" = 3 -a "$X" -gt 10000
check "  the kernel forwarded under 1 % of its packets ($K of $((K + X)))" test $((K * 100)) -lt $((K + X))
check "  no SYN entered $MAP_FWD ($n0 -> $n1 entries)" test "$n1" -le "$n0"
check "  $MAP_FWD_HALF stays within its size" \
	test "$(bpftool -j map dump pinned "$PIN/$MAP_FWD_HALF" | jq length)" -le 16384
finish
