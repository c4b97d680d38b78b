#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toectl reasons [NAME]: every reason of the three tables (decisions',
# forward path's, bypass's: toe-tables -j) with that table's help; its
# counts the datapath's: under real TCP, 3 connections to a device of nconn
# 1 (2 refused with reason capacity) count 2 where there were 0, as toectl
# stats' refused_capacity does; the text of one name, and a name two
# tables have; a name no table has, and two names, refused naming them.
. "$(dirname "$0")/setup.sh"
plan 10
toed_t3 reasons 1
T=$(toe-tables -j)
j=$(ctl -j reasons)
check "toectl -j reasons answers" test -n "$j"
# (name, help) of each table, in the tables' order
pairs() { jq -c "[$1 | [.name, .help]]"; }
check "every decision reason with its help (toe-tables' reasons)" \
	test "$(pairs '.reasons[]' <<<"$T")" = "$(pairs '.decision[]' <<<"$j")"
check "every forward reason with its kind and help (toe-tables' fwd_reasons)" \
	test "$(jq -c '[.fwd_reasons[] | [.name, .kind, .help]]' <<<"$T")" = \
	"$(jq -c '[.forward[] | [.name, .kind, .help]]' <<<"$j")"
check "every bypass why with its help (toe-tables' bypass_whys)" \
	test "$(pairs '.bypass_whys[]' <<<"$T")" = "$(pairs '.bypass_to_tcp[]' <<<"$j")"
check "a count where the table says counted, null where not; a hook object where the reason happens" \
	jq -e --argjson t "$T" '
		([.decision[] | .refused != null] == [$t.reasons[] | .counted]) and
		([.forward[] | [has("xdp"), has("tc")]] ==
		 [$t.fwd_reasons[] | [(.hooks | split(",") | index("xdp") != null),
				      (.hooks | split(",") | index("tc") != null)]])' <<<"$j"
cap0=$(jq '.decision[] | select(.name == "capacity") | .refused' <<<"$j")
server 5300 || exit 1
out=$CONF_DIR/held
client --addr "$B4" --port 5300 --count 3 --hold 30 >"$out" &
wait_for 10 grep -q held "$out"
cap=$(ctl -j reasons capacity | jq '.decision[0].refused')
stat=$(ctl -j stats | jq '[.. | .refused_capacity? // empty][0]')
check "capacity: $cap0, then $cap refused (3 connections, nconn 1), as toectl stats says ($stat)" \
	test "$cap0" = 0 -a "$cap" = 2 -a "$stat" = 2
unhold "$out"
txt=$(ctl reasons capacity)
check "the text of one name: its kind, name and count, then its help: $(tr '\n' '|' <<<"$txt")" \
	test "$txt" = "$(printf '%-9s %-15s refused 2\n%-9s %s' decision capacity "" \
		"$(jq -r '.reasons[] | select(.name == "capacity") | .help' <<<"$T")")"
check "a name two tables have (route): both rows, nothing else" \
	jq -e '(.decision | map(.name)) == ["route"] and (.forward | map(.name)) == ["route"] and
		.bypass_to_tcp == [] and .forward[0].xdp.flows >= 0' < <(ctl -j reasons route)
out=$(ctl reasons nosuch 2>&1); rc=$?
check "an unknown name refused, named: $out" test $rc != 0 -a -n "$(grep -F "unknown reason 'nosuch'" <<<"$out")"
out=$(ctl reasons capacity nodev 2>&1); rc=$?
check "two names refused, the second named: $out" test $rc != 0 -a -n "$(grep -F "got 'nodev'" <<<"$out")"
finish
