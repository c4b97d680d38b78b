#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A conntrack entry destroyed ends its fast path (issue 31, item 10): toed
# follows conntrack's destroy events and deletes the flow's toe_fwd entry,
# as a flowtable tears down its flow (and the fast path's own refresh
# finds the entry gone, where no event comes).  A fast-path flow through
# the router (conntrack tracking it, toed running there), then `conntrack
# -D` of it: within 1 s its fast path ends (conntrack_gone), the stack
# forwards it, conntrack makes its entry again from its next packets, and
# the flow joins the fast path again (issue 48); the transfer completes
# intact.  IPv4, then IPv6.  XDP, or tc
# (test_fwd_conntrack_tc.sh).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 10
need_cmd iptables ip6tables conntrack
need_built toectl
fwd_router fwdct
defer "nsx r iptables -F FORWARD; nsx r ip6tables -F FORWARD"
nsx r iptables -A FORWARD -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT &&
	nsx r ip6tables -A FORWARD -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT || { fail "conntrack rules"; finish; }
# the flow's packets back in the stack are mid-stream for conntrack: it
# picks them up (nf_conntrack_tcp_loose) without the global window
# liberality (toed makes admitted entries window-liberal, user/toed/ct.c)
nsx r sysctl -qw net.netfilter.nf_conntrack_tcp_be_liberal=0
fwd_toed --log-level debug || { fail "toed starts"; cat "$work/toed.log"; finish; }
fwd_server s 5201 || { fail "server"; finish; }
st() { stat_of "$PIN" "$1"; }
# n5201 NAME: toe_fwd entries of flow NAME, followed by its client port
# (xfer.py's NAME.lport): the round before may have left an entry of 5201
n5201() {
	local c
	c=$(cat "$work/$1.lport" 2>/dev/null) && [ -n "$c" ] || { echo 0; return; }
	bpftool -j map dump pinned "$PIN/$MAP_FWD" | jq --argjson c "$c" '[.[] | .formatted.key as $k |
		select(($k.lport == 5201 and $k.rport == $c) or ($k.rport == 5201 and $k.lport == $c))] | length'
}
est() { test "$(n5201 "$1")" = 1; }
# joined NAME: flow NAME's entry as "state joined"
joined() {
	bpftool -j map dump pinned "$PIN/$MAP_FWD" | jq -r --argjson c "$(cat "$work/$1.lport")" '.[] | .formatted.key as $k |
		select(($k.lport == 5201 and $k.rport == $c) or ($k.rport == 5201 and $k.lport == $c)) | "\(.formatted.value.state) \(.formatted.value.joined)"'
}
# ended: the flows the fast path ended for conntrack_gone (toed's and the
# datapath's, toectl stats)
ended() { toectl --run-dir "$work/run" -j stats | jq ".reasons.fwd_flows_${FWD_HOOK}_conntrack_gone"; }
# round NAME ADDR FAM: a fast-path flow to ADDR, conntrack -D of it, the checks
round() {
	local name=$1 addr=$2 fam=$3 cpid x0 x1 k0 k1
	# (the flow runs until the counters are read, SIGUSR1, or 60 s: a
	# loaded machine slows the checks, it does not end the flow under them)
	nsx_bg c python3 "$XFER" client --addr "$addr" --port 5201 --seconds 60 --lport-file "$work/$name.lport" >"$work/$name.json"
	cpid=$NSX_PID
	wait_for 10 est "$name" || { fail "$name: the flow is admitted"; return; }
	sleep 0.5
	check "$name: conntrack tracks the flow on the router" bash -c "nsenter --net=/run/netns/$(ns_name r) conntrack -L -f $fam -p tcp --dport 5201 2>/dev/null | grep -q 5201"
	j0=$(st $STAT_FWD_JOINED) k0=$(ip_forwarded) e0=$(ended)
	nsx r conntrack -D -f $fam -p tcp --dport 5201 >/dev/null 2>&1
	gone() { [ "$(ended)" -gt "$e0" ]; }
	check "  conntrack -D: within 1 s its fast path ends (fwd_flows_${FWD_HOOK}_conntrack_gone $e0 -> $(ended))" wait_for 1 gone
	# conntrack makes its entry again from the flow's next packets
	# (nf_conntrack_tcp_loose), and the flow joins the fast path again
	# once the stack forwarded it both ways (issue 48)
	back() { [ "$(st $STAT_FWD_JOINED)" -gt "$j0" ] && [ "$(joined "$name")" = "3 1" ]; }
	wait_for 5 back
	k1=$(ip_forwarded)
	check "  the stack forwards it meanwhile ($((k1 - k0)) packets)" test $((k1 - k0)) -ge 2
	check "  conntrack's new entry brings it back: joined mid-stream (fwd_joined $j0 -> $(st $STAT_FWD_JOINED), entry: $(joined "$name"))" back
	kill -USR1 $cpid
	wait $cpid
	check "  and the transfer completes intact" intact $name
}
round ipv4 $S4 ipv4
round ipv6 $S6 ipv6
finish
