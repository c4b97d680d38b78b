#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toed --metrics: /metrics in Prometheus' text format (HELP and TYPE,
# promtool check metrics), 404 and 405, garbage answered with an HTTP
# error, a stalled client that does not hold toed's loop, bad --metrics
# values refused; a real Prometheus scraping toed while TCP traffic runs,
# whose /api/v1/query answers equal what toectl reports once the traffic
# is over; a scrape's cost with 262,144 flow records in toe_flows; the
# rules of dist/prometheus checked and unit-tested with promtool.
. "$(dirname "$0")/../toed/setup.sh"
plan 45
need_cmd curl promtool prometheus ss
need_built selftests/flowfill

# --- bad values are refused at start, naming them
for bad in bad 127.0.0.1:0 127.0.0.1:99999 300.1.2.3:9100 host.example:9100 '[::1:9100'; do
	out=$(timeout 10 toed --metrics "$bad" 2>&1); rc=$?
	check "toed --metrics '$bad' exits nonzero naming it: $out" \
		test "$rc" -ne 0 -a -n "$(grep -F "bad --metrics '$bad'" <<<"$out")"
done

# --- toed with --metrics PORT: 127.0.0.1 by default
load_toe_xdp || { fail "load"; finish; }
cfg=$(conf_t3 metrics)
MPORT=$(nsx a python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_toed "$cfg" --metrics "$MPORT" || { fail "toed starts"; cat "$TOED_LOG"; finish; }
check "toed --metrics $MPORT listens on 127.0.0.1:$MPORT only" \
	test "$(nsx a ss -Htln "sport = :$MPORT" | awk '{print $4}')" = "127.0.0.1:$MPORT"
URL=http://127.0.0.1:$MPORT
mcurl() { nsx a curl -s --max-time 5 "$@"; }

M=$CONF_DIR/metrics.txt
hdr=$(mcurl -o "$M" -D - "$URL/metrics")
if ! grep -qi '^content-type: text/plain; version=0.0.4' <<<"$hdr"; then
	# nothing else can pass: stop now (short of the plan: a failure)
	fail "GET /metrics: 200, text/plain; version=0.0.4; got: $(head -c 200 <<<"$hdr")"
	finish
fi
ok "GET /metrics: 200, text/plain; version=0.0.4"
# every sample's family has a HELP and a TYPE line (histograms: _bucket, _sum, _count)
untyped=$(awk '/^# HELP /{h[$3]=1} /^# TYPE /{t[$3]=$4} /^[a-z]/{
	n=$1; sub(/[{ ].*/, "", n); b=n; sub(/_(bucket|sum|count)$/, "", b)
	if (!((n in h && n in t) || (t[b] == "histogram" && b in h))) print n }' "$M")
check "every sample has HELP and TYPE lines${untyped:+: not $untyped}" test -z "$untyped" -a -s "$M"
out=$(promtool check metrics <"$M" 2>&1); rc=$?
check "promtool check metrics reports nothing${out:+: $out}" test "$rc" = 0 -a -z "$out"
check "no toectl stats counter left unmapped (untyped)" test "$(grep -c ' untyped$' "$M")" = 0
check "opentoe_build_info{version} 1 and a start time within a minute of now" awk -v now="$(date +%s)" '
	/^opentoe_build_info\{version="[^"]+"\} 1$/ { b = 1 }
	/^opentoe_toed_start_time_seconds / { s = (now - $2 < 60 && now - $2 > -5) }
	END { exit !(b && s) }' "$M"
check "device t3: capacity 100, no per-flow series" bash -c \
	"grep -qx 'opentoe_device_capacity_connections{device=\"t3\"} 100' '$M' && ! grep -q 'port=\|laddr=\|raddr=' '$M'"
check "a path other than /metrics: 404" test "$(mcurl -o /dev/null -w '%{http_code}' "$URL/other")" = 404
check "POST /metrics: 405" test "$(mcurl -o /dev/null -w '%{http_code}' -X POST -d x "$URL/metrics")" = 405
# RFC 9110: a 405 names the methods allowed; no other answer has the header
allow=$(mcurl -D - -o /dev/null -X POST -d x "$URL/metrics" | tr -d '\r' | grep -i '^allow:')
other=$(mcurl -D - -o /dev/null "$URL/metrics"; mcurl -D - -o /dev/null "$URL/other")
check "the 405 says 'Allow: GET, HEAD', the 200 and the 404 have no Allow (${allow:-none})" \
	test "$allow" = "Allow: GET, HEAD" -a -z "$(grep -i '^allow:' <<<"$other")"

# --- garbage and a stalled client
raw() { # BYTES (python escapes): the first line of the answer
	nsx a python3 -c "
import socket, sys
s = socket.create_connection(('127.0.0.1', $MPORT), timeout=5)
s.sendall(b'$1')
print(s.recv(200).split(b'\r\n')[0].decode(errors='replace'))"
}
ans=$(raw 'garbage / HTTP/9\r\n\r\n')
check "a garbage request line gets an HTTP 4xx error: $ans" grep -Eq '^HTTP/1\.[01] 4[0-9][0-9]' <<<"$ans"
ans=$(raw 'GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n')
check "a bad Content-Length gets an HTTP 4xx error: $ans" grep -Eq '^HTTP/1\.[01] 4[0-9][0-9]' <<<"$ans"
# binary garbage: libmicrohttpd 0.9.75 answers nothing to a request line
# with NUL bytes; the connection times out (10 s) and toed goes on
nsx a python3 -c "
import socket
s = socket.create_connection(('127.0.0.1', $MPORT), timeout=2)
s.sendall(bytes(range(256)) * 8)" 2>/dev/null
check "binary garbage: a scrape is still answered" \
	test "$(mcurl -o /dev/null -w '%{http_code}' "$URL/metrics")" = 200
check "toed survives garbage" kill -0 "$TOED_PID"
# three clients connect, send half a request each and sit
nsx a python3 -c "
import socket, time
ss = [socket.create_connection(('127.0.0.1', $MPORT)) for _ in range(3)]
for s in ss: s.sendall(b'GET /metr')
time.sleep(6)" &
STALL=$!
defer "kill $STALL"
sleep 0.5
t0=$(date +%s%N)
timeout 2 toectl --run-dir "$RUN" status >/dev/null; rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "toectl status answers in ${ms} ms while three clients stall on the metrics port" \
	test "$rc" = 0 -a "$ms" -lt 1000
check "and a scrape is answered meanwhile" \
	test "$(mcurl -o /dev/null -w '%{http_code}' "$URL/metrics")" = 200
kill "$STALL" 2>/dev/null; wait "$STALL" 2>/dev/null
# six half requests from one address (over PER_IP_LIMIT, 4): the stalest
# go as the next arrive (metrics_evicted); the rest are cut at the 3 s
# request deadline (metrics_deadline)
e0=$(ctl -j stats | jq .control.metrics_evicted) d0=$(ctl -j stats | jq .control.metrics_deadline)
nsx a python3 -c "
import socket, time
ss = []
for _ in range(6):
    s = socket.create_connection(('127.0.0.1', $MPORT)); s.sendall(b'GET /metr'); ss.append(s); time.sleep(0.05)
time.sleep(3.8)"
check "six stalled clients from one address: the stalest evicted (metrics_evicted $e0 -> $(ctl -j stats | jq .control.metrics_evicted))" \
	test "$(ctl -j stats | jq .control.metrics_evicted)" -gt "$e0"
check "  and the others cut at the 3 s request deadline (metrics_deadline $d0 -> $(ctl -j stats | jq .control.metrics_deadline))" \
	test "$(ctl -j stats | jq .control.metrics_deadline)" -gt "$d0"

# --- a second toed on the same port: the bind refused, naming it, and
# toed runs on, retrying (docs/operator-guide.md "metrics: retrying"); it
# is stopped once it said so, or after 10 s (SIGALRM is timeout(1)'s own
# timer: it stops toed as at the 10 s)
nsenter --net=/run/netns/"$(ns_name a)" timeout 10 toed --config "$cfg" --pin-dir "$PIN.other" \
	--run-dir "$CONF_DIR/run2" --metrics "127.0.0.1:$MPORT" >"$CONF_DIR/toed2.out" 2>&1 &
t2=$! # (nsenter execs timeout)
wait_for 10 grep -qF -- "--metrics 127.0.0.1:$MPORT: cannot listen" "$CONF_DIR/toed2.out"
alive=no
kill -0 $t2 2>/dev/null && alive=yes
kill -ALRM $t2 2>/dev/null
wait $t2
out=$(cat "$CONF_DIR/toed2.out")
check "a port in use: toed names it and runs on, retrying (still running once it said so: $alive): $(grep -F -- 'cannot listen' <<<"$out" | head -n 1)" \
	test "$alive" = yes -a -n "$(grep -F -- "--metrics 127.0.0.1:$MPORT: cannot listen" <<<"$out")"

# --- neighbour propagation latency: an rtnetlink change is measured
ncount() { mcurl "$URL/metrics" | awk '/^opentoe_neigh_propagation_seconds_count /{print $2}'; }
mcurl "$URL/metrics" >"$CONF_DIR/nlat.0"
n0=$(awk '/^opentoe_neigh_propagation_seconds_count /{print $2}' "$CONF_DIR/nlat.0")
# toed's start dumped the neighbours: each timed from its own read, none
# from boot (CLOCK_MONOTONIC 0) as when only events set the read time
slow=$(awk '/^opentoe_neigh_propagation_seconds_bucket\{le="1"\} /{b = $2} /^opentoe_neigh_propagation_seconds_count /{c = $2} END {print c - b}' "$CONF_DIR/nlat.0")
check "no neighbour propagation over 1 s since toed started ($slow; $(grep '^opentoe_neigh_propagation_seconds_sum ' "$CONF_DIR/nlat.0"))" \
	test "$slow" = 0
ngrew() { [ "$(ncount)" -gt "${n0:-0}" ]; }
nsx a ip neigh replace 10.202.0.99 lladdr 02:00:00:00:00:99 dev va
check "a neighbour change adds to opentoe_neigh_propagation_seconds ($n0 before)" wait_for 5 ngrew
# each observation in the first bucket whose le it does not pass: what the
# change added to the sum lies between what it added to the buckets times
# their lower bounds (the le before) and times their le
nlat_bounds() { # SCRAPE_BEFORE SCRAPE_AFTER
	python3 - "$1" "$2" <<'EOF2'
import re, sys
f = "opentoe_neigh_propagation_seconds"
def hist(path):
    b, s = [], None
    for l in open(path):
        m = re.match(f + r'_bucket\{le="([^"]+)"\} (\d+)$', l)
        if m:
            b.append((float(m.group(1)), int(m.group(2))))
        elif l.startswith(f + "_sum "):
            s = float(l.split()[1])
    return b, s
(b0, s0), (b1, s1) = hist(sys.argv[1]), hist(sys.argv[2])
lo = hi = le0 = 0.0
c0 = 0
for (le, c), (_, p) in zip(b1, b0):
    k = (c - p) - c0  # observations added to this bucket alone
    lo, hi = lo + k * le0, hi + k * le if k else hi
    le0, c0 = le, c - p
ds = s1 - s0
print("%d observed, %.9f s, buckets say %.9f..%s s" % (c0, ds, lo, hi))
sys.exit(0 if c0 > 0 and lo - 2e-9 <= ds <= hi + 2e-9 else 1)
EOF2
}
mcurl "$URL/metrics" >"$CONF_DIR/nlat.1"
b=$(nlat_bounds "$CONF_DIR/nlat.0" "$CONF_DIR/nlat.1")
check "  its buckets agree with its sum: $b" nlat_bounds "$CONF_DIR/nlat.0" "$CONF_DIR/nlat.1"

# --- a real Prometheus scraping toed while TCP traffic runs
PPORT=$(nsx a python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PDIR=$(mktemp -d /tmp/opentoe-prom.XXXXXX)
defer "rm -rf $PDIR"
cat >"$PDIR/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: toed
    static_configs:
      - targets: ['127.0.0.1:$MPORT']
EOF
nsx_bg a prometheus --config.file="$PDIR/prometheus.yml" --storage.tsdb.path="$PDIR/data" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$PDIR/log" 2>&1
PROM=$NSX_PID
q() { # PROMQL: the first result's value
	mcurl "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" |
		command jq -r '.data.result[0].value[1] // empty'
}
up1() { [ "$(q 'up{job="toed"}')" = 1 ]; }
check "Prometheus scrapes toed: up{job=\"toed\"} == 1" wait_for 30 up1 ||
	tail -5 "$PDIR/log"

server 5300 || { fail "server"; finish; }
client --addr "$B4" --port 5300 --send 3000000 --count 4 --hold 60 >"$PDIR/held" &
CLIENT=$!
live() { [ "$(q 'opentoe_device_live_connections{device="t3"}')" -ge 1 ] 2>/dev/null; }
check "during the traffic Prometheus sees live connections on t3" wait_for 10 live
wait_for 10 grep -q held "$PDIR/held"
unhold "$PDIR/held"
wait "$CLIENT"
off4() { [ "$(ctl -j devices | command jq '.[] | select(.device == "t3") | .offloaded')" -ge 4 ]; }
check "the traffic ran (4 connections offloaded on t3)" wait_for 5 off4

# PROMQL JQ_OF_CMD CMD...: Prometheus' answer equals toectl's, once it has
# scraped after the traffic (wait_for: the counters no longer change)
same() {
	local p t
	p=$(q "$1") t=$("${@:3}" | command jq -r "$2")
	[ -n "$p" ] && [ "$p" = "$t" ] || { echo "prometheus $p, toectl $t" >&2; return 1; }
}
# agree DESC PROMQL JQ TOECTL_VIEW: check that PROMQL comes to toectl -j
# TOECTL_VIEW's JQ (within 15 s)
agree() { check "$1" wait_for 15 same "$2" "$3" ctl -j "$4"; }
agree "opentoe_datapath_established_total = toectl stats .datapath.established" 'opentoe_datapath_established_total' '.datapath.established' stats
agree "opentoe_toed_events_total{type=flow_closed} = toectl stats .daemon.events_flow_closed" 'opentoe_toed_events_total{type="flow_closed"}' '.daemon.events_flow_closed' stats
agree "opentoe_toed_events_total{type=flow_offloaded} = toectl stats .daemon.events_flow_offloaded" 'opentoe_toed_events_total{type="flow_offloaded"}' '.daemon.events_flow_offloaded' stats
agree "opentoe_device_offloaded_total{device=t3} = toectl devices' offloaded" 'opentoe_device_offloaded_total{device="t3"}' '.[] | select(.device == "t3") | .offloaded' devices
agree "opentoe_xdp_parse_packets_total{result=tcp} = toectl stats .datapath.xdp_parse_tcp" 'opentoe_xdp_parse_packets_total{result="tcp"}' '.datapath.xdp_parse_tcp' stats
agree "flows closed by decision add up to the flow_closed events" 'sum(opentoe_flows_closed_total)' '.daemon.events_flow_closed' stats
kill "$PROM"; wait "$PROM" 2>/dev/null

# --- every toectl stats counter the metrics carry (its row of
# user/toed/fields.h, listed by scripts/counters.py) equals its series in
# a scrape taken just before (requests: toectl's own request may be counted
# by then, one more; no module: its kmod_ series may be absent); and the families that are not toectl counters
mcurl "$URL/metrics" >"$M.after"
ctl -j stats >"$CONF_DIR/stats.json"
python3 "$TOE_TOP/scripts/counters.py" --cmaps "$TOE_TOP" >"$CONF_DIR/cmaps"
diffs=$(while read -r key fam labels; do
	[ "$labels" = - ] && want=$fam || want="$fam{$labels}"
	got=$(awk -v n="$want" '$1 == n { print $2 }' "$M.after")
	t=$(jq --arg k "$key" '.daemon[$k] // .control[$k]' "$CONF_DIR/stats.json")
	if [ "$key" = requests ]; then [ "$((t - got))" -le 1 ] 2>/dev/null && continue
	elif [ "$got" = "$t" ]; then continue
	elif [ -z "$got" ] && [ "$t" = 0 ] && [[ $key == kmod_* ]]; then continue; fi # no module: no series
	echo "$key: toectl $t, $want ${got:-absent}"
done <"$CONF_DIR/cmaps")
check "every toectl stats counter equals its metrics series ($(wc -l <"$CONF_DIR/cmaps") of them)${diffs:+: $diffs}" \
	test -z "$diffs" -a -s "$CONF_DIR/cmaps"
check "opentoe_datapath_loaded 1, opentoe_policy_rules 1 and opentoe_policy_serial >= 1 (conf_t3: one rule)" awk '
	$1 == "opentoe_datapath_loaded" { l = $2 == 1 } $1 == "opentoe_policy_rules" { r = $2 == 1 }
	$1 == "opentoe_policy_serial" { s = $2 >= 1 } END { exit !(l && r && s) }' "$M.after"
check "opentoe_policy_apply_duration_seconds: toed's last apply, over 0 and under 5 s" awk '
	$1 == "opentoe_policy_apply_duration_seconds" { d = $2 > 0 && $2 < 5 } END { exit !d }' "$M.after"
check "opentoe_device_released_total{device=t3}: the 4 connections' slots given back" awk '
	$1 == "opentoe_device_released_total{device=\"t3\"}" { r = $2 >= 4 } END { exit !r }' "$M.after"

# --- a scrape's cost with 262,144 records in toe_flows: toed's CPU time
# per scrape over 200 scrapes (utime + stime from /proc, whatever else
# the machine runs), and the median wall time a scraper sees
cost() { # prints: CPU_US_PER_SCRAPE MEDIAN_WALL_US
	local t0 t1
	t0=$(awk '{ print $14 + $15 }' "/proc/$TOED_PID/stat")
	nsx a python3 -c "
import http.client, time
w = []
for _ in range(200):
    c = http.client.HTTPConnection('127.0.0.1', $MPORT, timeout=5)
    t = time.monotonic(); c.request('GET', '/metrics'); r = c.getresponse(); r.read()
    w.append(time.monotonic() - t); c.close()
    assert r.status == 200
w.sort(); print(int(w[100] * 1e6))" >"$CONF_DIR/wall" || echo 999999999 >"$CONF_DIR/wall"
	t1=$(awk '{ print $14 + $15 }' "/proc/$TOED_PID/stat")
	echo "$(((t1 - t0) * 1000000 / $(getconf CLK_TCK) / 200)) $(cat "$CONF_DIR/wall")"
}
read -r cpu0 wall0 < <(cost)
read -r n held < <("$TOE_BUILD/selftests/flowfill" "$PIN/$MAP_FLOWS" 262144)
read -r cpu1 wall1 < <(cost)
echo "scrape cost: toed CPU ${cpu0} us/scrape (wall median ${wall0} us) with the test's flows;" \
	"${cpu1} us/scrape (wall median ${wall1} us) after writing $n records ($MAP_FLOWS holds $held)"
check "a scrape costs under 10 ms with 262,144 flow records (toed CPU ${cpu1} us, wall median ${wall1} us)" \
	test "$n" = 262144 -a "${held:-0}" -ge 250000 -a "$cpu1" -lt 10000 -a "$wall1" -lt 10000

# --- the rules
check "promtool check rules dist/prometheus/opentoe-rules.yml" \
	promtool check rules "$TOE_TOP/dist/prometheus/opentoe-rules.yml"
check "promtool test rules dist/prometheus/opentoe-rules.test.yml" \
	bash -c "cd '$TOE_TOP/dist/prometheus' && promtool test rules opentoe-rules.test.yml"
check "toed is still running and answering" ctl status
finish
