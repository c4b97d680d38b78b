#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toectl flows on bypassed connections: their data goes socket to socket,
# not through TCP, so the flow's TCP counters miss it; toectl joins
# toe_byp_flows (by socket cookie) and shows what the application moved:
# -j has a "bypass" object (state, bytes and messages each way, sends left
# to TCP, switches and why), and the text table's BYTES_OUT / BYTES_IN count
# both.  A reader that reads nothing for a while makes the writer switch to
# TCP (flow control): counted under to_tcp_why.backlog.
. "$(dirname "$0")/setup.sh"
plan 23
load_toe_xdp || { fail "load"; finish; }
cfg=$(conf byp <<'EOF2'
rule bypass lport 5500-5506
rule bypass rport 5500-5506
EOF2
)
start_toed "$cfg" || { fail "toed starts"; cat "$TOED_LOG"; finish; }
out=$CONF_DIR/srv.out
in_cg a python3 "$TCPX" server --port 5500 >"$out" 2>&1 &
defer "kill $!"
wait_for 5 grep -q ready "$out" || { fail "server"; finish; }
N=300000
m0=$(stat_of "$PIN" $STAT_BYP_MSGS)
in_cg a python3 "$TCPX" client --addr 127.0.0.1 --port 5500 --send $N --hold 60 >"$CONF_DIR/held" &
cpid=$!
defer "kill $cpid 2>/dev/null"
held() { grep -q held "$CONF_DIR/held"; }
wait_for 5 held || { fail "client"; finish; }
lp=$(jq '.held[0]' "$CONF_DIR/held")
moved() { ctl -j flows port 5500 | jq -e --argjson n $N '[.[] | select(.bypass.bytes_out >= $n)] | length == 1' >/dev/null; }
wait_for 3 moved
fl=$(ctl -j flows port 5500)
echo "$fl" | jq -c '.[] | {lport, rport, decision, bypass}'
check "two rows, both ends, decision bypass" \
	jq -e 'length == 2 and all(.[]; .decision == "bypass")' <<<"$fl"
check "the client's row: paired, $N bytes out through the bypass" \
	jq -e --argjson n $N --argjson lp "$lp" \
		'.[] | select(.lport == $lp) | .bypass.state == "paired" and .bypass.bytes_out >= $n and .bypass.msgs_out > 0' <<<"$fl"
check "the server's row: the same bytes in" \
	jq -e --argjson n $N '.[] | select(.lport == 5500) | .bypass.bytes_in >= $n' <<<"$fl"
check "  while TCP itself carried almost nothing (bytes_acked < $N)" \
	jq -e --argjson n $N --argjson lp "$lp" '.[] | select(.lport == $lp) | .bytes_acked < $n' <<<"$fl"
check "  the datapath counted the redirected messages (bypass_msgs grew)" \
	test "$(stat_of "$PIN" $STAT_BYP_MSGS)" -gt "$m0"
txt=$(ctl flows port 5500)
echo "$txt"
check "text: BYTES_OUT of the client's row counts the bypassed bytes" \
	test "$(awk -v lp=":$lp" '$1 ~ lp"$" { print $7 }' <<<"$txt")" -ge $N
unhold "$CONF_DIR/held"
wait $cpid
check "the client completed (exit 0, every byte of the reply right)" test $? = 0
# verified SERVER_OUT N: the tcpx server read exactly N bytes of the client's
# pattern, every one in order (a lost or reordered byte prints MISMATCH).
verified() {
	wait_for 5 grep -q '"peer_port"' "$1" || return 1
	! grep MISMATCH "$1" &&
		jq -e -s --argjson n "$2" '[.[] | objects | select(.peer_port)] | length == 1 and .[0].ok and .[0].bytes == $n' \
			< <(grep '^{' "$1")
}
check "the server read all $N bytes, each one in order" verified "$out" $N

