#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toed's USDT probes, followed by scripts/trace/toed.bt with Debian's
# bpftrace: a policy reload, neighbour updates and an offloaded connection
# each show up in the script's output.
. "$(dirname "$0")/setup.sh"
plan 6
need_cmd bpftrace
load_toe_xdp || { fail "load"; finish; }
cfg=$(conf usdt <<'EOF2'
device sw0 type software nconn 10
rule offload dev sw0 rport 5300
EOF2
)
start_toed "$cfg" || { fail "toed starts"; finish; }
check "toed has its USDT probes" test "$(bpftrace -l "usdt:$TOE_BUILD/toed:toed:*" | wc -l)" -ge 6
BT=$CONF_DIR/bt
bpftrace -p "$TOED_PID" "$TOE_TOP/scripts/trace/toed.bt" >"$BT" 2>&1 &
BTPID=$!
defer "kill -INT $BTPID"
wait_for 20 grep -q "^tracing toed" "$BT" || { fail "bpftrace attaches"; cat "$BT"; finish; }
server 5300 || exit 1
for i in 1 2 3; do
	nsx a ip neigh replace 10.202.0.$((60 + i)) lladdr 02:00:00:00:61:0$i dev va
done
nsx a ip neigh del 10.202.0.61 dev va
client --addr "$B4" --port 5300 --send 1000 >/dev/null
ctl reload >/dev/null
sleep 2.5
kill -INT $BTPID; wait $BTPID 2>/dev/null
sed 's/^/# /' "$BT" | grep -v "failed to detach\|uprobe_events\|RLIMIT_MEMLOCK\|^# $"
serial=$(policy_serial)
check "the reload: 'policy $serial applied: 1 rules'" grep -q "policy $serial applied: 1 rules" "$BT"
sum() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) s += $(i + 1) } END { print s + 0 }' "$BT"; }
check "the 3 neighbour sets, and the ARP of the connection ($(sum set))" test "$(sum set)" -ge 3
check "1 neighbour delete ($(sum delete))" test "$(sum delete)" = 1
check "1 flow offloaded ($(sum offloaded))" test "$(sum offloaded)" = 1
check "its close (and the server side's) ($(sum closed))" test "$(sum closed)" -ge 1
finish
