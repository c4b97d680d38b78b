#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Re-admission proves both ways under the ruleset in force (issue 50: a
# sequence, not a step).  A routed flow whose two ends both send (the
# client's trickle, the server's --trickle: fwdflow.py) runs on the fast
# path.  A FORWARD DROP of one way sends it back to the stack (readmit),
# which goes on forwarding the other way: that way is proven under this
# ruleset.  Then one change (one iptables-restore, one transaction) moves
# the DROP to the other way.  What was proven under the first ruleset
# counts for nothing under the second: the way now dropped must not be
# the fast path's (its packets in the flow's toe_fwd entry stand still,
# and the flow stays readmit) until the DROP goes and the stack, having
# forwarded both ways again, re-admits it.  Both orders: the client's way
# dropped first, then the server's; and the server's first.  XDP, or tc
# (test_fwd_readmit_tc.sh).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 10
need_cmd iptables iptables-restore
FLOW=$TOE_TOP/selftests/xdp/fwdflow.py
fwd_router fwdra
defer "nsx r iptables -F FORWARD"
fwd_toed || { fail "toed starts"; cat "$work/toed.log"; finish; }
nsx_bg s python3 "$FLOW" server --port 5201 --trickle >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }

# the FORWARD rule that drops WAY (c2s: the client's packets; s2c: the
# server's), as iptables arguments
drop_of() {
	case $1 in
	c2s) echo "-p tcp -s $C4 -d $S4 --dport 5201 -j DROP" ;;
	s2c) echo "-p tcp -s $S4 -d $C4 --sport 5201 -j DROP" ;;
	esac
}
# way_ix WAY: its index in the entry's dir_packets
way_ix() { [ "$1" = c2s ] && echo 0 || echo 1; }
# seen NAME: "STATE C2S S2C" of flow NAME's entry (its packets each way)
seen() { flow_entry "$1" '"\(.value.state) \(.value.dir_packets[0]) \(.value.dir_packets[1])"'; }
# both_fast NAME: on the fast path, both ways' packets growing over 0.3 s
both_fast() {
	local a b
	read -r -a a < <(seen "$1")
	sleep 0.3
	read -r -a b < <(seen "$1")
	[ "${b[0]:-}" = 3 ] && [ "${b[1]}" -gt "${a[1]}" ] && [ "${b[2]}" -gt "${a[2]}" ]
}
state_is() { [ "$(seen "$1" | cut -d' ' -f1)" = "$2" ]; }

round() {
	local n=$1 first=$2 then=$3 a b ix
	nsx_bg c timeout 60 python3 "$FLOW" trickle --addr $S4 --port 5201 --stop "$work/$n.stop" >"$work/$n.json"
	wait_for 5 grep -q lport "$work/$n.json" || { fail "$n: trickle"; return; }
	head -n 1 "$work/$n.json" | jq .lport >"$work/$n.lport"
	defer "touch $work/$n.stop"
	check "$n: both ends sending, the flow on the fast path both ways" wait_for 10 both_fast $n
	nsx r iptables -I FORWARD $(drop_of $first)
	check "$n: a DROP of $first: the flow waits to be re-admitted (readmit), $then forwarded by the stack" \
		wait_for 3 state_is $n 4
	sleep 0.5 # ($then proven under this ruleset)
	printf '*filter\n-D FORWARD %s\n-I FORWARD %s\nCOMMIT\n' "$(drop_of $first)" "$(drop_of $then)" |
		nsx r iptables-restore --noflush || { fail "$n: the swap"; return; }
	sleep 0.3
	read -r -a a < <(seen $n)
	sleep 1
	read -r -a b < <(seen $n)
	ix=$(($(way_ix $then) + 1))
	check "$n: the DROP moved to $then in one change: the fast path carries none of $then (${a[ix]:-none} then ${b[ix]:-none} packets) and the flow still waits (state ${b[0]:-none})" \
		test "${a[ix]:-x}" = "${b[ix]:-y}" -a "${b[0]:-}" = 4
	nsx r iptables -D FORWARD $(drop_of $then)
	check "$n: the DROP removed: re-admitted, both ways on the fast path again" wait_for 5 both_fast $n
	touch "$work/$n.stop"
	wait_for 5 grep -q '"sent"' "$work/$n.json"
	check "$n: the trickle ended, having received the server's trickle ($(tail -n 1 "$work/$n.json"))" \
		bash -c "tail -n 1 '$work/$n.json' | jq -e '.got > 0'"
}
round a c2s s2c
round b s2c c2s
finish