# Flow control: 32 MiB in 64 KiB writes to a reader that waits 3 s before
# it reads.  Past the peer's queue limit (the namespace's tcp_rmem[2], set
# to 4 MiB here; include/opentoe.h; checked every 256 KiB sent) the writer
# goes over TCP, whose window then blocks it; it is still writing when the
# reader drains the queue, and must not come back to the peer before TCP's
# data is acked and read: the reader checks every byte is in order.
nsx a sysctl -qw net.ipv4.tcp_rmem="4096 131072 4194304" || fail "tcp_rmem set in namespace a"
in_cg a python3 "$TCPX" server --port 5501 --delay 3 >"$CONF_DIR/slow.out" 2>&1 &
defer "kill $!"
wait_for 5 grep -q ready "$CONF_DIR/slow.out" || { fail "slow server"; finish; }
M=$((32 << 20))
t0=$(stat_of "$PIN" $STAT_BYP_TO_TCP) tm0=$(stat_of "$PIN" $STAT_BYP_TCP_MSGS)
in_cg a python3 "$TCPX" client --addr 127.0.0.1 --port 5501 --send $M --chunk 65536 >"$CONF_DIR/slow.cli" &
cpid=$!
switched() { ctl -j flows port 5501 | jq -e '[.[] | select(.bypass.to_tcp >= 1)] | length == 1' >/dev/null; }
wait_for 2 switched
fl=$(ctl -j flows port 5501)
echo "$fl" | jq -c '.[] | select(.rport == 5501) | .bypass'
check "slow reader: the writer switched to TCP once, for the backlog" \
	jq -e '.[] | select(.rport == 5501) | .bypass | .state == "tcp" and .why == "backlog" and
		.to_tcp == 1 and .to_tcp_why == {"no_peer": 0, "refused": 0, "drain": 0, "backlog": 1}' <<<"$fl"
check "  after redirecting at least the queue limit (4 MiB)" \
	jq -e '.[] | select(.rport == 5501) | .bypass.bytes_out >= 4194304' <<<"$fl"
check "  and its later sends went over TCP (tcp_bytes_out > 0), the peer's queue kept under 2 x its limit" \
	jq -e '.[] | select(.rport == 5501) | .bypass.tcp_bytes_out > 0 and .bypass.bytes_out < 8388608' <<<"$fl"
check "  the datapath counted the switch (bypass_to_tcp) and the sends over TCP (bypass_tcp_msgs)" \
	test "$(stat_of "$PIN" $STAT_BYP_TO_TCP)" -gt "$t0" -a "$(stat_of "$PIN" $STAT_BYP_TCP_MSGS)" -gt "$tm0"
check "  toectl stats' reasons: bypass_to_tcp_backlog counted it ($MAP_REASONS)" \
	test "$(ctl -j stats | jq .reasons.bypass_to_tcp_backlog)" -ge 1
check "  the reader's row has no switch of its own" \
	jq -e '.[] | select(.lport == 5501) | .bypass.to_tcp == 0 and .bypass.to_tcp_why.backlog == 0' <<<"$fl"
timeout 60 tail --pid=$cpid -f /dev/null || fail "  the 32 MiB transfer did not end in 60 s"
wait $cpid
check "  all 32 MiB went through once the reader read (client exit 0)" \
	jq -e --argjson m $M '.conns[0].sent == $m' "$CONF_DIR/slow.cli"
check "  and the reader got them in order, byte for byte (no reordering at the switches)" \
	verified "$CONF_DIR/slow.out" $M

# The soft limit (TOE_BYP_QUEUE_SOFT, 4 MiB): under tcp_rmem[2] of 32 MiB a
# reader with room in its receive buffer for what TCP would carry (16 MiB
# of SO_RCVBUFFORCE: sk_rcvbuf 32 MiB) makes the writer switch after about
# 4 MiB, keeping the queue small enough to stay in cache; a reader without
# room (the default 128 KiB) does not, since over TCP its closed window
# would stall the writer: it queues up to the hard limit (32 MiB).
nsx a sysctl -qw net.ipv4.tcp_rmem="4096 131072 33554432" || fail "tcp_rmem 32 MiB in namespace a"
in_cg a python3 "$TCPX" server --port 5502 --delay 3 --rcvbuf $((16 << 20)) >"$CONF_DIR/room.out" 2>&1 &
defer "kill $!"
in_cg a python3 "$TCPX" server --port 5503 --delay 3 >"$CONF_DIR/noroom.out" 2>&1 &
defer "kill $!"
wait_for 5 grep -q ready "$CONF_DIR/room.out" && wait_for 5 grep -q ready "$CONF_DIR/noroom.out" ||
	{ fail "servers for the soft limit"; finish; }
