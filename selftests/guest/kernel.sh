# SPDX-License-Identifier: GPL-2.0
# Debian 12's own kernel, for the tests that boot it (sourced by
# selftests/kmod/test_kmod.sh and selftests/guest/guest.sh, after lib.sh).
#
# Finds the ABI linux-headers-amd64 names (apt-cache), downloads the image,
# headers and kbuild packages into $cache/debs (apt-get download: never
# installed), extracts them once into $cache/root-ABI, and runs depmod there
# so that modprobe works in a guest that mounts that module tree.
# Sets: abi, root, kdir, vmlinuz, moddir, and FILL_FD: a shared lock on
# the tree, held until the test exits (no one replaces it under the guest).
# On failure: fail + finish.
cache=${TOE_CACHE:-/var/cache/opentoe}/kmod
mkdir -p "$cache/debs" || exit 1

abi_of() {
	apt-cache depends linux-headers-amd64 2>/dev/null |
		sed -n 's/.*Depends: linux-headers-\(.*\)-amd64$/\1/p' | head -n 1
}
abi=$(abi_of)
if [ -z "$abi" ]; then
	apt-get update -qq >/dev/null 2>&1
	abi=$(abi_of)
fi
[ -n "$abi" ] || { fail "find linux-headers-amd64's version"; finish; }
kbuild=$(apt-cache depends "linux-headers-$abi-amd64" |
	sed -n 's/.*Depends: \(linux-kbuild-[0-9.]*\)$/\1/p' | head -n 1)
pkgs="linux-image-$abi-amd64 linux-headers-$abi-amd64 linux-headers-$abi-common ${kbuild:-linux-kbuild-6.1}"
echo "kernel $abi-amd64 (packages: $pkgs)"

# The cache is shared by every test and run that boots this kernel, two
# of which start together in make check: the downloads and the extracted
# tree are each made by the first that needs them, under a lock, and put
# in place whole (scripts/fill_once.sh), so a second user waits for the
# first instead of removing the tree it is writing.
. "$TOE_TOP/scripts/fill_once.sh"
debs=()
fetch() { # package -> path of its .deb in the cache (under debs.lock)
	local p=$1 v f dl
	v=$(apt-cache show --no-all-versions "$p" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
	f=$(ls "$cache/debs/${p}_${v}_"*.deb 2>/dev/null | head -n 1)
	if [ -z "$v" ] || [ -z "$f" ]; then
		# downloaded beside the cache, renamed into it whole: a
		# download cut short leaves no .deb that looks complete
		dl=$(mktemp -d "$cache/debs/.dl.XXXXXX") || return 1
		(cd "$dl" && apt-get download -q "$p" >/dev/null 2>&1) ||
			(apt-get update -qq >/dev/null 2>&1 && cd "$dl" &&
				apt-get download -q "$p" >/dev/null 2>&1) || { rm -rf "$dl"; return 1; }
		mv "$dl"/*.deb "$cache/debs/" 2>/dev/null
		rm -rf "$dl"
		v=$(apt-cache show --no-all-versions "$p" | sed -n 's/^Version: //p' | head -n 1)
		f=$(ls "$cache/debs/${p}_${v}_"*.deb 2>/dev/null | head -n 1)
	fi
	[ -n "$f" ] && debs+=("$f")
}
exec {debs_fd}>>"$cache/debs.lock" && flock -x "$debs_fd" || { fail "lock $cache/debs.lock"; finish; }
rm -rf "$cache/debs"/.dl.* # a download killed half-way
for p in $pkgs; do
	fetch "$p" || { fail "apt-get download $p"; finish; }
done
exec {debs_fd}>&-

# extract: the packages, the headers' Makefile pointed at this tree, and
# modules.dep (the packages leave it to the postinst's depmod)
extract() {
	local d
	echo "extracting ${#debs[@]} packages into $root"
	for d in "${debs[@]}"; do
		dpkg -x "$d" "$FILL" || { echo "dpkg -x $d failed"; return 1; }
	done
	# the amd64 tree includes the -common tree by absolute path; its
	# scripts/ and tools/ links to linux-kbuild are relative and work
	sed -i "s#^include /usr/src/#include $root/usr/src/#" \
		"$FILL/usr/src/linux-headers-$abi-amd64/Makefile" || return 1
	PATH=$PATH:/sbin:/usr/sbin depmod -b "$FILL" "$abi-amd64" ||
		{ echo "depmod for $abi-amd64 failed"; return 1; }
}
root=$cache/root-$abi
stamp=v2-$(printf '%s\n' "${debs[@]}" | md5sum | cut -c1-16)
fill_once "$root" "$stamp" extract || { fail "extract $abi-amd64's packages into $root"; finish; }
kdir=$root/usr/src/linux-headers-$abi-amd64
vmlinuz=$root/boot/vmlinuz-$abi-amd64
moddir=$root/lib/modules/$abi-amd64
[ -f "$kdir/.config" ] && [ -f "$vmlinuz" ] && [ -s "$moddir/modules.dep" ] ||
	{ fail "extracted kernel tree"; finish; }
