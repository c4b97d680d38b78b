#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toed and toectl: the control socket and every toectl command (text and
# -j JSON, checked with jq), flows and devices under real TCP, monitor,
# reload (good, bad, SIGHUP), the lock, a non-root client refused by
# SO_PEERCRED, SIGKILL with traffic flowing and a restart that adopts the
# pinned state, SIGTERM leaving the datapath running.
. "$(dirname "$0")/setup.sh"
plan 66
load_toe_xdp || { fail "load"; finish; }
cfg=$(conf toed <<'EOF2'
device t3 type chelsio-t3 nconn 100 dev vb
rule offload dev t3 rport 5300
EOF2
)
# the device's interface is vb: not in namespace a, so use none
sed -i 's/ dev vb$//' "$cfg"
check "toed --help" toed --help
check "toectl --help" toectl --help
# systemd's readiness (Type=notify): READY=1 to $NOTIFY_SOCKET, a path or
# an abstract name (@NAME, of toed's network namespace)
notify_rx() { # ADDR OUT: one datagram on the unix socket ADDR (in a) into OUT
	rm -f "$2" "$2.up"
	nsx a timeout 20 python3 -c '
import socket, sys
a, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + a[1:] if a[0] == "@" else a)
open(out + ".up", "w").close()
open(out, "wb").write(s.recv(256))' "$1" "$2" &
	wait_for 5 test -e "$2.up"
}
notify_rx "$CONF_DIR/notify" "$CONF_DIR/ready"
NOTIFY_SOCKET=$CONF_DIR/notify start_toed "$cfg" || { fail "toed starts"; cat "$TOED_LOG"; finish; }
ok "toed starts and answers"
check "it told systemd it is ready: READY=1 to NOTIFY_SOCKET (a path)" \
	wait_for 5 grep -qx READY=1 "$CONF_DIR/ready"

