#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Forwarding switched off reaches the fast path (issue 31, item 1): toed
# follows netconf events (RTM_NEWNETCONF: ip_forward, a device's
# forwarding; IPv4 and IPv6) and bumps the route generation, so cached
# routes go and the next packet's route lookup sees forwarding off.  A
# running fast-path flow with permanent neighbours on the router (nothing
# else would make toed drop its cached route), then
# sysctl net.ipv4.ip_forward=0: the server's received bytes (sampled every
# 10 ms) stop within 100 ms.  Then the same with the client-side device's
# forwarding=0 alone.  On tc (test_fwd_netconf_tc.sh) no route is cached:
# each skb's route lookup sees forwarding off.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 5
SPY=$(for p in python3 /usr/bin/python3; do $p -c 'import scapy.all' 2>/dev/null && { echo $p; break; }; done)
[ -n "$SPY" ] || cannot_run "python3-scapy missing (make deps)"
FORGE="$SPY $TOE_TOP/selftests/xdp/forge.py"
router_test fwdnc || exit 1
endpoints_for_hook || exit 1
fwd_conf "$work/fwd.conf" || exit 1
dp_load r --dev r0 --dev r1 || { fail "load"; finish; }
wait_for 5 nsx c ping -c1 -W1 $S4 >/dev/null || { fail "ping"; finish; }
C0MAC=$(nsx c ip -j link show c0 | jq -r '.[0].address') S1MAC=$(nsx s ip -j link show s1 | jq -r '.[0].address')
nsx r ip neigh replace $C4 lladdr "$C0MAC" dev r0 nud permanent &&
	nsx r ip neigh replace $S4 lladdr "$S1MAC" dev r1 nud permanent || { fail "permanent neighbours"; finish; }
nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$work/run" >"$work/toed.log" 2>&1
wait_for 10 test -S "$work/run/toed.sock" || { fail "toed starts"; cat "$work/toed.log"; finish; }
nsx_bg s python3 "$XFER" server --port 5201 --port 5301 >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
st() { stat_of "$PIN" "$1"; }
# what ran the flow: the hook's cached route
CSTAT=$STAT_XDP_FWD_CACHED CWHAT="route cached"
[ $FWD_HOOK = xdp ] || CSTAT=$STAT_TC_FWD_CACHED
est() { # PORT: one established toe_fwd entry of PORT
	test "$(bpftool -j map dump pinned "$PIN/$MAP_FWD" |
		jq --argjson p "$1" '[.[] | select((.formatted.key.lport == $p or .formatted.key.rport == $p) and .formatted.value.state == 3)] | length')" = 1
}
# stops NAME PORT CMD...: a fast-path flow to PORT, CMD under it; LAT: ms
# from CMD's return to the last 10 ms in which the server received bytes
stops() {
	local name=$1 port=$2 t0 t1 last c0 rxp; shift 2
	# (the flow and the sampler run until the checks are done with them,
	# 60 s at most: a loaded machine slows the steps, it does not end the
	# flow or the sampling under them)
	nsx_bg c python3 "$XFER" client --addr $S4 --port "$port" --seconds 60 >"$work/$name.json"
	wait_for 10 est "$port" || { fail "$name: the flow is admitted"; return 1; }
	nsx_bg s $FORGE rx s1 0.01 60 >"$work/$name.rx"
	rxp=$NSX_PID
	# the sampler sees the flow run (over 1 MB), the fast path caching
	# its route
	rx_runs() { awk 'NR == 1 { b = $2 } END { exit !($2 - b > 1000000) }' "$work/$name.rx"; }
	wait_for 10 rx_runs
	sleep 0.5
	c0=$(st $CSTAT)
	t0=$(date +%s.%N); "$@"; t1=$(date +%s.%N)
	sleep 1.5
	kill $rxp
	last=$(awk -v t0="$t0" 'NR > 1 && $2 - p > 2000 && $1 >= t0 { l = $1 } { p = $2 } END { printf "%.4f", l ? l : t0 }' "$work/$name.rx")
	LAT=$(awk -v l="$last" -v t1="$t1" 'BEGIN { printf "%d", (l - t1) * 1000 }')
	CACHED=$c0
	RAN=no
	awk -v t0="$t0" '$1 < t0 && NR > 1 && $2 - p > 100000 { ok = 1 } { p = $2 } END { exit !ok }' "$work/$name.rx" && RAN=yes
}
stops ipfwd 5201 nsx r sysctl -qw net.ipv4.ip_forward=0
check "ip_forward=0 under a fast-path flow (permanent neighbours, $CWHAT: $CACHED packets): no byte at the server after $LAT ms (< 100)" \
	test "$LAT" -lt 100
check "  the flow was running before (the server received data)" test $RAN = yes
kill $(ip netns pids "$(ns_name c)") 2>/dev/null
nsx r sysctl -qw net.ipv4.ip_forward=1
stops devfwd 5301 nsx r sysctl -qw net.ipv4.conf.r0.forwarding=0
check "r0's forwarding=0 alone: no byte at the server after $LAT ms (< 100)" test "$LAT" -lt 100
check "  the flow was running before" test $RAN = yes
check "toed logged no error" bash -c "! grep -qi 'error' '$work/toed.log'"
finish
