#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Per-tenant quota of toe_flows records (issue 31, item 3).  toe_flows of
# 64 records (toe-loader --flows 64), an LRU: one tenant's flood used to
# evict the others' records.  The operator holds 8 connections from a (toed's
# namespace) to b; an unprivileged tenant (nobody, unshare -rn) then opens
# 40 connections on its own loopback (80 sockets).  With the default
# "quota flows 25%", it holds 16 records and no more (the rest counted in
# quota_refused), and every one of the operator's records is still there.
# toe_bypass has the same size, and a socket is bypassed only once it has
# its record: the tenant's connections, bypassed by a "netns any" rule,
# put at most 16 sockets there, and the operator's own loopback connection
# in a is still bypassed.
. "$(dirname "$0")/../policy/setup.sh"
plan 6

load_toe --flows 64 || { fail "load"; finish; }
cfg=$(printf 'default host\nrule bypass rport 443 netns any\nrule bypass lport 443 netns any\nrule bypass rport 7443\nrule bypass lport 7443\n' | conf flows)
check "the configuration applies (the default quota)" apply "$cfg"
. "$(dirname "$0")/unpriv.sh"

server 5300
ops=$CONF_DIR/ops
in_cg a python3 "$TCPX" client --addr $B4 --port 5300 --count 8 --hold 60 >"$ops" 2>&1 &
defer "kill $! 2>/dev/null"
wait_for 10 grep -q held "$ops" || { fail "the operator's connections"; cat "$ops"; finish; }
mine() { flows | jq "[.[] | select(.rport == 5300)] | length"; }
before=$(mine)
q0=$(stat_sum "$STAT_QUOTA") b0=$(stat_sum "$STAT_BYP_SOCKS")

out=$CONF_DIR/tenant
tenant_up 10.99.0.1 40 15 "$out" 15
got=$(tenant_flows 10.99.0.1)
srv=$(flows | jq '[.[] | select(.lport == 443)] | length')
check "the tenant holds 16 records, no more (clients $(jq length <<<"$got"), servers $srv)" \
	test $(($(jq length <<<"$got") + srv)) = 16
check "quota_refused counted the other 64" test "$(($(stat_sum "$STAT_QUOTA") - q0))" = 64
check "the operator's 8 records are all still there ($before before, $(mine) now)" \
	test "$before" = 8 -a "$(mine)" = 8
unhold "$ops"
byp=$(($(stat_sum "$STAT_BYP_SOCKS") - b0))
check "the tenant put at most 16 sockets into $MAP_BYPASS ($byp)" test "$byp" -le 16

in_cg a python3 "$TCPX" server --port 7443 >"$CONF_DIR/srv7443" 2>&1 &
defer "kill $!"
wait_for 5 grep -q ready "$CONF_DIR/srv7443"
lo=$CONF_DIR/lo
in_cg a python3 "$TCPX" client --addr 127.0.0.1 --port 7443 --hold 60 >"$lo" 2>&1 &
wait_for 10 grep -q held "$lo"
d=$(flows | jq -c '[.[] | select(.rport == 7443)][0] // {} | [.decision, .reason]')
unhold "$lo"
check "the operator's loopback connection in a is bypassed ($d)" test "$d" = "[2,0]"
wait $! 2>/dev/null
kill $TPID 2>/dev/null
wait $TPID 2>/dev/null
finish
