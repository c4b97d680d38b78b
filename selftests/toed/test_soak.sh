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

# connections: CPS a second, in one-second rounds, until the stop file
STOP=$CONF_DIR/stop CONNS=$CONF_DIR/conns
conns() {
	local n=0 t
	while [ ! -e "$STOP" ]; do
		t=$(date +%s%N)
		client --addr "$B4" --port 5300 --count 1 >/dev/null 2>&1 # keeps the path warm
		in_cg a python3 "$TCPX" storm --addr "$B4" --port 5300 --count "$CPS" --parallel 8 >>"$CONNS" 2>&1
		n=$((n + CPS + 1))
		t=$(( (1000000000 - ($(date +%s%N) - t)) / 1000000 ))
		[ "$t" -gt 0 ] && sleep "0.$(printf %03d "$t")"
	done
	echo "$n" >"$CONF_DIR/nconns"
}
conns &
CONNPID=$!
defer "touch $STOP; kill $CONNPID"

# warm-up: a few seconds of the same load, then the first sample
python3 "$TOE_TOP/selftests/tools/ctlsoak.py" "$RUN/toed.sock" --clients 8 --seconds 3 >/dev/null
FD0=$(fds) RSS0=$(rss)
OUT=$CONF_DIR/soak
rate=(); [ "$RATE" != 0 ] && rate=(--rate "$RATE")
python3 "$TOE_TOP/selftests/tools/ctlsoak.py" "$RUN/toed.sock" --clients 8 --seconds "$SECS" "${rate[@]}" >"$OUT"
touch "$STOP"; wait "$CONNPID"
sleep 2.5 # clients lingering, events of the last connections: settled
FD1=$(fds) RSS1=$(rss)
echo "# soak: $(cat "$OUT"); connections: $(cat "$CONF_DIR/nconns" 2>/dev/null) in ${SECS}+3 s"
echo "# toed fds $FD0 -> $FD1, RSS $RSS0 -> $RSS1 KiB"
check "requests were made: $(jq .requests "$OUT") ($(jq .per_s "$OUT")/s)" jq -e '.requests >= 100' "$OUT"
check "every answer well formed (JSON parsed): $(jq -c .first_bad "$OUT")" jq -e '.bad == 0' "$OUT"
check "connections went through: $(grep -c '"errors": 0' "$CONNS") rounds without an error" \
	test -z "$(grep '"errors"' "$CONNS" | grep -v '"errors": 0')" -a -s "$CONNS"
check "toed is alive and answers" ctl status
check "toed's open fds did not grow: $FD0 -> $FD1 (at most +4)" test "$FD1" -le $((FD0 + 4))
check "toed's RSS did not grow past 4 MiB: $RSS0 -> $RSS1 KiB" test "$RSS1" -le $((RSS0 + 4096))
check "no client was dropped for time or over the limit" \
	jq -e '.control.clients_timed_out == 0 and .control.clients_over_limit == 0' < <(ctl -j stats)
check "flow events were seen" jq -e '.daemon.events_flow_offloaded > 0' < <(ctl -j stats)
finish
