#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The guest-kernel cache (selftests/guest/kernel.sh, scripts/fill_once.sh)
# when two users come first at once, as guest/test_guest and kmod/test_kmod
# do in make check on a new machine.  The downloads are stood in for
# (apt-cache, apt-get download, depmod: small packages this test builds
# with dpkg-deb), so it needs no network and takes seconds; kernel.sh,
# dpkg -x and the cache are real.  The stand-in dpkg -x reads back, 0.4 s
# after extracting, every file it wrote: as the real one writing 9,873
# files would, it fails when another user removed the tree under it.
#
# Checks: two first uses started together, then 0.3 s apart, each on an
# empty cache: both succeed, each finds the whole tree when kernel.sh
# returns, the packages were downloaded and extracted once, nothing
# half-made is left; a filler killed (SIGKILL) half-way leaves no tree that
# passes for whole, and the next use makes it; a filled cache is used as it
# is; a new package version makes a new tree, put in place whole, while a
# user of the old one keeps it until it is done.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
set -u

plan 19
need_cmd dpkg dpkg-deb flock md5sum

w=$(mktemp -d /tmp/opentoe-kcache.XXXXXX)
defer "rm -rf $w"
abi=9.9.9-1
stand=$w/bin pk=$w/pkgs
mkdir -p "$stand" "$pk"

# ---- the stand-in packages: an image with many files, headers, kbuild ----
mkpkg() { # name version: $pk/<name>_<version>_amd64.deb
	local n=$1 v=$2 d=$w/src/$1 i
	rm -rf "$d" && mkdir -p "$d/DEBIAN"
	printf 'Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: t <t@t>\nDescription: stand-in\n' \
		"$n" "$v" >"$d/DEBIAN/control"
	case $n in
	linux-image-*)
		mkdir -p "$d/boot" "$d/lib/modules/$abi-amd64/kernel/drivers/net"
		echo "vmlinuz $v" >"$d/boot/vmlinuz-$abi-amd64"
		for ((i = 0; i < 400; i++)); do
			echo "$v $i" >"$d/lib/modules/$abi-amd64/kernel/drivers/net/m$i.ko"
		done ;;
	linux-headers-*-amd64)
		mkdir -p "$d/usr/src/linux-headers-$abi-amd64"
		echo "include /usr/src/linux-headers-$abi-common/Makefile" >"$d/usr/src/linux-headers-$abi-amd64/Makefile"
		echo "CONFIG_NET=y # $v" >"$d/usr/src/linux-headers-$abi-amd64/.config" ;;
	*)
		mkdir -p "$d/usr/src/$n"
		for ((i = 0; i < 100; i++)); do echo "$v $i" >"$d/usr/src/$n/f$i.h"; done ;;
	esac
	dpkg-deb -b -Zgzip "$d" "$pk/${n}_${v}_amd64.deb" >/dev/null
}
pkgs="linux-image-$abi-amd64 linux-headers-$abi-amd64 linux-headers-$abi-common linux-kbuild-9.9"
for p in $pkgs; do mkpkg "$p" 1.0; done
echo 1.0 >"$w/version"

