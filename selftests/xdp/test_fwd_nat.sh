#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NATed flows on the fast path (issue 33): the admission learns the
# translation from the stack's conntrack entry and the fast path rewrites both
# directions (addresses, ports, checksums).  Masquerade (client behind the
# router, server beyond; iptables-nft) and a DNAT port forward (outside to
# an inner server; nft): a stream client -> server and a file fetched with
# curl server -> client, byte-exact by sha256, with the hook counting the
# packets and the kernel forwarding only handshakes and teardowns.
# conntrack shows each flow translated and ESTABLISHED (a 5 s one too,
# the established timeout 3 s: the fast path refreshes it).  The hook
# from TOE_FWD_HOOK (router.sh): XDP, or tc (test_fwd_nat_tc.sh), the far
# ends then with their default offloads (TSO, CHECKSUM_PARTIAL skbs).  The
# same for IPv6 (NAT66, issue 48): masquerade (ip6tables) and a port
# forward (nft ip6).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 46
need_cmd iptables nft conntrack curl
fwd_router fwdnat
defer "nsx r iptables -t nat -F; nsx r nft delete table ip toenat 2>/dev/null; true"
# conntrack's window check on: the flows' teardowns (in the stack) must
# pass it although the stack did not see their windows move
# and the established timeout short (3 s): the fast path keeps the entries
nsx r sysctl -qw net.netfilter.nf_conntrack_tcp_be_liberal=0 net.netfilter.nf_conntrack_tcp_timeout_established=3
fwd_toed || { fail "toed starts"; cat "$work/toed.log"; finish; }
toectl --run-dir "$work/run" monitor -j >"$work/mon.json" 2>&1 &
defer "kill $!"
toectl --run-dir "$work/run" monitor >"$work/mon.txt" 2>&1 &
defer "kill $!"
fwd_server s 5201 || { fail "server"; finish; }
head -c 8000000 /dev/urandom >"$work/file"
nsx_bg s python3 -m http.server 5301 --bind :: --directory "$work" >/dev/null 2>&1
wait_for 5 nsx s bash -c "exec 3<>/dev/tcp/127.0.0.1/5301" || { fail "http server"; finish; }
want=$(sha256sum <"$work/file" | cut -d' ' -f1)
st() { stat_of "$PIN" "$1"; }
FORGE=$TOE_TOP/selftests/xdp/forge.py
# epf ADDR PORT: an endpoint as toectl writes it ("[A]:P" for IPv6);
# rex S: S with [ ] . escaped (a regex of it); fam ADDR: conntrack's -f
epf() { case $1 in *:*) echo "[$1]:$2" ;; *) echo "$1:$2" ;; esac; }
rex() { sed 's/[].[]/\\&/g' <<<"$1"; }
fam() { case $1 in *:*) echo ipv6 ;; *) echo ipv4 ;; esac; }

