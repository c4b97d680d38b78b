#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Per-tenant event budget (issue 31, item 3: "the event budget").  The
# tenants share the 1 MiB toe_events ring; one tenant's flood used to fill
# it and drop the others' flow_closed and listen_stop events.  toed is
# stopped (SIGSTOP: nothing reads the ring); an unprivileged tenant
# (nobody, unshare -rn) makes ~12,000 events on its own loopback, more than
# the ring holds; then the operator (toed's namespace, a) opens and closes
# one offloaded connection.  With the default "quota events 50%", the
# tenant fills half the ring and no more: its other events are dropped and
# counted (event_quota_dropped, its toe_tenants entry), and toed, running
# again, hears the operator's flow_closed, and reconciles for the
# tenant's lost events as for any others (reconcile.c).
. "$(dirname "$0")/../toed/setup.sh"
need_built selftests/connstorm
need_cmd curl
plan 6
toed_t3 evquota
MPORT=$(nsx a python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
stop_toed 9
start_toed "$cfg" --metrics "$MPORT" || { fail "toed restarts"; finish; }
. "$(dirname "$0")/unpriv.sh"
cp "$TOE_BUILD/selftests/connstorm" "$tools/" && chmod a+rx "$tools/connstorm"
server 5300 || { fail "server"; finish; }
closed_offload() {
	nsx a curl -s -m 2 "http://127.0.0.1:$MPORT/metrics" |
		sed -n 's/^opentoe_flows_closed_total{decision="offload"} //p'
}
c0=$(closed_offload)
q0=$(stat_sum "$STAT_EVENT_QUOTA")

kill -STOP "$TOED_PID"
defer "kill -CONT $TOED_PID 2>/dev/null"
storm=$CONF_DIR/storm
(
	echo $BASHPID >"$CG/cgroup.procs" || exit 1
	exec setpriv --reuid nobody --regid nogroup --clear-groups \
		unshare -rn sh -c "ip link set lo up &&
		(python3 $tools/tcpx.py server --port 443 >/dev/null 2>&1 &) && sleep 0.5 &&
		$tools/connstorm -a 127.0.0.1 -p 443 -r 2000 -s 3 -t 8"
) >"$storm" 2>&1
q1=$(stat_sum "$STAT_EVENT_QUOTA")
ev=$(bpftool -j map dump pinned "$PIN/$MAP_TENANTS" | jq -c '[.[].formatted | select(.key.what == 65) | .value]')
check "the tenant's events past its share were dropped: event_quota_dropped $q0 -> $q1 ($(cat "$storm"))" \
	test "$q1" -gt "$q0"
check "and counted for it in $MAP_TENANTS ($ev)" jq -e 'map(.refused) | max > 0' <<<"$ev"

client --addr "$B4" --port 5300 --count 1 >/dev/null 2>&1
kill -CONT "$TOED_PID"
heard() { test "$(closed_offload)" = $((c0 + 1)); }
wait_for 5 heard
check "toed heard the operator's flow_closed ($c0 -> $(closed_offload))" test "$(closed_offload)" = $((c0 + 1))
check "event_dropped: the ring itself never overflowed" test "$(stat_sum "$STAT_EVENT_DROPPED")" = 0
# events a quota dropped are lost to toed as much as a full ring's
rec() { ctl -j status | jq -e '.reconcile.event_loss >= 1' >/dev/null; }
wait_for 5 rec
check "toed reconciled for the tenant's dropped events ($(ctl -j status | jq -c .reconcile))" rec
# queued: per tenant, what it put on the ring less what toed read of it
queued() {
	bpftool -j map dump pinned "$PIN/$MAP_TENANTS" | jq -c '[.[].formatted |
		select(.key.what == 65 or .key.what == 66) |
		{ns: .key.netns, n: (if .key.what == 65 then .value.held else -.value.held end)}] |
		group_by(.ns) | map(map(.n) | add)'
}
wait_for 5 jq -e 'all(. == 0)' < <(queued) >/dev/null
check "toed gave every tenant its budget back: nothing queued ($(queued))" jq -e 'length > 0 and all(. == 0)' < <(queued)
finish
