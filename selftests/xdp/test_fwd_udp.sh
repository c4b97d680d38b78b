#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Routed UDP on the fast path (issue 48, item 1): paced streams of
# numbered datagrams (udpseq.py: each echoed by the server, so conntrack
# sees the reply and the stack forwards the flow both ways) through the
# router, IPv4 and IPv6.  A flow a "proto udp" rule names joins the fast
# path as an established TCP flow does mid-stream (proved by the stack
# forwarding it each way, conntrack having seen the reply); one only a
# rule without proto names (TCP's, as every file written before UDP) never
# does.  The fast path keeps conntrack's entry alive past a 3 s
# nf_conntrack_udp_timeout_stream; conntrack -D ends a flow's fast path and
# its new entry brings it back; a FORWARD DROP stops one; a masqueraded
# flow is rewritten (ports, addresses, the UDP checksum) as the stack
# would, IPv4 and IPv6 (NAT66), and so are port forwards (nft DNAT) of
# both; 40 short request/response flows join and every answer arrives;
# ip_forward=0 stops a flow.  Every datagram arrives once, its payload
# intact (the server checks each), except where the DROP rule or
# ip_forward=0 dropped them.  XDP on the router, or tc
# (test_fwd_udp_tc.sh).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 24
need_cmd iptables ip6tables conntrack tcpdump curl
need_built toectl
router_test fwdudp || exit 1
endpoints_for_hook || exit 1
# The end hosts' veths get a qdisc, as a real host's NIC has one.  Their
# peers take XDP (a 256-frame ring each way); with veth's default
# noqueue, a sender that outruns a starved NAPI loses the datagrams at
# its own tx (c0's tx_dropped counted 250 in a run where seven streams
# and the short flows' forty python starts shared two CPUs), before
# the router ever sees them.  With a qdisc the kernel (6.17 and later)
# stops the queue while the ring is full and the datagrams wait.
nsx c tc qdisc replace dev c0 root pfifo limit 10000 &&
	nsx s tc qdisc replace dev s1 root pfifo limit 10000 || { fail "qdiscs on the end hosts' veths"; finish; }
# (default offload: TCP's; a UDP flow no UDP rule names stays in the stack)
printf '%s\n' "device fwd type software nconn 100 steer forward" \
	"default offload dev fwd" "rule offload dev fwd rport 5401-5402 proto udp" \
	"rule offload dev fwd rport 5499" >"$work/fwd.conf" && chmod 600 "$work/fwd.conf"
defer "nsx r iptables -F FORWARD; nsx r ip6tables -F FORWARD; nsx r iptables -t nat -F POSTROUTING"
nsx r iptables -A FORWARD -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT &&
	nsx r ip6tables -A FORWARD -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT || { fail "conntrack rules"; finish; }
