#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The forward path fed by toed, not by a test helper: toed runs on the
# router and mirrors its neighbours into toe_neigh; a routed flow policy
# names is forwarded by XDP and shows in `toectl flows` as "forward"; when
# the server's neighbour entry is deleted on the router, toed deletes it from
# the map, XDP passes the flow's packets to the stack (neigh_miss) while the
# kernel resolves the neighbour again, toed writes the new entry and XDP
# takes the flow back; the next hop's MAC changes (ip link set address on
# the server, ip neigh replace on the router) and the fast path's frames, as
# the server receives them, carry the new MAC: the data arrives intact
# throughout.  On tc (test_xdp_forward_toed_tc.sh) the route lookup takes
# the kernel's neighbour table itself: after the delete the skbs go to the
# stack (tc_fwd_neigh_miss) until the kernel resolves it again, and the
# new MAC is on the frames at once.  toectl status lists both router
# interfaces with their hook, in text and JSON.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 14
need_built toectl
router_test fwdt || exit 1
endpoints_for_hook || exit 1
RUN=$work/run
printf 'device fwd type software nconn 100 steer forward\nrule offload dev fwd rport 5201\n' >"$work/fwd.conf"
chmod 600 "$work/fwd.conf"
dp_load r --dev r0 --dev r1 || { fail "load"; finish; }
wait_for 5 nsx c ping -c1 -W1 $S4 >/dev/null || { fail "the hosts reach each other"; finish; }
nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$RUN" >"$work/toed.log" 2>&1
wait_for 10 test -S "$RUN/toed.sock" || { fail "toed starts"; cat "$work/toed.log"; finish; }
ctl() { toectl --run-dir "$RUN" "$@"; }
# toectl status lists the router interfaces with the hook the load gave
# them (issue 45: on tc it said "interfaces: none", toed's own list being
# only of the interfaces whose neighbours it mirrors, XDP's); the text
# line and the JSON say the same.
case $FWD_HOOK in
xdp) IFHOOK="xdp native" ;;
tc) IFHOOK="tc $(nsx r toe-loader status -j --pin-dir "$PIN" | jq -r '[.programs[] | select(.name == "toe_tc") | .xdp_mode][0] | if . == "tcx" then "tcx" else "clsact" end')" ;;
esac
st_json() { ctl -j status | jq -c --arg h "${IFHOOK% *}" --arg m "${IFHOOK#* }" \
	'[.interfaces[] | select(.hook == $h and .mode == $m) | .name] | sort'; }
check "toectl -j status: r0 and r1 with hook $IFHOOK ($(ctl -j status | jq -c .interfaces))" \
	test "$(st_json)" = '["r0","r1"]'
st_text() { ctl status | grep -E "^interfaces: .*r0 \($IFHOOK[,)].*r1 \($IFHOOK[,)]|^interfaces: .*r1 \($IFHOOK[,)].*r0 \($IFHOOK[,)]"; }
check "toectl status: r0 and r1 with hook $IFHOOK ($(ctl status | grep '^interfaces:'))" st_text
nsx_bg s python3 "$XFER" server --port 5201 >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
st() { stat_of "$PIN" "$1"; }
r1=$(nsx r ip -j link show r1 | jq '.[0].ifindex')
# the server's neighbour entry on r1 where the hook reads it: toe_neigh,
# which toed mirrors for XDP's interfaces; tc's route lookup reads the
# kernel's table itself (toed mirrors nothing for it)
if [ $FWD_HOOK = tc ]; then
	NEIGH="the kernel's table"
	neigh_has() { nsx r ip -j neigh show $S4 dev r1 | jq -e '.[0].lladdr != null' >/dev/null; }
	neigh_is() { nsx r ip -j neigh show $S4 dev r1 | jq -e --arg m "$1" '.[0].lladdr == $m' >/dev/null; }
else
	NEIGH="toed's mirror ($MAP_NEIGH)"
	neigh_has() { ctl -j neigh | jq -e ".[] | select(.dst == \"$S4\" and .ifindex == $r1 and .lladdr != null)" >/dev/null; }
	neigh_is() { ctl -j neigh | jq -e --arg m "$1" ".[] | select(.dst == \"$S4\" and .ifindex == $r1 and .lladdr == \$m)" >/dev/null; }
fi
check "the server's neighbour entry on r1 is in $NEIGH" wait_for 5 neigh_has

