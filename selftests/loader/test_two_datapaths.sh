#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two datapaths (two pin folders) in one network namespace: the kernel
# takes one BPF netfilter program per hook and priority, so the second
# load's forward-path admission takes the next free priority instead of
# failing with EBUSY; each unload takes away only its own links.
. "$(dirname "$0")/../lib.sh"
plan 5
dp_start two
need_cmd bpftool jq
ns_add a || { fail "namespace"; finish; }
features=$(toe-loader features -j 2>/dev/null)
jq -e '.. | objects | select(.name? == "netfilter_prog") | .present' <<<"$features" >/dev/null ||
	skip "no BPF netfilter programs on this kernel"
PIN2=$PIN-2
defer "nsx a toe-loader unload --pin-dir $PIN2; rm -rf $PIN2"
# nf_links PIN...: the netfilter links pinned in the folders, live (by id;
# this bpftool names the link type by number, 10)
nf_links() {
	local l
	for l in $(find "$@" -maxdepth 1 -name 'link_nf_fwd_*' 2>/dev/null); do
		bpftool -j link show pinned "$l" | jq -r 'select(.type == "netfilter" or .type == 10) | .id'
	done | sort -u | wc -l
}
check "the first datapath loads in namespace a" dp_load a
out=$(nsx a toe-loader load --cgroup "$CG" --pin-dir "$PIN2" 2>&1)
check "a second datapath loads beside it in the same namespace${out:+: $out}" test $? = 0
check "  each has its netfilter admission (4 distinct live links: IPv4 and IPv6 each)" \
	test "$(nf_links "$PIN" "$PIN2")" = 4
nsx a toe-loader unload --pin-dir "$PIN2" >/dev/null
check "unloading the second leaves the first's two links" \
	test "$(nf_links "$PIN")" = 2 -a ! -e "$PIN2"
nsx a toe-loader unload --pin-dir "$PIN" >/dev/null
check "and the first unloads clean" test ! -e "$PIN"
finish
