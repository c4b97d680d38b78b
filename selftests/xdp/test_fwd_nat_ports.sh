#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NAT that changes only a port (issue 50: every NAT shape, not only those
# that change an address).  test_fwd_nat.sh tries masquerade and port
# forwards, each of which changes an address too; a translation whose
# addresses stay and whose port moves is another case for every place the
# fast path compares tuples (nat.h: nat_tu_eq, nat_same, the key's order
# on equal addresses is not it, but the reply tuple is).  Three shapes on
# the fast path of TOE_FWD_HOOK (XDP; tc: test_fwd_nat_ports_tc.sh):
#   dnat_port   client -> S4:8080, DNAT to S4:5201 (the server's address kept)
#   snat_port   the client's source port moved into 1024-2047, its address
#               kept (no ephemeral port is there, so it always moves)
#   dnat6_port  client -> [S6]:8080, DNAT to [S6]:5201
# Each: a 2 s stream arrives intact, the hook forwards them (the kernel only the
# handshake and the end), conntrack's reply tuple has the same addresses
# and the moved port, and toectl flows shows the two tuples.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 15
need_cmd nft conntrack
fwd_router fwdnp
defer "nsx r nft delete table inet toenp 2>/dev/null; true"
nsx r sysctl -qw net.netfilter.nf_conntrack_tcp_be_liberal=0
fwd_toed || { fail "toed starts"; cat "$work/toed.log"; finish; }
fwd_server s 5201 || { fail "server"; finish; }
st() { stat_of "$PIN" "$1"; }
epf() { case $1 in *:*) echo "[$1]:$2" ;; *) echo "$1:$2" ;; esac; }

# port_round NAME ADDR XPORT REPLY_RE: a 2 s stream to ADDR:XPORT under
# the translation in force; REPLY_RE: conntrack's reply tuple (a regex)
port_round() {
	local name=$1 addr=$2 xp=$3 re=$4 x0 k0 x1 k1 cpid ct lp pp ca o
	x0=$(st $FWD_STAT) k0=$(ip_forwarded)
	nsx_bg c python3 "$XFER" client --addr "$addr" --port "$xp" --seconds 2 \
		--lport-file "$work/$name.lport" --go-file "$work/$name.go" >"$work/$name.json"
	cpid=$NSX_PID
	fwd_go "$name" || echo "# $name: not the fast path's within 10 s"
	lp=$(cat "$work/$name.lport" 2>/dev/null)
	ct=$(nsx r conntrack -L -f "$(case $addr in *:*) echo ipv6 ;; *) echo ipv4 ;; esac)" -p tcp --orig-port-dst "$xp" 2>/dev/null | grep "sport=$lp ")
	# (toectl flows as soon as the flow is in it: polled, while it runs)
	case $addr in *:*) ca=$C6 ;; *) ca=$C4 ;; esac
	o="$(epf "$ca" "$lp") -> $(epf "$addr" "$xp")"
	wait_for 5 eval 'toectl --run-dir "$work/run" flows -j port "$xp" >"$work/$name.flows" &&
		jq -e --arg o "$o" "any(.[]; .nat.original == \$o)" "$work/$name.flows" >/dev/null'
	timeout 60 tail --pid=$cpid -f /dev/null
	x1=$(st $FWD_STAT) k1=$(ip_forwarded)
	echo "$name: $(cat "$work/$name.json"); conntrack: $ct"
	# (the server sees the client at the reply tuple's destination port)
	pp=$(grep -oE 'dport=[0-9]+' <<<"$ct" | sed -n 2p | cut -d= -f2)
	wait_for 5 grep -q "\"peer_port\": ${pp:-0}," "$work/server.out"
	check "$name: a 2 s stream to $(epf "$addr" "$xp") arrives intact (the server saw port ${pp:-none})" \
		jq -e -s --argjson c "$(cat "$work/$name.json")" \
		'.[-1] | .bytes == $c.bytes and .sha256 == $c.sha256 and .bytes > 0' \
		< <(grep "\"peer_port\": ${pp:-0}," "$work/server.out")
	check "  $FWD_HOOK forwarded them ($((x1 - x0)) packets; the kernel $((k1 - k0)))" \
		test $((x1 - x0)) -ge 12000 -a $(((k1 - k0) * 20)) -lt $((x1 - x0))
	check "  conntrack translated only a port (reply: $re)" grep -Eq "$re" <<<"$ct"
	check "  toectl flows shows it forwarded, its original tuple ($(epf "$ca" "$lp") -> $(epf "$addr" "$xp")) and its reply one (from $(epf "$addr" 5201) to port ${pp:-none}): $(jq -c "[.[] | {decision, lport, rport, nat}]" "$work/$name.flows")" \
		jq -e --arg o "$(epf "$ca" "$lp") -> $(epf "$addr" "$xp")" --arg r "$(epf "$addr" 5201) -> $(epf "$ca" "${pp:-0}")" \
		'[.[] | select(.decision == "forward" and .nat.original == $o and .nat.reply == $r)] | length == 1' "$work/$name.flows"
	check "  toed logged nothing wrong" test -z "$(grep -iE 'error|warn' "$work/toed.log" | grep -v 'level')"
}

nsx r nft -f - <<NFT || { fail "nft DNAT"; finish; }
table inet toenp {
	chain pre {
		type nat hook prerouting priority dstnat;
		iifname "r0" ip daddr $S4 tcp dport 8080 dnat ip to $S4:5201
		iifname "r0" ip6 daddr $S6 tcp dport 8080 dnat ip6 to [$S6]:5201
	}
}
NFT
port_round dnat_port $S4 8080 "src=$S4 dst=$C4 sport=5201 dport=[0-9]+ "
port_round dnat6_port $S6 8080 "src=$S6 dst=$C6 sport=5201 dport=[0-9]+ "
nsx r nft delete table inet toenp
nsx r nft -f - <<NFT || { fail "nft SNAT"; finish; }
table inet toenp {
	chain post {
		type nat hook postrouting priority srcnat;
		oifname "r1" ip saddr $C4 tcp dport 5201 snat ip to $C4:1024-2047
	}
}
NFT
port_round snat_port $S4 5201 "src=$S4 dst=$C4 sport=5201 dport=(1[0-9]{3}|20[0-4][0-9]) "
nsx r nft delete table inet toenp
finish
