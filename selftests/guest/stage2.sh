#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Second stage of the opentoe datapath guest, run by init.sh as PID 1 in the
# overlay of the host's root: mounts what a Debian system has mounted
# (proc, sys, dev, run, bpffs, cgroup2, debugfs, tracefs), binds the
# guest kernel's modules where modprobe looks, then runs selftests/run.sh
# on the tests /opentoe-out/env names and writes its TAP to
# /opentoe-out/tap, the kernel log to /opentoe-out/dmesg, and powers off.
out=/opentoe-out
. $out/env || exit 1
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs shm /dev/shm
mount -t tmpfs run /run && mkdir -p /run/netns /run/lock
# /tmp stays the overlay's (writable, in the guest's tmpfs upper layer):
# a tree cloned under /tmp (as CI may) must stay visible
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mkdir -p "/lib/modules/$(uname -r)" && mount --bind "$GUEST_MODDIR" "/lib/modules/$(uname -r)"
hostname opentoe-guest
# what udev and systemd-tmpfiles would have done: /dev/net/tun is made when
# tun.ko loads (tests open it; nothing here autoloads from a static node);
# the /dev/fd links bash's process substitution (<(...)) opens
modprobe tun
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
ip link set lo up
ulimit -l unlimited
export PATH HOME=/root TOE_NO_BUILD=1 TOE_BUILD TOE_CACHE TOE_GUEST=1 TOE_SLOW=5
echo "opentoe-guest: $(uname -r), running: $GUEST_TESTS" >/dev/console
# what this kernel offers opentoe, for docs/kernels.md's table (test_guest.sh)
"$TOE_BUILD/toe-loader" features -j >$out/features.json 2>&1
# the kernel log, every 20 s while the tests run: a guest that hangs (a
# soft lockup on one CPU, the host's timeout ending qemu) still leaves the
# stack traces the console's quiet level kept off the serial line
(while sleep 20; do dmesg >$out/dmesg.new && mv $out/dmesg.new $out/dmesg; done) &
DMESG_PID=$!
# GUEST_RUN (boot.sh): a command of the caller's instead (a benchmark)
if [ -n "${GUEST_RUN:-}" ]; then
	cd "$TOE_TOP" && bash -c "$GUEST_RUN" >$out/tap 2>&1
else
	cd "$TOE_TOP" && bash selftests/run.sh $GUEST_TESTS >$out/tap 2>&1
fi
echo "rc=$?" >$out/done
kill $DMESG_PID
dmesg >$out/dmesg
sync
echo o >/proc/sysrq-trigger
sleep 10