# ct_live NAME ADDR XPORT REPLY SERVER SECS: a SECS s stream to ADDR:XPORT;
# SECS - 1 s in, the router's conntrack shows it ESTABLISHED with the reply
# tuple REPLY (a regex) and no more than the established timeout (3 s)
# left: the fast path refreshes it (fwd_ct.h); toectl flows shows its two
# tuples (the reply one from SERVER), and $FWD_HOOK forwards it.
ct_live() {
	local name=$1 addr=$2 xp=$3 re=$4 tr=$5 cpid spid x0 x1 left
	nsx_bg c python3 "$XFER" client --addr "$addr" --port "$xp" --seconds "$6" >"$work/$name.json"
	cpid=$NSX_PID
	sleep $(($6 - 2))
	# the checksum fields at both ends meanwhile (1 s)
	nsx s python3 "$FORGE" csum s1 5201 1 >"$work/$name.sum.s" &
	spid=$!
	nsx c python3 "$FORGE" csum c0 "$xp" 1 >"$work/$name.sum.c" &
	spid="$spid $!"
	sleep 1
	x0=$(st $FWD_STAT)
	nsx r conntrack -L -f "$(fam "$addr")" -p tcp --orig-port-dst "$xp" 2>/dev/null >"$work/$name.ct"
	toectl --run-dir "$work/run" flows -j port "$xp" >"$work/$name.flows"
	toectl --run-dir "$work/run" flows port "$xp" >"$work/$name.flows.txt"
	sleep 0.3
	x1=$(st $FWD_STAT)
	wait $spid $cpid
	echo "$name: $(cat "$work/$name.json"); server: $(tail -1 "$work/server.out")"
	echo "$(cat "$work/$name.ct")"
	check "  conntrack shows the running flow ESTABLISHED, translated ($re), $(($6 - 1)) s in" \
		grep -Eq "ESTABLISHED .*$re" "$work/$name.ct"
	left=$(grep -E "ESTABLISHED .*$re" "$work/$name.ct" | awk '{ print $3; exit }')
	check "  with at most the established timeout left (${left:-none} s)" test "${left:-9}" -le 3
	cat "$work/$name.flows.txt"
	check "  segments with their checksum right (or the pseudo-header's: TSO) at the server (good bad: $(cat "$work/$name.sum.s")) and the client ($(cat "$work/$name.sum.c"))" \
		awk '$1 < 1 || $2 != 0 { exit 1 }' "$work/$name.sum.s" "$work/$name.sum.c"
	check "  toectl flows shows its original tuple (to $(epf "$addr" "$xp")) and its reply tuple (from $tr)" \
		jq -e --arg o " -> $(epf "$addr" "$xp")" --arg r "^$(rex "$tr") -> " \
		'[.[] | select(.nat.original | endswith($o)) | select(.nat.reply | test($r))] | length == 1' "$work/$name.flows"
	check "  (text too)" grep -q "nat: original .* -> $(rex "$(epf "$addr" "$xp")"), reply $(rex "$tr") -> " "$work/$name.flows.txt"
	check "  (its reason and rule under REASON and RULE, as -j says: $(jq -r '[.[] | select(.decision == "forward")][0] | "\(.reason) \(.rule // "-")"' "$work/$name.flows"))" \
		test "$(awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } $4 == "forward" { print $c["REASON"], $c["RULE"]; exit }' "$work/$name.flows.txt")" = \
		"$(jq -r '[.[] | select(.decision == "forward")][0] | "\(.reason) \(.rule // "-")"' "$work/$name.flows")"
	check "  while $FWD_HOOK forwards it ($((x1 - x0)) packets in 0.3 s) and it arrives intact" \
		test $((x1 - x0)) -gt 100 -a "$(intact $name && echo y)" = y
}

# nat_round NAME ADDR XPORT HPORT: a 20 MB stream to ADDR:XPORT and the file
# fetched from ADDR:HPORT, both through the NAT in force; the checks.
nat_round() {
	local name=$1 addr=$2 xp=$3 hp=$4 x0 k0 w0 x1 k1 w1 got cpid
	x0=$(st $FWD_STAT) k0=$(ip_forwarded)
	# (the stream starts once the flow is the fast path's: fwd_go)
	nsx_bg c python3 "$XFER" client --addr "$addr" --port "$xp" --bytes 20000000 \
		--lport-file "$work/$name.lport" --go-file "$work/$name.go" >"$work/$name.json"
	cpid=$NSX_PID
	fwd_go "$name" || echo "# $name: not the fast path's within 10 s"
	timeout 60 tail --pid=$cpid -f /dev/null
	x1=$(st $FWD_STAT) k1=$(ip_forwarded)
	echo "$name: $(cat "$work/$name.json"); server: $(tail -1 "$work/server.out")"
	check "$name: 20 MB to $addr:$xp arrive intact" intact $name
	check "  $FWD_HOOK forwarded them ($((x1 - x0)) packets; the kernel $((k1 - k0)))" \
		test $((x1 - x0)) -ge 12000 -a $(((k1 - k0) * 20)) -lt $((x1 - x0))
	# curl sends its request at once: the packets the stack forwarded
	# while the flow waited for toed (fwd_ct_wait) are not held against
	# the fast path; 8 MB at 8 MB/s outlast that wait
	x0=$x1 k0=$(ip_forwarded) w0=$(st "$STAT_FWD_CT_WAIT")
	nsx_t 60 c curl -sS --limit-rate 8M -o "$work/got" "http://$(epf "$addr" "$hp")/file"
	got=$(sha256sum <"$work/got" | cut -d' ' -f1)
	echo "curl: $(stat -c %s "$work/got") bytes"
	x1=$(st $FWD_STAT) k1=$(ip_forwarded) w1=$(st "$STAT_FWD_CT_WAIT")
	check "  8 MB fetched back from $addr:$hp with curl, intact" test "$got" = "$want"
	check "  $FWD_HOOK forwarded them ($((x1 - x0)) packets; the kernel $((k1 - k0)), $((w1 - w0)) of them while it waited for toed)" \
		test $((x1 - x0)) -ge 2500 -a $(((k1 - k0 - (w1 - w0)) * 20)) -lt $((x1 - x0))
}

# ---- masquerade out of r1 (iptables-nft): the server sees the router
nsx r iptables -t nat -A POSTROUTING -o r1 -j MASQUERADE || { fail "masquerade rule"; finish; }
nat_round masq $S4 5201 5301
grep fwd_admitted "$work/mon.txt" | head -2
check "toectl monitor -j shows the masqueraded flows' fwd_admitted events (client first, conntrack established)" \
	jq -e -s --arg c $C4 --arg s $S4 '[.[] | select(.event == "fwd_admitted" and .laddr == $c and .raddr == $s
		and .rport == 5201 and .decision == "forward" and .conntrack == "established")] | length >= 1' "$work/mon.json"
