#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Route changes under a running fast-path flow (issue 20): the forward path
# must route every packet as the router's tables say now, not as they said
# when the flow was admitted.  Client, router and server namespaces, with a
# second link r2-s2 between router and server; opentoe (XDP, or tc with
# TOE_FWD_HOOK=tc: test_fwd_route_tc.sh) on the three router interfaces,
# toed mirroring the router's neighbours.  While one admitted flow runs
# client -> server (XDP forwarding it by the route it cached for the flow,
# which each change below must make stale; tc looking the route up for
# each skb, with the kernel's neighbours):
#  - a new, more specific route to the server via r2 (a changed next hop):
#    the server's bytes move to s2 within 100 ms of the command;
#  - that route deleted: they move back to s1 within 100 ms;
#  - an unreachable route for the server: its bytes stop within 100 ms;
#    deleted again, the flow resumes;
# and the transfer arrives whole (sha256) through all of it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 14
need_cmd iptables
FORGE="python3 $TOE_TOP/selftests/xdp/forge.py"
S4b=10.211.3.1 R4c=10.211.3.254
router_test fwdroute || exit 1
endpoints_for_hook || exit 1
veth_pair r r2 s s2 || exit 1
nsx r ip addr add $R4c/24 dev r2 && nsx s ip addr add $S4b/24 dev s2 &&
	nsx r ip link set r2 up && nsx s ip link set s2 up &&
	{ [ $FWD_HOOK = tc ] || nsx s ethtool -K s2 gro on tx off >/dev/null; } || exit 1
RUN=$work/run
fwd_conf "$work/fwd.conf" || exit 1
dp_load r --dev r0 --dev r1 --dev r2 || { fail "load"; finish; }
nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$RUN" --log-level debug >"$work/toed.log" 2>&1
TOED=$NSX_PID
wait_for 10 test -S "$RUN/toed.sock" || { fail "toed starts"; cat "$work/toed.log"; finish; }
# every next hop resolved before the flow (toed mirrors them into toe_neigh)
wait_for 5 nsx c ping -c1 -W1 $S4 >/dev/null && wait_for 5 nsx r ping -c1 -W1 $S4b >/dev/null ||
	{ fail "the hosts reach each other"; finish; }
st() { stat_of "$PIN" "$1"; }
# What the router's kernel forwarded out of r2 (an accept rule counts it),
# and what s2 received, in packets.  The rule is there before the flow: a
# ruleset change would send the flow through the stack to be admitted again.
nsx r iptables -A FORWARD -o r2 -j ACCEPT || { fail "iptables"; finish; }
defer "nsx r iptables -F FORWARD"
kfwd_r2() { nsx r iptables -L FORWARD -vnx | awk '$7 == "r2" { n += $1 } END { print n + 0 }'; }
rx_s2() { nsx s cat /proc/net/dev | awk -F'[: ]+' '$2 == "s2" { print $4 }'; }
fwd_est() { # PORT -> established toe_fwd entries of PORT
	bpftool -j map dump pinned "$PIN/$MAP_FWD" |
		jq --argjson p "$1" '[.[] | select((.formatted.key.lport == $p or .formatted.key.rport == $p) and .formatted.value.state == 3)] | length'
}

nsx_bg s python3 "$XFER" server --port 5301 >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
# (the flow and the samplers run until the checks are done with them:
# SIGUSR1 ends the flow, the test's end the samplers, 60 s at most; a
# loaded machine slows the checks, it does not end the flow under them)
nsx_bg c python3 "$XFER" client --addr $S4 --port 5301 --seconds 60 >"$work/flow.json"
FLOW=$NSX_PID
est_5301() { test "$(fwd_est 5301)" = 1; }
check "a real flow is admitted to the fast path ($MAP_FWD: established)" wait_for 10 est_5301
nsx_bg s $FORGE rx s1 0.01 60 >"$work/rx1"
nsx_bg s $FORGE rx s2 0.01 60 >"$work/rx2"
# window: in 0.7 s, F packets forwarded, C of them by the cached route
# (tc counts skbs: tc_forward against tc_fwd_route_cached, not segments)
CSTAT=$STAT_XDP_FWD_CACHED FST=$FWD_STAT
[ $FWD_HOOK = tc ] && CSTAT=$STAT_TC_FWD_CACHED FST=$STAT_TC_FORWARD
window() {
	local f0 c0
	f0=$(st $FST) c0=$(st "$CSTAT")
	sleep 0.7
	F=$(($(st $FST) - f0)) C=$(($(st "$CSTAT") - c0))
}
window
# (tc: an skb carries up to 64 KiB, so fewer of them: over 100 in 0.7 s)
MINF=1000
[ $FWD_HOOK = tc ] && MINF=100
{
	# The cache holds only while toed renewed its lease in the last 50 ms
	# (every 20 ms): a loaded machine that keeps toed off its CPU longer
	# sends packets to the lookup, by design.  So up to 3 windows of 0.7 s,
	# each reported; one over 90 % passes (a toed that renews its lease
	# too seldom, or a cache never used, fails all three).
	seen="$C of $F"
	for ((i = 1; i < 3; i++)); do
		[ "$F" -gt $MINF ] && [ $((C * 10)) -gt $((F * 9)) ] && break
		window
		seen="$seen, then $C of $F"
	done
	if [ "$F" -gt $MINF ] && [ $((C * 10)) -gt $((F * 9)) ]; then
		ok "$FWD_HOOK: the fast path forwards by the flow's cached route: $seen packets (over 90 %)"
	else
		fail "$FWD_HOOK: the fast path forwards by the flow's cached route: $seen packets (over 90 %)"
		bpftool -j map dump pinned "$PIN/$MAP_FWD_GEN" | jq -c '.[0].formatted.value' | sed "s/^/# $MAP_FWD_GEN /"
		bpftool -j map dump pinned "$PIN/$MAP_FWD" | jq -c '.[].formatted.value | [.netns, .rt]' | sed "s/^/# $MAP_FWD /"
	fi
}

