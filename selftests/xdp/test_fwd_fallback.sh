#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What the forward path leaves to the stack is the packet that came in,
# even when a step fails once the path has begun to forward it.  A NATed
# flow (masquerade: the rewrite that reaches furthest) through the router,
# admitted; a data packet of it run through the hook's program
# (BPF_PROG_TEST_RUN on r0's ifindex, its output kept):
#  - as loaded: forwarded (the redirect), TTL down, source translated, MACs
#    rewritten: the control, that the check below sees a rewrite;
#  - reloaded with the TTL step made to fail (TOE_LOADER_FAULT_HOP=1, the
#    tests' fault): passed on (XDP_PASS, or tc's TCX_NEXT) byte for byte
#    as it came, counted slow, by XDP's cached route and by its route
#    lookup (toed --no-route-cache); and the running flow's own packets
#    reach the server through the stack, intact.
# XDP, or tc (test_fwd_fallback_tc.sh): before the fix, tc rewrote the MACs
# and XDP translated the addresses before the TTL step.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 9
need_cmd iptables
router_test fwdfb || exit 1
endpoints_for_hook || exit 1
fwd_conf "$work/fwd.conf" || exit 1
load() { nsx r env "$@" toe-loader load --dev r0 --dev r1 --cgroup "$CG" --pin-dir "$PIN" $DP_HOOK_ARGS >/dev/null; }
defer "nsx r toe-loader unload --pin-dir $PIN >/dev/null 2>&1; rm -rf $PIN"
load && fill_neigh "$PIN" || { fail "load, neighbours"; finish; }
defer "nsx r iptables -t nat -F"
nsx r iptables -t nat -A POSTROUTING -o r1 -j MASQUERADE || { fail "masquerade"; finish; }
fwd_toed || { fail "toed starts"; cat "$work/toed.log"; finish; }
fwd_server s 5201 || { fail "server"; finish; }
st() { stat_of "$PIN" "$1"; }
IF0=$(nsx r ip -j link show r0 | jq '.[0].ifindex')
# the hook's program, its context for a packet arriving on r0, its pass
# and redirect verdicts, its slow-path counter
if [ $FWD_HOOK = tc ]; then
	sel='.name == "toe_tc"' PASS=4294967295 REDIR=7 SLOW=$STAT_TC_FWD_SLOW
else
	sel='.type == "xdp"' PASS=2 REDIR=4 SLOW=$STAT_XDP_FWD_SLOW
fi
prog() { nsx r toe-loader status -j --pin-dir "$PIN" | jq "[.programs[] | select($sel) | .id][0]"; }
# run NAME: the hook's verdict on $work/NAME.bin arriving on r0; its
# output in $work/NAME.out
MAC_R0=$(nsx r ip -j link show r0 | jq -r '.[0].address')
run() {
	to_mac "$work/$1.bin" "$MAC_R0" # (r0's: another host's is the stack's)
	if [ $FWD_HOOK = tc ]; then
		$PKT skbctx "$work/$1.ctx" "$IF0" "$IF0"
	else
		$PKT ctx "$work/$1.ctx" "$IF0" "$(stat -c %s "$work/$1.bin")"
	fi
	nsx r bpftool prog run id "$(prog)" data_in "$work/$1.bin" data_out "$work/$1.out" ctx_in "$work/$1.ctx" 2>&1 |
		sed -n 's/^Return value: \([0-9]*\).*/\1/p'
}
cport() { # the client's port of the one established toe_fwd entry of port 5201
	bpftool -j map dump pinned "$PIN/$MAP_FWD" |
		jq -r '[.[] | select((.formatted.key.lport == 5201 or .formatted.key.rport == 5201) and .formatted.value.state == 3) |
			.formatted.key | if .lport == 5201 then .rport else .lport end] | select(length == 1) | .[0]'
}
has_cport() { test -n "$(cport)"; }

