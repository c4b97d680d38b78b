#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make deb (scripts/mkdeb.sh [O]): the Debian package, built by
# dpkg-buildpackage -us -uc -b (debhelper, debian/) from a copy of the work
# tree's files (less those .gitignore names) in $O/deb/opentoe-VERSION/.
# dpkg-buildpackage writes the .deb, .buildinfo and .changes to the copy's
# parent: $O/deb/.
# debian/changelog is written here from VERSION (the one version), dated
# with the last commit's date so that a rebuild gives the same changelog.
# Built in a folder of its own ($O/deb.tmp.PID) and renamed to $O/deb
# whole, under a lock ($O/deb.lock): two builds at once (a developer's and
# make check's) each get a whole package, and one stopped half-way leaves
# no $O/deb that looks built.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
O=${1:-build}
version=$(cat VERSION)
dest=$O/deb
mkdir -p "$O"
for d in "$O"/deb.tmp.*; do # left by a build killed half-way (its PID gone)
	[ -d "$d" ] && ! kill -0 "${d##*.}" 2>/dev/null && rm -rf "$d" || true
done
out=$O/deb.tmp.$$
trap 'rm -rf "$out"' EXIT
src=$out/opentoe-$version
for c in dpkg-buildpackage dh; do
	command -v $c >/dev/null || {
		echo "make deb: missing $c (debhelper, dpkg-dev: make deps installs them)" >&2
		exit 1
	}
done
mkdir -p "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# the work tree's files, changes and new files included, less what
	# .gitignore names (build/); a tracked file deleted stays out
	git ls-files -z --cached --others --exclude-standard |
		xargs -0 tar -cf - --no-recursion --ignore-failed-read 2>/dev/null |
		tar -xf - -C "$src"
	date=$(git log -1 --format=%aD)
	desc=$(git describe --always --dirty 2>/dev/null || echo unknown)
else
	tar -cf - --exclude=./build --exclude="./$O" . | tar -xf - -C "$src"
	date=$(date -R)
	desc="not a git checkout"
fi
maint=$(sed -n 's/^Maintainer: //p' debian/control)
cat >"$src/debian/changelog" <<EOT
opentoe ($version) unstable; urgency=medium

  * opentoe $version, built from $desc.

 -- $maint  $date
EOT
# The package build sets its own flags (dpkg-buildflags) and builds in the
# copy's own build/: a make run above us (or the environment) must not hand
# it ours (an O= from here would make its clean remove our build folder).
unset MAKEFLAGS MFLAGS MAKELEVEL CFLAGS LDFLAGS CPPFLAGS O PREFIX DESTDIR UNITDIR
(cd "$src" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log" >&2
	mkdir -p "$dest.failed"
	cp "$out/build.log" "$dest.failed/build.log"
	echo "make deb: dpkg-buildpackage failed (log: $dest.failed/build.log)" >&2
	exit 1
}
flock "$O/deb.lock" sh -c 'rm -rf "$1.old.$$"
	[ ! -e "$1" ] || mv "$1" "$1.old.$$"
	mv "$2" "$1" && rm -rf "$1.old.$$"' sh "$dest" "$out"
deb=$(ls "$dest"/opentoe_"$version"_*.deb)
echo "built $deb"
