#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The datapath's change lock (issue 17, user/lib/dplock.h): toe-loader load and
# unload wait --wait seconds for its holder, then fail naming it; the run
# folder and the lock folder are refused when they are symbolic links,
# writable by others or owned by another user, and so is a lock file that
# is a symbolic link.  Those refusals use a run folder of the test's own
# (TOE_RUN_DIR), never /run/opentoe.
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd flock stat
need_built toe-loader
plan 21

PIN=$TOE_PIN_DIR
tl() { toe-loader "$@" --pin-dir "$PIN"; }
LOCKS=/run/opentoe/locks
# ms CMD...: run CMD (output in $OUT), its status in rc, its duration in ms
ms() {
	local t0=$(date +%s%N)
	OUT=$("$@" 2>&1); rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
}

# Not loaded: unload still takes the lock (and makes its file) first.
ms tl unload
check "unload of nothing says so (exit 1): $OUT" test "$rc" = 1 -a -z "${OUT##*not loaded*}"
lock=$(ls "$LOCKS"/opentoe-"$TOE_TEST_ID".*.change.lock 2>/dev/null)
check "the lock file is $LOCKS/<pin folder>.<hash>.change.lock" test -f "$lock"
check "it names its last holder" grep -qx "pid [0-9]* (toe-loader unload)" "$lock"
check "the lock file is root's, mode 0600" test "$(stat -c %u:%a "$lock")" = 0:600
check "$LOCKS is root's, writable by no one else" \
	test -z "$(find "$LOCKS" -maxdepth 0 \( -perm /022 -o ! -user 0 \))"

# Held by another process (flock -o: flock itself holds it, not its sleep):
# wait, then fail naming it.
flock -o -x "$lock" sleep 60 & holder=$!
stop_holder() { kill $(ps -o pid= --ppid "$holder") "$holder"; }
defer stop_holder
wait_for 2 grep -q "FLOCK.* $holder " /proc/locks
ms tl load --wait 1
check "load --wait 1 on a held lock fails (exit 1) in 1-2.5 s ($ms ms)" \
	test "$rc" = 1 -a "$ms" -ge 900 -a "$ms" -le 2500
check "its message names the holder: $OUT" grep -q "locked by pid $holder (flock)" <<<"$OUT"
ms tl unload --wait 1
check "unload --wait 1 too ($ms ms): $OUT" \
	test "$rc" = 1 -a "$ms" -ge 900 -a "$ms" -le 2500 -a -z "${OUT##*locked by pid $holder (flock)*}"
ms tl unload --wait 0
check "--wait 0 fails at once ($ms ms)" test "$rc" = 1 -a "$ms" -lt 800 -a -z "${OUT##*locked by*}"
check "nothing was made meanwhile" test ! -e "$PIN"
(sleep 1; stop_holder) &
ms tl unload --wait 10
check "unload --wait 10 goes on once the holder is gone, 1 s later (exit 1, $ms ms: $OUT)" \
	test "$rc" = 1 -a -z "${OUT##*not loaded*}" -a "$ms" -ge 900 -a "$ms" -le 5000
# and with no --wait, the default (10 s) waits the same
flock -o -x "$lock" sleep 60 & holder=$!
wait_for 2 grep -q "FLOCK.* $holder " /proc/locks
(sleep 1; stop_holder) &
ms tl unload
check "unload with no --wait waits too: goes on once the holder is gone, 1 s later (exit 1, $ms ms: $OUT)" \
	test "$rc" = 1 -a -z "${OUT##*not loaded*}" -a "$ms" -ge 900 -a "$ms" -le 5000
bad=0
for w in -1 x 3601 1e9 ""; do
	OUT=$(tl load --wait "$w" 2>&1)
	[ $? = 1 ] && [ -z "${OUT##*bad --wait*}" ] || { bad=1; echo "--wait '$w': $OUT"; }
done
check "--wait -1, x, 3601, 1e9 and '' are refused" test $bad = 0

# The run folder and its lock folder, in a run folder of the test's own.
T=$(mktemp -d) && defer "rm -rf $T"
R=$T/run
trl() { TOE_RUN_DIR=$R toe-loader unload --pin-dir "$PIN" 2>&1; }
OUT=$(trl)
check "a missing run folder and lock folder are made, mode 0700" \
	test "$(stat -c %a "$R" "$R/locks" | tr '\n' ' ')" = "700 700 " -a -z "${OUT##*not loaded*}"
mkdir "$T/elsewhere"
mv "$R/locks" "$T/locks.real" && ln -s "$T/elsewhere" "$R/locks"
OUT=$(trl)
check "a lock folder that is a symbolic link is refused: $OUT" \
	test -z "${OUT##*$R/locks is not a folder (a symbolic link?): refused*}" -a -z "$(ls "$T/elsewhere")"
rm "$R/locks" && mv "$T/locks.real" "$R/locks"
chmod 0777 "$R/locks"
OUT=$(trl)
check "a lock folder writable by others is refused: $OUT" \
	test -z "${OUT##*$R/locks is writable by its group or others (mode 0777): refused*}"
chmod 0700 "$R/locks" && chown 65534 "$R/locks"
OUT=$(trl)
check "a lock folder of another user is refused: $OUT" \
	test -z "${OUT##*$R/locks is owned by uid 65534*}"
chown 0 "$R/locks"
f=$(ls "$R/locks") && rm "$R/locks/$f" && ln -s "$T/elsewhere/x" "$R/locks/$f"
OUT=$(trl)
check "a lock file that is a symbolic link is refused: $OUT" \
	test -z "${OUT##*cannot open the lock $R/locks/$f*}" -a ! -e "$T/elsewhere/x"
mv "$R" "$T/run.real" && ln -s "$T/run.real" "$R"
OUT=$(trl)
check "a run folder that is a symbolic link is refused: $OUT" \
	test -z "${OUT##*$R is not a folder (a symbolic link?): refused*}"
rm "$R" && mv "$T/run.real" "$R" && chmod 0757 "$R"
OUT=$(trl)
check "a run folder writable by others is refused: $OUT" \
	test -z "${OUT##*$R is writable by its group or others*}"
chmod 0700 "$R" && rm "$R/locks/$f"
OUT=$(trl)
check "once put right, it is used again: $OUT" test -z "${OUT##*not loaded*}"
finish
