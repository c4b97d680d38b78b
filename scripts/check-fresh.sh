#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check-fresh: make check as a new machine runs it, the rehearsal to
# run before saying a change works on a new machine.  A clean clone of the
# last commit (what CI clones: uncommitted changes are not in it) in a new
# folder, an empty cache (TOE_CACHE: the guest kernel's packages are
# downloaded and extracted again), and CI's own entry point (.ci/run with
# CI=true), timed.  Packages installed on this machine stay installed: a
# missing line in scripts/packages.txt shows only on a really new machine.
# Keeps nothing unless TOE_FRESH_KEEP=1 (then it says where the clone and
# the cache are).  Exit status: .ci/run's.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "check-fresh: must run as root (make check does)" >&2; exit 1; }
if [ -n "$(git -C "$top" status --porcelain --untracked-files=no)" ]; then
	echo "check-fresh: note: uncommitted changes are not tested (the clone is of HEAD, $(git -C "$top" rev-parse --short HEAD))" >&2
fi
w=$(mktemp -d /tmp/opentoe-fresh.XXXXXX) || exit 1
cleanup() {
	if [ "${TOE_FRESH_KEEP:-0}" = 1 ]; then
		echo "check-fresh: kept $w (clone: $w/src, cache: $w/cache)"
	else
		rm -rf "$w"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
git clone -q "$top" "$w/src" || { echo "check-fresh: git clone $top failed" >&2; exit 1; }
mkdir "$w/cache"
t0=$(date +%s)
(cd "$w/src" && TOE_CACHE=$w/cache CI=true bash .ci/run) </dev/null
rc=$?
t=$(($(date +%s) - t0))
echo "check-fresh: $(git -C "$w/src" rev-parse --short HEAD), empty cache: exit $rc in $((t / 60)) min $((t % 60)) s"
exit $rc