# (each flow runs until the checks are done with it, SIGUSR1, or 60 s: a
# loaded machine slows them, it does not end the flow under them)
nsx_bg c python3 "$XFER" client --addr $S4 --port 5201 --seconds 60 >"$work/flow.json"
FLOW=$NSX_PID
wait_for 10 has_cport || { fail "the masqueraded flow is admitted"; finish; }
CP=$(cport)
$PKT tcp "$work/data.bin" 4 $C4 $S4 "$CP" 5201 A 1000 1000 64 100
rc=$(run data)
# TTL at byte 22, the source address at 26 (behind the MACs, 0-11)
check "as loaded: forwarded (return $rc), TTL 64 -> $(od -An -tu1 -j22 -N1 "$work/data.out" | tr -d ' ')" \
	test "$rc" = $REDIR -a "$(od -An -tu1 -j22 -N1 "$work/data.out" | tr -d ' ')" = 63
check "  translated (source no longer the client's) and the MACs rewritten" \
	bash -c "! cmp -s <(head -c 12 '$work/data.bin') <(head -c 12 '$work/data.out') &&
		! cmp -s <(tail -c +27 '$work/data.bin' | head -c 4) <(tail -c +27 '$work/data.out' | head -c 4)"
load TOE_LOADER_FAULT_HOP=1 || { fail "reload with TOE_LOADER_FAULT_HOP=1"; finish; }
# the flow's own packets reach the failing step (admitted again if the
# reload made it re-judge): they are counted slow
s0=$(st $SLOW)
slowing() { test "$(st $SLOW)" -gt "$s0"; }
wait_for 10 slowing && wait_for 10 has_cport || { fail "the flow is still admitted"; finish; }
CP=$(cport)
$PKT tcp "$work/data.bin" 4 $C4 $S4 "$CP" 5201 A 1000 1000 64 100
s0=$(st $SLOW)
rc=$(run data)
check "the TTL step failing: passed on (return $rc, want $PASS), counted slow" \
	test "$rc" = $PASS -a "$(st $SLOW)" -gt "$s0"
check "  byte for byte as it came (MACs, TTL, addresses, checksums)" cmp -s "$work/data.bin" "$work/data.out"
# XDP's other path: the route looked up, not cached (toed --no-route-cache
# keeps the route generation 0); tc looks it up for every skb anyway
rt_gen() { bpftool -j map lookup pinned "$PIN/$MAP_FWD_GEN" key 0 0 0 0 | jq .formatted.value.rt_gen; }
if [ $FWD_HOOK = xdp ]; then
	kill "$TOED"; wait "$TOED" 2>/dev/null
	no_cache() { test "$(rt_gen)" = 0; }
	fwd_toed --no-route-cache && wait_for 5 no_cache
fi
rc=$(run data)
check "  the route looked up, not cached (route generation $(rt_gen)): passed on (return $rc) byte for byte" \
	test "$rc" = $PASS -a -n "$(cmp -s "$work/data.bin" "$work/data.out" && echo y)"
f0=$(st $FWD_STAT) s0=$(st $SLOW)
sleep 0.5
wait_for 10 slowing
check "  the running flow: nothing forwarded by $FWD_NAME, all of it to the stack ($(($(st $SLOW) - s0)) slow)" \
	test "$(st $FWD_STAT)" = "$f0" -a "$(st $SLOW)" -gt "$s0"
kill -USR1 $FLOW
wait $FLOW
check "  and the transfer arrives intact (sha256)" intact flow
# IPv6 (no NAT): tc's hop limit is bpf_skb_store_bytes, XDP's a direct write
nsx_bg c python3 "$XFER" client --addr $S6 --port 5201 --seconds 60 >"$work/flow6.json"
FLOW=$NSX_PID
cport6() {
	bpftool -j map dump pinned "$PIN/$MAP_FWD" |
		jq -r '[.[] | select(.formatted.key.family == 10 and (.formatted.key.lport == 5201 or .formatted.key.rport == 5201) and .formatted.value.state == 3) |
			.formatted.key | if .lport == 5201 then .rport else .lport end] | select(length == 1) | .[0]'
}
has6() { test -n "$(cport6)"; }
wait_for 10 has6 || { fail "the IPv6 flow is admitted"; finish; }
$PKT tcp "$work/data6.bin" 6 $C6 $S6 "$(cport6)" 5201 A 1000 1000 64 100
rc=$(run data6)
check "IPv6, the hop-limit step failing: passed on (return $rc) byte for byte" \
	test "$rc" = $PASS -a -n "$(cmp -s "$work/data6.bin" "$work/data6.out" && echo y)"
kill -USR1 $FLOW
wait $FLOW
check "  and the transfer arrives intact" intact flow6
finish
