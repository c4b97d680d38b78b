#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Conntrack zones (issue 46, item 9): the router puts its forwarded flows
# in conntrack zone 5 (raw table, CT --zone 5 on both interfaces).  A flow
# there is admitted, and toed makes its zone-5 entry true (CTA_ZONE), so
# it reaches the fast path; with the established timeout at 3 s, its
# zone-5 entry outlives 5 s of fast-path traffic (the fast path refreshes
# it in its zone); an entry of the same tuple in zone 0, made and deleted
# by hand, ends nothing (its destroy event names zone 0); deleting the
# zone-5 entry ends the fast path, and the zone-5 entry conntrack makes
# again from the flow's next packets brings it back (joined mid-stream).  XDP, or tc (test_fwd_zone_tc.sh).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 6
need_cmd iptables conntrack
need_built toectl
fwd_router fwdzone
defer "nsx r iptables -t raw -F"
nsx r iptables -t raw -A PREROUTING -i r0 -j CT --zone 5 &&
	nsx r iptables -t raw -A PREROUTING -i r1 -j CT --zone 5 || { fail "zone rules"; finish; }
nsx r sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_established=3 || { fail "sysctl"; finish; }
fwd_toed || { fail "toed starts"; cat "$work/toed.log"; finish; }
fwd_server s 5301 || { fail "server"; finish; }
nsx_bg c python3 "$XFER" client --addr $S4 --port 5301 --seconds 60 \
	--lport-file "$work/f.lport" --go-file "$work/f.go" >"$work/f.json"
CLIENT=$NSX_PID
wait_for 10 test -s "$work/f.lport"
CP=$(cat "$work/f.lport")
# zoned ZONE: the flow's entry in conntrack zone ZONE, one line or none
zoned() { # (zone 0 entries print no zone)
	nsx r conntrack -L -p tcp --sport "$CP" --dport 5301 2>/dev/null |
		if [ "$1" = 0 ]; then grep -v "zone="; else grep -w "zone=$1"; fi
}
# fwd_go: the flow's word in toe_fwd_ctok, which toed writes only once
# conntrack took its update of the flow's entry (in zone 5: CTA_ZONE)
fwd_go f
check "a flow in zone 5: toed made its zone-5 entry true ($(zoned 5 | awk '{ print $4 }')), the fast path's (states $(fwd_states f | tr '\n' ' '))" \
	test -e "$work/f.go" -a -n "$(zoned 5 | grep -w ESTABLISHED)"
sleep 5
check "  its zone-5 entry outlives 5 s of fast-path traffic (established timeout 3 s): refreshed in its zone" \
	test -n "$(zoned 5)"
# the same tuple in zone 0, made and deleted by hand: its destroy event
# names zone 0, which is not the flow's
nsx r conntrack -I -w 0 -p tcp -s $C4 -d $S4 --sport "$CP" --dport 5301 --state ESTABLISHED -t 60 -u ASSURED >/dev/null 2>&1
have0=$(zoned 0 | grep -c .)
nsx r conntrack -D -w 0 -p tcp --sport "$CP" --dport 5301 >/dev/null 2>&1
sleep 0.5
check "an entry of the same tuple in zone 0 (made: $have0) deleted: the zone-5 flow keeps its fast path ($(fwd_states f | tr '\n' ' '))" \
	test "$have0" = 1 -a "$(fwd_states f)" = 3
j0=$(stat_of "$PIN" $STAT_FWD_JOINED)
nsx r conntrack -D -w 5 -p tcp --sport "$CP" --dport 5301 >/dev/null 2>&1
gone_n() { toectl --run-dir "$work/run" -j stats | jq ".reasons.fwd_flows_${FWD_HOOK}_conntrack_gone"; }
gone() { test "$(gone_n)" -ge 1; }
check "its zone-5 entry deleted: the fast path ends (fwd_flows_${FWD_HOOK}_conntrack_gone $(gone_n))" wait_for 10 gone
back() { test "$(stat_of "$PIN" $STAT_FWD_JOINED)" -gt "$j0" -a "$(fwd_states f)" = 3; }
check "  conntrack's new zone-5 entry, made mid-stream, brings it back (fwd_joined $j0 -> $(stat_of "$PIN" $STAT_FWD_JOINED))" wait_for 5 back
kill -USR1 "$CLIENT"
wait "$CLIENT"
check "the flow finishes byte-exact (the stack takes it back)" intact f
finish
