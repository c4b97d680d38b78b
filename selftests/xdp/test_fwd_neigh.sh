#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The next hop's MAC without toed (issue 34): the forward path takes it from
# the kernel's neighbour table (bpf_fib_lookup without SKIP_NEIGH), not from
# toed's toe_neigh mirror, and uses its route cache only while toed renewed
# its lease in the last 50 ms.  A flow runs on the fast path with toed
# watching (route cache warm); toed is killed (SIGKILL: no clean-up, its
# lease still runs 500 ms); the server's MAC changes (ip link set address,
# with arp_notify: the server announces it in a gratuitous ARP, from which
# the router's kernel updates its neighbour entry; no ip neigh replace):
# within 100 ms of the announcement the server receives the flow at its
# new MAC and no longer at the old one, still by the fast path, and the
# data arrives intact.  Both ends are the kernel's timestamps of one
# capture on the server's interface (the ARP leaving, the frames
# arriving: XDP-redirected frames pass no tap of the router's), so the
# bound is 100 ms everywhere, the 6.1 guest under TCG included, whatever
# a command takes to start there.  The hook under test from TOE_FWD_HOOK
# (router.sh): XDP, or tc (test_fwd_neigh_tc.sh).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 8
router_test fwdn || exit 1
[ "$FWD_HOOK" = tc ] || endpoints_for_native || exit 1
RUN=$work/run
fwd_conf "$work/fwd.conf" || exit 1
dp_load r --dev r0 --dev r1 || { fail "load"; finish; }
wait_for 5 nsx c ping -c1 -W1 $S4 >/dev/null || { fail "the hosts reach each other"; finish; }
fwd_toed || { fail "toed starts"; cat "$work/toed.log"; finish; }
fwd_server s 5201 || { fail "server"; finish; }
st() { stat_of "$PIN" "$1"; }

# (the flow runs until the counters are read, SIGUSR1, 60 s at most, times
# TOE_SLOW in the 6.1 guest under TCG: a
# loaded machine slows the steps, it does not end the flow under them)
xs=$(st $FWD_STAT)
nsx_bg c python3 "$XFER" client --addr $S4 --port 5201 --seconds "$(slow 60)" >"$work/long.json"
LONG=$NSX_PID
sleep 1
started() { [ "$(st $FWD_STAT)" -gt $((xs + 100)) ]; }
wait_for "$(slow 10)" started # (python starts slowly on a loaded machine)
x0=$(st $FWD_STAT); sleep 0.5; x1=$(st $FWD_STAT)
check "toed running: the fast path ($FWD_HOOK) forwards the flow ($((x1 - x0)) packets in 0.5 s)" \
	test $((x1 - x0)) -gt 100
kill -9 $TOED; wait $TOED 2>/dev/null
check "toed killed (SIGKILL)" wait_for 2 eval "! kill -0 $TOED 2>/dev/null"
OLD=$(nsx s ip -j link show s1 | jq -r '.[0].address') NEW=02:5e:00:00:34:01
# (the capture's 2.5 s count from the change, not from its start: in the
# guest, at idle priority beside the host's tests, the commands between
# may take longer than that)
nsx_bg s env ETHCOUNT_AFTER_USR1=1 python3 "$TOE_TOP/selftests/tools/ethcount.py" s1 "$(slow 2.5)" 5201 times \
	>"$work/eth.json" 2>"$work/eth.err"
ETH=$NSX_PID
wait_for "$(slow 5)" grep -q ready "$work/eth.err" || { fail "ethcount"; finish; }
sleep 0.3
# the server announces its new MAC (arp_notify: a gratuitous ARP as the
# address changes); the router's kernel takes it into its existing entry
# for $S4 (arp_process: a gratuitous ARP overrides whatever the locktime,
# no arp_accept needed for an entry that exists)
nsx s sysctl -qw net.ipv4.conf.s1.arp_notify=1
nsx s ip link set s1 address $NEW
kill -USR1 $ETH
x2=$(st $FWD_STAT)
wait $ETH
x3=$(st $FWD_STAT)
kill -USR1 $LONG
echo "# frames on s1 by destination MAC [frames, first, last], gratuitous ARPs sent by sender MAC: $(cat "$work/eth.json")"
# t0: the announcement leaving s1; t1: the first frame at the new MAC;
# the old MAC's last frame (the kernel's clock, all three)
read -r t0 t1 tl < <(jq -r --arg o "$OLD" --arg m $NEW \
	'[.garp[$m] // "null", (.[$m] // [0, "null"])[1], (.[$o] // [0, 0, 0])[2]] | map(tostring) | join(" ")' "$work/eth.json")
echo "# the server announced $NEW at $t0; first frame to it at $t1: after $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }') ms; the old MAC's last at $tl"
check "the server's gratuitous ARP for $NEW seen leaving s1 (capture drops: $(jq .drops "$work/eth.json"))" test "$t0" != null
check "the server receives the flow at its new MAC within 100 ms of announcing it" \
	awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(a != "null" && b != "null" && b - a >= 0 && b - a <= 0.1) }'
check "frames to the old MAC ($OLD) stop within 100 ms of it" \
	awk -v a="$t0" -v l="$tl" 'BEGIN { exit !(a != "null" && l < a + 0.1) }'
check "... and the flow goes on at the new MAC ($NEW)" \
	jq -e --arg m $NEW '(.[$m] // [0])[0] > 100' "$work/eth.json"
check "... forwarded by the fast path, toed still dead ($((x3 - x2)) packets)" test $((x3 - x2)) -gt 100
wait $LONG
check "the data arrived intact ($(jq .bytes "$work/long.json") bytes, sha256 equal)" intact long
finish
