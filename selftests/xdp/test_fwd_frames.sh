#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The fast path forwards only frames the stack would (issue 46, items 3
# and 4): while a flow runs on the fast path, the client's side sends 20
# data segments of that flow's 4-tuple of each kind the stack drops in
# ip_rcv: to another host's MAC (PACKET_OTHERHOST), tagged for VLAN 999
# (the router has no sub-interface for it; tc sees the tag in the skb's
# metadata, XDP in the frame), and with a bad IPv4 header checksum.  None
# reaches the server (a packet socket there looks for each kind's mark);
# each kind is counted (fwd_not_host, fwd_bad_ipcsum); and an RST of the
# flow sent to another host's MAC does not end its fast path.  The flow
# then finishes byte-exact.  A flow a NOTRACK rule takes out of conntrack
# (which a stateless rewrite may then change) is never admitted.  XDP on the router, or tc (test_fwd_frames_tc.sh).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 11
router_test fwdfr || exit 1
endpoints_for_hook || exit 1
fwd_conf "$work/fwd.conf" || exit 1
dp_load r --dev r0 --dev r1 || { fail "load"; finish; }
fill_neigh "$PIN" || { fail "neighbours"; finish; }
mac_of() { nsx "$1" ip -j link show "$2" | jq -r '.[0].address'; }
nsx r ip neigh replace $S4 dev r1 lladdr "$(mac_of s s1)" nud permanent
nsx r ip neigh replace $C4 dev r0 lladdr "$(mac_of c c0)" nud permanent
RMAC=$(mac_of r r0)
nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$work/run" >"$work/toed.log" 2>&1
wait_for 10 test -S "$work/run/toed.sock" || { fail "toed starts"; cat "$work/toed.log"; finish; }
nsx_bg s python3 "$XFER" server --port 5301 >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
FORGE="python3 $TOE_TOP/selftests/xdp/forge.py"
st() { stat_of "$PIN" "$1"; }

nsx_bg c python3 "$XFER" client --addr $S4 --port 5301 --seconds 60 \
	--lport-file "$work/f.lport" --go-file "$work/f.go" >"$work/f.json"
CLIENT=$NSX_PID
wait_for 10 test -s "$work/f.lport" && fwd_go f || { fail "the flow on the fast path"; finish; }
CP=$(cat "$work/f.lport")
x0=$(st $FWD_STAT)
wait_for 10 eval '[ "$(st $FWD_STAT)" -gt $((x0 + 100)) ]'

# odd KIND COUNTER: KIND's 20 frames sent while the server's side looks
# for their mark; "SEEN COUNTED" (COUNTER's growth)
odd() {
	local flag=$work/odd-$1 c0 n
	c0=$(st "$2")
	nsx_bg s $FORGE mark s1 "MARK-$1-$$" 10 "$flag" >"$work/mark-$1"
	wait_for 5 test -e "$flag.ready"
	nsx c $FORGE odd c0 "$RMAC" "$1" 20 $C4 "$CP" $S4 5301 "MARK-$1-$$"
	touch "$flag"
	wait_for 5 test -s "$work/mark-$1"
	n=$(cat "$work/mark-$1")
	echo "${n:-?} $(($(st "$2") - c0))"
}
read -r seen counted < <(odd otherhost $STAT_FWD_NOT_HOST)
check "20 segments of the flow to another host's MAC: none reached the server ($seen)" test "$seen" = 0
check "  counted fwd_not_host ($counted)" test "$counted" -ge 20
read -r seen counted < <(odd vlan $STAT_FWD_NOT_HOST)
check "20 segments of the flow tagged for VLAN 999 (no such sub-interface): none reached the server ($seen)" test "$seen" = 0
if [ "$FWD_HOOK" = tc ]; then
	check "  counted fwd_not_host ($counted)" test "$counted" -ge 20
else # XDP sees the tag in the frame: never a fast-path packet (nvlan), no lookup
	check "  XDP looked none of them up as the flow's (fwd_not_host +$counted, the flow $(fwd_states f | tr '\n' ' '))" \
		test "$counted" = 0 -a "$(fwd_states f)" = 3
fi
read -r seen counted < <(odd badcsum $STAT_FWD_BAD_IPCSUM)
check "20 segments of the flow with a bad IPv4 header checksum: none reached the server ($seen)" test "$seen" = 0
check "  counted fwd_bad_ipcsum ($counted)" test "$counted" -ge 20
nsx c $FORGE odd c0 "$RMAC" rst 5 $C4 "$CP" $S4 5301 x
sleep 0.3
check "an RST of the flow to another host's MAC: the fast path still has it (states $(fwd_states f | tr '\n' ' '))" \
	test "$(fwd_states f)" = 3
x1=$(st $FWD_STAT)
sleep 0.5
check "  and forwards it ($FWD_NAME: $((x1 - x0)) then $(($(st $FWD_STAT) - x0)) packets)" test "$(st $FWD_STAT)" -gt "$x1"
kill -USR1 "$CLIENT"
wait "$CLIENT"
check "the flow finishes byte-exact" intact f

# a flow a NOTRACK rule takes out of conntrack: the ruleset may rewrite it
# statelessly, which the fast path could not repeat: never admitted
defer "nsx r iptables -t raw -F"
nsx r iptables -t raw -A PREROUTING -p tcp --dport 5201 -j NOTRACK
nsx r iptables -t raw -A PREROUTING -p tcp --sport 5201 -j NOTRACK
n0=$(st $STAT_FWD_NOTRACK)
nsx_bg s python3 "$XFER" server --port 5201 >"$work/server2.out" 2>&1
wait_for 5 grep -q ready "$work/server2.out"
nsx_t 30 c python3 "$XFER" client --addr $S4 --port 5201 --bytes 3000000 \
	--lport-file "$work/u.lport" >"$work/u.json"
check "a NOTRACK flow: through the stack, never on the fast path (states '$(fwd_states u | tr '\n' ' ')', fwd_notrack $n0 -> $(st $STAT_FWD_NOTRACK))" \
	test -z "$(fwd_states u)" -a "$(st $STAT_FWD_NOTRACK)" -gt "$n0" -a "$(jq .bytes "$work/u.json")" = 3000000
check "toed logged no error" bash -c "! grep -q 'toed: error' '$work/toed.log'"
finish
