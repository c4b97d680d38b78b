#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Listeners and policy: a listener a rule offloads (lport) on a device that
# is not the kernel module's gets its decision in listen_start (device,
# rule, reason, policy serial) and an entry in toe_listeners; one left to
# the host gets neither a device nor an entry; at close the entry goes and
# listen_stop carries the device, rule and reason the listener had.
. "$(dirname "$0")/setup.sh"
plan 8
load_toe
# the listeners are in b: the rule names b's namespace
cfg=$(printf 'device t3 type chelsio-t3 nconn 100\nrule offload dev t3 lport 5310 netns %s\n' "$(ns_name b)" | conf lsn)
apply "$cfg" >/dev/null || { fail "apply"; finish; }
serial=$(policy_serial)
events_start
server 5310 5311 || exit 1
sleep 0.3
lsn() { bpftool -j map dump pinned "$PIN/$MAP_LISTENERS" | jq -c '[.[].formatted | .key + .value]'; }
L=$(lsn)
echo "# $MAP_LISTENERS: $L"
check "$MAP_LISTENERS: one entry, the offloaded listener's (port 5310, device 0, rule 0, its cookie)" \
	jq -e "length == 1 and .[0].lport == 5310 and .[0].dev == 0 and .[0].rule == 0 and .[0].cookie > 0 and .[0].policy == ($serial % 4294967296) and .[0].netns_ino > 0" <<<"$L"
check "... keyed with remote address and port 0, and the socket's namespace" \
	jq -e '.[0].rport == 0 and (.[0].raddr | add) == 0 and .[0].netns > 0' <<<"$L"
kill_servers() { xargs -r kill <"$CG/cgroup.procs"; }
kill_servers
sleep 0.5
check "closed: its $MAP_LISTENERS entry is gone" jq -e 'length == 0' <<<"$(lsn)"
events_stop
ev() { jq -s -c "[.[] | select($1)]" "$EVENTS"; }
echo "# $(ev '.type == "listen_start" or .type == "listen_stop"')"
check "listen_start of port 5310: offload on device 0 by rule 0 (reason rule), policy serial $serial" \
	jq -e "length == 1 and .[0].decision == 1 and .[0].dev == 0 and .[0].rule == 0 and .[0].reason == 0 and .[0].policy == ($serial % 4294967296)" \
	<<<"$(ev '.type == "listen_start" and .lport == 5310')"
check "... passive, with the remote end 0" \
	jq -e '.[0].direction == 1 and .[0].rport == 0' <<<"$(ev '.type == "listen_start" and .lport == 5310')"
check "listen_start of port 5311: host by default, no device, no rule" \
	jq -e 'length == 1 and .[0].decision == 0 and .[0].dev == -1 and .[0].rule == -1 and .[0].reason == 1' \
	<<<"$(ev '.type == "listen_start" and .lport == 5311')"
check "listen_stop of port 5310 carries device 0, offload, rule 0 and its reason (rule)" \
	jq -e 'length == 1 and .[0].dev == 0 and .[0].decision == 1 and .[0].rule == 0 and .[0].reason == 0' \
	<<<"$(ev '.type == "listen_stop" and .lport == 5310')"
check "listen_stop of port 5311: no device" \
	jq -e 'length == 1 and .[0].dev == -1 and .[0].decision == 0' \
	<<<"$(ev '.type == "listen_stop" and .lport == 5311')"
finish
