#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The forward path seen from outside (issue 35): every reason it gives a
# routed flow back to the stack or ends its fast path, made to happen once
# with real traffic through the router, each seen as a fwd_returned or
# fwd_ended event in toectl monitor -j (hook, interfaces, reason), counted
# in toectl stats' "reasons" (flows and packets, by hook) and in toed's
# /metrics (opentoe_fwd_returned_flows_total, opentoe_fwd_ended_flows_total,
# opentoe_fwd_returned_packets_total, with a reason label); and the bytes
# of a known transfer, each way, against what was sent plus the headers.
# Two flows that end with FIN carry the bytes, one each way round (the
# client at the lower address, then at the higher); a trickle (a 1000-byte
# segment every 5 ms) lives through a route made unreachable (route), its
# neighbour deleted (neigh), the egress MTU lowered (mtu), XDP's egress
# marked unable to take redirects (stack_only, XDP only), TTL 1 (slow),
# toed stopped with its lease run out (lease), an nftables change
# (ruleset), and ends with an RST (rst); a third is ended by conntrack -D
# (conntrack_gone).  XDP, or tc (test_fwd_reasons_tc.sh).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
# (XDP: stack_only too; tc: scripts/trace/fwd.bt too)
plan $([ "${TOE_FWD_HOOK:-xdp}" = xdp ] && echo 35 || echo 36)
need_cmd conntrack iptables nft curl promtool
need_built toectl toe-tables
router_test fwdrs || exit 1
endpoints_for_hook || exit 1
FLOW=$TOE_TOP/selftests/xdp/fwdflow.py
# how long an event may take to show (the qemu guest's TCG runs all of it,
# the trickles too, several times slower: TOE_SLOW)
W=$(slow 3)
fwd_conf "$work/fwd.conf" || exit 1
dp_load r --dev r0 --dev r1 || { fail "load"; finish; }
wait_for 5 nsx c ping -c1 -W1 $S4 >/dev/null || { fail "the hosts reach each other"; finish; }
defer "nsx r iptables -F FORWARD; nsx r nft delete table inet toe35 2>/dev/null; nsx r nft delete table inet toe50d 2>/dev/null"
# conntrack on in the router (toed follows its destroy events)
nsx r iptables -A FORWARD -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT || { fail "conntrack rule"; finish; }
MPORT=$(nsx r python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
RUN=$work/run
nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$RUN" --metrics 127.0.0.1:$MPORT --log-level info >"$work/toed.log" 2>&1
TOED=$NSX_PID
wait_for 10 test -S "$RUN/toed.sock" || { fail "toed starts"; cat "$work/toed.log"; finish; }
defer "kill -CONT $TOED 2>/dev/null"
ctl() { toectl --run-dir "$RUN" "$@"; }
ctl monitor -j >"$work/mon.json" 2>&1 &
defer "kill $!"
ctl monitor >"$work/mon.txt" 2>&1 &
defer "kill $!"
if [ "$FWD_HOOK" = tc ] && command -v bpftrace >/dev/null; then
	# scripts/trace/fwd.bt on toed's USDT probe (uprobes: no kprobes here)
	bpftrace -p "$TOED" "$TOE_TOP/scripts/trace/fwd.bt" >"$work/bt.out" 2>&1 &
	BTPID=$!
	defer "kill -INT $BTPID 2>/dev/null"
	wait_for 30 grep -qs "^tracing\|fwd.bt:[0-9].*ERROR" "$work/bt.out"
	grep -q "^tracing" "$work/bt.out" || { fail "fwd.bt attaches"; cat "$work/bt.out"; }
fi
nsx_bg s python3 "$FLOW" server --port 5201 >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
r0=$(nsx r ip -j link show r0 | jq '.[0].ifindex') r1=$(nsx r ip -j link show r1 | jq '.[0].ifindex')
# ev LPORT EVENT [REASON]: the monitor's JSON line of the client port's event, on this hook
ev() {
	grep -F "\"event\":\"$2\"" "$work/mon.json" | grep -F "\"lport\":$1," |
		grep -F "\"hook\":\"$FWD_HOOK\"" | grep -F "${3:+\"reason\":\"$3\"}" | tail -n 1
}
has() { test -n "$(ev "$@")"; }

# --- a known transfer, ended by FIN: its bytes each way
C2S=1000016 S2C=200000 # fwdflow.py: a 16-byte header, then --send bytes; --reply back
# known NAME CLIENT_NS SERVER_ADDR IN OUT: one such transfer from
# CLIENT_NS to port 5201 at SERVER_ADDR, through the router from IN to
# OUT: its fwd_admitted, its fwd_ended (reason fin) and its bytes each way
# (it sends once the flow is the fast path's, every byte counted there:
# fwd_go, router.sh)
declare -A BYTES # NAME: "BYTES_C2S BYTES_S2C" of its fwd_ended (fwd.bt's check)
known() {
	local n=$1 in=$4 out=$5 cpid lp e pc bc ps bs lo=54 ii oi
	ii=$(nsx r ip -j link show $in | jq '.[0].ifindex') oi=$(nsx r ip -j link show $out | jq '.[0].ifindex')
	nsx_bg $2 timeout 20 python3 "$FLOW" client --addr $3 --port 5201 --send $((C2S - 16)) --reply $S2C \
		--lport-file "$work/$n.lport" --go-file "$work/$n.go" >"$work/$n.json"
	cpid=$NSX_PID
	fwd_go $n || echo "# $n: not the fast path's within 10 s"
	timeout 25 tail --pid=$cpid -f /dev/null
	lp=$(jq .lport "$work/$n.json")
	check "$n: a transfer's fwd_admitted: hook $FWD_HOOK, in $in (ifindex $ii), out $out (ifindex $oi)" \
		bash -c "jq -e --argjson i $ii --argjson o $oi --arg in $in --arg out $out '.in == \$in and .in_ifindex == \$i and .out == \$out and .out_ifindex == \$o and .device == \"fwd\"' <<<'$(ev "$lp" fwd_admitted)'"
	check "$n: and its fwd_ended, reason fin" wait_for $W has "$lp" fwd_ended fin
	e=$(ev "$lp" fwd_ended fin)
	echo "# $n: fwd_ended: $e"
	# bytes are frames (Ethernet, IPv4, TCP with options: 54 to 94 bytes of
	# headers each); tc counts a GSO skb's headers once and its segments as packets
	pc=$(jq .packets_c2s <<<"$e") bc=$(jq .bytes_c2s <<<"$e") ps=$(jq .packets_s2c <<<"$e") bs=$(jq .bytes_s2c <<<"$e")
	BYTES[$n]="$bc $bs"
	[ "$FWD_HOOK" = tc ] && lo=0
	check "$n: client to server: $bc bytes in $pc packets = $C2S sent + $((bc - C2S)) of headers (${lo}..94 a packet)" \
		test $((bc - C2S)) -ge $((pc * lo)) -a $((bc - C2S)) -le $((pc * 94)) -a $((bc - C2S)) -gt 0
	check "$n: server to client: $bs bytes in $ps packets = $S2C sent + $((bs - S2C)) of headers" \
		test $((bs - S2C)) -ge $((ps * lo)) -a $((bs - S2C)) -le $((ps * 94)) -a $((bs - S2C)) -gt 0
}
known bytes c $S4 r0 r1
# the other way round: the client at the higher address ($S4 > $C4), so
# the second end of the flow's key (raddr, rport), where every other flow
# here has its client first; its bytes still client to server
nsx_bg c python3 "$FLOW" server --port 5201 >"$work/cserver.out" 2>&1
wait_for 5 grep -q ready "$work/cserver.out" || { fail "server in c"; finish; }
known rbytes s $C4 r1 r0

# --- a trickle through every reason to return it
STOP=$work/stop TTL=$work/ttl
nsx_bg c timeout "$(slow 60)" python3 "$FLOW" trickle --addr $S4 --port 5201 --stop "$STOP" --ttl "$TTL" --rst >"$work/trickle.json"
wait_for 10 grep -q lport "$work/trickle.json" || { fail "trickle"; finish; }
lp=$(head -n 1 "$work/trickle.json" | jq .lport)
wait_for $W has "$lp" fwd_admitted || { fail "trickle admitted"; finish; }
each_way() { ctl -j flows port 5201 | jq -e --argjson p "$lp" '.[] | select(.lport == $p) | .bytes_c2s > 10000 and .bytes_s2c > 0 and .packets_c2s > 10 and .bytes_c2s + .bytes_s2c == .xdp_bytes and .packets_c2s + .packets_s2c == .xdp_packets' >/dev/null; }
check "toectl flows -j: the trickle's packets and bytes each way, summing to the total" wait_for $W each_way
sleep 1.1 # older than an admission unwatched by toed holds (the lease's check)
back() { wait_for $W has "$lp" fwd_returned "$1"; }
nsx r ip route add unreachable $S4/32
check "a route made unreachable: fwd_returned, reason route" back route
nsx r ip route del unreachable $S4/32
nsx r ip neigh del $S4 dev r1
check "the next hop's neighbour deleted: reason neigh" back neigh
sleep 0.2
# a bulk flow under an egress MTU of 1400: its 1448-byte segments (on tc,
# GSO skbs: they pass the route lookup and fail bpf_check_mtu's check of
# each segment); then 1000, under the trickle's 1052-byte packets
nsx r ip link set r1 mtu 1400
nsx_t 20 c python3 "$FLOW" client --addr $S4 --port 5201 --send 2000000 >"$work/bulk.json" &
BULK=$!
bulk_mtu() { local p; for p in $(nsx c ss -Htn dport = :5201 | awk '{ sub(/.*:/, "", $(NF-1)); print $(NF-1) }') $(jq -r '.lport // empty' "$work/bulk.json" 2>/dev/null); do [ "$p" != "$lp" ] && has "$p" fwd_returned mtu && return 0; done; return 1; }
check "a bulk flow over the egress MTU: reason mtu" wait_for 5 bulk_mtu
wait $BULK
nsx r ip link set r1 mtu 1000
check "the egress MTU under the trickle's packets: reason mtu" back mtu
nsx r ip link set r1 mtu 1500
if [ "$FWD_HOOK" = xdp ]; then
	# $MAP_IFACES' TOE_IFACE_NO_XDP_TX (4) on r1, as toe-loader sets it for a veth without --xdp-veth-tx
	key=$(printf '%02x %02x %02x %02x' $((r1 & 255)) $((r1 >> 8 & 255)) 0 0)
	val=$(bpftool -j map lookup pinned "$PIN/$MAP_IFACES" key hex $key | jq -r '.value | map(ltrimstr("0x")) | join(" ")')
	set -- $val
	bpftool map update pinned "$PIN/$MAP_IFACES" key hex $key value hex ${@:1:8} $(printf %02x $((0x$9 | 4))) ${@:10}
	check "an egress that takes no XDP redirect: reason stack_only" back stack_only
	bpftool map update pinned "$PIN/$MAP_IFACES" key hex $key value hex $val
fi
touch "$TTL"
check "the client's packets with TTL 1: reason slow" back slow
rm -f "$TTL"
sleep 0.3
# toed stopped, its lease run out (lease_ns, $MAP_FWD_GEN's first 8 bytes, 0)
kill -STOP $TOED
val=$(bpftool -j map lookup pinned "$PIN/$MAP_FWD_GEN" key 0 0 0 0 | jq -r '.value | map(ltrimstr("0x")) | join(" ")')
bpftool map update pinned "$PIN/$MAP_FWD_GEN" key 0 0 0 0 value hex 00 00 00 00 00 00 00 00 $(cut -d' ' -f9- <<<"$val")
sleep 0.3
kill -CONT $TOED
check "toed stopped and its lease out: reason lease" back lease
rdm() { test "$(stat_of "$PIN" $STAT_FWD_READMITTED)" -ge "$1"; }
check "  and re-admitted by the stack once toed is back" wait_for $W rdm 1
nsx r nft add table inet toe35
check "an nftables change: reason ruleset" back ruleset
wait_for $W rdm 2
touch "$STOP"
check "the trickle closed with an RST: fwd_ended, reason rst" wait_for $W has "$lp" fwd_ended rst
# once a transition, never a packet: hundreds of the trickle's packets
# went to the stack for TTL 1 and for the MTU, one event each
nev() { grep -F '"event":"fwd_returned"' "$work/mon.json" | grep -F "\"lport\":$lp," | grep -c "\"reason\":\"$1\""; }
check "one fwd_returned for the TTL's packets ($(nev slow)), one for the MTU's ($(nev mtu))" \
	test "$(nev slow)" = 1 -a "$(nev mtu)" = 1
wait_for $W grep -q sent "$work/trickle.json"

# --- conntrack destroys a flow's entry: toed ends its fast path
rm -f "$STOP"
nsx_bg c timeout "$(slow 30)" python3 "$FLOW" trickle --addr $S4 --port 5201 --stop "$STOP" >"$work/ct.json"
wait_for 10 grep -q lport "$work/ct.json" || { fail "trickle 2"; finish; }
lp=$(head -n 1 "$work/ct.json" | jq .lport)
wait_for $W has "$lp" fwd_admitted || fail "trickle 2 admitted"
sleep 0.2
nsx r conntrack -D -p tcp --sport "$lp" >/dev/null 2>&1
check "conntrack -D: fwd_ended, reason conntrack_gone" wait_for $W has "$lp" fwd_ended conntrack_gone
touch "$STOP"
check "the text monitor says the same: [fwd_returned] ... reason mtu" \
	grep -q "^\[fwd_returned\] $C4:[0-9]* -> $S4:5201 forward reason mtu dev fwd hook $FWD_HOOK in r0 out r1 c2s" "$work/mon.txt"
check "toed logs them (info): fwd_ended ... reason conntrack_gone" grep -q "fwd_ended.*reason conntrack_gone" "$work/toed.log"
check "nothing reported evicted: $MAP_FWD had room, and toed saw every FIN and RST ($(grep -c '"reason":"evicted"' "$work/mon.json"))" \
	test "$(grep -c '"reason":"evicted"' "$work/mon.json")" = 0

if [ -n "$BTPID" ]; then
	kill -INT $BTPID; wait $BTPID 2>/dev/null
	grep -v "failed to detach\|uprobe_events\|RLIMIT_MEMLOCK\|^$" "$work/bt.out" | sed 's/^/# /' | head -30
	bt_bytes() {
		local n
		for n in bytes rbytes; do
			set -- ${BYTES[$n]}
			grep -q "fwd_ended  *fin  *tc  *[0-9]*  *$1  *$2$" "$work/bt.out" || return 1
		done
	}
	check "fwd.bt: each transfer's fwd_ended, fin, tc, its bytes each way (${BYTES[bytes]}; ${BYTES[rbytes]})" bt_bytes
	check "fwd.bt: the counts at the end, by event, hook and reason" \
		grep -q '^@events\[fwd_returned, tc, mtu\]: [1-9]' "$work/bt.out"
fi

# --- every reason counted: toectl stats (flows, packets) and /metrics
ctl -j stats >"$work/stats.json"
curl -sf --max-time 5 -o "$work/scrape" "http://127.0.0.1:$MPORT/metrics" 2>/dev/null ||
	nsx r curl -sf --max-time 5 -o "$work/scrape" "http://127.0.0.1:$MPORT/metrics"
if [ "$FWD_HOOK" = xdp ]; then
	FLOWS="fwd_flows_xdp_route fwd_flows_xdp_neigh fwd_flows_xdp_mtu fwd_flows_xdp_stack_only fwd_flows_xdp_slow fwd_flows_xdp_lease fwd_flows_xdp_ruleset fwd_flows_xdp_fin fwd_flows_xdp_rst fwd_flows_xdp_conntrack_gone"
	PKTS="fwd_packets_xdp_route fwd_packets_xdp_neigh fwd_packets_xdp_mtu fwd_packets_xdp_stack_only fwd_packets_xdp_slow fwd_packets_xdp_lease fwd_packets_xdp_ruleset fwd_packets_xdp_fin fwd_packets_xdp_rst"
else
	FLOWS="fwd_flows_tc_route fwd_flows_tc_neigh fwd_flows_tc_mtu fwd_flows_tc_slow fwd_flows_tc_lease fwd_flows_tc_ruleset fwd_flows_tc_fin fwd_flows_tc_rst fwd_flows_tc_conntrack_gone"
	PKTS="fwd_packets_tc_route fwd_packets_tc_neigh fwd_packets_tc_mtu fwd_packets_tc_slow fwd_packets_tc_lease fwd_packets_tc_ruleset fwd_packets_tc_fin fwd_packets_tc_rst"
fi
# the lists are the table's (build/toe-tables): every reason on this hook
# but evicted (toe_fwd's LRU making room: no test fills it here), the
# packets of those that have a packet counter
toe-tables -j >"$work/tables.json"
col() { jq -r --arg r "$1" ".fwd_reasons[] | select(.name == \$r) | .$2" "$work/tables.json"; }
want=$(jq -r --arg h "$FWD_HOOK" '.fwd_reasons[] | select(.hooks | split(",") | index($h)) |
	select(.name != "evicted") | .name' "$work/tables.json" | sort | tr '\n' ' ')
wantp=$(for r in $want; do [ "$(col "$r" packets)" = true ] && echo "$r"; done | sort | tr '\n' ' ')
listed() { for n in $1; do echo "${n#fwd_"$2"_"$FWD_HOOK"_}"; done | sort | tr '\n' ' '; }
check "the reasons counted here are TOE_FWD_REASON_TABLE's on $FWD_HOOK but evicted (flows: $(listed "$FLOWS" flows); packets: $(listed "$PKTS" packets))" \
	test "$(listed "$FLOWS" flows)" = "$want" -a "$(listed "$PKTS" packets)" = "$wantp"
zero() { for n in $1; do [ "$(jq ".reasons.$n" "$work/stats.json")" -ge 1 ] 2>/dev/null || echo -n "$n "; done; }
z=$(zero "$FLOWS")
check "toectl stats: every reason's flows counted on $FWD_HOOK${z:+; zero: $z}" test -z "$z"
z=$(zero "$PKTS")
check "toectl stats: and its packets${z:+; zero: $z}" test -z "$z"
check "toectl stats (text) has the reasons section" bash -c "ctl() { toectl --run-dir '$RUN' \"\$@\"; }; ctl stats | grep -q '^  fwd_flows_${FWD_HOOK}_mtu '"
mz=""
for n in $FLOWS; do
	r=${n#fwd_flows_"$FWD_HOOK"_}
	f=opentoe_fwd_$(col "$r" kind)_flows_total
	v=$(awk -v s="$f{hook=\"$FWD_HOOK\",reason=\"$r\"}" '$1 == s { print $2 }' "$work/scrape")
	[ "${v:-0}" -ge 1 ] || mz="$mz$r "
	if [ "$(col "$r" packets)" = true ]; then
		v=$(awk -v s="opentoe_fwd_returned_packets_total{hook=\"$FWD_HOOK\",reason=\"$r\"}" '$1 == s { print $2 }' "$work/scrape")
		[ "${v:-0}" -ge 1 ] || mz="${mz}packets:$r "
	fi
done
check "/metrics: every reason, flows and packets, with its reason label${mz:+; zero: $mz}" test -z "$mz"
fb=$(awk '$1 == "opentoe_datapath_fwd_bytes_total" { print $2 }' "$work/scrape")
check "/metrics: the total forwarded bytes (${fb:-none}) at least the transfer's" test "${fb:-0}" -ge $((C2S + S2C))
check "toectl stats: fwd_bytes the same counter" test "$(jq .datapath.fwd_bytes "$work/stats.json")" -ge $((C2S + S2C))

# --- the open flows gauge, and the rule on toed's scrapes: flows
# returned at a high rate (three trickles, returned by a ruleset change
# before each of 8 scrapes; selftests/metrics/scrape2test.py: a minute apart)
rm -f "$STOP"
for i in 1 2 3; do
	nsx_bg c timeout "$(slow 30)" python3 "$FLOW" trickle --addr $S4 --port 5201 --stop "$STOP" >"$work/t$i.json"
done
open3() { nsx r curl -sf --max-time 5 "http://127.0.0.1:$MPORT/metrics" | grep -q "^opentoe_fwd_flows{device=\"fwd\",hook=\"$FWD_HOOK\",proto=\"tcp\",state=\"fast\"} 3$"; }
check "/metrics: opentoe_fwd_flows{device=\"fwd\",hook=\"$FWD_HOOK\",proto=\"tcp\",state=\"fast\"} 3 with three trickles" wait_for $W open3
# the gauge counts each flow in its own state, not all as one of them: one
# trickle dropped by FORWARD waits to be re-admitted (readmit) while the
# ruleset change returns and re-admits the other two (fast)
lp1=$(head -n 1 "$work/t1.json" | jq .lport)
gauge() { nsx r curl -sf --max-time 5 "http://127.0.0.1:$MPORT/metrics" |
	awk -v s="opentoe_fwd_flows{device=\"fwd\",hook=\"$FWD_HOOK\",proto=\"tcp\",state=\"$1\"}" '$1 == s { print $2 }'; }
mixed() { test "$(gauge fast)" = 2 -a "$(gauge readmit)" = 1; }
nsx r nft -f - <<EOF2
table inet toe50d {
	chain f {
		type filter hook forward priority 0;
		tcp sport $lp1 drop
		tcp dport $lp1 drop
	}
}
EOF2
wait_for $W mixed
check "/metrics: with one of them dropped by FORWARD, fast 2 and readmit 1 (fast $(gauge fast), readmit $(gauge readmit))" mixed
nsx r nft delete table inet toe50d
check "and fast 3 again once the drop is gone" wait_for $(slow 10) open3
mkdir -p "$work/s"
rset() { ctl -j stats | jq ".reasons.fwd_flows_${FWD_HOOK}_ruleset"; }
rgrew() { test "$(rset)" -ge "$1"; }
for i in 0 1 2 3 4 5 6 7; do
	n0=$(stat_of "$PIN" $STAT_FWD_READMITTED) rs0=$(rset)
	nsx r nft add table inet toe35r$i
	nsx r nft delete table inet toe35r$i
	# all three returned and re-admitted before the scrape
	wait_for $W rgrew $((rs0 + 3)) && wait_for $W rdm $((n0 + 3))
	nsx r curl -sf --max-time 5 -o "$work/s/$i" "http://127.0.0.1:$MPORT/metrics"
done
touch "$STOP"
T=$work/rules.test.yml
python3 "$TOE_TOP/selftests/metrics/scrape2test.py" "$TOE_TOP/dist/prometheus/opentoe-rules.yml" \
	"$TOE_TOP/selftests/metrics/rules_fwd_returning.yml" "$work"/s/? >"$T"
out=$(promtool test rules "$T" 2>&1); rc=$?
check "promtool: OpentoeFastPathReturning fires on toed's scrapes${out:+: $(tail -n 15 <<<"$out")}" test "$rc" = 0
finish
