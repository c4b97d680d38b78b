#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toe-loader --hook auto learns whether a device runs XDP natively from
# the kernel's XDP feature flags (netdev netlink, Linux 6.3), not by
# attaching a program to the live device (which on some NICs rebuilds the
# rings or flaps the link): a bridge (no native XDP) gets tc, a tap (tun:
# native XDP) gets XDP, and no probe program is ever loaded (strace of
# the loader's bpf() calls).  On a kernel without the flags (6.1) the
# probe remains, and the loader says so for each device it probes.
. "$(dirname "$0")/../lib.sh"
plan 2
need_cmd strace genl
dp_start hookauto
ns_add x || { fail "namespace"; finish; }
nsx x ip link add br0 type bridge && nsx x ip link set br0 up &&
	nsx x ip tuntap add mode tap name tp0 && nsx x ip link set tp0 up || { fail "devices"; finish; }
defer "nsx x toe-loader unload --pin-dir $PIN >/dev/null 2>&1; rm -rf $PIN"
nsx x strace -f -e trace=bpf -o "$work/st" toe-loader load --dev br0 --dev tp0 --cgroup "$CG" \
	--pin-dir "$PIN" >"$work/out" 2>&1 || { cat "$work/out"; fail "load --hook auto"; finish; }
hooks=$(nsx x toe-loader status -j --pin-dir "$PIN" |
	jq -r '[.hooks[] | "\(.iface)=\(.hook):\(.why)"] | sort | join(" ")')
check "auto: the bridge on tc (no native XDP), the tap on XDP (native) ($hooks)" \
	test "$hooks" = "br0=tc:no_native_xdp tp0=xdp:native_xdp"
probes=$(grep -c toe_xdp_probe "$work/st")
said=$(grep -c "reports no XDP features" "$work/out")
# whether this kernel has the flags, asked independently (iproute2's genl)
if nsx x genl ctrl get name netdev >/dev/null 2>&1; then
	check "the kernel reports XDP features (netdev family): no probe program loaded ($probes), none said ($said)" \
		test "$probes" = 0 -a "$said" = 0
else
	check "no netdev family (before Linux 6.3): probed ($probes probe loads) and said so ($said lines)" \
		test "$probes" -ge 1 -a "$said" -ge 1
fi
finish
