#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toectl's text forms, what an operator reads, against its -j forms: under
# real TCP (offloaded IPv4 flows on two devices, an IPv6 one, the host's
# own, two refused at their device's capacity, a /metrics scrape), for each
# command with both forms (status, devices, flows, neigh, stats, policy,
# and the events of monitor, line by line),
# every value the JSON reports is in the text with the same value (a
# counter or an age that moves meanwhile: between its JSON values just
# before and just after), or is one the command's table in
# selftests/tools/textjson.py declares the text does not show.
. "$(dirname "$0")/setup.sh"
cmds=(status devices flows neigh stats policy)
plan $((${#cmds[@]} * 2 + 4))
load_toe_xdp || { fail "load"; finish; }
cfg=$(conf text <<'EOF2'
device t3 type chelsio-t3 nconn 100 dev va
device sw0 type software nconn 1 steer forward
rule offload dev t3 rport 5300 keepalive 60 10 5
rule offload dev sw0 family inet6 rport 5400
rule offload dev sw0 remote 10.202.0.0/24 rport 5500-5501
rule host lport 1-1023
quota events 60%
EOF2
)
port=$((20000 + $$ % 20000))
start_toed "$cfg" --metrics "127.0.0.1:$port" || { fail "toed starts"; cat "$TOED_LOG"; finish; }
# the monitor in both forms, side by side: its lines are compared one by one
ctl -j monitor >"$CONF_DIR/monitor.json" &
MJ=$!
defer "kill $MJ"
ctl monitor >"$CONF_DIR/monitor.txt" &
MT=$!
defer "kill $MT"
sleep 0.3
server 5300 5400 5500 || exit 1
HELD=$CONF_DIR/held
# the IPv6 one first: it takes sw0's one connection, 5500's then find it full
: >"$HELD.1"
client --addr "$B6" --port 5400 --send 30000 --count 1 --hold 20 >"$HELD.1" &
wait_for 10 grep -q held "$HELD.1"
client --addr "$B4" --port 5300 --send 100000 --count 3 --hold 20 >"$HELD.2" &
client --addr "$B4" --port 5500 --send 1000 --count 2 --hold 20 >"$HELD.3" &
done_sending() { [ "$(cat "$HELD".? | grep -c held)" = 3 ]; }
check "the clients connected and sent, and hold their connections" wait_for 10 done_sending
nsx a curl -s -o /dev/null "http://127.0.0.1:$port/metrics"
sleep 0.5
# one connection opened and closed, and a reload: more events
client --addr "$B4" --port 5300 --send 1000 >/dev/null
ctl reload >/dev/null
TJ=$TOE_TOP/selftests/tools/textjson.py
for c in "${cmds[@]}"; do
	ctl -j "$c" >"$CONF_DIR/$c.1.json" && ctl "$c" >"$CONF_DIR/$c.txt" &&
		ctl -j "$c" >"$CONF_DIR/$c.2.json"
	rc=$?
	check "toectl $c and toectl -j $c answer" test $rc = 0
	out=$(python3 "$TJ" "$c" "$CONF_DIR/$c.1.json" "$CONF_DIR/$c.txt" "$CONF_DIR/$c.2.json" 2>&1)
	rc=$?
	check "toectl $c: every value of its -j form in its text form: $(tr '\n' ';' <<<"$out")" test $rc = 0
done
sleep 0.3
kill "$MJ" "$MT"
wait "$MJ" "$MT" 2>/dev/null
out=$(python3 "$TJ" monitor "$CONF_DIR/monitor.json" "$CONF_DIR/monitor.txt" \
	"$(stat -L -c %i "/run/netns/$(ns_name a)")" 2>&1)
rc=$?
check "toectl monitor: each event's text line has every value of its -j line: $(tr '\n' ';' <<<"$out")" test $rc = 0
# status' counts of neighbours and local addresses: the entries of the
# maps toed mirrors them into (a neighbour learned meanwhile: between)
entries() { bpftool -j map dump pinned "$PIN/$1" | jq length; }
n0=$(entries "$MAP_NEIGH") a0=$(entries "$MAP_LOCAL_ADDR")
s=$(ctl -j status)
n1=$(entries "$MAP_NEIGH")
check "status: $(jq -c '{neighbours, local_addresses}' <<<"$s"): $MAP_NEIGH's entries ($n0-$n1) and $MAP_LOCAL_ADDR's ($a0), some of each" \
	jq -e --argjson n0 "$n0" --argjson n1 "$n1" --argjson a "$a0" \
	'.neighbours >= $n0 and .neighbours <= $n1 and .neighbours > 0 and .local_addresses == $a and $a > 0' <<<"$s"
# the traffic the test meant: what the text must then show
check "flows: 3 offloaded to t3, the IPv6 one to sw0, 5500's two refused at sw0's capacity (nconn 1)" \
	jq -e '([.[] | select(.rport == 5300 and .device == "t3" and .decision == "offload")] | length) == 3 and
		([.[] | select(.rport == 5400 and .device == "sw0" and .family == 6)] | length) == 1 and
		([.[] | select(.rport == 5500 and .reason == "capacity")] | length) == 2' "$CONF_DIR/flows.1.json"
finish