out=$(nsx_t 10 a toed --config "$cfg" --pin-dir "$PIN" --run-dir "$RUN" 2>&1); rc=$?
check "a second toed refuses to start (exit 1): $out" \
	test "$rc" = 1 -a -n "$(grep "another toed is running (pid $TOED_PID" <<<"$out")"

# text: what each command's text form must show (its header, or a field
# known here), matched as an extended regular expression on a line
declare -A text_want=(
	[status]="^toed: +running, pid $TOED_PID,"
	[devices]="^DEVICE +TYPE"
	[flows]="^LOCAL +REMOTE +DEVICE +DECISION +REASON"
	[neigh]="^ADDRESS +INTERFACE +LLADDR"
	[policy]="^rule offload dev t3 rport 5300"
	[stats]="^daemon:"
)
for c in status devices flows neigh policy stats; do
	check "toectl -j $c is one valid JSON document" \
		jq -e -s 'length == 1' < <(ctl -j "$c")
	out=$(ctl "$c"); rc=$?
	if [ $rc = 0 ] && grep -Eq -- "${text_want[$c]}" <<<"$out"; then
		ok "toectl $c (text) exits 0 and shows /${text_want[$c]}/"
	else
		fail "toectl $c (text): exit $rc, want a line /${text_want[$c]}/, got: $(head -c 300 <<<"$out")"
	fi
done
check "status: pid, policy, the XDP interface va tracked" \
	jq -e ".pid == $TOED_PID and .policy.rules == 1 and (.interfaces | map(.name) | index(\"va\") != null)" \
	< <(ctl -j status)
check "policy shows the file's rule back" grep -q "^rule offload dev t3 rport 5300" < <(ctl policy)
out=$(ctl nosuch 2>&1); rc=$?
check "an unknown command fails with a message: $out" test "$rc" = 1 -a -n "$(grep "unknown command 'nosuch'" <<<"$out")"
out=$(ctl flows port 99999 2>&1); rc=$?
check "a bad port filter is refused by toed: $out" test "$rc" = 1 -a -n "$(grep "bad port '99999'" <<<"$out")"
out=$(ctl flows speed 3 2>&1); rc=$?
check "an unknown filter is refused: $out" test "$rc" = 1 -a -n "$(grep "unknown filter 'speed'" <<<"$out")"

# --- traffic, monitor, flows, devices
MON=$CONF_DIR/monitor
ctl -j monitor >"$MON" &
MONPID=$!
defer "kill $MONPID"
MONT=$CONF_DIR/monitor.txt
ctl monitor >"$MONT" &
defer "kill $!"
sleep 0.3
server 5300 5400 || exit 1
HELD=$CONF_DIR/held
client --addr "$B4" --port 5300 --send 200000 --count 3 --hold 60 >"$HELD" &
HELDPID=$!
nflows() { ctl -j flows port 5300 dev t3 | jq -e "length >= $1" >/dev/null; }
wait_for 5 nflows 3
fl=$(ctl -j flows port 5300 dev t3)
check "flows: 3 active connections to 5300 on t3, offloaded by rule 0" \
	jq -e '[.[] | select(.rport == 5300 and .decision == "offload" and .rule == 0 and .reason == "rule")] | length == 3' <<<"$fl"
check "flows (text): the device column says t3 on every row" \
	test "$(ctl flows port 5300 dev t3 | awk 'NR > 1 { print $3 }' | sort -u)" = t3
check "flows filter by device: none on a device that does not exist" \
	jq -e 'length == 0' < <(ctl -j flows dev nosuch)
check "devices: t3 with 3 live of 100" \
	jq -e '.[] | select(.device == "t3") | .live == 3 and .nconn == 100 and .module == "sock_ops"' < <(ctl -j devices)
check "devices (text) has the header and t3" grep -q "^t3 " < <(ctl devices)
client --addr "$B4" --port 5400 --send 1000 >/dev/null
wait_for 10 grep -q held "$HELD"
unhold "$HELD"
wait $HELDPID
sleep 0.5
check "monitor -j: one JSON document per line" jq -e -s 'length > 0' "$MON"
check "monitor: flow_offloaded for the 3 connections to 5300" \
	jq -e -s '[.[] | select(.event == "flow_offloaded" and .rport == 5300 and .device == "t3")] | length == 3' "$MON"
check "monitor: flow_closed for them, with their bytes" \
	jq -e -s '[.[] | select(.event == "flow_closed" and .rport == 5300 and .bytes_acked == 200002)] | length == 3' "$MON"
check "monitor (text) shows the same events, the client's address -> the server's (active)" \
	test "$(grep -c '^\[flow_offloaded\] [^ ]* -> [^ ]*:5300 offload dev t3 ' "$MONT")" = 3
check "stats: toed counted 3 offloaded and closed events" \
	jq -e '.daemon.events_flow_offloaded == 3 and .daemon.events_flow_closed >= 3' < <(ctl -j stats)

check "stats: toed counted the server's listen_start event" \
	jq -e '.daemon.events_listen_start >= 1' < <(ctl -j stats)
in_cg a python3 -c 'import socket, time; s = socket.socket(); s.bind(("127.0.0.1", 5399)); s.listen(); time.sleep(0.2); s.close()'
lstop() { ctl -j stats | jq -e '.daemon.events_listen_stop >= 1' >/dev/null; }
check "  and a listener closed in the cgroup: listen_stop" wait_for 3 lstop
# a listener kept home for no reason of its own (not no_stid or route):
# the text monitor's line is just its address, at debug level
check "  monitor (text): its listen_start line is just its address ($(grep -F ':5399' "$MONT" | head -n 1))" \
	grep -Eq '^\[listen_start\] 127\.0\.0\.1:5399( netns [0-9]+)?$' "$MONT"
# a monitor client that never reads, while 3,000 listeners open and close
# in the cgroup (6,000 events): the lines it cannot take are counted lost
ml0=$(ctl -j stats | jq .daemon.monitor_lost)
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"monitor\n"); time.sleep(4)' \
	"$RUN/toed.sock" & SLOWMON=$!
defer "kill $SLOWMON 2>/dev/null"
sleep 0.3
in_cg a python3 -c '
import socket
for i in range(3000):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); s.close()'
mlost() { [ "$(ctl -j stats | jq .daemon.monitor_lost)" -gt "$ml0" ]; }
check "a monitor client that does not read: its lines counted lost (monitor_lost $ml0 -> $(ctl -j stats | jq .daemon.monitor_lost))" \
	wait_for 5 mlost
