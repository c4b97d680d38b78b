#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toe-loader beside xdp-filter / xdp-loader (libxdp) on one interface.
# Where the kernel loads freplace programs (Debian 12's 6.1), toe_xdp joins
# libxdp's multi-program dispatcher: in either order of loading both run,
# `xdp-loader status` lists both, xdp-filter's program decides first (it
# runs at priority 10, opentoe at 100), a reload swaps only opentoe's,
# unloading either leaves the other running, a load that fails on a
# later interface takes its program back out, and loads killed at random
# moments leave no toe_xdp behind.  Where it cannot (this
# machine's 6.18: no freplace), libxdp falls back to a single program,
# which opentoe chains after its own.  Two namespaces joined by a veth.
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd bpftool jq xdp-loader xdp-filter nsenter python3 nstat
[ -x "$TOE_BUILD/toe-loader" ] || cannot_run "toe-loader not built (make)"
unset LIBXDP_SKIP_DISPATCHER
# libxdp's own folder (its lock, its dispatchers' pins): gone again, after
# everything else, if this test made it (rmdir: only when empty)
[ -e /sys/fs/bpf/xdp ] || defer "rmdir /sys/fs/bpf/xdp 2>/dev/null"

if toe-loader features -j | jq -e '.[] | select(.name == "ext") | .present' >/dev/null; then
	DISP=1
	plan 47
else
	DISP=0
	plan 13
fi
PIN=$TOE_PIN_DIR PIN2=$TOE_PIN_DIR-other
cg_add disp || skip "no cgroup v2 mount"
two_hosts 211 || exit 1
veth_pair a vx a vy || exit 1
nsx a ip link set vx up && nsx a ip link set vy up
defer "nsx a toe-loader unload --pin-dir $PIN; rm -rf $PIN"
defer "nsx a toe-loader unload --pin-dir $PIN2; rm -rf $PIN2"
defer "nsx a xdp-filter unload --all >/dev/null 2>&1"

# (load: --hook xdp, the dispatcher is XDP's; auto would put a veth on tc)
tl() { [ "$1" = load ] && { shift; set -- load --hook xdp "$@"; }; nsx a toe-loader "$@" --pin-dir "$PIN" --cgroup "$CG"; }
tlu() { nsx a toe-loader unload --pin-dir "$PIN"; }
st() { nsx a toe-loader status -j --pin-dir "$PIN"; }
xstatus() { nsx a xdp-loader status va; }
# the ids of the dispatcher's programs on va named NAME (xdp-loader status)
xids() { xstatus | awk -v n="$1" '$1 == "=>" && $3 ~ n { print $4 }' | sort; }
xprio() { xstatus | awk -v n="$1" '$1 == "=>" && $3 ~ n { print $2 }'; }
xhas() { xstatus | grep -q "$1"; }
xdp_id() { nsx a ip -j link show dev va | jq -r '.[0].xdp.prog.id // 0'; }
# frames toe_xdp counted by parse result (toe_stats indexes below
# TOE_S_BASE: malformed or unknown frames; well-formed non-TCP is not
# counted), summed over CPUs
odd() {
	bpftool -j map dump pinned "$PIN/$MAP_STATS" |
		jq --argjson base "$STAT_BASE" '[.[] | select(.formatted.key < $base) | .formatted.values[].value] | add // 0'
}
# N frames of an unknown ethertype (toe_xdp counts them) from vb to va
raw() {
	nsx b python3 -c "
import socket
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(('vb', 0))
f = bytes.fromhex('$MAC_A'.replace(':', '')) + bytes.fromhex('$MAC_B'.replace(':', '')) + b'\x88\xb5' + b'x' * 46
for i in range($1): s.send(f)"
}
MAC_A=$(nsx a ip -j link show va | jq -r '.[0].address')
MAC_B=$(nsx b ip -j link show vb | jq -r '.[0].address')
odd_ge() { test "$(odd)" -ge "$1"; }
# seen_after N [SECS]: raw N frames, toe_xdp counted every one within SECS
# (3 times TOE_SLOW: veth's XDP runs in its NAPI poll, later than the send;
# a check_not gives 1)
seen_after() {
	local n0; n0=$(odd); raw "$1"; wait_for "${2:-$(slow 3)}" odd_ge $((n0 + $1))
}
block_b() { nsx a xdp-filter ether "$MAC_B" -m src "$@" >/dev/null; }
no_ports() { nsx a nstat -az UdpNoPorts | awk '/UdpNoPorts/ { print $2 }'; }
udp9() { # N datagrams from b to a's UDP port 9 (closed: the stack counts them)
	nsx b python3 -c "
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range($1): s.sendto(b'x', ('10.211.0.1', 9))"
	sleep 0.3
}
pings() { nsx b ping -c "$1" -i 0.05 -W 1 -q 10.211.0.1 >/dev/null; }
filter_drops_udp9() { # UDP/9 never reaches a's stack
	local n0; n0=$(no_ports); udp9 10; test "$(no_ports)" = "$n0"
}

