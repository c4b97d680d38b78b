#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toe-loader --hook auto loading again over its own load keeps each
# device's hook (the one in place), whatever the order of the --dev
# options: the load succeeds, and a bridge on tc and a tap on XDP stay so,
# both times.  (Issue 50: the rule-made idx mutant of hook.c:300, the hook
# in place recorded for the first device only, which refuses the load,
# passed test_hook_auto, which loads once.)
. "$(dirname "$0")/../lib.sh"
plan 3
dp_start hookre
ns_add x || { fail "namespace"; finish; }
nsx x ip link add br0 type bridge && nsx x ip link set br0 up &&
	nsx x ip tuntap add mode tap name tp0 && nsx x ip link set tp0 up || { fail "devices"; finish; }
defer "nsx x toe-loader unload --pin-dir $PIN >/dev/null 2>&1; rm -rf $PIN"
hooks() {
	nsx x toe-loader status -j --pin-dir "$PIN" | jq -r '[.hooks[] | "\(.iface)=\(.hook)"] | sort | join(" ")'
}
# load ARGS...: toe-loader load ARGS; its exit status, then the hooks
load() {
	local rc
	nsx x toe-loader load "$@" --cgroup "$CG" --pin-dir "$PIN" >"$work/out" 2>&1
	rc=$?
	sed 's/^/# /' "$work/out"
	echo "$rc $(hooks)"
}
want="0 br0=tc tp0=xdp"
got=$(load --dev br0 --dev tp0)
check "auto: loads, the bridge on tc, the tap on XDP (exit, hooks: $(tail -n 1 <<<"$got"))" \
	test "$(tail -n 1 <<<"$got")" = "$want"
got=$(load --dev br0 --dev tp0)
check "loaded again (br0 first): loads, each keeps its hook ($(tail -n 1 <<<"$got"))" \
	test "$(tail -n 1 <<<"$got")" = "$want"
got=$(load --dev tp0 --dev br0)
check "loaded again (tp0 first): loads, each keeps its hook ($(tail -n 1 <<<"$got"))" \
	test "$(tail -n 1 <<<"$got")" = "$want"
finish
