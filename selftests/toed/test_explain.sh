#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toectl explain LOCAL REMOTE [proto] [netns] [cgroup]: the policy in
# force's answer for a tuple, from the datapath's own search.  Against real
# connections: for each of five rules and the default (a list of
# namespaces matched at its second name, a port range at its last port, a
# rule of another namespace that must not match), a held connection's
# record in toectl flows has the decision, device, reason and rule explain
# gives for its tuple, and the rule's text is the one toectl policy shows
# at that index.  Under "track policy" the default-host connection has no
# record and explain says it is untracked, while a ruled one still says
# tracked.  Not in the datapath's search, so not in explain: IPv6 and UDP
# give their own answers (family, a default that is TCP's).  Bad input
# refused naming it, the policy unchanged.
. "$(dirname "$0")/setup.sh"
plan 22
load_toe_xdp || { fail "load"; finish; }
NA=$(ns_name a) NB=$(ns_name b)
ip netns add "opentoe-x-$TOE_TEST_ID" && defer "ip netns del opentoe-x-$TOE_TEST_ID"
NX=opentoe-x-$TOE_TEST_ID
body="device t3 type chelsio-t3 nconn 100
device t4 type chelsio-t3 nconn 100
default host
rule offload dev t3 rport 5300
rule host rport 5301
rule offload dev t4 rport 5302 netns $NX,$NA
rule offload dev t3 rport 5303 netns $NX
rule offload dev t4 rport 5310-5319"
cfg=$CONF_DIR/explain.conf
printf '%s\ntrack all\n' "$body" | conf explain >/dev/null
start_toed "$cfg" || { fail "toed starts"; cat "$TOED_LOG"; finish; }
server 5300 5301 5302 5303 5304 5305 5319 || exit 1

# held PORT: connect from a to b:PORT and hold it (until the test ends);
# $h the client's output
held() {
	h=$CONF_DIR/held.$1
	: >"$h"
	client --addr "$B4" --port "$1" --hold 30 >"$h" &
	defer "kill $! 2>/dev/null"
	wait_for 10 grep -q held "$h"
}
# row PORT: the connecting end's record in toectl -j flows ({} if none)
row() {
	ctl -j flows port "$1" | jq -c --arg p "$1" \
		'[.. | objects | select(.rport? == ($p | tonumber) and .direction? == "active")][0] // {}'
}
# ask ROW: toectl -j explain for that record's tuple, in namespace a
ask() {
	ctl -j explain "$(jq -r '.laddr + ":" + (.lport | tostring)' <<<"$1")" \
		"$(jq -r '.raddr + ":" + (.rport | tostring)' <<<"$1")" netns "$NA"
}
pol=$(ctl -j policy)
for p in 5300 5301 5302 5303 5304 5319; do
	held $p || { fail "a connection to $p is held"; continue; }
	r=$(row $p)
	e=$(ask "$r")
	want_rule=$(jq -c --argjson i "$(jq '.rule_index' <<<"$e")" \
		'if $i == null then null else .rules[$i] end' <<<"$pol")
	check "port $p: explain says what the record says ($(jq -c '[.decision, .device, .reason, .rule]' <<<"$r") = $(jq -c '[.decision, .device, .reason, .rule_index]' <<<"$e")), rule text that of toectl policy" \
		jq -e --argjson r "$r" --argjson w "$want_rule" \
		'$r != {} and .decision == $r.decision and (.device // "-") == ($r.device // "-") and
		 .reason == $r.reason and (.rule_index // -1) == ($r.rule // -1) and .rule == $w and .tracked' <<<"$e"
done
e3=$(ctl -j explain "$A4:40000" "$B4:5302" netns "$NA")
e4=$(ctl -j explain "$A4:40000" "$B4:5302" netns "$NB")
check "the namespace list: matched at its second name (rule 2), not in a namespace it does not name (default)" \
	test "$(jq -c '[.rule_index, .reason]' <<<"$e3")" = '[2,"rule"]' -a \
	"$(jq -c '[.rule_index, .reason]' <<<"$e4")" = '[null,"default"]'
check "the port range at its last port (rule 4), and one past it (default)" \
	test "$(ctl -j explain "$A4:40000" "$B4:5319" netns "$NA" | jq -c .rule_index)" = 4 -a \
	"$(ctl -j explain "$A4:40000" "$B4:5320" netns "$NA" | jq -c .rule_index)" = null

printf '%s\ntrack policy\n' "$body" >"$cfg"
check "track policy applied (toectl reload)" ctl reload
held 5305 || fail "a connection to 5305 is held"
r=$(row 5305)
e=$(ctl -j explain "$A4:$(jq -r '.held[0]' "$h")" "$B4:5305" netns "$NA")
check "track policy, default host: no record ($r), and explain says untracked, host by default" \
	jq -e --arg r "$r" '$r == "{}" and .tracked == false and .decision == "host" and .reason == "default" and .track == "policy"' <<<"$e"
check "  a ruled one still tracked" \
	jq -e '.tracked == true and .rule_index == 1' < <(ctl -j explain "$A4:1" "$B4:5301" netns "$NA")
txt=$(ctl explain "$A4:40000" "$B4:5300" netns "$NA")
check "text: the decision, its rule's text and line: $(tr '\n' '|' <<<"$txt")" \
	grep -qE '^decision +offload dev t3$' <<<"$txt" && grep -qE '^rule +rule offload dev t3 rport 5300 +# line 4$' <<<"$txt"
check "IPv6: no rule names a family, so rule 0 for [A6]:x -> [B6]:5300" \
	jq -e '.rule_index == 0' < <(ctl -j explain "[$A6]:40000" "[$B6]:5300" netns "$NA")
check "a v4-mapped pair is keyed as IPv4, as sock_ops keys it" \
	jq -e '.local == "'"$A4"':40000" and .rule_index == 0' < <(ctl -j explain "[::ffff:$A4]:40000" "[::ffff:$B4]:5300" netns "$NA")
check "UDP: no rule names udp and the default is TCP's: host, reason default" \
	jq -e '.decision == "host" and .reason == "default" and .proto == "udp"' < <(ctl -j explain "$A4:40000" "$B4:5300" proto udp netns "$NA")

# bad ARGS... WANT: refused (nonzero), the error naming WANT
bad() {
	local want=${*: -1} out rc
	out=$(ctl explain "${@:1:$#-1}" 2>&1); rc=$?
	if [ $rc -ne 0 ] && grep -qF -- "$want" <<<"$out"; then
		ok "refused: explain ${*:1:$#-1}: $out"
	else
		fail "explain ${*:1:$#-1}: want an error naming '$want', got rc $rc: $out"
	fi
}
s0=$(ctl -j policy | jq .serial)
bad "$A4:1" "needs LOCAL REMOTE"
bad "$A4:1" "$B4:99999" "remote '$B4:99999'"
bad "$A4:1" "[$B6]:80" "not of one family"
bad "$A4:1" "$B4:80" netns nosuch-$TOE_TEST_ID "netns nosuch-$TOE_TEST_ID: no such network namespace"
bad "$A4:1" "$B4:80" proto sctp "got 'sctp'"
bad "$A4:1" "$B4:80" extra "unexpected 'extra'"
check "the policy in force unchanged by them (serial $s0)" test "$(ctl -j policy | jq .serial)" = "$s0"
finish
