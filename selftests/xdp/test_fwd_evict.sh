#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A fast path the LRU evicts (issue 35): toe_fwd (toe-loader --flows 4) is
# too small for the 12 routed flows a client opens through the router, so
# admitting some evicts others, which no program sees go.  toed, which
# tracks the flows it heard admitted, finds them gone without a FIN or RST
# and reports each: fwd_ended, reason evicted, in toectl monitor -j, toectl
# stats' reasons and /metrics.  The evicted flows join the fast path
# again mid-stream, each at most TOE_FWD_JOIN_MAX times a minute (the
# thrash is bounded: fwd_join_limited).  The flows themselves go on,
# intact.  XDP, or tc (test_fwd_evict_tc.sh).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 7
need_cmd curl iptables
need_built toectl
router_test fwdev || exit 1
endpoints_for_hook || exit 1
FLOW=$TOE_TOP/selftests/xdp/fwdflow.py
fwd_conf "$work/fwd.conf" || exit 1
dp_load r --dev r0 --dev r1 --flows 4 || { fail "load"; finish; }
# conntrack on the router: it says which flows are established, which an
# evicted flow needs to join again (issue 48)
defer "nsx r iptables -F FORWARD"
nsx r iptables -A FORWARD -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT || { fail "conntrack rule"; finish; }
wait_for 5 nsx c ping -c1 -W1 $S4 >/dev/null || { fail "the hosts reach each other"; finish; }
MPORT=$(nsx r python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
RUN=$work/run
nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$RUN" --metrics 127.0.0.1:$MPORT >"$work/toed.log" 2>&1
wait_for 10 test -S "$RUN/toed.sock" || { fail "toed starts"; cat "$work/toed.log"; finish; }
ctl() { toectl --run-dir "$RUN" "$@"; }
ctl monitor -j >"$work/mon.json" 2>&1 &
defer "kill $!"
nsx_bg s python3 "$FLOW" server --port 5201 >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
STOP=$work/stop
for i in $(seq 1 12); do
	nsx_bg c timeout 30 python3 "$FLOW" trickle --addr $S4 --port 5201 --stop "$STOP" >"$work/t$i.json"
	sleep 0.05
done
n_ev() { grep -F '"event":"fwd_ended"' "$work/mon.json" | grep -F "\"hook\":\"$FWD_HOOK\"" | grep -c '"reason":"evicted"'; }
some() { [ "$(n_ev)" -ge 1 ]; }
# toed looks every 2 s (its timer)
check "toectl monitor -j: fwd_ended, reason evicted, for flows $MAP_FWD had no room for ($(n_ev))" wait_for 6 some
ev=$(grep -F '"reason":"evicted"' "$work/mon.json" | head -n 1)
echo "# $ev"
lp=$(jq .lport <<<"$ev")
# (toed reports an eviction from what it tracked of the admission: each
# field from there, the router's namespace too)
rns=$(nsx r $PKT netns)
ev_ok() { jq -e '.device == "fwd" and .in == "r0" and .out == "r1" and .laddr == "'$C4'" and .netns_cookie == '"$rns" <<<"$ev" >/dev/null; }
check "  with its device, interfaces, client first, the router's namespace (cookie $rns)" ev_ok
# (an evicted flow joins again and may be evicted again: each time its
# own fwd_ended, evicted; never one of another reason)
check "  a flow that sent no FIN or RST (port $lp: every fwd_ended of it says evicted)" \
	test "$(grep -F "\"lport\":$lp," "$work/mon.json" | grep -F '"event":"fwd_ended"' | grep -vc '"reason":"evicted"')" = 0
n=$(n_ev) # (before the counter: toed counts an eviction before it shows it)
check "toectl stats: fwd_flows_${FWD_HOOK}_evicted counts them (xdp: fwd_flows_xdp_evicted, tc: fwd_flows_tc_evicted; $n shown)" \
	test "$(ctl -j stats | jq ".reasons.fwd_flows_${FWD_HOOK}_evicted")" -ge "$n"
v=$(nsx r curl -sf --max-time 5 "http://127.0.0.1:$MPORT/metrics" |
	awk -v s="opentoe_fwd_ended_flows_total{hook=\"$FWD_HOOK\",reason=\"evicted\"}" '$1 == s { print $2 }')
check "/metrics: opentoe_fwd_ended_flows_total{hook=\"$FWD_HOOK\",reason=\"evicted\"} ${v:-none}" test "${v:-0}" -ge 1
# evicted flows join again mid-stream (issue 48), evicting others in turn:
# at most TOE_FWD_JOIN_MAX joins a flow a minute, the rest held back
jmax=$(sed -n 's/^#define TOE_FWD_JOIN_MAX \([0-9]*\)$/\1/p' "$TOE_TOP/include/opentoe_forward.h")
held() { [ "$(stat_of "$PIN" $STAT_FWD_JOIN_LIMITED)" -ge 1 ]; }
wait_for 5 held
jn=$(stat_of "$PIN" $STAT_FWD_JOINED)
check "evicted flows join again, at most ${jmax:-?} times each a minute: fwd_joined $jn (<= $((12 * ${jmax:-0}))), fwd_join_limited $(stat_of "$PIN" $STAT_FWD_JOIN_LIMITED)" \
	test -n "$jmax" -a "$jn" -ge 1 -a "$jn" -le $((12 * ${jmax:-0})) -a "$(stat_of "$PIN" $STAT_FWD_JOIN_LIMITED)" -ge 1
touch "$STOP"
sent() { [ "$(cat "$work"/t*.json | grep -c sent)" = 12 ]; }
wait_for 10 sent
got() { [ "$(grep -c peer_port "$work/server.out")" = 12 ]; }
check "all 12 flows ended cleanly, the evicted ones through the stack" wait_for 5 got
finish
