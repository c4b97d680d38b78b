#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The two builds of the datapath (user/loader/skel.c): opentoe_kctx.bpf.o,
# which reads a packet's network namespace by plain loads through
# bpf_cast_to_kern_ctx (6.3 on), and opentoe.bpf.o, by bpf_probe_read_kernel
# calls, which toe-loader loads where the kernel lacks the kfunc (or with
# TOE_LOADER_HIDE_FEATURE=kern_ctx, as here).  For each, on each hook: the
# build load chose (as toe-loader status names it, from the programs' BTF,
# and as their probe reads show), and the namespace it reads is the packet's: a frame of
# an offloaded flow is counted in that namespace's record, never in the
# record of the same 4-tuple in another namespace.
. "$(dirname "$0")/../lib.sh"
plan 13
need_cmd bpftool jq python3
dp_start kctx
veth_loop || exit 1

PKT="python3 $TOE_TOP/selftests/tools/pkt.py"
btf=$(bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -c "FUNC 'bpf_cast_to_kern_ctx'")
has=$(toe-loader features -j | jq '.[] | select(.name == "kern_ctx") | .present')
check "features: kern_ctx present ($has) exactly when the kernel's BTF has bpf_cast_to_kern_ctx ($btf)" \
	test "$has" = "$([ "$btf" -ge 1 ] && echo true || echo false)"
hid=$(TOE_LOADER_HIDE_FEATURE=kern_ctx toe-loader features -j | jq -c '.[] | select(.name == "kern_ctx") | [.present, .without]')
check "features: TOE_LOADER_HIDE_FEATURE=kern_ctx shows it absent, falling back ($hid)" \
	test "$hid" = '[false,"falls_back"]'

# The same 4-tuple in ns a (where the frames run) and in this namespace.
$PKT v4off "$work/v4off.bin"
KA=$(nsx a $PKT key 4 10.0.0.1 10.0.0.2 80 12345)
KH=$($PKT key 4 10.0.0.1 10.0.0.2 80 12345)
check "the two records' keys differ only in the namespace" test "${KA:0:120}" = "${KH:0:120}" -a "$KA" != "$KH"
pkts() { bpftool -j map lookup pinned "$PIN/$MAP_FLOWS" key hex $1 | jq -r '.formatted.value.xdp_packets'; }
# probe reads: the bpf_probe_read_kernel calls of the program as the kernel runs it
reads() { bpftool prog dump xlated id "$1" | grep -c 'call bpf_probe_read_kernel'; }

declare -A nread
for build in kctx plain; do
	if [ $build = kctx ] && [ "$has" != true ]; then
		for c in "status names the build" "toe_xdp: its namespace" "toe_tc: its namespace"; do
			ok "kctx, $c # SKIP this kernel has no bpf_cast_to_kern_ctx (6.3): only opentoe.bpf.o loads here"
		done
		continue
	fi
	hide=(); [ $build = plain ] && hide=(env TOE_LOADER_HIDE_FEATURE=kern_ctx)
	for hook in xdp tc; do
		prog=toe_$hook
		if ! nsx a "${hide[@]}" toe-loader load --dev va --hook $hook --cgroup "$CG" --pin-dir "$PIN" >/dev/null; then
			fail "$build, --hook $hook: load"
			continue
		fi
		st=$(nsx a toe-loader status -j --pin-dir "$PIN")
		id=$(jq --arg p $prog '.programs[] | select(.name == $p) | .id' <<<"$st")
		want=opentoe.bpf.o
		[ $build = kctx ] && want=opentoe_kctx.bpf.o
		[ $hook = xdp ] && check "$build: toe-loader status names the build loaded: $want ($(jq -c .build <<<"$st"); text: $(nsx a toe-loader status --pin-dir "$PIN" | grep '^datapath build:'))" \
			eval '[ "$(jq -r .build <<<"$st")" = $want ] && nsx a toe-loader status --pin-dir "$PIN" | grep -q "^datapath build: $want "'

		nread[$build.$hook]=$(reads "$id")
		for k in "$KA" "$KH"; do
			bpftool map update pinned "$PIN/$MAP_FLOWS" key hex $k value hex $($PKT flow 1)
		done
		bpftool map update pinned "$PIN/$MAP_FLOW_FILTER" $(nsx a $PKT filter 4 10.0.0.1 10.0.0.2 80 12345)
		# BPF_PROG_TEST_RUN in ns a: the frame arrives on ns a's loopback
		nsx a bpftool prog run id "$id" data_in "$work/v4off.bin" repeat 5 >/dev/null 2>&1
		check "$build, $prog (${nread[$build.$hook]} probe reads): counted in ns a's record, not in the same 4-tuple's of another namespace ($(pkts "$KA"), $(pkts "$KH"))" \
			test "$(pkts "$KA")" = 5 -a "$(pkts "$KH")" = 0
		nsx a toe-loader unload --pin-dir "$PIN" >/dev/null || fail "$build, --hook $hook: unload"
	done
done
check "plain: toe_xdp reads its namespace by probe reads (${nread[plain.xdp]}: 4 at each place it is read)" test "${nread[plain.xdp]:-0}" -ge 4
check "plain: toe_tc too (${nread[plain.tc]}: 3 at each place)" test "${nread[plain.tc]:-0}" -ge 3
# what is left in kctx is conntrack's (nat.h, fwd_ct.h: not the namespace), the same in both
if [ "$has" = true ]; then
	check "kctx: those reads are gone: toe_xdp ${nread[kctx.xdp]} probe reads against ${nread[plain.xdp]}, toe_tc ${nread[kctx.tc]} against ${nread[plain.tc]} (fewer by 4s and 3s)" \
		eval '[ "${nread[kctx.xdp]}" -lt "${nread[plain.xdp]}" ] && [ "${nread[kctx.tc]}" -lt "${nread[plain.tc]}" ] &&
		[ $(( (${nread[plain.xdp]} - ${nread[kctx.xdp]}) % 4 )) = 0 ] && [ $(( (${nread[plain.tc]} - ${nread[kctx.tc]}) % 3 )) = 0 ]'
else
	ok "kctx: the namespace's probe reads gone # SKIP this kernel has no bpf_cast_to_kern_ctx (6.3)"
fi
check "nothing left pinned" test ! -e "$PIN"
finish
