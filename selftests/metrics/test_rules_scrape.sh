#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Prometheus rules (dist/prometheus/opentoe-rules.yml) on toed's real
# output: a toed with device t3 of nconn 2, two connections held (t3 full),
# then one connection refused for capacity before each of 11 scrapes;
# selftests/metrics/scrape2test.py makes the scrapes (one a minute) the
# input series of a promtool unit test, and rules_on_scrape.yml asserts the
# recording rules' labels and values and which alerts fire (near capacity,
# refusals rising with reason capacity, nothing else).  toed's --metrics
# address appears only after toed started (metrics_bind_failed, retried).  A label on the
# wrong family, or a family renamed, fails it: the rules find nothing.
. "$(dirname "$0")/../toed/setup.sh"
plan 9
need_cmd curl promtool
load_toe_xdp || { fail "load"; finish; }
cfg=$(conf_t3 rules 2)
MPORT=$(nsx a python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# --metrics on an address namespace a does not have yet: toed runs on,
# counts the failed bind (metrics_bind_failed) and binds once it is there
MADDR=10.202.0.77
start_toed "$cfg" --metrics "$MADDR:$MPORT" || { fail "toed starts"; cat "$TOED_LOG"; finish; }
bfail() { [ "$(ctl -j stats | jq .control.metrics_bind_failed)" -ge 1 ]; }
check "--metrics on an absent address: toed runs on, metrics_bind_failed counts it" wait_for 3 bfail
nsx a ip addr add "$MADDR/32" dev va
scrape() { nsx a curl -sf --max-time 5 "http://$MADDR:$MPORT/metrics" >"$1"; }
check "  and serves once the address is there" wait_for 10 scrape "$CONF_DIR/first"
server 5300 || { fail "server"; finish; }
client --addr "$B4" --port 5300 --count 2 --hold 120 >/dev/null &
HOLD=$!
defer "kill $HOLD 2>/dev/null"
full() { ctl -j devices | jq -e '.[] | select(.device == "t3") | .live == 2' >/dev/null; }
check "device t3 (nconn 2) full: two connections held" wait_for 10 full
S=$CONF_DIR/scrapes
mkdir -p "$S"
scrape "$S/00" || fail "scrape"
for i in 01 02 03 04 05 06 07 08 09 10 11; do
	client --addr "$B4" --port 5300 --send 100 >/dev/null || fail "connection $i"
	sleep 0.2 # the flow_refused event read
	scrape "$S/$i" || fail "scrape $i"
done
refused=$(awk '$1 == "opentoe_device_refused_total{device=\"t3\",reason=\"capacity\"}" { print $2 }' "$S/11")
check "the scrapes saw t3's capacity refusals (${refused:-none} at the last)" test "${refused:-0}" -ge 11
frefused=$(awk '$1 == "opentoe_flows_refused_total{reason=\"capacity\"}" { print $2 }' "$S/11")
check "and toed's flow_refused events by reason (opentoe_flows_refused_total capacity: ${frefused:-none})" \
	test "${frefused:-0}" -ge 11
check "the datapath's own count of them ($MAP_REASONS): toectl stats refused_capacity, opentoe_datapath_refused_total" \
	test "$(ctl -j stats | jq .reasons.refused_capacity)" -ge 11 -a \
	"$(awk '$1 == "opentoe_datapath_refused_total{reason=\"capacity\"}" { print $2 }' "$S/11")" -ge 11
byp=$(grep -c '^opentoe_bypass_to_tcp_total{reason="\(no_peer\|refused\|drain\|backlog\)"} [0-9]' "$S/11")
check "the scrape has opentoe_bypass_to_tcp_total for each of the 4 reasons ($byp)" test "$byp" = 4
T=$CONF_DIR/rules-on-scrape.test.yml
python3 "$TOE_TOP/selftests/metrics/scrape2test.py" "$TOE_TOP/dist/prometheus/opentoe-rules.yml" \
	"$TOE_TOP/selftests/metrics/rules_on_scrape.yml" "$S"/?? >"$T"
check "a promtool test of $(grep -c 'series:' "$T") series from toed's 12 scrapes" test -s "$T"
out=$(promtool test rules "$T" 2>&1); rc=$?
check "promtool test rules on toed's own series passes${out:+: $(tail -n 15 <<<"$out")}" test "$rc" = 0
finish
