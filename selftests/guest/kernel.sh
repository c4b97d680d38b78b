# SPDX-License-Identifier: GPL-2.0
# Debian 12's own kernel, for the tests that boot it (sourced by
# selftests/kmod/test_kmod.sh and selftests/guest/guest.sh, after lib.sh).
#
# Finds the ABI linux-headers-amd64 names (apt-cache), downloads the image,
# headers and kbuild packages into $cache/debs (apt-get download: never
# installed), extracts them once into $cache/root-ABI, and runs depmod there
# so that modprobe works in a guest that mounts that module tree.
# Sets: abi, root, kdir, vmlinuz, moddir.  On failure: fail + finish.
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

debs=()
fetch() { # package -> path of its .deb in the cache
	local p=$1 v f
	v=$(apt-cache show --no-all-versions "$p" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
	f=$(ls "$cache/debs/${p}_${v}_"*.deb 2>/dev/null | head -n 1)
	if [ -z "$v" ] || [ -z "$f" ]; then
		(cd "$cache/debs" && apt-get download -q "$p" >/dev/null 2>&1) ||
			(apt-get update -qq >/dev/null 2>&1 && cd "$cache/debs" &&
				apt-get download -q "$p" >/dev/null 2>&1) || return 1
		v=$(apt-cache show --no-all-versions "$p" | sed -n 's/^Version: //p' | head -n 1)
		f=$(ls "$cache/debs/${p}_${v}_"*.deb 2>/dev/null | head -n 1)
	fi
	[ -n "$f" ] && debs+=("$f")
}
for p in $pkgs; do
	fetch "$p" || { fail "apt-get download $p"; finish; }
done

root=$cache/root-$abi
stamp=$(printf '%s\n' "${debs[@]}" | md5sum | cut -c1-16)
if [ "$(cat "$root/.opentoe-stamp" 2>/dev/null)" != "$stamp" ]; then
	echo "extracting ${#debs[@]} packages into $root"
	rm -rf "$root" && mkdir -p "$root" || exit 1
	for d in "${debs[@]}"; do
		dpkg -x "$d" "$root" || { fail "dpkg -x $d"; finish; }
	done
	# the amd64 tree includes the -common tree by absolute path; its
	# scripts/ and tools/ links to linux-kbuild are relative and work
	sed -i "s#^include /usr/src/#include $root/usr/src/#" \
		"$root/usr/src/linux-headers-$abi-amd64/Makefile"
	echo "$stamp" >"$root/.opentoe-stamp"
fi
kdir=$root/usr/src/linux-headers-$abi-amd64
vmlinuz=$root/boot/vmlinuz-$abi-amd64
moddir=$root/lib/modules/$abi-amd64
[ -f "$kdir/.config" ] && [ -f "$vmlinuz" ] || { fail "extracted kernel tree"; finish; }
# modules.dep: the packages leave it to the postinst's depmod
if [ ! -s "$moddir/modules.dep" ]; then
	/sbin/depmod -b "$root" "$abi-amd64" 2>/dev/null ||
		depmod -b "$root" "$abi-amd64" || { fail "depmod for $abi-amd64"; finish; }
fi
