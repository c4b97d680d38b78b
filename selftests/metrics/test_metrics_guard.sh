#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The metrics endpoint never stops the control plane (issue 31 item 7,
# user/toed/metrics.c): a port another program holds is logged, retried
# and shown in toectl status while toed runs on, then bound once free; a
# request has a whole deadline (3 s) however slowly its bytes come; slow
# clients are limited per address and in total, the stalest evicted, so
# a fresh scrape is answered within 1 s while 16 (and 64) slow clients
# hold connections, and 6 slow clients of one address evict their own, not
# another address's.
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd curl jq python3
need_built toed toectl
plan 14

T=$(mktemp -d /tmp/opentoe-mg.XXXXXX)
defer "rm -rf $T"
ns_add m || exit 1
printf 'device t3 type chelsio-t3 nconn 4\n' >"$T/c.conf" && chmod 600 "$T/c.conf"
DRIP=$TOE_TOP/selftests/tools/drip.py
ctl() { toectl --run-dir "$T/run" "$@"; }

# a squatter on the port first (another local user's program)
nsenter --net=/run/netns/"$(ns_name m)" python3 -c '
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(60)' >"$T/port" &
SQ=$!
defer "kill $SQ"
wait_for 5 test -s "$T/port"
P=$(cat "$T/port")
nsenter --net=/run/netns/"$(ns_name m)" toed --config "$T/c.conf" --pin-dir "$TOE_PIN_DIR-mg" \
	--run-dir "$T/run" --metrics "$P" >"$T/log" 2>&1 &
TOED=$!
defer "kill -9 $TOED"
wait_for 10 ctl status >/dev/null
check "toed runs with the metrics port taken: $(tail -c 300 "$T/log")" ctl status
check "the log says so: retrying" grep -q "metrics $P: cannot listen: Address already in use; trying again" "$T/log"
check "toectl status: metrics retrying, why" \
	grep -q "^metrics: *retrying $P: cannot listen: Address already in use" < <(ctl status)
check "toectl -j status: .metrics.state retrying" \
	jq -e '.metrics.state == "retrying" and .metrics.bind_failed >= 1 and (.metrics.error | test("in use"))' < <(ctl -j status)
kill "$SQ"; wait "$SQ" 2>/dev/null
URL=http://127.0.0.1:$P/metrics
check "once the squatter leaves, toed binds (within 10 s) and serves" \
	wait_for 10 nsx m curl -sf --max-time 1 -o /dev/null "$URL"
check "toectl -j status: .metrics.state serving" jq -e '.metrics.state == "serving"' < <(ctl -j status)

# scrape: a fresh curl's time (s) for a 200, else "fail"
scrape() {
	nsx m curl -s -o /dev/null --max-time 3 -w '%{http_code} %{time_total}\n' "$URL" |
		awk '$1 == 200 { print $2; next } { print "fail" }'
}
# slow N SRC...: N dripping clients for 5 s; three scrapes, 1 s apart, within 1 s each
slow() {
	local n=$1 src=$2 t worst=0 i
	nsx m python3 "$DRIP" 127.0.0.1 "$P" -n "$n" --every 1 --for 5 --src "$src" >"$T/drip" &
	sleep 1
	for i in 1 2 3; do
		t=$(scrape)
		[ "$t" = fail ] && worst=fail && break
		worst=$(awk -v a="$worst" -v b="$t" 'BEGIN { print (b > a ? b : a) }')
		sleep 1
	done
	wait
	echo "$worst"
}
w=$(slow 16 127.0.0.1)
check "16 slow clients on the scraper's own address: fresh scrapes answered within 1 s (worst $w s; $(cat "$T/drip"))" \
	awk -v w="$w" 'BEGIN { exit !(w != "fail" && w < 1) }'
srcs=$(seq -s, -f '127.0.1.%g' 1 64)
ev0=$(ctl -j status | jq .metrics.evicted)
w=$(slow 64 "$srcs")
check "64 slow clients from 64 addresses: fresh scrapes within 1 s (worst $w s; $(cat "$T/drip"))" \
	awk -v w="$w" 'BEGIN { exit !(w != "fail" && w < 1) }'
# each address under its own limit (1 of 4): only the limit in all (48)
# evicts, the stalest first, at least 64 - 48 of them
ev=$(($(ctl -j status | jq .metrics.evicted) - ev0))
check "  the limit in all (48) evicted the stalest of them: $ev evicted" test "$ev" -ge 16
# per address: 2 slow clients of 127.0.2.1 (under its limit of 4), then 6
# of 127.0.2.2: the stalest of 127.0.2.2's go, never 127.0.2.1's
nsx m python3 "$DRIP" 127.0.0.1 "$P" -n 2 --every 0.5 --for 2.5 --src 127.0.2.1 >"$T/dripa" &
DA=$!
sleep 0.5
nsx m python3 "$DRIP" 127.0.0.1 "$P" -n 6 --every 0.5 --for 1.5 --src 127.0.2.2 >"$T/dripb"
wait "$DA"
check "6 slow clients of one address evict their own, not another address's 2 ($(cat "$T/dripa") $(cat "$T/dripb"))" \
	eval 'jq -e ".opened == 2" "$T/dripa" && jq -e ".opened > 6" "$T/dripb"'
# two slow clients, under every limit: the whole-request deadline alone
nsx m python3 "$DRIP" 127.0.0.1 "$P" -n 2 --every 0.5 --for 5.5 >"$T/drip" &
DR=$!
sleep 1
c1=$(ctl -j status | jq .metrics.connections)
wait "$DR"
conns0() { [ "$(ctl -j status | jq .metrics.connections)" = 0 ]; }
wait_for 5 conns0
c2=$(ctl -j status | jq .metrics.connections)
check "toectl status counts the open connections: $c1 while the two drip, $c2 once they are gone" \
	test "$c1" -ge 2 -a "$c2" = 0
check "a request dripping a header line every 0.5 s lives 3 s, the deadline (+1 s): $(cat "$T/drip")" \
	jq -e '.longest >= 2.5 and .longest <= 4' "$T/drip"
st=$(ctl -j status)
check "status counts the closes: deadline and evicted ($(jq -c .metrics <<<"$st"))" \
	jq -e '.metrics.deadline > 0 and .metrics.evicted > 0' <<<"$st"
check "the metrics export them" \
	grep -q '^opentoe_metrics_connections_closed_total{reason="evicted"} [1-9]' < <(nsx m curl -s --max-time 2 "$URL")
finish
