#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Repeated log lines are rate-limited and counted (issue 31 item 10,
# user/toed/log.c logm_limited): a burst of 60 connections refused for
# capacity logs at most 10 flow_refused lines a second, then says how many
# it suppressed; toectl status, stats and the metrics count them.
. "$(dirname "$0")/setup.sh"
need_cmd curl
plan 5
toed_t3 loglimit 1
MPORT=$(nsx a python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
stop_toed 9
start_toed "$cfg" --metrics "$MPORT" || { fail "toed restarts"; finish; }
server 5300 || exit 1
# one connection holds the only slot; 60 more are refused (capacity)
# (held until the 60 are done: unhold)
client --addr "$B4" --port 5300 --count 1 --hold 60 >"$CONF_DIR/held" &
HOLD=$!
wait_for 10 grep -q held "$CONF_DIR/held"
client --addr "$B4" --port 5300 --count 60 >/dev/null
unhold "$CONF_DIR/held"
wait "$HOLD"
sleep 2.5 # the 2 s timer says what was held back
refused=$(ctl -j stats | jq '.daemon.events_flow_refused')
nref=$(grep -c "warning: \[flow_refused\]" "$TOED_LOG")
supp=$(sed -n 's/.*suppressed \([0-9]*\) similar messages (flow_refused events).*/\1/p' "$TOED_LOG" | awk '{ s += $1 } END { print s + 0 }')
check "60 connections refused by the datapath (toed saw $refused)" test "$refused" -ge 60
check "at most 10 refused lines a second were logged ($nref in all)" test "$nref" -le 30 -a "$nref" -ge 1
check "the log says how many it suppressed ($supp), and they add up ($nref + $supp = $refused)" \
	test "$supp" -gt 0 -a $((nref + supp)) = "$refused"
check "toectl -j status counts them" jq -e ".log_suppressed == $supp" < <(ctl -j status)
check "the metrics export them" \
	grep -qx "opentoe_toed_log_suppressed_total $supp" < <(nsx a curl -s --max-time 2 "http://127.0.0.1:$MPORT/metrics")
finish
