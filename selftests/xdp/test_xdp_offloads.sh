#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stateless offloads carry the host path: attaching opentoe (native or skb
# XDP, or tc ingress with --hook tc, and sock_ops) changes none of the interface's offload features
# (ethtool -k: GRO, TSO, GSO, checksums...), on it or on its peer, and
# unloading leaves them as they were.  In native mode on a veth the kernel
# turns off TSO/GSO on the veth's peer (its rule for XDP programs without
# multi-buffer support): shown as a diagnostic, and its cost measured.  (The throughput side of the same
# point is measured by make bench-hostflow, not asserted here.)
. "$(dirname "$0")/../lib.sh"
plan 11
need_cmd ethtool nsenter
dp_start offl
veth_loop || exit 1
nsx a ethtool -K va gro on >/dev/null	# GRO on, so a change would show
feat() { nsx a ethtool -k "$1" | grep -v '\[fixed\]' | sort; }
defer "nsx a toe-loader unload --pin-dir $PIN; rm -rf $PIN"
for mode in native skb tc; do
	va0=$(feat va) vb0=$(feat vb)
	if [ $mode = tc ]; then how=(--hook tc); else how=(--xdp-mode $mode); fi
	nsx a toe-loader load --dev va --hook xdp "${how[@]}" --cgroup "$CG" --pin-dir "$PIN" >/dev/null ||
		{ fail "load ($mode)"; continue; }
	check "$mode: va's offload features unchanged with opentoe attached ($(grep -c ': on' <<<"$va0") on)" \
		test "$(feat va)" = "$va0"
	check "$mode: GRO, TSO and GSO still on" \
		test "$(feat va | grep -cE '^(generic-receive-offload|tcp-segmentation-offload|generic-segmentation-offload): on')" = 3
	if [ $mode != native ]; then
		check "$mode: the peer's features unchanged" test "$(feat vb)" = "$vb0"
	else
		# veth's own rule, not opentoe's: a native XDP program without
		# multi-buffer support on one end turns off TSO/GSO on the other
		# (veth_fix_features); a NIC has no peer.  Shown, not asserted.
		echo "# native: veth turned off on the peer: $(diff <(echo "$vb0") <(feat vb) | sed -n 's/^> \(.*\): off.*/\1/p' | tr '\n' ' ')"
	fi
	nsx a toe-loader unload --pin-dir "$PIN" >/dev/null
	check "$mode: unchanged after unload" test "$(feat va)" = "$va0"
done
finish
