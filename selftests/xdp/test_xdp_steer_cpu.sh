#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "steer cpu N": the packets of an offloaded flow are redirected by XDP
# through the cpumap to CPU N, whose cpumap thread does their receive work;
# the data arrives intact.  The policy apply makes the cpumap entry, and
# removes it when no device names the CPU any more (two devices, two CPUs:
# both kept); with the entry missing the redirect fails and XDP passes the
# packet instead.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 19
need_cmd bpftool jq python3 nsenter ethtool
need_built toed
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
CPU=1
dp_start cpu
two_hosts 212 4 || exit 1
A4=10.212.0.1 B4=10.212.0.2
# veth hands native XDP the sender's frame with the TCP checksum not yet
# computed (CHECKSUM_PARTIAL), which a redirected frame loses: the sender
# computes it.  (A NIC's frames carry it.)
nsx a ethtool -K va tx off >/dev/null
dp_load b --dev vb || { fail "load"; finish; }
conf() { # NAME STEER...
	local f=$work/$1.conf; shift
	# the server is in b: the rule names b's namespace
	printf 'device c1 type software nconn 100 steer %s\nrule offload dev c1 lport 7001 netns %s\n' "$*" "$(ns_name b)" >"$f"
	chmod 600 "$f"; echo "$f"
}
toed --apply "$(conf cpu cpu $CPU)" --pin-dir "$PIN" >/dev/null || { fail "apply"; finish; }
st() { stat_of "$PIN" "$1"; }
cpumap_qsize() { # [CPU] (the cpumap has no BTF: the value's first 4 bytes, little-endian)
	local h
	h=$(bpftool -j map lookup pinned "$PIN/$MAP_CPUMAP" key ${1:-$CPU} 0 0 0 2>/dev/null |
		jq -r '.value[0:4] | map(ltrimstr("0x")) | reverse | join("")' 2>/dev/null)
	[ -n "$h" ] && echo $((16#$h))
}
check "the apply made the cpumap entry of CPU $CPU (qsize 2048)" test "$(cpumap_qsize)" = 2048
mapid=$(bpftool -j map show pinned "$PIN/$MAP_CPUMAP" | jq .id)
kt=$(ps -eo pid=,comm= | awk -v n="cpumap/$CPU/map:$mapid" '$2 == n { print $1 }')
check "  its kernel thread cpumap/$CPU/map:$mapid runs on CPU $CPU" test -n "$kt" -a "$(ps -o psr= -p "${kt:-0}" | tr -d ' ')" = $CPU
ticks() { awk '{ print $14 + $15 }' /proc/$kt/stat; }

# The server in b, in the cgroup: sock_ops decides its side of the flow.
(echo $BASHPID >"$CG/cgroup.procs" && exec nsenter --net=/run/netns/$(ns_name b) python3 "$XFER" server --port 7001 --port 7002) >"$work/server.out" 2>&1 &
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
# a transfer with a time-out: a wrong datapath fails it, does not hang the test
xfer() {
	nsx_t 90 a python3 "$XFER" client --addr $B4 "$@" >"$work/$NAME.json"
	[ $? != 124 ] || { fail "transfer $NAME ($*) timed out after 90 s"; return 1; }
}

N=50000000
r0=$(st $STAT_XDP_REDIRECT_CPU) h0=$(st $STAT_XDP_FLOW_HIT) t0=$(ticks)
NAME=steered xfer --port 7001 --bytes $N
r1=$(st $STAT_XDP_REDIRECT_CPU) h1=$(st $STAT_XDP_FLOW_HIT) t1=$(ticks)
echo "steered: $(jq -c . "$work/steered.json"); redirected to CPU $CPU: $((r1 - r0)), flow hits $((h1 - h0)), cpumap thread CPU time $((t1 - t0)) ticks"
check "offloaded flow on 'steer cpu $CPU': $N bytes intact" intact steered
check "  its packets redirected to CPU $CPU (TOE_S_XDP_REDIRECT_CPU >= $((N / 1500)))" test $((r1 - r0)) -ge $((N / 1500))
check "  every counted packet was redirected" test $((r1 - r0)) = $((h1 - h0))
check "  CPU $CPU's cpumap thread did the receive work (its CPU time grew)" test $((t1 - t0)) -gt 0
r0=$(st $STAT_XDP_REDIRECT_CPU)
NAME=host xfer --port 7002 --bytes 5000000
check "a host flow (port 7002) is not redirected" test "$(st $STAT_XDP_REDIRECT_CPU)" = "$r0"
check "  and arrives intact" intact host

# BPF_PROG_TEST_RUN: the same decision on one packet.
prog=$(nsx b toe-loader status -j --pin-dir "$PIN" | jq '[.programs[] | select(.type == "xdp") | .id][0]')
bpftool map update pinned "$PIN/$MAP_FLOWS" key hex $(nsx b $PKT key 4 $B4 $A4 7001 40000) value hex $($PKT flow 1)
bpftool map update pinned "$PIN/$MAP_FLOW_FILTER" $(nsx b $PKT filter 4 $B4 $A4 7001 40000)
$PKT tcp "$work/p.bin" 4 $A4 $B4 40000 7001 A 1 1 64 100
runp() { nsx b bpftool prog run id "$prog" data_in "$work/p.bin" 2>&1 | sed -n 's/^Return value: \([0-9]*\).*/\1/p'; }
check "test run: packet of the offloaded flow -> XDP_REDIRECT" test "$(runp)" = 4

bpftool map delete pinned "$PIN/$MAP_CPUMAP" key $CPU 0 0 0
check "cpumap entry deleted" test -z "$(cpumap_qsize)"
check "test run: entry missing -> XDP_PASS" test "$(runp)" = 2
r0=$(st $STAT_XDP_REDIRECT_CPU) h0=$(st $STAT_XDP_FLOW_HIT)
NAME=missing xfer --port 7001 --bytes 10000000
r1=$(st $STAT_XDP_REDIRECT_CPU) h1=$(st $STAT_XDP_FLOW_HIT)
check "entry missing: the offloaded flow still arrives intact (passed)" intact missing
check "  counted (flow hits +$((h1 - h0))), not redirected" test $((h1 - h0)) -gt 6000 -a $r1 = $r0

toed --apply "$(conf cpu cpu $CPU)" --pin-dir "$PIN" >/dev/null
check "re-apply makes the entry again" test "$(cpumap_qsize)" = 2048
# two devices steering to two CPUs: each keeps its entry (the prune
# looks at every device, not the first)
printf 'device c0 type software nconn 100 steer cpu 0\ndevice c1 type software nconn 100 steer cpu %s\nrule offload dev c1 lport 7001 netns %s\n' $CPU "$(ns_name b)" >"$work/two.conf"
chmod 600 "$work/two.conf"
toed --apply "$work/two.conf" --pin-dir "$PIN" >/dev/null
check "two devices on CPUs 0 and $CPU: both cpumap entries there ($(cpumap_qsize 0), $(cpumap_qsize))" \
	test "$(cpumap_qsize 0)" = 2048 -a "$(cpumap_qsize)" = 2048
serial=$(bpftool -j map dump pinned "$PIN/$MAP_POL_HDR" | jq '[.[].formatted.value.serial] | max')
err=$(toed --apply "$(conf bad cpu 99)" --pin-dir "$PIN" 2>&1)
echo "steer cpu 99: $err"
check "steer cpu 99 on a $(nproc)-CPU machine: apply refused" test -n "$(grep -i 'cpu 99' <<<"$err")"
check "  policy in force unchanged" test "$(bpftool -j map dump pinned "$PIN/$MAP_POL_HDR" | jq '[.[].formatted.value.serial] | max')" = "$serial"
toed --apply "$(conf acct account)" --pin-dir "$PIN" >/dev/null
check "a policy no longer naming CPU $CPU removes its entry" test -z "$(cpumap_qsize)"
check "  and its packets are passed (test run -> XDP_PASS)" test "$(runp)" = 2
finish
