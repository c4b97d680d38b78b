#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# opentoe kernel module test.
#
# Downloads Debian's kernel image and headers (apt-get download + dpkg -x
# into ${TOE_CACHE:-/var/cache/opentoe}/kmod, never installed), builds
# kmod/ against the headers with W=1, boots that kernel under
# qemu-system-x86_64 -accel tcg with a busybox initramfs holding the module,
# veth.ko, iproute2's ip and the static test program, relays the TAP lines
# the guest prints on its serial console, and fails if the guest's kernel
# log holds a WARNING, BUG, Oops, refcount or leak message.  When
# toe-loader, toed and toectl are built, they (and their shared libraries)
# go in too, and after toe_kmod_test the guest runs toed_guest.sh: the
# eBPF datapath, toed and toectl against the module with real TCP.  With
# bpftrace installed the guest also gets the 9p modules and this machine's
# root read-only over virtio-9p, to run scripts/trace/tid.bt from there.
# Also runs checkpatch.pl (taken once from linux-source-6.1) on kmod/.
#
# Environment: TOE_CACHE (default /var/cache/opentoe), TOE_BUILD (module
# build and the guest's serial log go to $TOE_BUILD/kmod),
# TOE_KMOD_TIMEOUT (guest time limit, default 300 s), TOE_KMOD_CHECKPATCH=0
# (do not fetch linux-source for checkpatch.pl), TOE_KMOD_TOED_ONLY=1 (the
# guest skips toe_kmod_test and runs only the toed part: for iterating),
# TOE_KMOD_BPFTRACE=0 (one TID followed through tracefs, not by
# scripts/trace/tid.bt under bpftrace: a minute less).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
set -u

plan 367
need_root
need_cmd qemu-system-x86_64 gcc make cpio gzip xz apt-get apt-cache dpkg dpkg-deb timeout perl
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
	cannot_run "needs busybox-static (/bin/busybox, statically linked)"

build=$TOE_BUILD/kmod
virtfs=
tmp=$(mktemp -d /tmp/opentoe-kmod.XXXXXX)
defer "rm -rf $tmp"
mkdir -p "$build" || exit 1
start=$(date +%s)

# ---- Debian's kernel: version, packages, extraction ----

. "$here/../guest/kernel.sh"

# ---- build ----

if make -C "$TOE_TOP/kmod" KDIR="$kdir" BUILD_DIR="$build" W=1 \
	>"$tmp/build.log" 2>&1 && [ -f "$build/kmod/opentoe.ko" ]; then
	if grep -qiE 'warning:|error:' "$tmp/build.log"; then
		grep -iE 'warning:|error:' "$tmp/build.log"
		fail "opentoe.ko builds against linux-headers-$abi-amd64 (W=1) without warnings"
	else
		ok "opentoe.ko builds against linux-headers-$abi-amd64 (W=1) without warnings"
	fi
else
	tail -n 40 "$tmp/build.log"
	fail "opentoe.ko builds against linux-headers-$abi-amd64"
	finish
fi
# `make kmod` (the top-level target a user runs) builds the same module,
# and says plainly when there are no headers to build against
out=$(make --no-print-directory -C "$TOE_TOP" kmod KDIR="$kdir" O="$tmp/mk" 2>&1)
check "make kmod KDIR=<6.1 headers> builds opentoe.ko: $(tail -n 1 <<<"$out")" \
	test -f "$tmp/mk/kmod/kmod/opentoe.ko" -a -n "$(grep "^built .*opentoe.ko for 6.1" <<<"$out")"
out=$(make --no-print-directory -C "$TOE_TOP" kmod KDIR=/nonexistent O="$tmp/mk2" 2>&1); rc=$?
check "make kmod without headers fails (rc $rc) naming what to install" \
	test "$rc" != 0 -a -n "$(grep "no kernel headers at /nonexistent" <<<"$out")" -a ! -e "$tmp/mk2/kmod"