kill "$SLOWMON" 2>/dev/null; wait "$SLOWMON" 2>/dev/null
# a monitor client that shuts its reading side (no hangup toed's epoll
# sees): toed's next line to it fails (EPIPE) and toed lets it go, no
# line counted lost
ml1=$(ctl -j stats | jq .daemon.monitor_lost)
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"monitor\n"); time.sleep(0.3)
s.shutdown(socket.SHUT_RD); time.sleep(1.5)' "$RUN/toed.sock" & SHUTMON=$!
defer "kill $SHUTMON 2>/dev/null"
sleep 0.6
in_cg a python3 -c '
import socket
for i in range(5):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); s.close()'
sleep 0.3
check "a monitor client that shut its reading side is let go, none of its lines lost (monitor_lost $ml1 -> $(ctl -j stats | jq .daemon.monitor_lost))" \
	test "$(ctl -j stats | jq .daemon.monitor_lost)" = "$ml1"
wait "$SHUTMON" 2>/dev/null

# --- reload: good, bad, SIGHUP
serial=$(policy_serial)
applied=$(ctl -j stats | jq '.daemon.policy_applied')
cp "$cfg" "$cfg.good"
echo "rule offload dev t3 rport 5400" >>"$cfg"
check "toectl reload applies the new file" ctl reload
check "the policy serial moved on" test "$(policy_serial)" -gt "$serial"
check "  counted once in toectl stats (policy_applied)" \
	jq -e --argjson a "$applied" '.daemon.policy_applied == $a + 1' < <(ctl -j stats)
check "monitor saw the policy applied" jq -e -s '[.[] | select(.event == "policy")] | length >= 1' "$MON"
check "policy now shows the new rule" grep -q "^rule offload dev t3 rport 5400" < <(ctl policy)
serial=$(policy_serial)
before=$(policy_state)
badr() { # NAME WANT <<config
	local name=$1 want=$2 out rc
	cat >"$cfg"
	if refused "$want" ctl reload && grep -q "rport 5400" < <(ctl policy); then
		ok "reload of a bad file ($name) refused, policy $serial still in force: $out"
	else
		fail "reload $name (rc=$rc): want '$want', got: $out"
	fi
}
badr unknown-device "$cfg:2:18: unknown device 'nosuch'" <<'EOF2'
device t3 type chelsio-t3 nconn 100
rule offload dev nosuch rport 80
EOF2
badr bad-keyword "$cfg:1:1:" <<'EOF2'
rules host
EOF2
badr truncated "$cfg:1:" <<'EOF2'
device t3 type chelsio-t3 nconn
EOF2
printf 'rule host\n' >"$cfg"
chmod 666 "$cfg"
out=$(ctl reload 2>&1)
check "reload of a world-writable file refused, policy unchanged: $out" \
	test -n "$(grep "must be owned by root and writable by no one else" <<<"$out")" -a "$(policy_serial)" = "$serial"
chmod 600 "$cfg"
rm "$cfg"
out=$(ctl reload 2>&1)
check "reload of a missing file refused, policy unchanged: $out" \
	test -n "$(grep "No such file" <<<"$out")" -a "$(policy_serial)" = "$serial"
check "the failures are counted" jq -e '.daemon.policy_failed == 5' < <(ctl -j stats)
cp "$cfg.good" "$cfg"
kill -HUP "$TOED_PID"
serial_gt() { test "$(policy_serial)" -gt "$1"; }
check "SIGHUP reloads the file" wait_for 5 serial_gt "$serial"
check "toed logged the reload" grep -q "SIGHUP: reloading" "$TOED_LOG"

