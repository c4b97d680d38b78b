# SPDX-License-Identifier: GPL-2.0
# fill_once: a folder that many may read and the first to need it makes
# (sourced by bash scripts: selftests/guest/kernel.sh, selftests/kmod/...).
#
#   fill_once DEST STAMP FN [ARGS...]
#
# DEST is complete when DEST/.opentoe-stamp holds STAMP.  The lock is
# DEST.lock, a file beside DEST, taken with flock(1) on a descriptor of
# this shell's:
#   - shared, to read the stamp: readers never wait for each other;
#   - when the stamp is not STAMP: exclusive (flock converts by unlocking
#     first, so two upgrading readers cannot deadlock), the stamp read again
#     (another filler may have made DEST meanwhile), and only then FN ARGS
#     runs with $FILL set to a new, empty folder beside DEST
#     (DEST.tmp.PID), which it fills; FILL gets the stamp and is renamed
#     to DEST (an older DEST renamed aside first and removed after);
#   - back to shared, kept until this shell exits or closes $FILL_FD, so
#     no later filler replaces DEST while this one uses it.
# A reader therefore never sees half a tree, two first uses at once make it
# once, and a filler killed half-way leaves only a DEST.tmp.* folder,
# which the next exclusive holder removes.  Returns FN's status (DEST
# untouched) when FN fails, 0 otherwise.
fill_once() {
	local dest=$1 stamp=$2 fd old
	shift 2
	mkdir -p "$(dirname "$dest")" || return 1
	exec {fd}>>"$dest.lock" || return 1
	FILL_FD=$fd
	flock -s "$fd" || return 1
	if [ "$(cat "$dest/.opentoe-stamp" 2>/dev/null)" = "$stamp" ]; then
		return 0
	fi
	flock -x "$fd" || return 1
	if [ "$(cat "$dest/.opentoe-stamp" 2>/dev/null)" != "$stamp" ]; then
		# what a killed filler left (its PID is gone or was reused:
		# nobody fills without this lock, so none is in use)
		rm -rf "$dest".tmp.* "$dest".old.*
		FILL=$dest.tmp.$BASHPID
		mkdir "$FILL" || { flock -s "$fd"; return 1; }
		local rc=0
		"$@" || rc=$?
		if [ $rc -ne 0 ]; then
			rm -rf "$FILL"
			flock -s "$fd"
			return $rc
		fi
		echo "$stamp" >"$FILL/.opentoe-stamp" || { rm -rf "$FILL"; flock -s "$fd"; return 1; }
		old=
		if [ -e "$dest" ]; then
			old=$dest.old.$BASHPID
			mv "$dest" "$old" || { rm -rf "$FILL"; flock -s "$fd"; return 1; }
		fi
		mv "$FILL" "$dest" || { rm -rf "$FILL"; flock -s "$fd"; return 1; }
		[ -z "$old" ] || rm -rf "$old"
	fi
	flock -s "$fd"
}