# apt-cache: the ABI, kbuild, and the version in $w/version
cat >"$stand/apt-cache" <<EOF
#!/bin/bash
case "\$1 \$2" in
"depends linux-headers-amd64") echo "  Depends: linux-headers-$abi-amd64" ;;
"depends linux-headers-$abi-amd64") echo "  Depends: linux-kbuild-9.9" ;;
"show --no-all-versions") echo "Package: \$3"; echo "Version: \$(cat $w/version)" ;;
*) exit 100 ;;
esac
EOF
# apt-get download: copied in slowly, logged (how many downloads)
cat >"$stand/apt-get" <<EOF
#!/bin/bash
[ "\$1" = download ] || exit 0
p=\${!#} v=\$(cat $w/version)
echo "\$p" >>$w/downloads
sleep 0.1
cp "$pk/\${p}_\${v}_amd64.deb" .
EOF
# dpkg -x: the real one, then the tree read back 0.4 s later, logged
cat >"$stand/dpkg" <<EOF
#!/bin/bash
[ "\$1" = -x ] || exec /usr/bin/dpkg "\$@"
echo "\$2" >>$w/extracts
/usr/bin/dpkg -x "\$2" "\$3" || exit
sleep 0.4
/usr/bin/dpkg-deb -c "\$2" | awk '{ print \$6 }' | while read -r f; do
	[ -e "\$3/\$f" ] || { echo "tar: \$3/\$f: Cannot open: No such file or directory" >&2; exit 2; }
done
EOF
cat >"$stand/depmod" <<EOF
#!/bin/bash
# depmod -b ROOT VERSION
echo "kernel/drivers/net/m0.ko:" >"\$2/lib/modules/\$3/modules.dep"
EOF
chmod +x "$stand"/*

# user CACHE LOG [HOLD]: one user of the cache: sources kernel.sh as
# test_guest does, then checks the tree it was given is whole (every file
# of every package, the Makefile pointed at the tree, modules.dep), holds
# it HOLD seconds and checks it again: "whole" or what was missing.
user() {
	local cache=$1 log=$2 hold=${3:-0}
	PATH=$stand:$PATH TOE_CACHE=$cache TOE_TOP=$TOE_TOP bash -c '
		fail() { echo "not ok - $*"; }
		finish() { exit 1; }
		. "$TOE_TOP/selftests/guest/kernel.sh"
		ver=$(cat '"$w"'/version)
		whole() {
			local d
			for d in "${debs[@]}"; do
				dpkg-deb -c "$d" | awk "{ print \$6 }" | while read -r f; do
					[ -e "$root/$f" ] || { echo "missing $f"; exit 1; }
				done || return 1
			done
			grep -q "^include $root/usr/src/" "$kdir/Makefile" || { echo "Makefile"; return 1; }
			[ -s "$moddir/modules.dep" ] || { echo "modules.dep"; return 1; }
			grep -q "$ver" "$vmlinuz" || { echo "old vmlinuz"; return 1; }
		}
		whole || exit 1
		echo holding
		sleep '"$hold"'
		whole || exit 1
		echo whole' >"$log" 2>&1
}
leftovers() { # CACHE: what a filler may leave half-made
	find "$1" -name '*.tmp.*' -o -name '*.old.*' -o -name '.dl.*' | head -n 3
}

# ---- two first uses at once, on an empty cache: together, 0.3 s apart ----
for gap in 0 0.3; do
	c=$w/cache-$gap
	rm -f "$w/downloads" "$w/extracts"
	user "$c" "$w/a.log" & a=$!
	sleep "$gap"
	user "$c" "$w/b.log" & b=$!
	wait $a; ra=$?
	wait $b; rb=$?
	check "two first uses $gap s apart: the first succeeds with the whole tree (exit $ra: $(tail -n 2 "$w/a.log" | tr '\n' ' '))" \
		test $ra = 0 -a "$(tail -n 1 "$w/a.log")" = whole
	check "  the second too (exit $rb: $(tail -n 2 "$w/b.log" | tr '\n' ' '))" \
		test $rb = 0 -a "$(tail -n 1 "$w/b.log")" = whole
	check "  each package downloaded once ($(sort "$w/downloads" 2>/dev/null | uniq -c | awk '{ print $1 }' | tr '\n' ' '))" \
		test "$(sort -u "$w/downloads" | wc -l)" = 4 -a "$(wc -l <"$w/downloads")" = 4
	check "  and extracted once ($(wc -l <"$w/extracts") extractions)" test "$(wc -l <"$w/extracts")" = 4
	check "  one tree, nothing half-made left ($(leftovers "$c" | tr '\n' ' '))" \
		test -z "$(leftovers "$c")" -a "$(ls -d "$c"/kmod/root-*/ | wc -l)" = 1
done

# ---- a filled cache is used as it is ----
rm -f "$w/downloads" "$w/extracts"
user "$c" "$w/a.log"
check "a filled cache: used as it is (no download, no extraction)" \
	test "$(tail -n 1 "$w/a.log")" = whole -a ! -e "$w/downloads" -a ! -e "$w/extracts"

# ---- a filler killed half-way: nothing passes for whole; the next makes it ----
c=$w/cache-kill
rm -f "$w/downloads" "$w/extracts"
user "$c" "$w/a.log" & a=$!
wait_for 10 test -s "$w/extracts"
pkill -KILL -P $a 2>/dev/null # the user's bash, mid-extraction
kill -KILL $a 2>/dev/null
wait $a 2>/dev/null
check "a filler killed mid-extraction left no tree that passes for whole ($(ls "$c/kmod" | tr '\n' ' '))" \
	test ! -e "$c/kmod/root-$abi/.opentoe-stamp"
user "$c" "$w/b.log"
check "  the next use makes it whole ($(tail -n 1 "$w/b.log"))" test "$(tail -n 1 "$w/b.log")" = whole
check "  and removes what the killed one left ($(leftovers "$c" | tr '\n' ' '))" test -z "$(leftovers "$c")"

# ---- a new package version: a new tree, put in place whole, after the
# users of the old one are done ----
for p in $pkgs; do mkpkg "$p" 2.0; done
echo 1.0 >"$w/version"
user "$c" "$w/a.log" 3 & a=$! # holds the 1.0 tree 3 s
wait_for 10 grep -q holding "$w/a.log"
echo 2.0 >"$w/version"
t0=$(date +%s.%N)
user "$c" "$w/b.log"
rb=$?
t1=$(date +%s.%N)
wait $a; ra=$?
check "a new version while the old tree is in use: its user keeps it whole to the end ($(tail -n 1 "$w/a.log"))" \
	test $ra = 0 -a "$(tail -n 1 "$w/a.log")" = whole
check "  the new version's user waited for it, then got the new tree whole (exit $rb, $(tail -n 1 "$w/b.log"), waited $(awk "BEGIN { print $t1 - $t0 }") s)" \
	test $rb = 0 -a "$(tail -n 1 "$w/b.log")" = whole -a "$(awk "BEGIN { print ($t1 - $t0 > 1) }")" = 1
check "  one tree, nothing half-made left ($(leftovers "$c" | tr '\n' ' '))" \
	test -z "$(leftovers "$c")" -a "$(ls -d "$c"/kmod/root-*/ | wc -l)" = 1
check "  the downloads of both versions kept, no partial one ($(ls "$c/kmod/debs" | wc -l) files)" \
	test "$(ls "$c/kmod/debs"/*.deb | wc -l)" = 8
check "  the locks are files beside the trees, nothing else in the cache ($(ls -A "$c/kmod" | tr '\n' ' '))" \
	test "$(ls -A "$c/kmod" | tr '\n' ' ')" = "debs debs.lock root-$abi root-$abi.lock "
finish
