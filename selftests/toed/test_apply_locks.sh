#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every lock released on every exit path: the command right after each
# failure finds the datapath's change lock free.  toectl reload failing
# inside the apply (steer cpu 99: the cpumap refuses it), then toe-loader
# load over the datapath with --wait 0, which toed follows
# (datapath_reloads), then a good reload; toe-loader unload under toed
# (datapath_unloads, read once loaded again), a reload failing for want of a datapath, and a load
# with --wait 0 right after it; and a reload while another process holds
# the lock fails naming it (the apply takes the lock).  toed --apply with
# no datapath names the missing pin and the cure; with an optional pin
# missing (an older datapath) it applies.
. "$(dirname "$0")/setup.sh"
plan 13
toed_t3 locks
tl() { nsx a toe-loader "$@" --pin-dir "$PIN"; }
LOAD=(load --cgroup "$CG" --dev va --hook xdp --wait 0)
st() { ctl -j stats | jq "$1"; } # JQ_PATH
cp "$cfg" "$cfg.good"
printf 'device t3 type chelsio-t3 nconn 100 steer cpu 99\nrule offload dev t3 rport 5300\n' >"$cfg"
out=$(ctl reload 2>&1); rc=$?
check "toectl reload with steer cpu 99 fails inside the apply, naming it (rc $rc): $out" \
	test "$rc" != 0 -a -n "$(grep -F 'cpu 99' <<<"$out")"
r0=$(st .control.datapath_reloads)
out=$(tl "${LOAD[@]}" 2>&1); rc=$?
check "right after: toe-loader load --wait 0 over the datapath gets the change lock (rc $rc)${out:+: $out}" test "$rc" = 0
reloaded() { [ "$(st .control.datapath_reloads)" -gt "$r0" ]; }
check "toed follows the reload (datapath_reloads $r0 -> $(st .control.datapath_reloads))" wait_for 5 reloaded
cp "$cfg.good" "$cfg"
check "then a good toectl reload applies" ctl reload

u0=$(st .control.datapath_unloads)
check "toe-loader unload under toed" tl unload
gone() { ctl status 2>&1 | grep -q "not loaded"; }
wait_for 5 gone # toed has noticed (toectl stats answers only with a datapath)
out=$(ctl reload 2>&1); rc=$?
check "toectl reload with no datapath fails (rc $rc): $out" test "$rc" != 0
out=$(nsx_t 10 a toed --apply "$cfg" --pin-dir "$PIN" 2>&1); rc=$?
check "toed --apply with no datapath: exit 1, naming the pin and the cure (rc $rc): $out" \
	eval 'test "$rc" = 1 && grep -F "opentoe is not loaded: cannot open $PIN/" <<<"$out" | grep -qF "(run toe-loader load)"'
out=$(tl "${LOAD[@]}" 2>&1); rc=$?
check "right after: toe-loader load --wait 0 gets the change lock (rc $rc)${out:+: $out}" test "$rc" = 0
again() { ctl reload >/dev/null; }
check "and toed applies on the new datapath" wait_for 5 again
check "toectl stats counted the unload (datapath_unloads $u0 -> $(st .control.datapath_unloads))" \
	test "$(st .control.datapath_unloads)" -gt "$u0"

# And the apply does take the lock: held by another process (flock -o:
# flock itself holds it), toectl reload waits its bounded time and fails
# naming the holder; once it is let go, the reload applies.
lock=$(ls /run/opentoe/locks/"$(basename "$PIN")".*.change.lock 2>/dev/null | head -n 1)
flock -o -x "$lock" sleep 20 & holder=$!
defer "kill $holder 2>/dev/null"
sleep 0.3
out=$(ctl reload 2>&1); rc=$?
check "toectl reload while another process holds the change lock fails naming it (rc $rc): $out" \
	test "$rc" != 0 -a -n "$(grep -F "locked by pid $holder (flock)" <<<"$out")"
kill "$holder"; wait "$holder" 2>/dev/null
check "  and applies once the lock is let go" ctl reload

# A datapath an older toe-loader loaded has no pin of the maps it did not
# have (here $MAP_EVENTS's pin taken away, and put back by its id): toed
# --apply leaves what it would write there and applies the rest.
id=$(bpftool -j map show pinned "$PIN/$MAP_EVENTS" | jq .id)
rm "$PIN/$MAP_EVENTS"
out=$(nsx_t 10 a toed --apply "$cfg" --pin-dir "$PIN" 2>&1); rc=$?
bpftool map pin id "$id" "$PIN/$MAP_EVENTS"
check "an older datapath, no $MAP_EVENTS pin: toed --apply applies (rc $rc)${out:+: $out}" test "$rc" = 0
finish
