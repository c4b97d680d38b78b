#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Rollback from a running system: a reload (toe-loader load over a loaded
# datapath) fails once at each of its recorded changes in turn
# (TOE_LOADER_FAIL_AT=N, user/loader/undo.c), and after each failure the
# programs' ids, the pins (each with its object's id), the cgroup's and
# va's attachments equal those before; the next command right after each
# failure finds the change lock free (a reload with --wait 0 succeeds at
# the end, an unload too).
. "$(dirname "$0")/../lib.sh"
plan 5
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
before=$(state)
echo "$before" | head -3

steps=0 changed="" held="" quiet=""
for ((n = 1; n <= 200; n++)); do
	out=$(TOE_LOADER_FAIL_AT=$n tl "${LOAD[@]}" --wait 0 2>&1) && break
	steps=$n
	grep -q "change $n fails (TOE_LOADER_FAIL_AT)" <<<"$out" || quiet+=" $n"
	grep -q "change lock" <<<"$out" && held+=" $n"
	[ "$(state)" = "$before" ] || { changed+=" $n"; diff <(echo "$before") <(state) | head -8; }
done
echo "# a reload records $steps changes; the one past them succeeded"
check "every one of the $steps changes of a reload failed once, each failure said so${quiet:+ (not: $quiet)}" \
	test "$steps" -ge 5 -a "$n" -le 200 -a -z "$quiet"
check "after each failure the ids, pins and attachments equal those before${changed:+ (not after:$changed)}" \
	test -z "$changed"
check "the next reload right after each failure found the change lock free${held:+ (held after:$held)}" \
	test -z "$held"
tl unload >/dev/null; rc=$?
check "unload right after: nothing left (rc $rc)" test "$rc" = 0 -a ! -e "$PIN"
finish
