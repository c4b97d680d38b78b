#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The forward path serves only the datapath's home namespace (issue 31,
# item 2): the namespace of the first toe-loader load, where toed runs and
# watches the firewall, sysctls and routes.  Here the home is h (toed runs
# there); the router r loads the same datapath on its interfaces.  Flows r
# routes are never admitted (fwd_not_home counts them); a FORWARD DROP in
# r, which no toed watches, holds at once; toed started in r refuses to
# serve the datapath, saying why.  XDP on r's interfaces, or tc
# (test_fwd_home_tc.sh).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 8
need_cmd iptables
router_test fwdhome || exit 1
endpoints_for_hook || exit 1
fwd_conf "$work/fwd.conf" || exit 1
ns_add h || { fail "home namespace"; finish; }
dp_load h || { fail "load in h"; finish; }
nsx r toe-loader load --dev r0 --dev r1 --cgroup "$CG" --pin-dir "$PIN" $DP_HOOK_ARGS >/dev/null 2>"$work/rload.err" ||
	{ fail "load in r"; cat "$work/rload.err"; finish; }
check "toe-loader in r: the datapath's home is another namespace, said" grep -q "home is another network namespace" "$work/rload.err"
fill_neigh "$PIN" || { fail "neighbours"; finish; }
# (toed in r first: one toed a datapath)
# (it runs on, waiting: timed out once it has said why, at most 10 s;
# SIGALRM is timeout(1)'s own timer)
nsenter --net="/run/netns/$(ns_name r)" timeout 10 toed --config "$work/fwd.conf" --pin-dir "$PIN" \
	--run-dir "$work/run2" >"$work/toed2.log" 2>&1 &
t2=$! # (nsenter execs timeout)
wait_for 10 grep -q "has its home in another network namespace" "$work/toed2.log"
kill -ALRM $t2 2>/dev/null
wait $t2
check "toed in r refuses to serve the datapath of h, saying why" grep -q "has its home in another network namespace" "$work/toed2.log"
nsx_bg h toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$work/run" >"$work/toed.log" 2>&1
TOED=$NSX_PID
wait_for 10 test -S "$work/run/toed.sock" || { fail "toed starts in h"; cat "$work/toed.log"; finish; }
nsx_bg s python3 "$XFER" server --port 5201 --port 5301 >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
st() { stat_of "$PIN" "$1"; }
a0=$(st $STAT_XDP_FWD_FLOWS) n0=$(st $STAT_FWD_NOT_HOME) x0=$(st $FWD_STAT)
nsx_t 30 c python3 "$XFER" client --addr $S4 --port 5201 --bytes 5000000 --connect-timeout 3 >"$work/r.json"
check "a flow r routes gets through (the stack's)" intact r
check "  never admitted, nothing by $FWD_NAME (admissions $(($(st $STAT_XDP_FWD_FLOWS) - a0)), $FWD_NAME $(($(st $FWD_STAT) - x0)))" \
	test "$(st $STAT_XDP_FWD_FLOWS)" = "$a0" -a "$(st $FWD_STAT)" = "$x0"
check "  counted: fwd_not_home $n0 -> $(st $STAT_FWD_NOT_HOME)" test "$(st $STAT_FWD_NOT_HOME)" -gt "$n0"
# a FORWARD DROP in r under a running flow: the stack's, so it holds
defer "nsx r iptables -F FORWARD"
nsx_bg c python3 "$XFER" client --addr $S4 --port 5301 --seconds 4 >"$work/long.json"
sleep 1
nsx r iptables -I FORWARD -p tcp --dport 5301 -j DROP
sleep 0.2
b0=$(grep -c . "$work/server.out")
x1=$(st $FWD_STAT)
sleep 1
check "FORWARD DROP in r (no toed watches r): $FWD_NAME forwards nothing of the flow ($(($(st $FWD_STAT) - x1)) packets)" \
	test "$(st $FWD_STAT)" = "$x1"
check "toed in h logged no home error" bash -c "! grep -q 'home in another' '$work/toed.log'"
# toed stopped (TERM) ends its lease at once: lease_ns ($MAP_FWD_GEN's first
# 8 bytes) 0, the fast path's flows back to the stack without waiting it out
lease() { bpftool -j map lookup pinned "$PIN/$MAP_FWD_GEN" key 0 0 0 0 | jq -r '.value[0:8] | map(ltrimstr("0x")) | join("")'; }
l0=$(lease)
kill -TERM "$TOED" && wait "$TOED"
check "toed stopped (TERM): its lease ends at once (lease_ns $l0 -> $(lease))" test "$l0" != 0000000000000000 -a "$(lease)" = 0000000000000000
finish