# short UDP timeouts: only the fast path's refresh keeps a carried flow's entry
nsx r sysctl -qw net.netfilter.nf_conntrack_udp_timeout=2 net.netfilter.nf_conntrack_udp_timeout_stream=3
UDPSEQ=$TOE_TOP/selftests/xdp/udpseq.py
nsx_bg s python3 "$UDPSEQ" server --port 5401 --port 5402 --port 5499 >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
dp_load r --dev r0 --dev r1 && fill_neigh "$PIN" || { fail "load, neighbours"; finish; }
MPORT=$(nsx r python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$work/run" --metrics 127.0.0.1:$MPORT >"$work/toed.log" 2>&1
wait_for 10 test -S "$work/run/toed.sock" || { fail "toed starts"; cat "$work/toed.log"; finish; }
toectl --run-dir "$work/run" monitor -j >"$work/mon.json" 2>&1 &
defer "kill $!"
toectl --run-dir "$work/run" monitor >"$work/mon.txt" 2>&1 &
defer "kill $!"
st() { stat_of "$PIN" "$1"; }
# entry NAME: flow NAME's toe_fwd entry (its client's port in
# $work/NAME.lport) as "state proto nat", or nothing
entry() { flow_entry "$1" '"\(.value.state) \(.key.proto) \(.value.nat)"'; }
on_fast() { entry "$1" | grep -q "^3 17 "; }
# fpk NAME: the packets the fast path forwarded of flow NAME
fpk() {
	bpftool -j map dump pinned "$PIN/$MAP_FWD" 2>/dev/null |
		jq --argjson c "$(cat "$work/$1.lport")" '[.[] | .formatted | select(.key.lport == $c or .key.rport == $c) | .value.dir_packets | add] | add // 0'
}
# 1,000 datagrams a second; 200 under emulation (TOE_SLOW > 1: the
# guest's sockets and veths drop what TCG cannot keep up with, in the
# stack as on the fast path)
RATE=1000
awk -v s="${TOE_SLOW:-1}" 'BEGIN { exit !(s > 1) }' && RATE=200
start() { # NAME ADDR PORT [STOP]: RATE datagrams of 1,200 bytes a second until $work/STOP (stop)
	nsx_bg c python3 "$UDPSEQ" client --addr "$2" --port "$3" --rate $RATE --stop "$work/${4:-stop}" --lport-file "$work/$1.lport" >"$work/$1.json"
	eval "PID_$1=\$NSX_PID"
}
start a $S4 5401
start b $S6 5401
start n $S4 5499
wait_for "$(slow 5)" test -s "$work/a.lport" -a -s "$work/b.lport" -a -s "$work/n.lport" || { fail "the streams start"; finish; }
check "IPv4 UDP flow a 'proto udp' rule names: on the fast path within 3 s (entry: $(entry a))" wait_for "$(slow 3)" on_fast a
check "IPv6 UDP flow: on the fast path too (entry: $(entry b))" wait_for "$(slow 3)" on_fast b
x0=$(st $FWD_STAT)
sleep 0.5
check "  $FWD_NAME forwards them ($(($(st $FWD_STAT) - x0)) packets in 0.5 s; fwd_joined $(st $STAT_FWD_JOINED))" \
	test "$(st $FWD_STAT)" -gt $((x0 + RATE / 2)) -a "$(st $STAT_FWD_JOINED)" -ge 2
check "a UDP flow only a rule without proto (TCP's) and the default (TCP's too) name never enters $MAP_FWD (entry: '$(entry n)')" test -z "$(entry n)"
pa=$(cat "$work/a.lport")
mon_udp() {
	jq -e -s --argjson p "$pa" '[.[] | select(.event == "fwd_admitted" and .proto == "udp" and .lport == $p and .rport == 5401)] | length >= 1' "$work/mon.json" >/dev/null &&
		grep -Eq "^\[fwd_admitted\] $C4:$pa -> $S4:5401 forward udp conntrack" "$work/mon.txt"
}
check "toectl monitor: the IPv4 flow's fwd_admitted event says udp (-j: proto)" wait_for 2 mon_udp
# toectl dump: the flow's datagrams the fast path forwards, as tcpdump reads them
toectl dump --pin-dir "$PIN" -w "$work/a.pcap" --flow "$C4:$pa,$S4:5401" -c 20 -t "$(slow 5)" >/dev/null 2>&1
# (both ways: the datagrams, 1,200 bytes, and their echoes, 16)
dumped() { tcpdump -nr "$work/a.pcap" 2>/dev/null | grep -cE "($C4.$pa > $S4.5401: UDP, length 1200|$S4.5401 > $C4.$pa: UDP, length 16)\$"; }
check "toectl dump --flow: 20 packets, all the flow's UDP datagrams or their echoes, as tcpdump reads them ($(dumped) of $(tcpdump -nr "$work/a.pcap" 2>/dev/null | wc -l))" \
	test "$(dumped)" = 20 -a "$(tcpdump -nr "$work/a.pcap" 2>/dev/null | wc -l)" = 20
# /metrics: the open fast-path flows by protocol (a and b: two UDP ones)
udp2() { nsx r curl -sf --max-time 5 "http://127.0.0.1:$MPORT/metrics" | grep -q "^opentoe_fwd_flows{device=\"fwd\",hook=\"$FWD_HOOK\",proto=\"udp\",state=\"fast\"} 2$"; }
check "/metrics: opentoe_fwd_flows{...,proto=\"udp\",state=\"fast\"} 2 (the IPv4 and IPv6 flows)" wait_for 3 udp2
check "toectl flows -j says proto udp, and the text a line under its row" \
	bash -c "toectl --run-dir '$work/run' -j flows | jq -e '.[] | select(.lport == $pa) | .proto == \"udp\"' >/dev/null &&
		toectl --run-dir '$work/run' flows | grep -A2 ':$pa ' | grep -q 'proto: udp'"

# ---- conntrack kept: a 3 s stream timeout, 5 s of fast path
sleep 5
ct_kept() { nsx r conntrack -L -p udp --sport "$pa" 2>/dev/null | grep -q 'dport=5401' && on_fast a; }
check "after 5 s on the fast path (udp_timeout_stream 3 s): conntrack still has the flow, the fast path still carries it (entry: $(entry a))" ct_kept

# ---- conntrack -D: the fast path ends, the new entry brings it back
j0=$(st $STAT_FWD_JOINED) t0=$(date +%s%N)
nsx r conntrack -D -f ipv4 -p udp --sport "$pa" --dport 5401 >/dev/null 2>&1
rejoined() { [ "$(st $STAT_FWD_JOINED)" -gt "$j0" ] && on_fast a; }
wait_for "$(slow 3)" rejoined
rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
# (the time it took, seen by 100 ms polls of bpftool: a figure, not a check)
check "conntrack -D of the IPv4 flow: its new entry brings it back (fwd_joined $j0 -> $(st $STAT_FWD_JOINED), entry: $(entry a)), in $ms ms" \
	test $rc = 0

# ---- a FORWARD DROP stops a flow on the fast path (flow x: its own, so
# that a's datagrams all arrive)
start x $S4 5402 stopx
wait_for "$(slow 5)" test -s "$work/x.lport" && wait_for "$(slow 3)" on_fast x || { fail "flow x on the fast path"; finish; }
px=$(cat "$work/x.lport")
nsx r iptables -I FORWARD -p udp --sport "$px" --dport 5402 -j DROP
sleep 0.1
p0=$(fpk x)
sleep 0.5
p1=$(fpk x)
check "a DROP rule for flow x: $FWD_NAME forwards none of it within 100 ms ($((p1 - p0)) packets in the 0.5 s after; entry: $(entry x))" \
	test "$p1" = "$p0"
nsx r iptables -D FORWARD -p udp --sport "$px" --dport 5402 -j DROP
check "  the rule removed: flow x is back on the fast path (entry: $(entry x))" wait_for "$(slow 5)" on_fast x

# ---- masquerade out of r1: a new flow, rewritten by the fast path
nsx r iptables -t nat -A POSTROUTING -o r1 -p udp --dport 5402 -j MASQUERADE || { fail "masquerade rule"; finish; }
start m $S4 5402
wait_for "$(slow 5)" test -s "$work/m.lport" || { fail "flow m starts"; finish; }
m_nat() { entry m | grep -q "^3 17 1$"; }
check "a masqueraded UDP flow: on the fast path with its translation (entry: $(entry m))" wait_for "$(slow 3)" m_nat
m0=$(fpk m)
sleep 0.5
check "  $FWD_NAME rewrites and forwards it ($(($(fpk m) - m0)) packets in 0.5 s)" test "$(fpk m)" -gt $((m0 + RATE * 3 / 10))

# ---- IPv6 masquerade (NAT66) out of r1
nsx r ip6tables -t nat -A POSTROUTING -o r1 -p udp --dport 5402 -j MASQUERADE || { fail "IPv6 masquerade rule"; finish; }
defer "nsx r ip6tables -t nat -F"
start m6 $S6 5402
wait_for "$(slow 5)" test -s "$work/m6.lport" || { fail "flow m6 starts"; finish; }
m6_nat() { entry m6 | grep -q "^3 17 1$"; }
check "a masqueraded IPv6 UDP flow (NAT66): on the fast path with its translation (entry: $(entry m6))" wait_for "$(slow 3)" m6_nat

# ---- port forwards (nft): R4a:6401 -> S4:5401, [R6a]:6401 -> [S6]:5401
nsx r nft -f - <<NFT || { fail "nft DNAT"; finish; }
table ip toeudp {
	chain pre {
		type nat hook prerouting priority dstnat;
		iifname "r0" udp dport 6401 dnat to $S4:5401
	}
}
table ip6 toeudp6 {
	chain pre {
		type nat hook prerouting priority dstnat;
		iifname "r0" udp dport 6401 dnat to [$S6]:5401
	}
}
NFT
defer "nsx r nft delete table ip toeudp; nsx r nft delete table ip6 toeudp6; true"
start d $R4a 6401
start d6 $R6a 6401
wait_for "$(slow 5)" test -s "$work/d.lport" -a -s "$work/d6.lport" || { fail "flows d, d6 start"; finish; }
d_nat() { entry d | grep -q "^3 17 1$" && entry d6 | grep -q "^3 17 1$"; }
check "UDP port forwards, IPv4 and IPv6: on the fast path with their translation (entries: $(entry d), $(entry d6))" wait_for "$(slow 3)" d_nat
d0=$(($(fpk d) + $(fpk d6)))
sleep 0.5
check "  $FWD_NAME rewrites and forwards both ($(($(fpk d) + $(fpk d6) - d0)) packets in 0.5 s)" test $(($(fpk d) + $(fpk d6))) -gt $((d0 + RATE * 6 / 10))

# ---- many short request/response flows (a DNS- or RPC-like load): 4 at
# a time, 40 in all, 30 datagrams each at 200 a second, each echoed
j0=$(st $STAT_FWD_JOINED) s0=$(st $FWD_STAT)
spids=
for w in 1 2 3 4; do
	nsx c bash -c "for i in 1 2 3 4 5 6 7 8 9 10; do python3 '$UDPSEQ' client --addr $S4 --port 5401 --rate 200 --count 30; done" >"$work/short.$w" &
	spids="$spids $!"
done
wait $spids
short_ok() {
	[ "$(cat "$work"/short.* | wc -l)" = 40 ] &&
		cat "$work"/short.* | jq -s -e 'all(.[]; .sent == 30 and .acked == 30 and .server.received == 30 and .server.dup == 0 and .server.bad == 0)' >/dev/null
}
short_ok || cat "$work"/short.* |
	jq -c 'select(.sent != 30 or .acked != 30 or .server.received != 30 or .server.dup != 0 or .server.bad != 0)' |
	sed 's/^/# short flow: /'
check "40 short flows of 30 exchanges: every datagram and every answer arrived once, intact" short_ok
check "  they joined the fast path (fwd_joined +$(($(st $STAT_FWD_JOINED) - j0)), $FWD_NAME forwarded $(($(st $FWD_STAT) - s0)) packets)" \
	test $(($(st $STAT_FWD_JOINED) - j0)) -ge 20 -a $(($(st $FWD_STAT) - s0)) -gt 0

sleep 1
touch "$work/stop"
wait "$PID_a" "$PID_b" "$PID_n" "$PID_m" "$PID_m6" "$PID_d" "$PID_d6"
# whole NAME [LOSSY]: every datagram sent arrived once with its payload
# (LOSSY: some may be missing, none twice nor changed)
whole() {
	jq -e --arg l "${2:-}" --argjson min $((RATE / 2)) '.server != null and .server.dup == 0 and .server.bad == 0 and .sent > $min and
		($l != "" or .server.received == .sent)' "$work/$1.json" >/dev/null
}
# lost: datagrams sent and not received, over every flow; dropped: what
# counters show dropped (a full veth ring: its sender's tx_dropped, the
# peer's rx_dropped; the server's UDP receive buffer errors).  The
# namespaces are this test's: their counters start at 0.
lost() { cat "$work"/{a,b,n,m,m6,d,d6}.json | jq -s '[.[] | .sent - (.server.received // 0)] | add'; }
sent() { cat "$work"/{a,b,n,m,m6,d,d6}.json | jq -s '[.[].sent] | add'; }
dropped() {
	local n v=0
	for n in c r s; do
		v=$((v + $(nsx $n ip -s -j link | jq '[.[] | .stats64.tx.dropped + .stats64.rx.dropped] | add')))
	done
	echo $((v + $(nsx s awk '$1 == "Udp:" && $2 ~ /^[0-9]/ { print $6 }' /proc/net/snmp) +
		$(nsx s awk '$1 == "Udp6RcvbufErrors" { print $2 }' /proc/net/snmp6)))
}
# every datagram arrived once, intact; or, on a machine too loaded to
# drain a ring in time, the missing ones no more than the counters show
# dropped and at most 1 % of all: never lost silently, nor twice, nor
# changed
all_whole() {
	whole a L && whole b L && whole n L && whole m L && whole m6 L && whole d L && whole d6 L &&
		[ "$(lost)" -le "$(dropped)" ] && [ $(($(lost) * 100)) -le "$(sent)" ]
}
# (where a datagram went missing: the veths that dropped any, as
# namespace, device, tx_dropped, rx_dropped; a full veth XDP ring drops
# at its sender's tx)
[ "$(lost)" = 0 ] || for n in c r s; do
	nsx $n ip -s -j link | jq -c --arg n "$n" '.[] | select(.stats64.tx.dropped + .stats64.rx.dropped > 0) |
		[$n, .ifname, .stats64.tx.dropped, .stats64.rx.dropped]' | sed 's/^/# veth drops: /'
done
check "every datagram of the IPv4, IPv6, unnamed, masqueraded and port-forwarded flows arrived once, intact, or its loss counted ($(lost) lost, $(dropped) counted dropped; $(jq -c '[.sent, .server.received, .server.dup, .server.bad]' "$work/a.json" "$work/b.json" "$work/n.json" "$work/m.json" "$work/m6.json" "$work/d.json" "$work/d6.json" | tr '\n' ' '))" \
	all_whole

# ---- ip_forward=0 stops flow x (the others stopped: the stack drops
# every datagram now), and forwarding on again brings it back
nsx r sysctl -qw net.ipv4.ip_forward=0
sleep 0.1
p0=$(fpk x)
sleep 0.5
p1=$(fpk x)
nsx r sysctl -qw net.ipv4.ip_forward=1
check "ip_forward=0: $FWD_NAME forwards none of flow x within 100 ms ($((p1 - p0)) packets in the 0.5 s after)" test "$p1" = "$p0"
check "  forwarding on again: flow x back on the fast path (entry: $(entry x))" wait_for "$(slow 5)" on_fast x
touch "$work/stopx"
wait "$PID_x"
check "flow x: none twice nor changed (the DROP rule's and ip_forward=0's are missing: $(jq -c '[.sent, .server.received]' "$work/x.json"))" \
	whole x lossy
# the streams stopped: their conntrack entries time out as the stack's
# would (3 s stream timeout), none kept by the fast path past that
ct_gone() { ! nsx r conntrack -L -p udp 2>/dev/null | grep -q 'dport=540[12] '; }
check "the streams stopped: conntrack's entries of the fast path's flows time out within 3 s + 2 s ($(nsx r conntrack -L -p udp 2>/dev/null | grep -c 'dport=540[12] ') left)" \
	wait_for "$(slow 6)" ct_gone
finish
