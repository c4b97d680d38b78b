#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# /init of the opentoe datapath guest (selftests/guest/boot.sh): loads the
# virtio, 9p and overlay modules the initramfs carries (their order is in
# /modules.list), mounts the host's root read-only over virtio-9p with a
# tmpfs overlay on top (the guest writes where it likes, the host sees
# none of it), mounts the host's output folder at /opentoe-out, and hands
# over to stage2.sh there in the new root.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo 1 >/proc/sys/kernel/printk
die() {
	echo "opentoe-guest: $*"
	echo o >/proc/sysrq-trigger
	sleep 5
}
while read -r m; do
	insmod "/lib/modules/$m.ko" || die "insmod $m failed"
done </modules.list
o9p=trans=virtio,version=9p2000.L,msize=512000
mkdir -p /lower /upper /newroot
mount -t 9p -o "$o9p,ro,cache=loose" hostroot /lower || die "mount the host's root (9p)"
mount -t tmpfs -o size=75% upper /upper && mkdir -p /upper/u /upper/w
mount -t overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w overlay /newroot ||
	die "mount the overlay root"
mkdir -p /newroot/opentoe-out
mount -t 9p -o "$o9p" out /newroot/opentoe-out || die "mount the output folder (9p)"
exec switch_root /newroot /bin/bash /opentoe-out/stage2.sh
