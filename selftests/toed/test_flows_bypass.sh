#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toectl flows on bypassed connections: their data goes socket to socket,
# not through TCP, so the flow's TCP counters miss it; toectl joins
# toe_byp_flows (by socket cookie) and shows what the application moved:
# -j has a "bypass" object (state, bytes and messages each way, sends left
# to TCP, switches), and the text table's BYTES_OUT / BYTES_IN count both.
. "$(dirname "$0")/setup.sh"
load_toe_xdp || { fail "load"; finish; }
cfg=$(conf byp <<'EOF2'
rule bypass lport 5500
rule bypass rport 5500
EOF2
)
start_toed "$cfg" || { fail "toed starts"; cat "$TOED_LOG"; finish; }
out=$CONF_DIR/srv.out
in_cg a python3 "$TCPX" server --port 5500 >"$out" 2>&1 &
defer "kill $!"
wait_for 5 grep -q ready "$out" || { fail "server"; finish; }
N=300000
in_cg a python3 "$TCPX" client --addr 127.0.0.1 --port 5500 --send $N --hold 4 >"$CONF_DIR/held" &
cpid=$!
defer "kill $cpid 2>/dev/null"
held() { grep -q held "$CONF_DIR/held"; }
wait_for 5 held || { fail "client"; finish; }
lp=$(jq '.held[0]' "$CONF_DIR/held")
moved() { ctl -j flows port 5500 | jq -e --argjson n $N '[.[] | select(.bypass.bytes_out >= $n)] | length == 1' >/dev/null; }
wait_for 3 moved
fl=$(ctl -j flows port 5500)
echo "$fl" | jq -c '.[] | {lport, rport, decision, bypass}'
check "two rows, both ends, decision bypass" \
	jq -e 'length == 2 and all(.[]; .decision == "bypass")' <<<"$fl"
check "the client's row: paired, $N bytes out through the bypass" \
	jq -e --argjson n $N --argjson lp "$lp" \
		'.[] | select(.lport == $lp) | .bypass.state == "paired" and .bypass.bytes_out >= $n and .bypass.msgs_out > 0' <<<"$fl"
check "the server's row: the same bytes in" \
	jq -e --argjson n $N '.[] | select(.lport == 5500) | .bypass.bytes_in >= $n' <<<"$fl"
check "  while TCP itself carried almost nothing (bytes_acked < $N)" \
	jq -e --argjson n $N --argjson lp "$lp" '.[] | select(.lport == $lp) | .bytes_acked < $n' <<<"$fl"
txt=$(ctl flows port 5500)
echo "$txt"
check "text: BYTES_OUT of the client's row counts the bypassed bytes" \
	test "$(awk -v lp=":$lp" '$1 ~ lp"$" { print $7 }' <<<"$txt")" -ge $N
wait $cpid
finish