# --- reload under traffic: a connection storm while toectl reload flips
# between two rule sets; every connection completes, no slot is left held.
cp "$cfg.good" "$cfg.a"
printf 'device t3 type chelsio-t3 nconn 100\ndefault host\n' >"$cfg.b"
chmod 600 "$cfg.a" "$cfg.b"
storm=$CONF_DIR/storm
in_cg a python3 "$TCPX" storm --addr "$B4" --port 5300 --count 1500 --parallel 4 >"$storm" &
STORM=$!
reloads=0 rfail=0
while kill -0 $STORM 2>/dev/null; do
	cp "$cfg.$([ $((reloads % 2)) = 0 ] && echo b || echo a)" "$cfg"
	ctl reload >/dev/null || rfail=$((rfail + 1))
	reloads=$((reloads + 1))
done
wait $STORM
cp "$cfg.good" "$cfg" && ctl reload >/dev/null
echo "# storm: $(cat "$storm"); $reloads reloads, $rfail failed"
check "reload under traffic: the storm completed (1,500 connections, no error)" \
	jq -e '.done == 1500 and .errors == 0' "$storm"
check "... during $reloads reloads, none failed" test "$reloads" -ge 5 -a "$rfail" = 0
livezero() { test "$(dev_live 0 live)" = 0; }
check "... and every device slot was given back (live 0)" wait_for 5 livezero

# --- a non-root client
chmod 755 "$CONF_DIR" "$RUN"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups toectl --run-dir "$RUN" status 2>&1); rc=$?
check "non-root: the 0600 socket refuses the connection: $out" test "$rc" = 1 -a -n "$(grep -i "permission denied" <<<"$out")"
chmod 666 "$RUN/toed.sock"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups toectl --run-dir "$RUN" status 2>&1); rc=$?
check "non-root through an opened-up socket: SO_PEERCRED refuses it: $out" \
	test "$rc" = 1 -a -n "$(grep "must be run as root (you are uid 65534)" <<<"$out")"
check "the refusal is counted and logged" jq -e '.daemon.clients_refused == 1' < <(ctl -j stats)
chmod 600 "$RUN/toed.sock"

# --- SIGKILL: traffic keeps flowing, a restart adopts everything
client --addr "$B4" --port 5300 --send 100000 --hold "$(slow 6)" >"$HELD" &
HELDPID=$!
wait_for 5 nflows 1
before=$(ctl -j devices | jq -c '.[] | select(.device == "t3")')
flows_before=$(ctl -j flows port 5300 dev t3 | jq -c '[.[] | {lport, cookie}]')
stop_toed KILL
check "after SIGKILL the socket is stale" test -S "$RUN/toed.sock"
check_not "toectl says toed is not running" ctl status
out=$(client --addr "$B4" --port 5300 --send 50000)
check "with toed dead, new connections are still decided and served" \
	jq -e '.conns[0].sent == 50000' <<<"$out"
check "... and offloaded by the datapath" \
	test "$(dev_live 0 offloaded)" = "$(($(jq .offloaded <<<"$before") + 1))"
notify_rx "@opentoe-notify-$$" "$CONF_DIR/ready"
NOTIFY_SOCKET=@opentoe-notify-$$ start_toed "$cfg" || { fail "restart"; finish; }
after=$(ctl -j devices | jq -c '.[] | select(.device == "t3")')
check "restarted toed adopts the device counters (offloaded $(jq .offloaded <<<"$after"), live $(jq .live <<<"$after"))" \
	jq -e --argjson b "$before" '.offloaded == $b.offloaded + 1 and .live == 1 and .refused == $b.refused' <<<"$after"
check "the held connection's flow record is still there" \
	test "$(ctl -j flows port 5300 dev t3 | jq -c '[.[] | {lport, cookie}]')" = "$flows_before"
check "the restarted toed told systemd it is ready: READY=1 to NOTIFY_SOCKET (@NAME, abstract)" \
	wait_for 5 grep -qx READY=1 "$CONF_DIR/ready"
wait $HELDPID
check "the held connection completed: all its bytes" jq -e '.conns[0].sent == 100000' "$HELD"

# --- SIGTERM: toed goes, the datapath stays
stop_toed TERM
check "SIGTERM removes the control socket" test ! -e "$RUN/toed.sock"
check "the datapath is still attached" bpftool link show pinned "$PIN/link_sockops"
finish
