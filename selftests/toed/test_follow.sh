#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toed follows the datapath it serves (issue 17): toe-loader unload and load
# under a running toed.  During the gap requests that need the datapath
# fail with a clear message; once it is back, within 2 s, stats, flows,
# neigh and monitor come from the new datapath (a live offloaded flow over
# real TCP, a neighbour change), with the policy in force applied again.
# Then the locks and the run folder: a second toed on the same pin folder
# (another run folder) is refused; a run folder that is a symbolic link,
# another uid's, or mode 0777 is refused.  Then the policy in force: after
# a toed --apply from elsewhere, toectl policy and status describe it, and
# a datapath reload in place keeps it (toectl reload applies toed's own).
. "$(dirname "$0")/setup.sh"
plan 36
toed_t3 follow
server 5300 || { fail "server"; finish; }
pin_id() { bpftool -j map show pinned "$PIN/$1" | jq .id; }
st() { ctl -j status | jq -r "$1"; }
OLD_STATS=$(pin_id $MAP_STATS)
check "status names the datapath's ids (stats map $OLD_STATS)" \
	test "$(st .datapath.stats_map_id)" = "$OLD_STATS" -a "$(st .datapath.loaded)" = true
MON=$CONF_DIR/monitor
ctl -j monitor >"$MON" 2>&1 &
defer "kill $!"
sleep 0.3

# --- unloaded: a clear message, toed still running
toe-loader unload --pin-dir "$PIN" >/dev/null
out=$(ctl stats 2>&1); rc=$?
check "unloaded: toectl stats fails clearly (rc $rc): $out" \
	test "$rc" = 1 -a -n "$(grep -F "opentoe is not loaded at $PIN (toe-loader load)" <<<"$out")"
out=$(ctl flows 2>&1)
check "unloaded: toectl flows too: $out" grep -q "opentoe is not loaded" <<<"$out"
check "unloaded: toectl status answers: loaded false" test "$(st .datapath.loaded)" = false
check "unloaded: toed still runs" kill -0 "$TOED_PID"
# a reload with nothing to apply to: toectl reload is refused by name
# before toed tries; SIGHUP reads the file, keeps it for the next datapath
# (toed applies it when one appears: below) and logs why it applied nothing
out=$(ctl reload 2>&1); rc=$?
check "unloaded: toectl reload fails clearly, naming the pin folder (rc $rc): $out" \
	test "$rc" = 1 -a -n "$(grep -F "opentoe is not loaded at $PIN (toe-loader load)" <<<"$out")"
kill -HUP "$TOED_PID"
hup_said() { grep -qF "error: opentoe is not loaded at $PIN (toe-loader load)" "$TOED_LOG"; }
check "unloaded: SIGHUP: toed logs that nothing is loaded to apply to ($(grep -F 'error: ' "$TOED_LOG" | tail -1)), and still runs" \
	eval 'wait_for 3 hup_said && kill -0 "$TOED_PID"'
has_ev() { grep -q "\"event\":\"datapath\",\"state\":\"$1\"" "$MON"; }
check "monitor: a datapath unloaded event" wait_for 3 has_ev unloaded

# --- loaded again: everything from the new datapath within 2 s
nsx a toe-loader load --cgroup "$CG" --pin-dir "$PIN" --dev va --hook xdp >/dev/null || fail "load again"
NEW_STATS=$(pin_id $MAP_STATS)
t0=$(date +%s%N)
picked() { test "$(st .datapath.stats_map_id)" = "$NEW_STATS"; }
check "status: the new stats map ($OLD_STATS -> $NEW_STATS)" wait_for 2 picked
echo "# status showed the new datapath $(( ($(date +%s%N) - t0) / 1000000 )) ms after the load"
check "monitor: a datapath loaded event" wait_for 3 has_ev loaded
check "toed logged it" wait_for 2 grep -q "datapath loaded: $PIN" "$TOED_LOG"
serial_new() { test "$(policy_serial)" -ge 1; }
check "the policy in force was applied to the new datapath" wait_for 2 serial_new
out=$(ctl -j policy)
check "toectl policy: toed's file, the new serial" \
	jq -e --arg c "$cfg" --argjson s "$(policy_serial)" '.config == $c and .serial == $s and (.rules | length) == 1' <<<"$out"
HELD=$CONF_DIR/held
# (held until the checks are done with it: unhold)
client --addr "$B4" --port 5300 --send 1000 --hold 60 >"$HELD" &
HELDPID=$!
nflow() { ctl -j flows port 5300 | tee "$CONF_DIR/flows" | jq -e 'any(.[]; .decision == "offload")' >/dev/null; }
check "flows: the live offloaded flow on the new datapath" wait_for 2 nflow || cat "$CONF_DIR/flows"
check "flows: toectl's flows are the new $MAP_FLOWS'" \
	test "$(ctl -j flows port 5300 | jq length)" = "$(flows | jq '[.[] | select(.rport == 5300 or .lport == 5300)] | length')"
evs() { ctl -j stats | jq -e '.datapath | to_entries | map(.value) | add > 0' >/dev/null; }
check "stats: counters of the new datapath move" wait_for 2 evs
mon_off() { grep -q '"event":"flow_offloaded".*"rport":5300' "$MON"; }
check "monitor: the new datapath's events arrive" wait_for 2 mon_off
nsx a ip neigh add 10.202.0.77 lladdr 02:00:00:00:77:01 dev va nud permanent
nb() { ctl -j neigh | jq -e '.[] | select(.dst == "10.202.0.77" and .lladdr == "02:00:00:00:77:01")' >/dev/null; }
check "neigh: a neighbour change goes into the new $MAP_NEIGH" wait_for 2 nb
VA=$(nsx a ip -j link show va | jq '.[0].ifindex')
in_new() {
	bpftool -j map dump pinned "$PIN/$MAP_NEIGH" | python3 "$TOE_TOP/selftests/tools/neighmap.py" map "$VA" |
		grep -qxF "10.202.0.77 02:00:00:00:77:01 PERMANENT"
}
check "... as bpftool sees it" wait_for 2 in_new
wait_for 10 grep -q held "$HELD"
unhold "$HELD"
wait $HELDPID
check "the flow completed" jq -e '.conns[0].sent == 1000' "$HELD"

