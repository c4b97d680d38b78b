#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# nconn enforcement: nconn+5 connections, exactly nconn offloaded and 5
# refused with reason capacity; closing them (half by RST) and a connection
# refused half-way leave the device count at 0.  Then LRU pressure: more
# live offloaded flows than flow-table entries, and still no drift.
. "$(dirname "$0")/setup.sh"
plan 15
load_toe --flows 16
cfg=$(conf cap <<'EOF2'
device small type chelsio-t1 nconn 10
device big type software nconn 1000
rule offload dev small rport 5100
rule offload dev big rport 5200
EOF2
)
apply "$cfg" >/dev/null || { fail "apply"; finish; }
server 5100 5200 || exit 1
events_start

# (connections are held until the checks that need them are done, unhold
# FILE, 60 s at most: on a loaded machine a fixed hold could end the first
# ones before the later ones connect, and those would take their slots)
run_held() { # PORT COUNT [--rst]: hold COUNT connections; ASSERT runs meanwhile
	local port=$1 n=$2; shift 2
	HELD_OUT=$CONF_DIR/held.$RANDOM
	client --addr $B4 --port "$port" --count "$n" --hold 60 "$@" >"$HELD_OUT" &
	HELD_PID=$!
	wait_for 10 grep -q held "$HELD_OUT"
}

run_held 5100 8 || fail "8 connections"
run_held2_out=$CONF_DIR/held2
client --addr $B6 --port 5100 --count 7 --hold 60 --rst >"$run_held2_out" &
pid2=$!
wait_for 10 grep -q held "$run_held2_out" || fail "7 more connections"
check "exactly nconn=10 live on the device" test "$(dev_live 0 live)" = 10
check "the XDP filter counts the 10 offloaded sockets, not the refused ones" test "$(filter_live)" = 10
n_off=$(flows | jq '[.[] | select(.rport == 5100 and .decision == 1)] | length')
n_cap=$(flows | jq '[.[] | select(.rport == 5100 and .decision == 0 and .reason == 2)] | length')
echo "flow table (16 entries): $n_off offloaded, $n_cap refused for capacity"
unhold "$HELD_OUT"; unhold "$run_held2_out"
wait $HELD_PID $pid2
events_stop
check "15 connections: 10 flow_offloaded events" \
	test "$(jq -s '[.[] | select(.type == "flow_offloaded" and .rport == 5100)] | length' "$EVENTS")" = 10
check "and 5 flow_refused with reason capacity" \
	test "$(jq -s '[.[] | select(.type == "flow_refused" and .rport == 5100 and .reason == 2)] | length' "$EVENTS")" = 5
released() { [ "$(dev_live 0 live)" = 0 ]; }
check "after FIN and RST closes the device count is back to 0" wait_for 5 released
check "10 slots released, 5 refusals counted" \
	test "$(dev_live 0 released)" = 10 -a "$(dev_live 0 refused)" = 5
check "and the XDP filter's counts are back to 0" test "$(filter_live)" = 0

# Refused half-way: nothing listens on 5101 (RST to the SYN).
before=$(dev_live 0 offloaded)
check_not "a connection to a closed port fails" client --addr $B4 --port 5101
check "it took no slot" test "$(dev_live 0 live)" = 0 -a "$(dev_live 0 offloaded)" = "$before"

# LRU pressure: 100 live offloaded flows (200 tracked sockets) in 16 entries.
run_held 5200 100 || fail "100 connections"
check "100 slots held while the flow table holds 16" \
	test "$(dev_live 1 live)" = 100 -a "$(flows | jq length)" -le 16
check "the XDP filter still counts all 100 (evicted records: high, never low)" test "$(filter_live)" = 100
unhold "$HELD_OUT"
wait $HELD_PID
check "evicted flows were seen closing" test "$(stat_sum $STAT_FLOW_EVICTED)" -gt 0
big_released() { [ "$(dev_live 1 live)" = 0 ]; }
check "after LRU eviction of live flows the device count is back to 0" wait_for 5 big_released
check "and so are the XDP filter's counts" test "$(filter_live)" = 0
check "and every slot taken was released" test "$(dev_live 1 released)" = "$(dev_live 1 offloaded)"
finish
