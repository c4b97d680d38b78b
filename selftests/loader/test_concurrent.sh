#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One owner per datapath (issue 17): two `toe-loader load`s at once on one
# pin folder, `load` against `unload`, and `load` killed with SIGKILL at
# random moments.  Every round must end fully loaded (every map and link
# pinned, sock_ops on the cgroup, XDP on the interface, status exit 0) or
# fully clean (no pin, no attachment), and the exit statuses must say which.
# A loader that cannot get the datapath's lock in time fails naming the
# holder.
. "$(dirname "$0")/../lib.sh"
plan 4
need_root
need_cmd bpftool jq nsenter
[ -x "$TOE_BUILD/toe-loader" ] || { fail "toe-loader not built (make)"; finish; }

PIN=$TOE_PIN_DIR
cg_add conc || skip "no cgroup v2 mount"
defer "nsx a toe-loader unload --pin-dir $PIN; rm -rf $PIN"
ns_add a && ns_add b || exit 1
veth_pair a va b vb || exit 1
nsx a ip link set va up && nsx b ip link set vb up
ROUNDS=${TOE_CONC_ROUNDS:-12}
OUT=$(mktemp -d) && defer "rm -rf $OUT"

# (load: --hook xdp, the XDP loader tests; auto would put a veth on tc)
tl() { [ "$1" = load ] && { shift; set -- load --hook xdp "$@"; }; nsx a toe-loader "$@" --pin-dir "$PIN"; }
cg_progs() { bpftool -j cgroup show "$CG" | jq -s 'add | length'; }
xdp_id() { nsx a ip -j link show dev va | jq -r '.[0].xdp.prog.id // 0'; }
fully_clean() { [ ! -e "$PIN" ] && [ "$(cg_progs)" = 0 ] && [ "$(xdp_id)" = 0 ]; }
fully_loaded() {
	local n
	[ "$(cg_progs)" = 1 ] && [ "$(xdp_id)" != 0 ] || return 1
	[ -e "$PIN/link_sockops" ] && [ -e "$PIN/link_skmsg" ] || return 1
	ls "$PIN"/link_xdp_* >/dev/null 2>&1 || return 1
	n=$(tl status -j | jq '[.maps[] | select(.pinned // true)] | length') || return 1
	[ "$n" -ge 27 ]
}
state() { if fully_loaded; then echo loaded; elif fully_clean; then echo clean; else echo broken; fi; }
LOAD=(load --dev va --cgroup "$CG")

# --- two loads at once
bad=0
for ((r = 1; r <= ROUNDS; r++)); do
	tl "${LOAD[@]}" >"$OUT/a" 2>&1 & pa=$!
	tl "${LOAD[@]}" >"$OUT/b" 2>&1 & pb=$!
	wait $pa; ra=$?; wait $pb; rb=$?
	s=$(state)
	# both succeed (the second waits, then loads in place), or one fails
	# naming the lock's holder and the other leaves it loaded
	case "$s:$ra:$rb" in
	loaded:0:0) ;;
	loaded:0:1) grep -q "locked by" "$OUT/b" || bad=1 ;;
	loaded:1:0) grep -q "locked by" "$OUT/a" || bad=1 ;;
	*) bad=1 ;;
	esac
	[ $bad = 1 ] && { echo "round $r: exits $ra $rb, state $s: $(cat "$OUT/a" "$OUT/b" | head -n 4)"; break; }
	tl unload >/dev/null 2>&1
	fully_clean || { bad=1; echo "round $r: unload left $(ls "$PIN" 2>/dev/null | head -3)"; }
done
[ $bad = 0 ] && ok "$ROUNDS rounds of two concurrent loads: always fully loaded, exits agree" ||
	fail "two concurrent loads"

# --- load against unload
bad=0
tl "${LOAD[@]}" >/dev/null 2>&1
for ((r = 1; r <= ROUNDS; r++)); do
	tl "${LOAD[@]}" >"$OUT/a" 2>&1 & pa=$!
	tl unload >"$OUT/b" 2>&1 & pb=$!
	wait $pa; ra=$?; wait $pb; rb=$?
	s=$(state)
	case "$s:$ra:$rb" in
	loaded:0:0|clean:0:0) ;;	# unload then load / load then unload
	loaded:0:1) grep -q "not loaded\|locked by" "$OUT/b" || bad=1 ;;
	clean:1:0) grep -q "locked by" "$OUT/a" || bad=1 ;;
	*) bad=1 ;;
	esac
	[ $bad = 1 ] && { echo "round $r: state $s, load $ra, unload $rb: $(cat "$OUT/a" "$OUT/b" | head -n 4)"; break; }
	[ "$s" = clean ] && tl "${LOAD[@]}" >/dev/null 2>&1
done
[ $bad = 0 ] && ok "$ROUNDS rounds of load against unload: loaded or clean, as the exits say" ||
	fail "load against unload"
tl unload >/dev/null 2>&1

# --- SIGKILL at random moments: the next command converges.  The loader
# itself is killed: nsenter execs it, so $! is its pid (with `tl ... &`, $!
# would be the subshell running tl, and the loader would live on).  Half
# the rounds kill a reload (a datapath is loaded first), half a first load;
# each kind is followed by a load in some rounds, an unload in others.
bad=0
for ((r = 1; r <= ROUNDS; r++)); do
	((r % 4 < 2)) && tl "${LOAD[@]}" >/dev/null 2>&1
	# the same command as tl's (--hook xdp): a load killed under another
	# hook is refused by the next, by design (one hook per interface)
	nsenter --net="/run/netns/$(ns_name a)" toe-loader load --hook xdp "${LOAD[@]:1}" --pin-dir "$PIN" >/dev/null 2>&1 & p=$!
	sleep "0.$(printf '%03d' $((RANDOM % 400)))"
	kill -9 $p 2>/dev/null; wait $p 2>/dev/null
	if ((r % 2)); then
		tl "${LOAD[@]}" >"$OUT/a" 2>&1; rc=$?
		s=$(state)
		[ $rc = 0 ] && [ "$s" = loaded ] || { bad=1; echo "round $r: load after kill: rc $rc, $s: $(head -n 2 "$OUT/a")"; }
		tl unload >/dev/null 2>&1
	else
		tl unload >"$OUT/a" 2>&1; rc=$?
		s=$(state)
		[ "$s" = clean ] || { bad=1; echo "round $r: unload after kill: rc $rc, $s: $(head -n 2 "$OUT/a"; ls "$PIN" 2>/dev/null | head -3)"; }
	fi
	fully_clean || { tl unload >/dev/null 2>&1; }
done
[ $bad = 0 ] && ok "$ROUNDS loads killed at random moments: the next load or unload always converged" ||
	fail "load killed with SIGKILL"
check "nothing left at the end" fully_clean
finish
