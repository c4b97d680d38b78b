#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# An idle toed still does its periodic work (user/toed/loop.c: epoll_wait's
# timeout bounded by reconcile_timeout_ms): with nothing to wake it (no
# forwarding, no metrics, no toectl client, no traffic, no module), a
# toectl dump killed with kill -9 leaves the capture on, and toed alone
# must notice and switch it off.  The test reads the capture flag with
# bpftool only: a toectl request would wake toed and hide a loop that
# sleeps for ever.  And the loop's own promise (reconcile.c: event_dropped
# looked at every 250 ms, a loss by quota has no ring read to follow): read
# off /proc/PID/syscall while toed sleeps, epoll_wait's timeout is 0..250 ms.
. "$(dirname "$0")/setup.sh"
[ "$(uname -m)" = x86_64 ] || skip "epoll_wait's syscall numbers here are x86_64's"
plan 5
toed_t3 idle

# epoll_timeouts: toed's epoll_wait timeouts (ms) seen in 20 looks 50 ms
# apart, while it sleeps in epoll_wait (x86_64 232) or epoll_pwait (281)
epoll_timeouts() {
	local i nr a
	for i in $(seq 20); do
		read -r nr _ _ _ a _ <"/proc/$TOED_PID/syscall" || return 1
		case $nr in 232 | 281) echo $((a & 0xffffffff)) ;; esac
		sleep 0.05
	done
}
sleep 1 # the status start_toed asked for, and its wake-ups, past
epoll_timeouts >"$CONF_DIR/timeouts"
n=$(wc -l <"$CONF_DIR/timeouts")
max=$(sort -n "$CONF_DIR/timeouts" | tail -1)
check "idle toed was seen asleep in epoll_wait ($n of 20 looks)" test "$n" -ge 5
check "  each time for at most 250 ms (longest: ${max:-none}; 4294967295 is -1, for ever)" \
	test -n "$max" -a "${max:-0}" -le 250
cap_on() { bpftool -j map lookup pinned "$PIN/$MAP_CAP_CONF" key 0 0 0 0 | jq -r .formatted.value.on; }
is_on() { [ "$(cap_on)" = 1 ]; }
is_off() { [ "$(cap_on)" = 0 ]; }
toectl dump --pin-dir "$PIN" -w "$CONF_DIR/d.pcap" >"$CONF_DIR/d.json" 2>"$CONF_DIR/d.err" &
DPID=$!
defer "kill -9 $DPID 2>/dev/null"
wait_for 5 is_on
check "a dump switched the capture on" is_on
sleep 1 # toed's last wake-up (the status start_toed asked for) well past
kill -9 $DPID
wait $DPID 2>/dev/null
t0=$(date +%s%N)
wait_for 8 is_off
ms=$((($(date +%s%N) - t0) / 1000000))
check "kill -9, toed idle: toed switched the capture off by itself (after $ms ms; it looks every 2 s)" is_off
check "  and logged it" grep -q "toectl dump pid $DPID was left on.*switched off" "$TOED_LOG"
finish
