#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Events and counters: listen_start / listen_stop with the listener's tuple,
# flow_offloaded / flow_closed with the connection's tuple, and the socket's
# own counters at close equal to what the test sent and received.
. "$(dirname "$0")/setup.sh"
plan 13
load_toe
cfg=$(conf_t3 ev)
apply "$cfg" >/dev/null || { fail "apply"; finish; }
events_start
SERVER_REPLY=123456 server 5300 || exit 1
SENT=1000000
for fam in 4 6; do
	addr=$B4; [ $fam = 6 ] && addr=$B6
	out=$(client --addr "$addr" --port 5300 --send $SENT | tail -1)
	lp=$(jq '.conns[0].lport' <<<"$out")
	check "IPv$fam: the application received the whole reply" jq -e '.conns[0].received == 123456' <<<"$out"
	eval "LP$fam=$lp"
done
sleep 0.5
kill_servers() { xargs -r kill <"$CG/cgroup.procs"; }
kill_servers	# closes the listener: listen_stop
sleep 0.5
events_stop
ev() { jq -s -c "[.[] | select($1)]" "$EVENTS"; }

check "listen_start for the dual-stack listener on [::]:5300" \
	jq -e 'length == 1 and .[0].laddr == "::" and .[0].family == 10' <<<"$(ev '.type == "listen_start" and .lport == 5300')"
check "listen_stop for it when the server exits" \
	jq -e 'length == 1 and .[0].laddr == "::"' <<<"$(ev '.type == "listen_stop" and .lport == 5300')"
for fam in 4 6; do
	eval "lp=\$LP$fam"
	if [ $fam = 4 ]; then l=$A4 r=$B4 f=2; else l=$A6 r=$B6 f=10; fi
	sel=".lport == $lp and .rport == 5300 and .laddr == \"$l\" and .raddr == \"$r\" and .family == $f"
	check "IPv$fam: flow_offloaded with the connection's tuple, device 0, rule 0" \
		jq -e 'length == 1 and .[0].dev == 0 and .[0].rule == 0 and .[0].direction == 0' \
		<<<"$(ev ".type == \"flow_offloaded\" and $sel")"
	closed=$(ev ".type == \"flow_closed\" and $sel")
	# bytes_acked counts sequence space: data + SYN + FIN; bytes_received: data + FIN.
	check "IPv$fam: flow_closed bytes_acked = $SENT sent + SYN + FIN" \
		jq -e "length == 1 and .[0].bytes_acked == $SENT + 2" <<<"$closed"
	check "IPv$fam: flow_closed bytes_received = 123456 received + FIN" \
		jq -e '.[0].bytes_received == 123456 + 1 and .[0].segs_out > 0 and .[0].segs_in > 0' <<<"$closed"
	check "IPv$fam: the server side was seen too (passive, host by default)" \
		jq -e 'length == 1 and .[0].direction == 1 and .[0].decision == 0 and .[0].bytes_received == 1000001' \
		<<<"$(ev ".type == \"flow_closed\" and .lport == 5300 and .rport == $lp")"
done
# the events of a flow with a record name its socket's namespace by the
# record's inode (bpf/stats.h), not 0: namespace a's for the client's
ino=$(stat -L -c %i "/run/netns/$(ns_name a)")
check "flow_offloaded and flow_closed of both clients name namespace a (inode $ino)" \
	jq -e --argjson i "$ino" 'length == 4 and all(.netns == $i)' \
	<<<"$(ev "(.type == \"flow_offloaded\" or .type == \"flow_closed\") and .rport == 5300 and (.lport == $LP4 or .lport == $LP6)")"
finish
