#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Network namespaces by cookie in the pin names (issue 31, item 5): an
# inode number is reused once its namespace is gone, so per-interface pins
# name the namespace's cookie (link_xdp_c<COOKIE>_if<N>, chain_c..., ...)
# and unload finds a namespace by it; the inode is only shown.  Two
# namespaces a and b load into one pin folder, b with a program of its own
# on vb (chained): each gets its own pins, status in a shows b's by
# cookie and inode (its XDP link, its chained program and, before Linux
# 6.4, its classic tc egress filter), a reload in a leaves b's link alone, and unload puts
# b's program back (entering b by cookie).  Then the upgrade: pins named
# as the previous toe-loader named them (n<INODE>) are taken over by a
# load in their namespace, and an unload still clears them all.
. "$(dirname "$0")/../lib.sh"
plan 15
dp_start nspins
need_cmd bpftool jq python3
[ -e "$TOE_BUILD/selftests/xdp_pass.bpf.o" ] || cannot_run "selftests not built (make)"
# (a veth pair first in b: vb's ifindex differs from va's, which forwarding
# targets must, toe_ifaces being keyed by ifindex)
# (and a namespace z made first: unload looks b up by cookie among others,
# b never the first /run/netns lists, which fills its free slots in order)
ns_add z && ns_add a && ns_add b && veth_pair b x0 b x1 &&
	veth_pair a va b vb && nsx a ip link set va up &&
	nsx b ip link set vb up || { fail "namespaces"; finish; }
cookie() {
	nsx "$1" python3 -c 'import socket, struct
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
print(struct.unpack("Q", s.getsockopt(socket.SOL_SOCKET, 71, 8))[0])'
}
ca=$(cookie a) cb=$(cookie b)
ia=$(nsx a stat -L -c %i /proc/self/ns/net) ib=$(nsx b stat -L -c %i /proc/self/ns/net)
ifa=$(nsx a ip -j link show dev va | jq '.[0].ifindex') ifb=$(nsx b ip -j link show dev vb | jq '.[0].ifindex')
vb_xdp() { nsx b ip -j link show dev vb | jq -r '.[0].xdp.prog.id // 0'; }
tl() { local ns=$1; shift; nsx "$ns" toe-loader "$@" --pin-dir "$PIN"; }
load() { tl "$1" load --cgroup "$CG" --dev "v$1" --xdp-mode skb >/dev/null; }
defer "tl a unload >/dev/null 2>&1; rm -rf $PIN"
# b's own program on vb before opentoe (bpftool: ip would leave pins behind)
XP=/sys/fs/bpf/xdp_pass-$TOE_TEST_ID
defer "rm -f $XP"
bpftool prog load "$TOE_BUILD/selftests/xdp_pass.bpf.o" "$XP" type xdp &&
	nsx b bpftool net attach xdpgeneric pinned "$XP" dev vb && rm -f "$XP" ||
	{ fail "attach xdp_pass to vb"; finish; }
other=$(vb_xdp)

load a && load b || { fail "loads in a and b"; finish; }
check "a's pins name a's cookie (link_xdp_c${ca}_if$ifa)" test -e "$PIN/link_xdp_c${ca}_if$ifa"
check "b's name b's (link_xdp_c${cb}_if$ifb, chain_c${cb}_if${ifb}_skb)" \
	test -e "$PIN/link_xdp_c${cb}_if$ifb" -a -e "$PIN/chain_c${cb}_if${ifb}_skb"
check "no pin names an inode" test -z "$(find "$PIN" -name '*_n[0-9]*')"
st=$(tl a status -j)
check "status in a shows b's by cookie, its inode for display" \
	jq -e --arg s "ifindex $ifb (netns cookie $cb, inode $ib)" --arg c "_c${cb}_" \
	'[.programs[] | select((.pin | contains($c)) and (.pin | startswith("link_nf_") | not))] |
		length >= 2 and all(.attach == $s)' <<<"$st" ||
	jq -c '.programs[] | {pin, attach}' <<<"$st"
check "  b's XDP link is not called a tcx one (its mode: $(jq -r --arg p "link_xdp_c${cb}_if$ifb" '.programs[] | select(.pin == $p) | .xdp_mode' <<<"$st"))" \
	jq -e --arg p "link_xdp_c${cb}_if$ifb" '[.programs[] | select(.pin == $p)] | length == 1 and .[0].xdp_mode != "tcx"' <<<"$st"
lb=$(bpftool -j link show pinned "$PIN/link_xdp_c${cb}_if$ifb" | jq .id)
load a
check "a reload in a leaves b's XDP link alone (id $lb)" \
	test "$(bpftool -j link show pinned "$PIN/link_xdp_c${cb}_if$ifb" | jq .id)" = "$lb"
tl a unload >/dev/null
check "unload from a puts b's own program back on vb (b entered by cookie)" test "$(vb_xdp)" = "$other"
check "  and leaves nothing" test ! -e "$PIN"

# --- the upgrade: the names the previous toe-loader gave (n<INODE>)
load a && load b || { fail "loads again"; finish; }
for p in "$PIN"/*_c"${ca}"_* "$PIN"/*_c"${cb}"_*; do
	n=${p/_c${ca}_/_n${ia}_}
	mv "$p" "${n/_c${cb}_/_n${ib}_}"
done
check "old-style pins made" test -e "$PIN/link_xdp_n${ia}_if$ifa" -a -e "$PIN/chain_n${ib}_if${ifb}_skb"
st=$(tl a status -j)
check "status in a over them: a's XDP link on va (its own namespace, by inode), b's in b" \
	jq -e --arg a "link_xdp_n${ia}_if$ifa" --arg b "link_xdp_n${ib}_if$ifb" --arg s "ifindex $ifb (netns inode $ib)" \
	'([.programs[] | select(.pin == $a)] | length == 1 and .[0].attach == "va") and
		([.programs[] | select(.pin == $b)] | length == 1 and .[0].attach == $s)' <<<"$st" ||
	jq -c '.programs[] | {pin, attach}' <<<"$st"
out=$(tl a load --cgroup "$CG" --dev va --xdp-mode skb 2>&1)
check "a load in a over them takes a's as its own${out:+: $out}" \
	test -e "$PIN/link_xdp_c${ca}_if$ifa" -a ! -e "$PIN/link_xdp_n${ia}_if$ifa"
check "  one XDP link pinned for va, the one va runs" \
	test "$(ls "$PIN" | grep -c "^link_xdp_.*_if$ifa\$")" = 1 -a \
	"$(bpftool -j link show pinned "$PIN/link_xdp_c${ca}_if$ifa" | jq .prog_id)" = "$(nsx a ip -j link show dev va | jq '.[0].xdp.prog.id')"
check "  every one of a's old-style pins renamed, whatever its kind ($(ls "$PIN" | grep -c "_c${ca}_") by cookie; left by inode: $(ls "$PIN" | grep "_n${ia}_" | tr '\n' ' '))" \
	eval 'test "$(ls "$PIN" | grep -c "_n${ia}_")" = 0 -a "$(ls "$PIN" | grep -c "_c${ca}_")" -ge 2'
check "  b's old-style pins left as they were" test -e "$PIN/link_xdp_n${ib}_if$ifb" -a -e "$PIN/chain_n${ib}_if${ifb}_skb"
tl a unload >/dev/null
check "unload clears them all and puts b's program back (b found by inode)" \
	test ! -e "$PIN" -a "$(vb_xdp)" = "$other" -a "$(nsx a ip -j link show dev va | jq -r '.[0].xdp.prog.id // 0')" = 0
nsx b bpftool net detach xdpgeneric dev vb
finish
