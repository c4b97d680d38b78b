#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A routed flow whose slots in the local flows' filter (toe_flow_filter)
# say "maybe": the ingress program then looks the packet up among the
# local flows, with the namespace in the key (not found: not a local
# flow), and hands the same scratch key to the fast path, which must clear
# it before it makes the flow's key (fwd_key's memset: a routed flow's
# netns is 0).  Filter slots are shared (65,536 of them): here both of
# the flow's are marked by hand, as an offloaded local flow hashing there
# would.  The flow takes the fast path all the same, and ends byte-exact.
# (Issue 50: the rule-made reset mutant forward.h:57, fwd_key's memset
# removed, passed every test: none had a routed flow meet a marked slot.)
# XDP, or tc (test_fwd_filter_hit_tc.sh).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 3
router_test fwdfilt || exit 1
endpoints_for_hook || exit 1
fwd_conf "$work/fwd.conf" || exit 1
dp_load r --dev r0 --dev r1 && fill_neigh "$PIN" || { fail "load, neighbours"; finish; }
nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$work/run" >"$work/toed.log" 2>&1
wait_for 10 test -S "$work/run/toed.sock" || { fail "toed starts"; cat "$work/toed.log"; finish; }
nsx_bg s python3 "$XFER" server --port 5201 >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
nsx_bg c python3 "$XFER" client --addr $S4 --port 5201 --seconds 60 \
	--lport-file "$work/f.lport" --go-file "$work/f.go" >"$work/f.json"
CLIENT=$NSX_PID
wait_for 10 test -s "$work/f.lport" || { fail "client"; finish; }
CP=$(cat "$work/f.lport")
# the filter slots of the flow's two ingress keys (ingress_key: the local
# end is the destination; toe_filter_slot, include/opentoe_flows.h)
slots=$(python3 - $C4 $S4 "$CP" 5201 <<'PY'
import ipaddress, struct, sys
def slot(l, r, lp, rp):
    a, b = (struct.unpack("<I", ipaddress.ip_address(x).packed)[0] for x in (l, r))
    return ((a ^ b ^ (lp << 16 | rp)) * 0x9e3779b1 & 0xffffffff) >> 16
c, s, cp, sp = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
print(slot(s, c, sp, cp), slot(c, s, cp, sp))
PY
)
live() { bpftool -j map lookup pinned "$PIN/$MAP_FLOW_FILTER" key $(printf '%d %d %d %d' $(($1 & 255)) $(($1 >> 8)) 0 0) |
	jq -r '.formatted.value.live'; }
for sl in $slots; do
	bpftool map update pinned "$PIN/$MAP_FLOW_FILTER" key $(printf '%d %d %d %d' $((sl & 255)) $((sl >> 8)) 0 0) \
		value 1 0 0 0 0 0 0 0 || break
done
marked=$(for sl in $slots; do live "$sl"; done | tr '\n' ' ')
check "both slots of the flow ($slots) say maybe (live: $marked)" test "$marked" = "1 1 "
fwd_go f
x0=$(stat_of "$PIN" $FWD_STAT)
sleep 2
x1=$(stat_of "$PIN" $FWD_STAT)
check "the flow takes the fast path all the same ($FWD_NAME forwarded $((x1 - x0)) packets in 2 s, states $(fwd_states f | tr '\n' ' '))" \
	test $((x1 - x0)) -gt 1000
kill -USR1 "$CLIENT"
wait "$CLIENT"
check "the flow finishes byte-exact" intact f
finish