# --- one toed per datapath, whatever the run folder
out=$(nsx_t 10 a toed --config "$cfg" --pin-dir "$PIN" --run-dir "$CONF_DIR/run2" 2>&1); rc=$?
check "a second toed on the same pin folder, another run folder, is refused (rc $rc): $out" \
	test "$rc" = 1 -a -n "$(grep "another toed is running (pid $TOED_PID" <<<"$out")" -a -n "$(grep -F "$PIN" <<<"$out")"
# and one toed per run folder, whatever the datapath: a second would
# take the first one's control socket
out=$(nsx_t 10 a toed --config "$cfg" --pin-dir "$CONF_DIR/otherpins" --run-dir "$RUN" 2>&1); rc=$?
check "a second toed on the same run folder, another pin folder, is refused (rc $rc): $out" \
	test "$rc" = 1 -a -n "$(grep -F "another toed is running (pid $TOED_PID; lock $RUN/" <<<"$out")"
check "  the first toed still answers on its socket" eval 'ctl -j status | jq -e ".pid == $TOED_PID" >/dev/null'
refused() { # DESC RUNDIR
	local out rc
	out=$(timeout 5 toed --config "$cfg" --pin-dir "$CONF_DIR/nopin" --run-dir "$2" 2>&1); rc=$?
	check "run folder $1 refused (rc $rc): $out" test "$rc" = 1 -a -n "$(grep -i "refused" <<<"$out")"
}
mkdir -m 0700 "$CONF_DIR/real"; ln -s "$CONF_DIR/real" "$CONF_DIR/link"
refused "that is a symbolic link" "$CONF_DIR/link"
mkdir -m 0700 "$CONF_DIR/other"; chown 65534 "$CONF_DIR/other"
refused "owned by another uid" "$CONF_DIR/other"
mkdir "$CONF_DIR/open"; chmod 0777 "$CONF_DIR/open"
refused "of mode 0777" "$CONF_DIR/open"
check "no toed.lock was made in the refused folders" \
	test ! -e "$CONF_DIR/real/toed.lock" -a ! -e "$CONF_DIR/other/toed.lock" -a ! -e "$CONF_DIR/open/toed.lock"
check "toed's own run folder is 0700" test "$(stat -c %a "$RUN")" = 700

# --- the policy in force, applied from elsewhere
other=$(conf other <<'EOF2'
device t3 type chelsio-t3 nconn 100
rule host rport 5400
rule offload dev t3 rport 5500
EOF2
)
sleep 1.5
t_ap=$(date +%s.%N)
aj=$(nsx a toed --apply "$other" --pin-dir "$PIN" -j) || fail "toed --apply"
s=$(policy_serial)
g=$(bpftool -j map lookup pinned "$PIN/$MAP_POL_GEN" key 0 0 0 0 | jq .formatted.value)
check "toed --apply -j: the file, and the serial and generation now in the datapath ($s, $g): $aj" \
	jq -e --arg c "$other" --argjson s "$s" --argjson g "$g" '.config == $c and .serial == $s and .generation == $g and .rules == 2' <<<"$aj"
out=$(ctl -j policy)
check "toectl policy after toed --apply elsewhere: that file, its serial $s, its 2 rules" \
	jq -e --arg c "$other" --argjson s "$s" '.config == $c and .serial == $s and (.rules | length) == 2' <<<"$out"
check "... in text too" grep -qF "# policy $s (generation" < <(ctl policy | grep -F "from $other")
out=$(ctl -j status)
# applied since the apply began (toed's own was 1.5 s before it): an age
# no older than that, not a fixed second, which a loaded machine's steps
# above can outlast
since_ap=$(awk -v a="$t_ap" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
check "status: the policy in force, its source, applied just now, $(jq .policy.applied_s_ago <<<"$out") s ago, within the $since_ap s since the apply began (not toed's own 1.5 s before)" \
	jq -e --arg c "$other" --argjson s "$s" --argjson t "$since_ap" '.policy.serial == $s and .policy.source == $c and .policy.applied_by == "other" and .policy.applied_s_ago <= $t' <<<"$out"
# A datapath reload (maps kept) is not a policy change: the other's stays
nsx a toe-loader load --cgroup "$CG" --pin-dir "$PIN" --dev va --hook xdp >/dev/null || fail "load in place"
out=$(ctl -j policy)
check "after a datapath reload in place, the other's policy is still in force: $other, serial $s, 2 rules ($(jq -c '[.config, .serial, (.rules | length)]' <<<"$out"))" \
	jq -e --arg c "$other" --argjson s "$s" '.config == $c and .serial == $s and (.rules | length) == 2' <<<"$out"
check "toed followed that reload (status: the new sock_ops program), and said it kept the other's policy" \
	eval '[ "$(st .datapath.reloads)" -ge 1 ] && grep -q "is kept" "$TOED_LOG"'
ctl reload >/dev/null
check "after toectl reload, toed's own file again" \
	jq -e --arg c "$cfg" '.config == $c and (.rules | length) == 1' < <(ctl -j policy)
check "the apply lock is the datapath's, not the old global one" test ! -e /run/opentoe/policy.lock -o "$(find /run/opentoe/policy.lock -newer "$cfg" 2>/dev/null)" = ""
finish
