#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The XDP program as loaded by toe-loader, run with BPF_PROG_TEST_RUN
# (bpftool prog run): packets of an offloaded flow update that flow's
# per-CPU packet and byte counters; packets of a host flow write no map;
# malformed packets are passed untouched and counted per reason, one
# packet of each parse result (selftests/style/test_counters.sh).
. "$(dirname "$0")/../lib.sh"
plan 36
need_cmd bpftool jq python3
dp_start xdp
veth_loop || exit 1
dp_load a --dev va || { fail "load"; finish; }
prog=$(nsx a toe-loader status -j --pin-dir "$PIN" | jq '.programs[] | select(.type == "xdp") | .id')
echo "XDP program id $prog"

P="python3 $TOE_TOP/selftests/tools/pkt.py"
for p in v4off v4host v4hostflow v4opts v6off badihl baddoff trunc notcp truncl2 truncl3 truncip \
	badversion badiplen badext frag unknownethertype vlan3 ext9; do $P $p "$work/$p.bin"; done
run() { # PKT REPEAT -> return value
	bpftool prog run id "$prog" data_in "$work/$1.bin" repeat "$2" 2>&1 | sed -n 's/^Return value: \([0-9]*\).*/\1/p'
}
pkts() { # KEY-HEX -> "packets bytes" XDP counted in the flow's record, or "none"
	bpftool -j map lookup pinned "$PIN/$MAP_FLOWS" key hex $1 2>/dev/null |
		jq -r '.formatted.value | "\(.xdp_packets) \(.xdp_bytes)"' 2>/dev/null || echo none
}
flows() { bpftool -j map dump pinned "$PIN/$MAP_FLOWS" | jq -c 'sort_by(.key)'; }

K4=$($P key 4 10.0.0.1 10.0.0.2 80 12345)
K4h=$($P key 4 10.0.0.1 10.0.0.2 80 12347)
K6=$($P key 6 fd00::1 fd00::2 443 4444)
bpftool map update pinned "$PIN/$MAP_FLOWS" key hex $K4 value hex $($P flow 1)
bpftool map update pinned "$PIN/$MAP_FLOWS" key hex $K4h value hex $($P flow 0)
bpftool map update pinned "$PIN/$MAP_FLOWS" key hex $K6 value hex $($P flow 1)
# Offloaded records written by hand: their toe_flow_filter slots too.
bpftool map update pinned "$PIN/$MAP_FLOW_FILTER" $($P filter 4 10.0.0.1 10.0.0.2 80 12345)
bpftool map update pinned "$PIN/$MAP_FLOW_FILTER" $($P filter 6 fd00::1 fd00::2 443 4444)

len4=$(stat -c %s "$work/v4off.bin"); len6=$(stat -c %s "$work/v6off.bin"); leno=$(stat -c %s "$work/v4opts.bin")
check "offloaded IPv4 flow: XDP_PASS" test "$(run v4off 1000)" = 2
check "its counters: 1000 packets, 1000 x $len4 bytes" test "$(pkts "$K4")" = "1000 $((1000 * len4))"
check "IPv4 with options of the same flow counted too" test "$(run v4opts 10)" = 2 -a "$(pkts "$K4")" = "1010 $((1000 * len4 + 10 * leno))"
check "offloaded IPv6 flow (TCP options): counted" test "$(run v6off 7)" = 2 -a "$(pkts "$K6")" = "7 $((7 * len6))"
hits=$(stat_of "$PIN" $STAT_XDP_FLOW_HIT)
before=$(flows)
check "packet of an unknown flow: XDP_PASS" test "$(run v4host 1000)" = 2
check "packet of a flow decided host: XDP_PASS" test "$(run v4hostflow 1000)" = 2
check "host packets changed no flow record" test "$(flows)" = "$before" -a "$(pkts "$K4h")" = "0 0"
check "and moved no counter" test "$(stat_of "$PIN" $STAT_XDP_FLOW_HIT)" = "$hits"
for m in "badihl $PARSE_BAD_IHL" "baddoff $PARSE_BAD_DOFF" "trunc $PARSE_TRUNC_L4" \
	"truncl2 $PARSE_TRUNC_L2" "truncl3 $PARSE_TRUNC_L3" \
	"truncip $PARSE_TRUNC_IP" "badversion $PARSE_BAD_VERSION" "badiplen $PARSE_BAD_IPLEN" \
	"badext $PARSE_BAD_EXT" "frag $PARSE_FRAG" "unknownethertype $PARSE_UNKNOWN_ETHERTYPE" \
	"vlan3 $PARSE_TOO_MANY_VLAN" "ext9 $PARSE_TOO_MANY_EXT"; do
	set -- $m
	b=$(stat_of "$PIN" $2)
	check "malformed ($1): XDP_PASS, untouched" test "$(run $1 3)" = 2
	check "malformed ($1): counted under reason $2" test "$(stat_of "$PIN" $2)" = $((b + 3))
done
# not TCP (ARP here) is not malformed: never counted, no map write (bpf/stats.h)
b=$(stat_of "$PIN" $PARSE_NOT_TCP)
check "not TCP (ARP): XDP_PASS, and xdp_parse_not_tcp does not move" \
	test "$(run notcp 3)" = 2 -a "$(stat_of "$PIN" $PARSE_NOT_TCP)" = "$b"
check "malformed packets of an offloaded flow's tuple are not accounted" test "$(pkts "$K4")" = "1010 $((1000 * len4 + 10 * leno))"
finish