if [ $DISP = 0 ]; then
	# ---- no dispatcher here: libxdp falls back, opentoe chains
	check "features: no freplace here, falls back" \
		bash -c "toe-loader features -j | jq -e '.[] | select(.name == \"ext\" and (.present | not) and .without == \"falls_back\")'"
	check "xdp-filter loads (libxdp falls back to a single program)" nsx a xdp-filter load va
	nsx a xdp-filter port 9 -p udp >/dev/null
	check "  and drops UDP/9" filter_drops_udp9
	fid=$(xdp_id)
	check "opentoe loads over it" tl load --dev va
	check "status shows xdp-filter's program chained after opentoe" \
		jq -e --argjson id "$fid" '.programs[] | select(.id == $id and .chained and .attach == "va")' <<<"$(st)"
	check "xdp-loader status shows only opentoe's program (chaining's cost)" \
		test "$(xhas toe_xdp && echo y)$(xhas xdpfilt && echo n)" = y
	c0=$(stat_of "$PIN" "$STAT_XDP_CHAINED")
	check "UDP/9 still dropped (by the chained program)" filter_drops_udp9
	c1=$(stat_of "$PIN" "$STAT_XDP_CHAINED")
	check "xdp_chained counts the frames handed on ($c0 -> $c1, 10 sent)" \
		test "$c1" -ge $((c0 + 10))
	block_b
	check "frames xdp-filter drops: opentoe saw them first (chaining runs opentoe first)" seen_after 10
	block_b -r
	check "ping works through both" pings 3
	check "unload" tlu
	check "xdp-filter's program is back on va" test "$(xdp_id)" = "$fid"
	check "  and still drops UDP/9" filter_drops_udp9
	finish
fi

# ---- xdp-filter first, then opentoe
check "features: freplace here" \
	bash -c "toe-loader features -j | jq -e '.[] | select(.name == \"ext\" and .present)'"
check "xdp-filter loads through the dispatcher" nsx a xdp-filter load va
nsx a xdp-filter port 9 -p udp >/dev/null
check "  xdp-loader status shows the dispatcher" xhas xdp_dispatcher
check "opentoe joins the dispatcher" tl load --dev va
s=$(st)
check "status: toe_xdp on va through the dispatcher, pinned as xdpd_*" \
	jq -e '.programs[] | select(.name == "toe_xdp" and .attach == "va" and .xdp_mode == "dispatcher" and (.pin | startswith("xdpd_c")))' <<<"$s"
check "status: nothing chained, no XDP link of opentoe's" \
	jq -e '[.programs[] | select(.chained or (.pin | startswith("link_xdp")))] | length == 0' <<<"$s"
check "xdp-loader status lists xdp-filter's program" test -n "$(xids xdpfilt)"
check "xdp-loader status lists toe_xdp" test -n "$(xids toe_xdp)"
xstatus | sed 's/^/# /'
check "  at priority 100, after xdp-filter's ($(xprio xdpfilt))" \
	test "$(xprio toe_xdp)" = 100 -a "$(xprio xdpfilt)" -lt 100
check "ping through both" pings 10
check "toe_xdp sees every frame xdp-filter passes" seen_after 10
check "UDP/9 dropped by xdp-filter" filter_drops_udp9
block_b
check_not "frames xdp-filter drops: toe_xdp never sees them (xdp-filter decides first)" seen_after 10 1
block_b -r
listens() { nsx a ss -Htln "sport = :$1" | grep -q .; }
nsx a iperf3 -s -1 -D -p 5311 && wait_for "$(slow 5)" listens 5311
check "real TCP through both: an iperf3 run" nsx b timeout 30 iperf3 -c 10.211.0.1 -p 5311 -t 2

# ---- reload swaps only opentoe's program
old=$(xids toe_xdp) fids=$(xids xdpfilt)
check "reload" tl load --dev va
check "  one toe_xdp in the dispatcher, a new one" test "$(xids toe_xdp | wc -l)" = 1 -a "$(xids toe_xdp)" != "$old"
check "  xdp-filter's program kept" test "$(xids xdpfilt)" = "$fids"
check "  status: the pin holds the dispatcher's toe_xdp" \
	test "$(st | jq '.programs[] | select(.name == "toe_xdp") | .id')" = "$(xids toe_xdp)"

# ---- unload leaves xdp-filter
check "unload" tlu
check "  xdp-filter's program alone in the dispatcher" test -z "$(xids toe_xdp)" -a "$(xids xdpfilt)" = "$fids"
check "  and still drops UDP/9" filter_drops_udp9
check "xdp-filter unloads" nsx a xdp-filter unload va
check "  nothing on va" test "$(xdp_id)" = 0