M=$((24 << 20))
in_cg a python3 "$TCPX" client --addr 127.0.0.1 --port 5502 --send $M --chunk 65536 >"$CONF_DIR/room.cli" &
rpid=$!
in_cg a python3 "$TCPX" client --addr 127.0.0.1 --port 5503 --send $M --chunk 65536 >"$CONF_DIR/noroom.cli" &
npid=$!
switched2() { ctl -j flows port 5502 | jq -e '[.[] | select(.bypass.to_tcp >= 1)] | length == 1' >/dev/null; }
queued() { ctl -j flows port 5503 | jq -e '.[] | select(.rport == 5503) | .bypass.bytes_out >= 16777216' >/dev/null; }
wait_for 2 switched2
wait_for 2 queued
fl=$(ctl -j flows)
echo "$fl" | jq -c ".[] | select(.rport == 5502 or .rport == 5503) | {rport, bypass}"
check "reader with room: the writer switched to TCP for the backlog after 4 to 8 MiB redirected" \
	jq -e '.[] | select(.rport == 5502) | .bypass | .to_tcp_why.backlog == 1 and
		.bytes_out >= 4194304 and .bytes_out < 8388608' <<<"$fl"
check "reader without room: the writer kept redirecting past 16 MiB, no switch" \
	jq -e '.[] | select(.rport == 5503) | .bypass | .to_tcp == 0 and .bytes_out >= 16777216' <<<"$fl"
timeout 60 tail --pid=$rpid -f /dev/null && timeout 60 tail --pid=$npid -f /dev/null ||
	fail "  the 24 MiB transfers did not end in 60 s"
wait $rpid $npid
both_verified() { verified "$CONF_DIR/room.out" $M && verified "$CONF_DIR/noroom.out" $M; }
check "  both readers got all 24 MiB in order, byte for byte" both_verified

# Back to the peer: a writer sent to TCP by the soft limit (8 MiB to a
# reader with room that waits 2 s) writes again once TCP's bytes are acked
# and read: that send goes to the peer again (bypass_to_peer).
in_cg a python3 -c '
import socket, time
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE
l.bind(("127.0.0.1", 5504)); l.listen(); print("ready", flush=True)
c, _ = l.accept(); time.sleep(2); n = 0
while True:
    b = c.recv(1 << 16)
    if not b: break
    n += len(b)
print(n, flush=True)' >"$CONF_DIR/back.out" 2>&1 &
defer "kill $!"
wait_for 5 grep -q ready "$CONF_DIR/back.out" || { fail "server for the way back"; finish; }
p0=$(stat_of "$PIN" $STAT_BYP_TO_PEER)
in_cg a python3 -c '
import socket, time
s = socket.create_connection(("127.0.0.1", 5504))
for _ in range(128): s.sendall(b"x" * 65536)
time.sleep(4)
s.sendall(b"x" * 65536); time.sleep(1); s.close()' &
wpid=$!
# the writer's own flow record, while it is open
back_fl() { bk=$(ctl -j flows | jq -c '[.[] | select(.rport == 5504) | .bypass | {to_tcp, to_peer}]'); test "$bk" = '[{"to_tcp":1,"to_peer":1}]'; }
wait_for 15 back_fl
wait $wpid || fail "the way back: the client failed"
wait_for 5 grep -qx $((129 << 16)) "$CONF_DIR/back.out" || fail "the way back: the reader got $(tail -1 "$CONF_DIR/back.out") bytes, not $((129 << 16))"
check "a writer sent to TCP comes back to the peer once TCP's data is read (bypass_to_peer grew)" \
	test "$(stat_of "$PIN" $STAT_BYP_TO_PEER)" -gt "$p0"
check "  and its flow record says so before it closes: to_tcp 1, to_peer 1 ($bk)" test "$bk" = '[{"to_tcp":1,"to_peer":1}]'

# The other reasons to switch to TCP, in toectl stats' reasons ($MAP_REASONS):
# the peer closed under a paired writer; a small send finds the redirect
# refused (refused), a send over the writer's budget rechecks the peer and
# finds it gone (no_peer).
rs() { ctl -j stats | jq ".reasons.$1"; }
r0=$(rs bypass_to_tcp_refused) n0=$(rs bypass_to_tcp_no_peer)
in_cg a python3 -c '
import socket, time
for port, size in ((5505, 100), (5506, 4 << 20)):
    l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(("127.0.0.1", port)); l.listen()
    s = socket.create_connection(("127.0.0.1", port)); c, _ = l.accept()
    s.sendall(b"p" * 1000); c.recv(1000); c.close(); time.sleep(0.2)
    try:
        s.send(b"x" * size)
    except OSError:
        pass
    s.close(); l.close()' || fail "the peer-closed pairs: the script failed"
check "a small send after the peer closed: bypass_to_tcp_refused grew" test "$(rs bypass_to_tcp_refused)" -gt "$r0"
check "a send over the budget after the peer closed: bypass_to_tcp_no_peer grew" test "$(rs bypass_to_tcp_no_peer)" -gt "$n0"
finish