# since FILE T: ms from T to the first 10 ms sample of FILE (an interface's
# received bytes) that grew by more than 100 kB, or 9999 if none did.
since() {
	awk -v t="$2" 'NR > 1 && $1 >= t && $2 - p > 100000 && !f { f = $1 } { p = $2 }
		END { printf "%d", f ? (f - t) * 1000 : 9999 }' "$1"
}
# quiet FILE T: ms from T to the last sample of FILE that grew by more than
# 2 kB (a stray frame), 0 if none did after T.
quiet() {
	awk -v t="$2" 'NR > 1 && $1 >= t && $2 - p > 2000 { l = $1 } { p = $2 }
		END { printf "%d", l ? (l - t) * 1000 : 0 }' "$1"
}
# toectl stats' route_changes: the route changes that made cached routes stale
rchg() { toectl --run-dir "$RUN" -j stats | jq .daemon.route_changes; }
r0=$(rchg)
k0=$(kfwd_r2) p0=$(rx_s2)
nsx r ip route add $S4/32 via $S4b dev r2
t1=$(date +%s.%N)
sleep 1
k1=$(kfwd_r2) p1=$(rx_s2)
a=$(since "$work/rx2" "$t1") q=$(quiet "$work/rx1" "$t1")
check "a new route via r2: the server's bytes arrive on s2 within 100 ms ($a ms)" test "$a" -lt 100
check "  and stop arriving on s1 within 100 ms ($q ms)" test "$q" -lt 100
K=$((k1 - k0)) P=$((p1 - p0))
check "  $FWD_NAME forwards them on the new next hop: the kernel forwarded under 1 % ($K of the $P packets s2 got)" \
	test "$P" -gt 1000 -a $((K * 100)) -lt "$P"

nsx r ip route del $S4/32 via $S4b dev r2
t2=$(date +%s.%N)
sleep 1
a=$(since "$work/rx1" "$t2") q=$(quiet "$work/rx2" "$t2")
check "that route deleted: back on s1 within 100 ms ($a ms)" test "$a" -lt 100
check "  and off s2 within 100 ms ($q ms)" test "$q" -lt 100

nsx r ip route add unreachable $S4/32
t3=$(date +%s.%N)
sleep 0.5
q=$(quiet "$work/rx1" "$t3")
check "an unreachable route for the server: its bytes stop within 100 ms ($q ms)" test "$q" -lt 100
nsx r ip route del unreachable $S4/32
t4=$(date +%s.%N)
sleep 2
a=$(since "$work/rx1" "$t4")
check "  deleted again: the flow resumes ($a ms after)" test "$a" -lt 2000
r4=$(rchg)
check "toectl stats counts the four route changes in route_changes ($r0 -> $r4)" test $((r4 - r0)) -ge 4
kill -USR1 $FLOW
timeout 20 tail --pid=$FLOW -f /dev/null
check "the transfer arrived whole through every change (sha256)" intact flow
n_fwd() { bpftool -j map dump pinned "$PIN/$MAP_FWD" | jq length; }
none_left() { test "$(n_fwd)" = 0; }
wait_for 3 none_left
check "nothing but the flow's own entry in $MAP_FWD, and it ended ($(n_fwd) left)" none_left

# toed --no-route-cache: route generation 0 kept, so nothing is cached
rt_gen() { bpftool -j map lookup pinned "$PIN/$MAP_FWD_GEN" key 0 0 0 0 | jq .formatted.value.rt_gen; }
g1=$(rt_gen)
kill "$TOED"; wait "$TOED" 2>/dev/null
nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$RUN" --no-route-cache >>"$work/toed.log" 2>&1
wait_for 10 test -S "$RUN/toed.sock" && sleep 2.5
nsx r ip route add $S4/32 via $S4b dev r2 && nsx r ip route del $S4/32 via $S4b dev r2
check "toed --no-route-cache keeps the route generation 0 through route changes (was $g1, now $(rt_gen))" \
	test "$g1" -gt 0 -a "$(rt_gen)" = 0
check "  and counts no route change: no cached route went stale ($(rchg))" test "$(rchg)" = 0
finish
