#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The bpftrace scripts in scripts/trace/, each run for a few seconds with
# Debian's bpftrace against traffic this test makes, and its output checked:
# toed.bt is tested in selftests/toed/test_usdt.sh; here flows.bt
# (TCP states joined with toed's decisions), neigh.bt (kernel neighbour
# update to toed's map write, a histogram) and xdp.bt (redirects to a cpumap
# from `steer cpu`).  If tracefs is not mounted the test mounts it, for
# itself, and unmounts it at the end (the scripts never mount anything).
. "$(dirname "$0")/../toed/setup.sh"
plan 10
need_cmd bpftrace
T=$TOE_TOP/scripts/trace
if [ ! -d /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing || skip "no tracefs"
	defer "umount /sys/kernel/tracing"
fi
load_toe_xdp || { fail "load"; finish; }
cfg=$(conf trace <<'EOF2'
device t3 type chelsio-t3 nconn 100 steer cpu 1
rule offload dev t3 rport 5300
EOF2
)
start_toed "$cfg" || { fail "toed starts"; finish; }
# steer cpu 1 redirects the offloaded flows' packets to a cpumap, and veth
# hands XDP frames whose TCP checksum is not computed yet, which a redirect
# loses: the sender computes it, as a real NIC's peer would (without it
# the port-5300 clients below wait 30 s for their replies)
nsx b ethtool -K vb tx off >/dev/null

# bt NAME [bpftrace args]: start scripts/trace/NAME.bt, wait until attached.
bt() {
	local name=$1; shift
	BTOUT=$CONF_DIR/$name.out
	bpftrace "$@" "$T/$name.bt" >"$BTOUT" 2>&1 &
	BTPID=$!
	defer "kill -INT $BTPID"
	wait_for 30 grep -q "^tracing\|^TIME" "$BTOUT" || { cat "$BTOUT"; return 1; }
}
bt_stop() { sleep "${1:-1}"; kill -INT $BTPID; wait $BTPID 2>/dev/null
	grep -v "failed to detach\|uprobe_events\|RLIMIT_MEMLOCK\|available_filter_functions\|^$" "$BTOUT" | sed 's/^/# /' | head -40; }

# --- flows.bt
server 5300 5400 || exit 1
bt flows -p "$TOED_PID" || { fail "flows.bt attaches"; finish; }
client --addr "$B4" --port 5300 --send 1000 --count 2 >/dev/null
client --addr "$B4" --port 5400 --send 1000 >/dev/null
bt_stop 1
check "flows.bt: 2 offload decisions from toed for remote port 5300" \
	test "$(grep -c "offloaded .*remote port 5300 " "$BTOUT")" = 2
check "flows.bt: the kernel's ESTABLISHED for 10.202.0.1 -> 10.202.0.2:5400 (a host flow)" \
	grep -q "established *10.202.0.1:[0-9]* -> 10.202.0.2:5400" "$BTOUT"
check "flows.bt: closes seen" grep -q "^@decisions\[closed, " "$BTOUT"
check "flows.bt: transition counts at the end" grep -q "^@transitions\[SYN_SENT, ESTABLISHED\]" "$BTOUT"

# --- neigh.bt
bt neigh -p "$TOED_PID" || { fail "neigh.bt attaches"; finish; }
for i in $(seq 1 20); do
	nsx a ip neigh replace 10.202.0.$((100 + i)) lladdr 02:00:00:00:70:$(printf %02x $i) dev va
done
nsx a ip neigh replace 192.0.2.1 lladdr 02:00:00:00:71:01 dev lo 2>/dev/null
bt_stop 1
n=$(grep -c "^set .*10\.202\.0\.1[0-9][0-9]\? .* us$" "$BTOUT")
check "neigh.bt: each of the 20 updates timed, kernel to map ($n)" test "$n" -ge 20
check "neigh.bt: a latency histogram" grep -q "^@usecs:" "$BTOUT"
check "neigh.bt: @mirrored counted them" grep -q "^@mirrored: [0-9]" "$BTOUT"

# --- xdp.bt: steer cpu 1 redirects the offloaded flow's packets to a cpumap
bt xdp || { fail "xdp.bt attaches"; finish; }
out=$(client --addr "$B4" --port 5300 --send 2000000)
check "the steered transfer completed" jq -e '.conns[0].sent == 2000000' <<<"$out"
bt_stop 1.5
va=$(nsx a ip -j link show va | jq '.[0].ifindex')
check "xdp.bt: redirects from va (ifindex $va) to a cpumap (to_ifindex 0)" \
	grep -q "^@redirect\[$va, 0\]: [0-9]" "$BTOUT"
check "xdp.bt: the cpumap enqueue on CPU 1" grep -q "^@cpumap_packets\[1\]: [1-9]" "$BTOUT"
finish
