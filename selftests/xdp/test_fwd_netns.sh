#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Namespaces by cookie, checks by (namespace, ifindex) (issue 31, item 5).
# A flow is admitted on the router r (client side r0); a second namespace x
# has an interface with r0's very ifindex.  XDP run there (BPF_PROG_TEST_RUN
# in x, the frame arriving on x's interface) with the flow's FIN from the
# client: another namespace's interface, so not the flow's side
# (xdp_fwd_wrong_if): the entry stays.  The same FIN arriving on r0 itself
# ends the fast path (the control).  On tc (test_fwd_netns_tc.sh) the same
# with toe_tc, the skb's device x's interface (a __sk_buff ctx: ingress
# ifindex and device r0's ifindex), TCX_NEXT for XDP_PASS.  And
# toe-loader in x refuses to make
# x's interface with r1's ifindex a forwarding target: the collision check.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 6
router_test fwdns || exit 1
endpoints_for_hook || exit 1
fwd_conf "$work/fwd.conf" || exit 1
dp_load r --dev r0 --dev r1 && toed --apply "$work/fwd.conf" --pin-dir "$PIN" >/dev/null && fill_neigh "$PIN" ||
	{ fail "load, apply, neighbours"; finish; }
IF0=$(nsx r ip -j link show r0 | jq '.[0].ifindex') IF1=$(nsx r ip -j link show r1 | jq '.[0].ifindex')
ns_add x || { fail "namespace x"; finish; }
# x's interfaces, made with r0's and r1's ifindexes
nsx x ip link add xa index "$IF0" type veth peer name xb index "$IF1" && nsx x ip link set xa up && nsx x ip link set xb up ||
	{ fail "x's interfaces with ifindexes $IF0 and $IF1"; finish; }
prog=$(nsx r toe-loader status -j --pin-dir "$PIN" |
	jq --arg h $FWD_HOOK '[.programs[] | select(if $h == "tc" then .name == "toe_tc" else .type == "xdp" end) | .id][0]')
st() { stat_of "$PIN" "$1"; }
nsx_bg s python3 "$XFER" server --port 5201 >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
# (the flow runs until the test ends, 60 s at most: a loaded machine slows
# the checks, it does not end the flow under them)
nsx_bg c python3 "$XFER" client --addr $S4 --port 5201 --seconds 60 >"$work/long.json"
cport() { # the client's port of the one established toe_fwd entry of port 5201
	bpftool -j map dump pinned "$PIN/$MAP_FWD" |
		jq -r '[.[] | select((.formatted.key.lport == 5201 or .formatted.key.rport == 5201) and .formatted.value.state == 3) |
			.formatted.key | if .lport == 5201 then .rport else .lport end] | select(length == 1) | .[0]'
}
has_cport() { test -n "$(cport)"; }
wait_for 10 has_cport || { fail "the flow is admitted"; finish; }
CP=$(cport)
$PKT tcp "$work/fin.bin" 4 $C4 $S4 "$CP" 5201 FA 1 1 64 0
to_mac "$work/fin.bin" "$(nsx r ip -j link show r0 | jq -r '.[0].address')" # to r0's MAC
# the frame's context: XDP's ingress ifindex; tc's skb arriving on it
# (pass: XDP_PASS, or TCX_NEXT (-1) as bpftool prints it)
if [ $FWD_HOOK = tc ]; then
	$PKT skbctx "$work/fin.ctx" "$IF0" "$IF0" && PASS=4294967295 PASSN=TCX_NEXT
else
	$PKT ctx "$work/fin.ctx" "$IF0" "$(stat -c %s "$work/fin.bin")" && PASS=2 PASSN=XDP_PASS
fi
w0=$(st $STAT_XDP_FWD_WRONG_IF) e0=$(st $STAT_XDP_FWD_ENDED)
rc=$(nsx x bpftool prog run id "$prog" data_in "$work/fin.bin" ctx_in "$work/fin.ctx" 2>&1 | sed -n 's/^Return value: \([0-9]*\).*/\1/p')
check "x, ifindex $IF0 (r0's): the client's FIN is not the flow's side (xdp_fwd_wrong_if $w0 -> $(st $STAT_XDP_FWD_WRONG_IF))" \
	test "$(st $STAT_XDP_FWD_WRONG_IF)" -gt "$w0"
same_cport() { test "$(cport)" = "$CP"; }
# (no toed here: the flow is re-admitted every TOE_FWD_UNWATCHED_NS, for
# a moment not established; the entry is looked for until it is again)
e1=$(st $STAT_XDP_FWD_ENDED)
check "  the fast path did not end there (xdp_fwd_ended $e0 -> $e1, the entry established: port $CP)" \
	eval 'test "$e1" = "$e0" && wait_for 2 same_cport'
check "  $FWD_NAME passed it on (return $rc: $PASSN)" test "$rc" = "$PASS"
err=$(nsx x toe-loader load --dev xb --cgroup "$CG" --pin-dir "$PIN" $DP_HOOK_ARGS 2>&1)
check "toe-loader in x: ifindex $IF1 is r1's forwarding target, refused" grep -q "already a forwarding target for an interface of another network namespace" <<<"$err"
check "  and r1's entry is r's still (the flow keeps its fast path)" wait_for 2 same_cport
rc=$(nsx r bpftool prog run id "$prog" data_in "$work/fin.bin" ctx_in "$work/fin.ctx" 2>&1 | sed -n 's/^Return value: \([0-9]*\).*/\1/p')
check "control: the same FIN on r0 in r ends the fast path (xdp_fwd_ended $e0 -> $(st $STAT_XDP_FWD_ENDED))" \
	test "$(st $STAT_XDP_FWD_ENDED)" -gt "$e0"
finish
