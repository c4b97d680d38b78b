#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toed under load (issue 17): clients making control requests as fast as
# they can (or at a set rate) while short TCP connections go through the
# datapath (events, flows, TIDs); every answer well formed (JSON read by
# Python's json), toed alive, and its open fds and RSS not growing past a
# small bound between a warm-up sample and the end.
# Short (make check): 8 clients as fast as they can for 10 s, 200
# connections a second.  TOE_SOAK_LONG=1 (make soak): 60 s, 1,000 requests
# a second, 1,000 connections a second.
. "$(dirname "$0")/setup.sh"
plan 8
if [ -n "${TOE_SOAK_LONG:-}" ]; then
	SECS=60 RATE=1000 CPS=1000
else
	SECS=10 RATE=0 CPS=200
fi
toed_t3 soak 1000
server 5300 || { fail "server"; finish; }
fds() { ls "/proc/$TOED_PID/fd" | wc -l; }
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$TOED_PID/status"; }

# connections: CPS a second (selftests/tools/connstorm, C: Python's storm
# reached about 365 a second here) for the warm-up and the soak.  At 1,000
# a second the client's TIME_WAITs would use up namespace a's ephemeral
# ports within 30 s; tcp_tw_reuse=1 lets a new connection take one over.
CONNS=$CONF_DIR/conns
nsx a sysctl -qw net.ipv4.tcp_tw_reuse=1
in_cg a "$TOE_BUILD/selftests/connstorm" -a "$B4" -p 5300 -r "$CPS" -s $((SECS + 3)) -t 8 >"$CONNS" 2>&1 &
CONNPID=$!
defer "kill $CONNPID"

# warm-up: a few seconds of the same load, then the first sample
python3 "$TOE_TOP/selftests/tools/ctlsoak.py" "$RUN/toed.sock" --clients 8 --seconds 3 >/dev/null
FD0=$(fds) RSS0=$(rss)
OUT=$CONF_DIR/soak
rate=(); [ "$RATE" != 0 ] && rate=(--rate "$RATE")
python3 "$TOE_TOP/selftests/tools/ctlsoak.py" "$RUN/toed.sock" --clients 8 --seconds "$SECS" "${rate[@]}" >"$OUT"
wait "$CONNPID"
sleep 2.5 # clients lingering, events of the last connections: settled
FD1=$(fds) RSS1=$(rss)
echo "# soak: $(cat "$OUT"); connections: $(cat "$CONNS")"
echo "# toed fds $FD0 -> $FD1, RSS $RSS0 -> $RSS1 KiB"
check "requests were made: $(jq .requests "$OUT") ($(jq .per_s "$OUT")/s)" jq -e '.requests >= 100' "$OUT"
check "every answer well formed (JSON parsed): $(jq -c .first_bad "$OUT")" jq -e '.bad == 0' "$OUT"
check "connections went through at $CPS a second, none failed: $(cat "$CONNS")" \
	jq -e --argjson r "$CPS" '.errors == 0 and .per_s >= 0.9 * $r' "$CONNS"
check "toed is alive and answers" ctl status
check "toed's open fds did not grow: $FD0 -> $FD1 (at most +4)" test "$FD1" -le $((FD0 + 4))
check "toed's RSS did not grow past 4 MiB: $RSS0 -> $RSS1 KiB" test "$RSS1" -le $((RSS0 + 4096))
check "no client was dropped for time or over the limit" \
	jq -e '.control.clients_timed_out == 0 and .control.clients_over_limit == 0' < <(ctl -j stats)
check "flow events were seen" jq -e '.daemon.events_flow_offloaded > 0' < <(ctl -j stats)
finish
