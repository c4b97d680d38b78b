#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Lost events are made good (issue 31 item 4, user/toed/reconcile.c): a
# connection flood while toed is stopped (SIGSTOP) overflows the toe_events
# ring (event_dropped moves); within 1 s of toed running again it
# reconciles (module TIDs and listeners: kmod_reconcile, listen_reconcile;
# the TIDs themselves are tried in the 6.1 guest), says so and counts it in
# toectl status, stats and the metrics.
. "$(dirname "$0")/setup.sh"
need_built selftests/connstorm
plan 5
toed_t3 recon 60000
server 5300 || { fail "server"; finish; }
check "no reconcile at start" jq -e '.reconcile.runs == 0' < <(ctl -j status)
kill -STOP "$TOED_PID"
nsx a sysctl -qw net.ipv4.tcp_tw_reuse=1
d0=$(stat_of "$PIN" "$STAT_EVENT_DROPPED")
in_cg a "$TOE_BUILD/selftests/connstorm" -a "$B4" -p 5300 -r 1500 -s 3 -t 8 >"$CONF_DIR/storm" 2>&1
d1=$(stat_of "$PIN" "$STAT_EVENT_DROPPED")
check "the flood overflowed the ring: event_dropped $d0 -> $d1 ($(cat "$CONF_DIR/storm"))" test "$d1" -gt "$d0"
t0=$(date +%s%N)
kill -CONT "$TOED_PID"
wait_for 5 eval 'ctl -j status | jq -e ".reconcile.event_loss >= 1" >/dev/null'
ms=$((($(date +%s%N) - t0) / 1000000))
check "toed reconciled for the lost events within 1 s of running again ($ms ms)" test "$ms" -le 1000
check "its log says so" grep -q "reconciled ([0-9]* events lost)" "$TOED_LOG"
check "toectl stats counts it" jq -e '.daemon.reconciles >= 1 and .daemon.reconciles_event_loss >= 1' < <(ctl -j stats)
finish
