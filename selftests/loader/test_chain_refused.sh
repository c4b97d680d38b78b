#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A program on the interface that opentoe cannot chain after its own: an
# XDP program loaded for multi-buffer frames (xdp.frags), which the kernel
# refuses in toe_xdp_next (a program array owned by opentoe's, which does
# not take frags).  The load fails, and says why, naming the interface and
# the program (issue 50: the rule-made mutant attach.c:321, the message
# deleted, passed every test); the program stays on the interface, alone,
# and nothing stays pinned (the load undone).
. "$(dirname "$0")/../lib.sh"
plan 4
dp_start chainref
need_cmd bpftool jq
[ -e "$TOE_BUILD/selftests/xdp_frags.bpf.o" ] || cannot_run "selftests not built (make)"
ns_add a && veth_pair a x0 a x1 && nsx a ip link set x0 up && nsx a ip link set x1 up ||
	{ fail "namespace a with a veth pair"; finish; }
XP=/sys/fs/bpf/xdp_frags-$TOE_TEST_ID
defer "rm -f $XP"
bpftool prog load "$TOE_BUILD/selftests/xdp_frags.bpf.o" "$XP" &&
	nsx a bpftool net attach xdpgeneric pinned "$XP" dev x0 && rm -f "$XP" ||
	{ fail "attach xdp_frags to x0"; finish; }
x0_xdp() { nsx a ip -j link show dev x0 | jq -r '.[0].xdp.prog | "\(.id) \(.name)"'; }
before=$(x0_xdp)
defer "nsx a toe-loader unload --pin-dir $PIN >/dev/null 2>&1; rm -rf $PIN"
err=$(nsx a toe-loader load --cgroup "$CG" --pin-dir "$PIN" --dev x0 --xdp-mode skb --hook xdp 2>&1 >/dev/null)
rc=$?
check "the load fails (exit $rc)" test "$rc" -ne 0
id=${before%% *}
check "and says why, naming x0 and its program: $err" \
	grep -q "x0: XDP program xdp_frags (id $id) cannot be chained after opentoe: Invalid argument" <<<"$err"
check "x0 keeps its program, alone ($before, now $(x0_xdp))" test "$(x0_xdp)" = "$before"
check "nothing pinned ($(ls -A "$PIN" 2>/dev/null | head -n 3 | tr '\n' ' '))" \
	test -z "$(ls -A "$PIN" 2>/dev/null)"
finish
