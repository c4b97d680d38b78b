#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The datapath lock names the datapath, not the path (issue 31 item 8,
# user/lib/dplock.c canonical()): toeds given DIR, DIR/., DIR/, a symbolic
# link to DIR, /sys/fs/bpf//NAME/ and DIR/../NAME: exactly one runs, the
# others fail naming it; the loaders' change lock likewise, also through a
# dangling link to a folder not made yet.  Two loaders, two spellings:
# one loads through DIR, the other, given /sys/fs/bpf//NAME/, sees that
# datapath (same pins: same programs), waits on the same change lock, and
# its unload takes the datapath away.
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd flock
need_built toed toe-loader
plan 13

NAME=opentoe-$TOE_TEST_ID-lk
DIR=/sys/fs/bpf/$NAME
T=$(mktemp -d /tmp/opentoe-lk.XXXXXX)
defer "rm -rf $T"
mkdir "$DIR" && defer "rmdir $DIR"
ln -s "$DIR" "$T/link"
printf 'device t3 type chelsio-t3 nconn 4\n' >"$T/c.conf" && chmod 600 "$T/c.conf"
ns_add lk || exit 1
cg_add lk || skip "no cgroup v2 mount"

# toed_on N PIN: a toed with run folder $T/runN on PIN, in the background
toed_on() {
	nsx lk toed --config "$T/c.conf" --pin-dir "$2" --run-dir "$T/run$1" >"$T/log$1" 2>&1 &
	eval "P$1=$!"
	defer "kill -9 $!"
}
toed_on 0 "$DIR"
wait_for 10 test -S "$T/run0/toed.sock"
check "the first toed runs on $DIR" toectl --run-dir "$T/run0" status
i=1
for p in "$DIR/." "$DIR/" "$T/link" "/sys/fs/bpf//$NAME/" "$DIR/../$NAME"; do
	toed_on $i "$p"
	pid=$(eval echo "\$P$i")
	wait_for 5 eval "! kill -0 $pid 2>/dev/null"
	kill -9 "$pid" 2>/dev/null # still running: a second owner
	wait "$pid"; rc=$?
	check "a toed on $p is refused (exit $rc), naming the first: $(head -c 300 "$T/log$i")" \
		test "$rc" = 1 -a -n "$(grep -F "(toed, run folder $T/run0)" "$T/log$i")"
	i=$((i + 1))
done

kill $P0; wait $P0 2>/dev/null # (toed would follow the load below)

# ---- two loaders, /sys/fs/bpf/NAME and /sys/fs/bpf//NAME/
SP=/sys/fs/bpf//$NAME/
L="nsx lk toe-loader"
defer "$L unload --pin-dir $DIR"
$L load --cgroup "$CG" --pin-dir "$DIR" >/dev/null || fail "load through $DIR"
ids() { $L status -j --pin-dir "$1" 2>/dev/null | jq -c '[.programs[].id] | sort'; }
a=$(ids "$DIR")
check "a loader given $SP sees the datapath loaded through $DIR (programs $a)" \
	test "$(ids "$SP")" = "$a" -a "${a:-[]}" != "[]"
lock=$(ls /run/opentoe/locks/"$NAME".*.change.lock)
flock -o -x "$lock" sleep 30 &
h=$!
stop_h() { kill $(ps -o pid= --ppid "$h") "$h" 2>/dev/null; }
defer stop_h
wait_for 2 grep -q "FLOCK.* $h " /proc/locks
out=$($L unload --pin-dir "$SP" --wait 0 2>&1)
check "the change lock of $DIR held: an unload through $SP finds it held: $out" \
	grep -q "locked by pid $h (flock)" <<<"$out"
check "  and leaves the datapath alone" test "$(ids "$DIR")" = "$a"
stop_h
wait_for 2 eval "! grep -q 'FLOCK.* $h ' /proc/locks"
out=$($L unload --pin-dir "$SP" 2>&1)
check "the lock free, an unload through $SP takes it away: $out" test $? = 0
check "  no pin left in $DIR" test -z "$(ls -A "$DIR" 2>/dev/null)"

# hold_change_lock DIR: the change lock of pin folder DIR (made by an
# unload of nothing there) held by flock, as a loader would hold it; the
# holder's pid in $holder, removed on exit.
hold_change_lock() {
	local lock
	toe-loader unload --pin-dir "$1" >/dev/null 2>&1
	lock=$(ls /run/opentoe/locks/"$(basename "$1")".*.change.lock)
	defer "rm -f $lock"
	flock -o -x "$lock" sleep 30 &
	holder=$!
	defer "pkill -P $holder; kill $holder"
	wait_for 2 grep -q "FLOCK.* $holder " /proc/locks
}

# The change lock, held by flock (as a loader would be): a loader through
# the link waits, then names it.
hold_change_lock "$DIR"
out=$(toe-loader unload --pin-dir "$T/link/" --wait 0 2>&1)
check "a loader through the link finds the change lock held: $out" \
	grep -q "locked by pid $holder (flock)" <<<"$out"

# A dangling link: its target's lock, before the folder exists.
ln -s "$DIR-new" "$T/dangling"
hold_change_lock "$DIR-new"
out=$(toe-loader unload --pin-dir "$T/dangling" --wait 0 2>&1)
check "a loader through a dangling link takes its target's lock: $out" \
	grep -q "locked by pid $holder (flock)" <<<"$out"
rm -f /run/opentoe/locks/"$NAME".*.lock
finish