# checkpatch.pl: Debian's headers and kbuild packages do not ship it; take
# it (once, cached: scripts/fill_once.sh) from the linux-source package of
# the same kernel line
cp_pl=$kdir/scripts/checkpatch.pl
fetch_checkpatch() { # into $FILL
	echo "fetching checkpatch.pl from $src $sv"
	mkdir -p "$tmp/src" "$FILL/scripts" &&
		(cd "$tmp/src" && apt-get download -q "$src" >/dev/null 2>&1 &&
			dpkg-deb --fsys-tarfile "$src"_*.deb |
			tar -xO --wildcards './usr/src/linux-source-*.tar.xz' |
			xz -dc | tar -x --wildcards --strip-components=1 \
				-C "$FILL" '*/scripts/checkpatch.pl' \
				'*/scripts/spelling.txt' \
				'*/scripts/const_structs.checkpatch')
	local rc=$?
	rm -rf "$tmp/src"
	return $rc
}
if [ ! -f "$cp_pl" ] && [ "${TOE_KMOD_CHECKPATCH:-1}" = 1 ]; then
	src=linux-source-${kbuild#linux-kbuild-}
	sv=$(apt-cache show --no-all-versions "$src" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
	cp_pl=$cache/checkpatch-$sv/scripts/checkpatch.pl
	[ -n "$sv" ] && fill_once "$cache/checkpatch-$sv" "$sv" fetch_checkpatch
fi
if [ -f "$cp_pl" ]; then
	if perl "$cp_pl" --no-tree --terse -f "$TOE_TOP"/kmod/*.c \
		"$TOE_TOP"/kmod/*.h "$TOE_TOP/include/opentoe_genl.h" \
		>"$tmp/checkpatch.log" 2>&1 &&
		! grep -qE '(ERROR|WARNING):' "$tmp/checkpatch.log"; then
		ok "checkpatch.pl clean (kmod/, include/opentoe_genl.h)"
	else
		grep -E 'ERROR|WARNING' "$tmp/checkpatch.log"
		fail "checkpatch.pl clean (kmod/, include/opentoe_genl.h)"
	fi
else
	echo "checkpatch.pl not available (Debian's headers do not ship it, linux-source not fetched): not run"
fi

if ! gcc -static -O2 -Wall -Wextra -Wno-unused-parameter -Werror -pthread \
	-I"$TOE_TOP/include" -I"$TOE_TOP/user" -o "$tmp/toe_kmod_test" \
	"$here/toe_kmod_test.c" "$TOE_TOP/user/lib/nlmsg.c" 2>"$tmp/cc.log"; then
	cat "$tmp/cc.log"
	fail "build the guest test program (static)"
	finish
fi

# ---- initramfs ----

rootfs=$tmp/rootfs
mkdir -p "$rootfs"/{bin,sbin,usr/bin,usr/sbin,lib/modules,proc,sys,dev,tmp,run,etc}
cp /bin/busybox "$rootfs/bin/"
cp "$here/init.sh" "$rootfs/init"
cp "$tmp/toe_kmod_test" "$rootfs/bin/"
cp "$build/kmod/opentoe.ko" "$rootfs/lib/modules/"
# veth, and clsact + cls_bpf: without tcx (6.1) toe-loader puts its tc
# programs on a clsact qdisc, and nothing here loads modules on demand
for m in veth sch_ingress cls_bpf; do
	f=$(find "$moddir/kernel" -name "$m.ko*" | head -n 1)
	[ -n "$f" ] || { fail "$m.ko in linux-image-$abi-amd64"; finish; }
	deps=$(/sbin/modinfo -F depends "$f" 2>/dev/null || modinfo -F depends "$f" 2>/dev/null)
	if [ -n "$deps" ]; then
		fail "$m.ko has dependencies ($deps) the initramfs does not carry"
		finish
	fi
	case $f in
	*.xz) xz -dc "$f" >"$rootfs/lib/modules/$m.ko" ;;
	*.zst) zstd -qdc "$f" >"$rootfs/lib/modules/$m.ko" ;;
	*) cp "$f" "$rootfs/lib/modules/$m.ko" ;;
	esac
done
# iproute2's ip, and opentoe's user side for the toed part (toed_guest.sh):
# dynamically linked, so their shared libraries come along (ldd)
ipbin=$(command -v ip)
cp "$ipbin" "$rootfs/usr/sbin/ip"
bins="$ipbin"
if [ -x "$TOE_BUILD/toed" ] && [ -x "$TOE_BUILD/toe-loader" ] && [ -x "$TOE_BUILD/toectl" ] &&
	[ -r "$TOE_BUILD/toe_names.sh" ]; then
	cp "$TOE_BUILD/toe-loader" "$TOE_BUILD/toed" "$TOE_BUILD/toectl" "$rootfs/usr/sbin/"
	cp "$here/toed_guest.sh" "$TOE_BUILD/toe_names.sh" "$rootfs/bin/"
	bins="$bins $TOE_BUILD/toe-loader $TOE_BUILD/toed $TOE_BUILD/toectl"
	# bpftool: the datapath's counts while toed is away
	if command -v bpftool >/dev/null; then
		cp "$(command -v bpftool)" "$rootfs/usr/sbin/"
		bins="$bins $(command -v bpftool)"
	fi
	# scripts/trace/tid.bt under bpftrace: too big for the initramfs
	# (LLVM), so the guest mounts this machine's root read-only over
	# virtio-9p and runs it from there (chroot); the 9p modules,
	# dependencies first, in /lib/modules/9p.list.  It costs about a
	# minute under TCG (bpftrace attaches in ~60 s on a loaded machine);
	# TOE_KMOD_BPFTRACE=0: the guest follows the TID through tracefs
	if [ "${TOE_KMOD_BPFTRACE:-1}" != 1 ]; then
		echo "TOE_KMOD_BPFTRACE=0: the guest follows a TID through tracefs"
	elif command -v bpftrace >/dev/null; then
		. "$here/../guest/boot.sh"
		guest_modules virtio_pci 9pnet_virtio 9p | awk '!seen[$0]++' >"$rootfs/lib/modules/9p.list"
		if grep -q '^missing:' "$rootfs/lib/modules/9p.list"; then
			echo "not in linux-image-$abi-amd64: $(grep -o 'missing:.*' "$rootfs/lib/modules/9p.list")"
			rm "$rootfs/lib/modules/9p.list"
		else
			while read -r m; do
				cp "$(find "$moddir/kernel" -name "$m.ko" | head -n 1)" "$rootfs/lib/modules/"
			done <"$rootfs/lib/modules/9p.list"
			cp "$TOE_TOP/scripts/trace/tid.bt" "$rootfs/bin/"
			virtfs="local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
		fi
	else
		echo "bpftrace not installed: the guest follows a TID through tracefs"
	fi
else
	echo "toe-loader, toed or toectl not built (make): the guest runs the module test only"
fi
for lib in $(for b in $bins; do ldd "$b"; done | grep -o '/[^ ]*' | sort -u); do
	cp -L --parents "$lib" "$rootfs/"
done
(cd "$rootfs" && find . | cpio -o -H newc --quiet) | gzip -1 >"$tmp/initrd.gz" ||
	{ fail "make the initramfs"; finish; }
echo "prepared in $(($(date +%s) - start)) s"

# ---- boot ----
# no_timer_check: under TCG on a loaded machine the kernel's IO-APIC timer
# check can fail and panic the boot ("IO-APIC + timer doesn't work!")

serial=$build/serial.log
rm -f "$serial"
boot=$(date +%s)
timeout --kill-after=5 "${TOE_KMOD_TIMEOUT:-300}" qemu-system-x86_64 \
	-accel tcg -m 1G -smp 2 -nographic -no-reboot -nic none \
	-monitor none -serial "file:$serial" \
	-kernel "$vmlinuz" -initrd "$tmp/initrd.gz" \
	${virtfs:+-virtfs "$virtfs"} \
	-append "console=ttyS0 panic=-1 quiet no_timer_check slub_debug=FZPU${TOE_KMOD_TOED_ONLY:+ opentoe.toed_only}" \
	</dev/null >"$tmp/qemu.out" 2>&1 &
qpid=$!
defer "kill $qpid"
wait $qpid
qrc=$?
echo "guest ran $(($(date +%s) - boot)) s (qemu exit $qrc); serial log: $serial"
[ $qrc -eq 124 ] && echo "guest timed out"
[ -s "$tmp/qemu.out" ] && sed 's/^/qemu: /' "$tmp/qemu.out" | head -n 20

log=$tmp/serial.txt
tr -d '\r' <"$serial" >"$log" 2>/dev/null

# relay the guest's TAP: "ok N - x" / "not ok N - x" become sub-results
sed -n '/=== OPENTOE TAP BEGIN ===$/,/^=== OPENTOE TAP END/p' "$log" |
	grep -v '^===' >"$tmp/tap"
while IFS= read -r line; do
	case $line in
	"ok "* | "not ok "*) echo "guest: $line" | sed -E 's/^guest: (not )?ok [0-9]+ - /\1ok - guest: /' ;;
	"Bail out!"*) fail "guest: $line" ;;
	# the guest's own plan is not this file's (run.sh would take it as
	# ours: "planned 100 checks, ran 136", a failure whatever the code)
	1..*) echo "guest plan: $line" ;;
	"step-time "*) echo "${line#step-time }" >>"$tmp/steps" ;;
	*) echo "$line" ;;
	esac
done <"$tmp/tap"
grep -q '^not ok' "$tmp/tap" && _toe_failed=1
# where the guest's time went: the ten slowest steps (the time since the
# check before each), for whoever shortens make check
if [ -s "$tmp/steps" ]; then
	echo "the guest's slowest steps (seconds under TCG, check, the check's text):"
	sort -rn "$tmp/steps" | head -n 10 | sed 's/^/  /'
	awk '{ s += $1 } END { printf "  (%d steps, %.0f s in all)\n", NR, s }' "$tmp/steps"
fi

if grep -q '^=== OPENTOE TAP END rc=0 ===$' "$log"; then
	ok "guest test program finished (rc 0)"
else
	tail -n 30 "$log"
	fail "guest test program finished ($(grep -o 'TAP END rc=[0-9]*' "$log" || echo 'no end marker'))"
fi

sed -n '/^=== OPENTOE DMESG BEGIN ===$/,/^=== OPENTOE DMESG END ===$/p' "$log" >"$tmp/dmesg"
if ! grep -q '^=== OPENTOE DMESG END ===$' "$tmp/dmesg"; then
	fail "guest kernel log dumped"
else
	bad='WARNING|BUG|Oops|refcount|leak|Call Trace|general protection|unregister_netdevice: waiting|Objects remaining|[Ll]ist corruption|cut here'
	if grep -E "$bad" "$tmp/dmesg"; then
		fail "guest kernel log clean (no WARNING, BUG, Oops, refcount, leak)"
	else
		ok "guest kernel log clean (no WARNING, BUG, Oops, refcount, leak; slub_debug=FZPU, CONFIG_DEBUG_LIST; kmemleak not in Debian's config)"
	fi
fi
echo "total $(($(date +%s) - start)) s"
finish
