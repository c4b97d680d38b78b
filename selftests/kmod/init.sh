#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# /init of the opentoe module-test guest: loads the module, sets up the
# network the test program expects, runs it, then toed_guest.sh (toe-loader,
# toed and toectl against the module) when test_kmod.sh put it in, then
# dumps the kernel log between markers for the host (test_kmod.sh) to
# check, and powers off.  "opentoe.toed_only" on the kernel command line
# skips toe_kmod_test.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /tmp /run && mount -t tmpfs tmp /tmp
# keep kernel messages off the console while TAP is printed: they are
# dumped in full at the end
echo 1 >/proc/sys/kernel/printk
echo "opentoe-test: start" >/dev/kmsg

# busybox sh prefers its own applets: call iproute2 (veth) by path
ip=/usr/sbin/ip
run() {
	insmod /lib/modules/veth.ko || return 1
	# clsact and cls_bpf: toe-loader's tc programs without tcx
	insmod /lib/modules/sch_ingress.ko || return 1
	insmod /lib/modules/cls_bpf.ko || return 1
	insmod /lib/modules/opentoe.ko || return 1
	$ip link add veth0 type veth peer name veth1 || return 1
	$ip addr add 10.1.0.1/24 dev veth0
	$ip -6 addr add 2001:db8:1::1/64 dev veth0 nodad
	$ip link set veth0 up
	$ip link set veth1 up
	$ip route add 10.9.0.0/16 via 10.1.0.254 dev veth0 || return 1
	grep -q opentoe.toed_only /proc/cmdline && return 0
	/bin/toe_kmod_test
}
echo
echo "=== OPENTOE TAP BEGIN ==="
run
rc=$?
# then toe-loader, toed and toectl against the module (when test_kmod.sh
# could copy them in)
if [ -x /usr/sbin/toed ]; then
	sh /bin/toed_guest.sh || rc=$((rc + 2))
fi
echo "=== OPENTOE TAP END rc=$rc ==="
lsmod | grep -q '^opentoe' && rmmod opentoe
echo "opentoe-test: end" >/dev/kmsg
echo "=== OPENTOE DMESG BEGIN ==="
dmesg
echo "=== OPENTOE DMESG END ==="
sync
poweroff -f