# ---- libxdp's info and debug lines (it prints them on 6.1) only with
# TOE_DEBUG=1; its warnings always.  Standard error of a load and an unload
# through a dispatcher of opentoe's own, without and with TOE_DEBUG.
errs() { # CMD...: the command's standard error (its output dropped), shown
	local e; e=$("$@" 2>&1 >/dev/null)
	[ -n "$e" ] && head -n 5 <<<"$e" | sed 's/^/#   stderr: /' >&2
	printf '%s' "$e"
}
e=$(errs tl load --dev va)
check "load through a dispatcher: nothing on stderr without TOE_DEBUG" test -z "$e"
e=$(errs tlu)
check "  unload: nothing on stderr either" test -z "$e"
e=$(TOE_DEBUG=1 errs tl load --dev va 2>/dev/null)
check "  with TOE_DEBUG=1 the load shows libxdp's lines ($(grep -c '^libxdp: ' <<<"$e"))" grep -q '^libxdp: ' <<<"$e"
e=$(TOE_DEBUG=1 errs tlu 2>/dev/null)
check "  and so does the unload ($(grep -c '^libxdp: ' <<<"$e"))" grep -q '^libxdp: ' <<<"$e"

# ---- opentoe first, then xdp-filter
check "opentoe first: a dispatcher of its own" tl load --dev va
check "xdp-filter joins it" nsx a xdp-filter load va
check "  xdp-loader status lists both" test -n "$(xids toe_xdp)" -a -n "$(xids xdpfilt)"
check "xdp-filter unloads" nsx a xdp-filter unload va
check "  toe_xdp stays" test -n "$(xids toe_xdp)"
check "  toe_xdp sees traffic" seen_after 5
check "unload" tlu
check "  nothing on va" test "$(xdp_id)" = 0

# ---- a load that fails on a later interface takes toe_xdp back out
nsx a xdp-filter load va >/dev/null
fids=$(xids xdpfilt)
# vx: opentoe of another pin folder on its own bpf_link, which no loader displaces
LIBXDP_SKIP_DISPATCHER=1 nsx a toe-loader load --hook xdp --dev vx --pin-dir "$PIN2" --cgroup "$CG" >/dev/null
err=$(tl load --dev va --dev vx 2>&1)
check "a load on va and vx (vx held by another loader's link) fails there" \
	grep -q "vx: XDP program toe_xdp .* bpf_link owned by another loader" <<<"$err"
check "  rolled back: no toe_xdp in va's dispatcher, xdp-filter's kept" test -z "$(xids toe_xdp)" -a "$(xids xdpfilt)" = "$fids"
check "  no pin folder left" test ! -e "$PIN"

# ---- a load killed between libxdp's attach and its pin leaves toe_xdp in
# the dispatcher with no pin: removing the pin by hand makes that state
ptoe() { st | jq '.programs[] | select(.name == "toe_xdp") | .id'; }
tl load --dev va >/dev/null
rm -f "$PIN"/xdpd_*
err=$(tl load --dev va 2>&1)
check "an unpinned toe_xdp of this pin folder: the next load takes it out" \
	test "$(xids toe_xdp)" = "$(ptoe)" -a -n "$(ptoe)"
check "  saying so" grep -q "took toe_xdp of a killed load out of the XDP dispatcher" <<<"$err"
rm -f "$PIN"/xdpd_*
check "  and unload does too" tlu
check "  no toe_xdp left, xdp-filter's kept" test -z "$(xids toe_xdp)" -a "$(xids xdpfilt)" = "$fids"

# ---- loads killed with SIGKILL at random moments (within a load's time)
t0=$(date +%s%N); tl load --dev va >/dev/null; ms=$((($(date +%s%N) - t0) / 1000000))
for i in 1 2 3 4 5 6 7 8; do
	nsenter --net=/run/netns/"$(ns_name a)" toe-loader load --hook xdp --dev va --pin-dir "$PIN" --cgroup "$CG" >/dev/null 2>&1 &
	p=$!
	sleep "$(awk -v ms=$ms -v r=$RANDOM 'BEGIN { print ms * (r % 100) / 100000 }')"
	kill -9 $p 2>/dev/null; wait $p 2>/dev/null
done
check "after 8 loads killed at random moments (a load: $ms ms), a load completes" tl load --dev va
check "  one toe_xdp in va's dispatcher, the pinned one" test "$(xids toe_xdp)" = "$(ptoe)" -a -n "$(ptoe)"
check "  xdp-filter's program kept" test "$(xids xdpfilt)" = "$fids"
check "unload" tlu
check "  no toe_xdp left, xdp-filter's kept" test -z "$(xids toe_xdp)" -a "$(xids xdpfilt)" = "$fids"
finish
