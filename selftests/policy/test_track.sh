#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "track policy" (issue 20): sock_ops tracks only the connections the
# policy names.  With rules for ports 5300 (offload) and 5301 (host) and
# the default host: connections to both get their records and events, as
# under "track all"; one to 5302 gets none (no record, no callbacks, no
# close event, nothing counted evicted) and is counted untracked, on both
# of its ends (the accepting one included, whose listener had callbacks);
# so are the accepting ends of 5300 and 5301, which rules on the remote
# port do not name.
# Back to "track all" atomically: the next connection to 5302 is tracked.
# And the statement's errors.
. "$(dirname "$0")/setup.sh"
plan 19
check "the counters' indexes come from the header's table ($STAT_ESTABLISHED $STAT_UNTRACKED $STAT_FLOW_EVICTED $STAT_CLOSED)" \
	test -n "$STAT_ESTABLISHED" -a -n "$STAT_UNTRACKED" -a -n "$STAT_FLOW_EVICTED" -a -n "$STAT_CLOSED"
load_toe
body='device t3 type chelsio-t3 nconn 100
default host
rule offload dev t3 rport 5300
rule host rport 5301'
cfg=$(printf '%s\ntrack policy\n' "$body" | conf policy)
all=$(printf '%s\ntrack all\n' "$body" | conf all)
check "a configuration with 'track policy' applies" apply "$cfg"
hdr() {
	local g; g=$(bpftool -j map lookup pinned "$PIN/$MAP_POL_HDR" key \
		"$(bpftool -j map lookup pinned "$PIN/$MAP_POL_GEN" key 0 0 0 0 | jq .formatted.value)" 0 0 0)
	jq -c .formatted.value <<<"$g"
}
check "  the policy in force says track 1 (policy)" jq -e '.track == 1' <<<"$(hdr)"
server 5300 5301 5302 || exit 1
events_start
e0=$(stat_sum "$STAT_ESTABLISHED") u0=$(stat_sum "$STAT_UNTRACKED") v0=$(stat_sum "$STAT_FLOW_EVICTED") c0=$(stat_sum "$STAT_CLOSED")
f0=$(decided "$CG" $B4 5300) f1=$(decided "$CG" $B4 5301) f2=$(decided "$CG" $B4 5302)
check "offload rule: tracked (decision offload, rule 0)" jq -e '.decision == 1 and .rule == 0' <<<"$f0"
check "host rule: tracked (decision host, reason rule, rule 1)" \
	jq -e '.decision == 0 and .reason == 0 and .rule == 1' <<<"$f1"
check "no rule, default host: no record ($f2)" test "$f2" = "{}"
sleep 0.5
events_stop
e1=$(stat_sum "$STAT_ESTABLISHED") u1=$(stat_sum "$STAT_UNTRACKED") v1=$(stat_sum "$STAT_FLOW_EVICTED") c1=$(stat_sum "$STAT_CLOSED")
check "all six ends were decided (established +$((e1 - e0)))" test $((e1 - e0)) = 6
# (the rules name remote ports: the accepting ends of 5300 and 5301 are
# named by none, so they are left alone too)
check "  the two ends of 5302 and the accepting ends of 5300 and 5301 counted untracked (+$((u1 - u0)))" \
	test $((u1 - u0)) = 4
check "  the two connecting ends of 5300 and 5301 closed as tracked (+$((c1 - c0)))" test $((c1 - c0)) = 2
check "  nothing counted evicted: the untracked ends have no close callback (+$((v1 - v0)))" test $((v1 - v0)) = 0
ev() { jq -s -c "[.[] | select($1)]" "$EVENTS"; }
check "close events for the connecting ends of 5300 and 5301" \
	jq -e 'length == 2 and all(.[]; .direction == 0)' \
	<<<"$(ev '.type == "flow_closed" and (.rport == 5300 or .rport == 5301)')"
check "  no flow event for 5302 nor for an accepting end (listeners are still announced)" \
	jq -e 'length == 0' <<<"$(ev '(.type | startswith("flow_")) and (.lport == 5302 or .rport == 5302 or .direction == 1)')"
check "  and the offload of 5300 was announced" jq -e 'length == 1' <<<"$(ev '.type == "flow_offloaded"')"

check "'track all' applies" apply "$all"
check "  the policy in force says track 0 (all)" jq -e '.track == 0' <<<"$(hdr)"
f2=$(decided "$CG" $B4 5302)
check "  now a connection to 5302 is tracked (decision host by default)" \
	jq -e '.decision == 0 and .reason == 1' <<<"$f2"

# bad TEXT WANT: toed --apply refuses it naming WANT; the policy stays
bad() {
	local f out; f=$(printf '%s\n' "$1" | conf bad)
	out=$(apply "$f" 2>&1)
	if [ $? -ne 0 ] && grep -qF "$2" <<<"$out"; then
		ok "'$1' refused: $out"
	else
		fail "'$1': want an error with '$2', got: $out"
	fi
}
bad "track" "1:1: 'track' needs 'all' or 'policy'"
bad "track everything" "1:7: expected 'all' or 'policy', got 'everything'"
bad "track all now" "1:11: expected the end of the line, got 'now'"
finish