x0=$(st $FWD_STAT)
# (the flow runs until the checks below are done with it, SIGUSR1, or 60 s:
# a loaded machine slows them, it does not end the flow under them)
nsx_bg c python3 "$XFER" client --addr $S4 --port 5201 --seconds 60 >"$work/long.json"
LONG=$NSX_PID
fwd_listed() { ctl -j flows port 5201 | jq -e '.[] | select(.decision == "forward" and .state == "established" and .device == "fwd")' >/dev/null; }
check "toectl flows lists the routed flow as forward, established" wait_for 10 fwd_listed
sleep 1
# grew COUNTER FROM N: COUNTER ($FWD_STAT ...) is over FROM + N
grew() { [ $(($(st $1) - $2)) -gt $3 ]; }
wait_for 10 grew $FWD_STAT $x0 1000
x1=$(st $FWD_STAT) m1=$(st $FWD_MISS)
check "$FWD_NAME forwards it with the neighbour entry ($((x1 - x0)) packets)" test $((x1 - x0)) -gt 1000
age=$(ctl -j flows port 5201 | jq -c '[.[] | select(.decision == "forward") | .age_s]')
check "  and its age counts from its start: over 1 s after it was listed ($age)" \
	jq -e 'length > 0 and all(. >= 1)' <<<"$age"
tage=$(ctl flows port 5201 | awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } $4 == "forward" { print $c["AGE"]; exit }')
check "  (text: its AGE under a minute, with tenths: $tage)" grep -Eq '^[0-9]+\.[0-9]s$' <<<"$tage"
nfwd() { ctl -j flows port "$1" | jq '[.[] | select(.decision == "forward")] | length'; }
check "  the port filter: port 5201 lists it ($(nfwd 5201)), port 9 not ($(nfwd 9))" test "$(nfwd 5201)" -ge 1 -a "$(nfwd 9)" = 0

# Delete the server's entry on the router: toed deletes it from the map,
# the kernel resolves it again (the stack forwards meanwhile), toed writes it.
nsx r ip neigh del $S4 dev r1
wait_for 10 grew $FWD_MISS $m1 0
m2=$(st $FWD_MISS) x2=$(st $FWD_STAT)
check "after the delete, packets found no neighbour and went to the stack ($((m2 - m1)) misses)" \
	test $((m2 - m1)) -gt 0
check "the kernel resolved it again, into $NEIGH" wait_for 10 neigh_has
wait_for 10 grew $FWD_STAT $x2 100
x3=$(st $FWD_STAT)
check "$FWD_NAME took the flow back ($((x3 - x2)) more packets forwarded)" test $((x3 - x2)) -gt 100
# The server's MAC changes: ip link set s1 address NEW, and on the router
# ip neigh replace of the next hop with NEW.  toed propagates it; the fast
# path's frames must now carry NEW (the server drops any other), which a
# packet socket on s1 sees.
NEW=02:5e:00:00:00:01
nsx s ip link set s1 address $NEW
nsx r ip neigh replace $S4 lladdr $NEW dev r1 nud reachable
wait_for 10 neigh_is $NEW # where the hook reads it (toed propagated it)
sleep 0.3
x4=$(st $FWD_STAT)
nsx s python3 "$TOE_TOP/selftests/tools/ethcount.py" s1 1 5201 >"$work/eth.json" 2>/dev/null
x5=$(st $FWD_STAT)
echo "# frames on s1 by destination MAC: $(cat "$work/eth.json")"
check "after the MAC change the fast path keeps forwarding ($((x5 - x4)) packets in 1 s)" \
	test $((x5 - x4)) -gt 100
check "... and the server receives them addressed to its new MAC" \
	jq -e --arg m $NEW '.[$m] > 100 and ([to_entries[] | select(.key != $m) | .value] | add // 0) == 0' "$work/eth.json"
kill -USR1 $LONG
wait $LONG
lp=$(jq .lport "$work/long.json")
wait_for 5 grep -q "\"peer_port\": $lp," "$work/server.out"
check "the data arrived intact ($(jq .bytes "$work/long.json") bytes, sha256 equal)" \
	jq -e --argjson c "$(cat "$work/long.json")" '.bytes == $c.bytes and .sha256 == $c.sha256' \
	< <(grep "\"peer_port\": $lp," "$work/server.out")
finish