check "  (text too)" grep -Eq "^\[fwd_admitted\] $C4:[0-9]+ -> $S4:5201 forward conntrack established" "$work/mon.txt"
ct_live masq_ct $S4 5201 "src=$S4 dst=$R4b sport=5201" $S4:5201 5
nsx r iptables -t nat -F

# ---- a port forward (nft): R4a:8080 -> S4:5201, R4a:8081 -> S4:5301
nsx r nft -f - <<NFT || { fail "nft DNAT"; finish; }
table ip toenat {
	chain pre {
		type nat hook prerouting priority dstnat;
		iifname "r0" tcp dport 8080 dnat to $S4:5201
		iifname "r0" tcp dport 8081 dnat to $S4:5301
	}
}
NFT
nat_round dnat $R4a 8080 8081
ct_live dnat_ct $R4a 8080 "src=$S4 dst=$C4 sport=5201" $S4:5201 3
nsx r nft delete table ip toenat

# ---- NAT66: IPv6 masquerade out of r1 (ip6tables-nft)
defer "nsx r ip6tables -t nat -F; nsx r nft delete table ip6 toenat6 2>/dev/null; true"
nsx r ip6tables -t nat -A POSTROUTING -o r1 -j MASQUERADE || { fail "IPv6 masquerade rule"; finish; }
nat_round masq6 $S6 5201 5301
ct_live masq6_ct $S6 5201 "src=$S6 dst=$R6b sport=5201" "[$S6]:5201" 5
nsx r ip6tables -t nat -F

# ---- and an IPv6 port forward (nft ip6): [R6a]:8080 -> [S6]:5201, 8081 -> 5301
nsx r nft -f - <<NFT || { fail "nft ip6 DNAT"; finish; }
table ip6 toenat6 {
	chain pre {
		type nat hook prerouting priority dstnat;
		iifname "r0" tcp dport 8080 dnat to [$S6]:5201
		iifname "r0" tcp dport 8081 dnat to [$S6]:5301
	}
}
NFT
nat_round dnat6 $R6a 8080 8081
ct_live dnat6_ct $R6a 8080 "src=$S6 dst=$C6 sport=5201" "[$S6]:5201" 3
nsx r nft delete table ip6 toenat6
finish
