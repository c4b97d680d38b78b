#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Atomic policy swap: 400 applies alternating two rule sets during a storm
# of connections.  Every decision must come whole from one rule set: set X
# (odd serials) decides with rule 1 on device xa, set Y (even) with rule 0
# on device yb; a mix would pair a rule of one with a device of the other.
# Then a set without yb: its entry in toe_devs no longer present (toectl
# devices lists the present ones), xa's still.
. "$(dirname "$0")/setup.sh"
plan 7
load_toe
X=$(conf x <<'EOF2'
device xa type chelsio-t3 nconn 100000
device yb type software nconn 100000
default host
rule host rport 1-5399
rule offload dev xa rport 5400
EOF2
)
Y=$(conf y <<'EOF2'
device xa type chelsio-t3 nconn 100000
device yb type software nconn 100000
default bypass
rule offload dev yb rport 5400
EOF2
)
apply "$X" >/dev/null || { fail "apply"; finish; }
server 5400 || exit 1
events_start
storm=$CONF_DIR/storm
in_cg a python3 "$TCPX" storm --addr $B4 --port 5400 --count 1200 --parallel 4 >"$storm" &
spid=$!
applies=0 apply_fail=0
for ((i = 0; i < 400; i++)); do
	if [ $((i % 2)) = 0 ]; then f=$Y; else f=$X; fi
	nsenter --net=/run/netns/$(ns_name a) toed --apply "$f" --pin-dir "$PIN" >/dev/null || apply_fail=$((apply_fail + 1))
	applies=$((applies + 1))
done
wait $spid
events_stop
echo "storm: $(cat "$storm"); applies: $applies ($apply_fail failed)"
check "400 applies succeeded" test $apply_fail = 0
check "the storm completed" jq -e '.done == 1200 and .errors == 0' "$storm"
total=$(jq -s '[.[] | select(.type == "flow_offloaded" and .rport == 5400)] | length' "$EVENTS")
bad=$(jq -s -c '[.[] | select(.type == "flow_offloaded" and .rport == 5400) |
	select(if .policy % 2 == 1 then (.rule != 1 or .dev != 0) else (.rule != 0 or .dev != 1) end)]' "$EVENTS")
nx=$(jq -s '[.[] | select(.type == "flow_offloaded" and .rport == 5400 and .policy % 2 == 1)] | length' "$EVENTS")
echo "$total decisions: $nx by X, $((total - nx)) by Y"
check "every connection was decided (1200 offloaded)" test "$total" = 1200
check "both rule sets decided connections" test "$nx" -gt 0 -a "$nx" -lt "$total"
check "no decision mixes two rule sets" test "$(jq length <<<"$bad")" = 0
check "the final policy is serial 401" test "$(policy_serial)" = 401
Z=$(conf z <<'EOF2'
device xa type chelsio-t3 nconn 100000
default host
rule offload dev xa rport 5400
EOF2
)
apply "$Z" >/dev/null || fail "apply a set without yb"
present() { bpftool -j map dump pinned "$PIN/$MAP_DEVS" | jq -c '[.[].formatted.value | select(.flags % 2 == 1) | .name] | sort'; }
check "yb dropped from the configuration: no longer present in $MAP_DEVS, xa still ($(present))" \
	test "$(present)" = '["xa"]'
finish
