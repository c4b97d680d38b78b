#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Rollback from a running system: a reload (toe-loader load over a loaded
# datapath) fails once at each of its recorded changes in turn
# (TOE_LOADER_FAIL_AT=N, user/loader/undo.c), and after each failure the
# programs' ids, the pins (each with its object's id), the cgroup's and
# va's attachments equal those before; the next command right after each
# failure finds the change lock free (a reload with --wait 0 succeeds at
# the end, an unload too).  And the contents (issue 50: contents, not
# status): the data maps a policy apply and a flow record filled hash the
# same after each failure as before, and after them all the datapath still
# works: a frame of the recorded flow sent into va is XDP's flow hit, and
# a connection in the cgroup is decided by the policy (offload, rule 0).
. "$(dirname "$0")/../lib.sh"
plan 10
need_cmd bpftool jq
dp_start rollrun
veth_loop || exit 1
tl() { nsx a toe-loader "$@" --pin-dir "$PIN"; }
defer "nsx a toe-loader unload --pin-dir $PIN; rm -rf $PIN"
LOAD=(load --hook xdp --dev va --cgroup "$CG")
check "the datapath loads" tl "${LOAD[@]}"

# state: what must not change, one line each
state() {
	tl status -j | jq -c '[.programs[] | {id, type, attach}] | sort_by(.id, .attach)'
	local k
	for k in map prog link; do # each pin under $PIN with its object's id
		bpftool -j -f $k show | jq -r --arg d "$PIN/" \
			'.[] | .id as $id | (.pinned // [])[] | select(startswith($d)) | "\(.) \($id)"'
	done | sort
	bpftool -j cgroup show "$CG" | jq -c '[.[] | .id] | sort'
	nsx a ip -j link show dev va | jq -c '.[0].xdp.prog.id // 0'
}
P="nsx a python3 $TOE_TOP/selftests/tools/pkt.py"
printf 'device t3 type chelsio-t3 nconn 100\nrule offload dev t3 rport 5300\n' >"$work/pol.conf"
chmod 600 "$work/pol.conf"
check "a policy applies, a flow record is written" \
	eval 'nsx a toed --apply "$work/pol.conf" --pin-dir "$PIN" >/dev/null &&
		bpftool map update pinned "$PIN/$MAP_FLOWS" key hex $($P key 4 10.0.0.1 10.0.0.2 80 12345) value hex $($P flow 1) &&
		bpftool map update pinned "$PIN/$MAP_FLOW_FILTER" $($P filter 4 10.0.0.1 10.0.0.2 80 12345)'
# data: each data map's contents, hashed, one line each: the hash maps
# (their entries) and the arrays of up to 4,096 entries (the policy's
# generation, headers, tuples, devices...); not the per-CPU counters, the
# rings, the maps of programs, sockets or devices, nor the arrays indexed
# by rule or port (toe_pol_rules, _lclass, _rclass: 131,072 entries and
# more, seconds a dump; the generation in force says which half is live)
DATA_MAPS=$(bpftool -j -f map show | jq -r --arg d "$PIN/" '.[] |
	select(.type == "hash" or .type == "lru_hash" or .type == "lpm_trie" or
	       (.type == "array" and .max_entries <= 4096)) |
	(.pinned // [])[] | select(startswith($d))' | sort)
data() {
	local f
	for f in $DATA_MAPS; do
		echo "${f##*/} $(bpftool map dump pinned "$f" 2>&1 | sha256sum | cut -c1-16)"
	done
}
dbefore=$(data)
check "  the data maps' contents read the same twice ($(wc -l <<<"$dbefore") maps)" test "$(data)" = "$dbefore"
before=$(state)
echo "$before" | head -3

steps=0 changed="" dchanged="" held="" quiet=""
for ((n = 1; n <= 200; n++)); do
	out=$(TOE_LOADER_FAIL_AT=$n tl "${LOAD[@]}" --wait 0 2>&1) && break
	steps=$n
	grep -q "change $n fails (TOE_LOADER_FAIL_AT)" <<<"$out" || quiet+=" $n"
	grep -q "change lock" <<<"$out" && held+=" $n"
	[ "$(state)" = "$before" ] || { changed+=" $n"; diff <(echo "$before") <(state) | head -8; }
	[ "$(data)" = "$dbefore" ] || { dchanged+=" $n"; diff <(echo "$dbefore") <(data) | head -8; }
done
echo "# a reload records $steps changes; the one past them succeeded"
check "every one of the $steps changes of a reload failed once, each failure said so${quiet:+ (not: $quiet)}" \
	test "$steps" -ge 5 -a "$n" -le 200 -a -z "$quiet"
check "after each failure the ids, pins and attachments equal those before${changed:+ (not after:$changed)}" \
	test -z "$changed"
check "the next reload right after each failure found the change lock free${held:+ (held after:$held)}" \
	test -z "$held"
check "after each failure the data maps' contents equal those before${dchanged:+ (not after:$dchanged)}" \
	test -z "$dchanged"
h0=$(stat_of "$PIN" "$STAT_XDP_FLOW_HIT") e0=$(stat_of "$PIN" "$STAT_ESTABLISHED")
$P v4off "$work/f.bin"
nsx a python3 -c "
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(('vb', 0))
for _ in range(10): s.send(open(sys.argv[1], 'rb').read())" "$work/f.bin"
wait_for 5 test "$(stat_of "$PIN" "$STAT_XDP_FLOW_HIT")" -ge $((h0 + 10))
check "  then: 10 frames of the recorded flow into va are XDP's flow hits ($h0 -> $(stat_of "$PIN" "$STAT_XDP_FLOW_HIT"))" \
	test "$(stat_of "$PIN" "$STAT_XDP_FLOW_HIT")" -ge $((h0 + 10))
# (held open while its record is read: a closed one's record is gone)
(echo $BASHPID >"$CG/cgroup.procs" && exec nsenter --net=/run/netns/$(ns_name a) python3 -c "
import socket, time
l = socket.create_server(('127.0.0.1', 5300))
c = socket.create_connection(('127.0.0.1', 5300)); a, _ = l.accept()
print(c.getsockname()[1], flush=True)
time.sleep(30)") >"$work/conn" &
cpid=$!
defer "kill $cpid 2>/dev/null"
wait_for 10 test -s "$work/conn"
got=$(cat "$work/conn")
check "  and a connection in the cgroup is decided by the policy: offload, rule 0 (established $e0 -> $(stat_of "$PIN" "$STAT_ESTABLISHED"))" \
	test "$(stat_of "$PIN" "$STAT_ESTABLISHED")" -ge $((e0 + 2)) -a \
	"$(bpftool -j map dump pinned "$PIN/$MAP_FLOWS" | jq --argjson p "${got:-0}" '[.[].formatted | select(.key.lport == $p and .key.rport == 5300) | .value | [.decision, .rule]][0] | tostring')" = '"[1,0]"'
kill $cpid 2>/dev/null
wait $cpid 2>/dev/null
tl unload >/dev/null; rc=$?
check "unload right after: nothing left (rc $rc)" test "$rc" = 0 -a ! -e "$PIN"
finish
