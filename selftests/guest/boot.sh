# SPDX-License-Identifier: GPL-2.0
# Boots Debian 12's kernel (kernel.sh) on this machine's own root and runs
# opentoe's selftests in it (sourced after lib.sh and kernel.sh).
#
#   guest_boot OUT TIMEOUT TEST...
#
# The guest's initramfs holds busybox and the virtio, 9p and overlay
# modules only: init.sh mounts the host's / read-only over virtio-9p under
# a tmpfs overlay, so the guest runs the same bash, python3, scapy, iproute2,
# bpftool and opentoe build as the host, on the other kernel, and can write
# anywhere without touching the host.  OUT (a host folder, shared read-write)
# receives env and stage2.sh, then tap (selftests/run.sh's output, growing
# while the guest runs), done ("rc=N") and dmesg.  GUEST_RUN="CMD" (set by
# the caller): the guest runs CMD in the tree instead of run.sh, its output
# in tap (bench/bench_flowtable.sh); TEST... is then only a label.  TCG unless
# TOE_GUEST_ACCEL=kvm: this machine's /dev/kvm opens, but a guest on it
# hangs before the kernel's first line (nested).  Returns qemu's status;
# 124 on time-out.
guest_modules() { # module names, dependencies first -> lines
	local m f d
	for m in "$@"; do
		f=$(find "$moddir/kernel" -name "$m.ko" | head -n 1)
		[ -n "$f" ] || { echo "missing:$m"; continue; }
		d=$(/sbin/modinfo -F depends "$f" 2>/dev/null | tr ',' ' ')
		[ -n "$d" ] && guest_modules $d
		echo "$m"
	done
}

guest_boot() {
	local out=$1 limit=$2 rd m accel
	shift 2
	rd=$out/initrd
	rm -rf "$rd" "$out/tap" "$out/done" "$out/dmesg"
	mkdir -p "$rd"/{bin,lib/modules,proc,sys,dev} || return 1
	cp /bin/busybox "$rd/bin/" && cp "$TOE_TOP/selftests/guest/init.sh" "$rd/init" && chmod 0755 "$rd/init" || return 1
	guest_modules virtio_pci 9pnet_virtio 9p overlay | awk '!seen[$0]++' >"$rd/modules.list"
	if grep -q '^missing:' "$rd/modules.list"; then
		echo "guest: not in linux-image-$abi-amd64: $(grep -o 'missing:.*' "$rd/modules.list")"
		return 1
	fi
	while read -r m; do
		cp "$(find "$moddir/kernel" -name "$m.ko" | head -n 1)" "$rd/lib/modules/"
	done <"$rd/modules.list"
	(cd "$rd" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out/initrd.gz" || return 1
	rm -rf "$rd"
	cp "$TOE_TOP/selftests/guest/stage2.sh" "$out/" || return 1
	{
		printf 'PATH=%q\n' "$PATH"
		printf 'TOE_TOP=%q\nTOE_BUILD=%q\n' "$TOE_TOP" "$TOE_BUILD"
		printf 'TOE_CACHE=%q\n' "${TOE_CACHE:-/var/cache/opentoe}"
		printf 'GUEST_MODDIR=%q\n' "$moddir"
		printf 'GUEST_TESTS=%q\n' "$*"
		printf 'GUEST_RUN=%q\n' "${GUEST_RUN:-}"
	} >"$out/env"
	# no_timer_check (on the command line below): under TCG on a loaded
	# machine the IO-APIC timer check can fail and panic the boot
	accel=${TOE_GUEST_ACCEL:-tcg}
	echo "guest: booting $abi-amd64 ($accel) for: $*"
	timeout --kill-after=5 "$limit" qemu-system-x86_64 \
		-accel "$accel" $([ "$accel" = tcg ] && echo "-cpu max") \
		-m "${TOE_GUEST_MEM:-4G}" -smp 2 -nographic -no-reboot -nic none \
		-monitor none -serial "file:$out/serial" \
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$out,mount_tag=out,security_model=none" \
		-kernel "$vmlinuz" -initrd "$out/initrd.gz" \
		-append "console=ttyS0 panic=-1 quiet no_timer_check" \
		</dev/null >"$out/qemu.out" 2>&1
}
