#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Established flows join the fast path mid-stream (issue 48, item 3): two
# transfers (IPv4 and IPv6, port 5201, which policy names) and one policy
# does not name (port 5999) run through the router, conntrack tracking
# them, before opentoe is loaded there.  Then toe-loader and toed: the
# named flows are admitted from what the stack forwards of them each way
# (fwd_joined), on the fast path within a second with no handshake seen
# (toe_fwd's joined); the unnamed one never is, nor one whose server's
# packets a FORWARD rule drops (only its client's way is proved); an idle
# one whose server speaks first after the load joins from that packet and
# the client's ACK alone.  conntrack -D of a
# joined flow ends its fast path (the fast path's own refresh finds the
# entry gone: toed hears no destroy event here, the tests' knob) and
# conntrack's new entry, made mid-stream, brings it back.  A DROP rule for a joined flow stops it
# (nothing through the fast path), and once the rule goes it joins again;
# with the server's way dropped and the flow's entry deleted, its
# client's packets alone never make it join.
# Every transfer completes byte-exact.  XDP on the router, or tc
# (test_fwd_join_tc.sh).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 19
need_cmd iptables ip6tables conntrack
need_built toectl
router_test fwdjoin || exit 1
endpoints_for_hook || exit 1
fwd_conf "$work/fwd.conf" || exit 1
defer "nsx r iptables -F FORWARD; nsx r ip6tables -F FORWARD"
nsx r iptables -A FORWARD -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT &&
	nsx r ip6tables -A FORWARD -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT || { fail "conntrack rules"; finish; }
# strict windows: toed makes a joined flow's entry window-liberal (ct.c)
nsx r sysctl -qw net.netfilter.nf_conntrack_tcp_be_liberal=0
nsx_bg s python3 "$XFER" server --port 5201 --port 5999 --port 5998 >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
st() { stat_of "$PIN" "$1"; }
# entry NAME: the toe_fwd entry of flow NAME (its client's port) as
# "state joined", or nothing
entry() { flow_entry "$1" '"\(.value.state) \(.value.joined)"'; }
on_fast() { test "$(entry "$1")" = "3 1"; }
start() { # NAME ADDR PORT: a 60 s transfer, stopped by SIGUSR1
	nsx_bg c python3 "$XFER" client --addr "$2" --port "$3" --seconds 60 --lport-file "$work/$1.lport" >"$work/$1.json"
	eval "PID_$1=\$NSX_PID"
}
start a $S4 5201
start b $S6 5201
start n $S4 5999
# e: a flow to a port no rule names, named instead by its client's port
# (a rule on lport, added below once the port is known)
start e $S4 5998
# d: a trickle to 5301 (policy names it) whose server-to-client packets a
# FORWARD rule drops from before the load: the stack forwards only its
# client's packets, so it must never join
FLOW=$TOE_TOP/selftests/xdp/fwdflow.py
nsx_bg s python3 "$FLOW" server --port 5301 >"$work/trickle.out" 2>&1
wait_for 5 grep -q ready "$work/trickle.out" || { fail "trickle server"; finish; }
nsx_bg c timeout 60 python3 "$FLOW" trickle --addr $S4 --port 5301 --stop "$work/stop" >"$work/d.json"
wait_for "$(slow 5)" test -s "$work/a.lport" -a -s "$work/b.lport" -a -s "$work/n.lport" -a -s "$work/e.lport" -a -s "$work/d.json" || { fail "the transfers start"; finish; }
jq -r .lport "$work/d.json" >"$work/d.lport"
# f and g: connections idle at the load whose first packet after it is
# their server's: one message, then the client's ACK, nothing more; f to
# 5202 (a rule names that server port), g to 5203 (a rule names its
# client's port).  Policy must decide each from the server's packet (its
# key seen from the client, the ports the other way round); decided
# otherwise, the record waits a second for a packet to decide it again,
# and an idle flow never sends one.
cat >"$work/speak.py" <<'PY'
import os, socket, sys, time
role, a = sys.argv[1], sys.argv[2:]
def wait(f):
    while not os.path.exists(f):
        time.sleep(0.01)
if role == "server":
    l = socket.socket()
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(("0.0.0.0", int(a[2]))); l.listen(1)
    print("ready", flush=True)
    c, _ = l.accept()
    wait(a[0]); c.sendall(b"s" * 100)
    wait(a[1]); c.close()
else:
    s = socket.create_connection((a[0], int(a[3])), timeout=5)
    open(a[1] + ".tmp", "w").write("%d\n" % s.getsockname()[1]); os.rename(a[1] + ".tmp", a[1])
    s.settimeout(60); got = 0
    while True:
        b = s.recv(4096)
        if not b:
            break
        got += len(b)
        open(a[2], "w").write("%d\n" % got)
PY
for x in "f 5202" "g 5203"; do
	set -- $x
	nsx_bg s python3 "$work/speak.py" server "$work/go" "$work/stop" $2 >"$work/$1.out" 2>&1
	wait_for 5 grep -q ready "$work/$1.out" || { fail "the speaking server $2"; finish; }
	nsx_bg c timeout 90 python3 "$work/speak.py" client $S4 "$work/$1.lport" "$work/$1.got" $2
	wait_for 5 test -s "$work/$1.lport" || { fail "the idle flow to $2 connects"; finish; }
done
sleep 0.5
nsx r iptables -I FORWARD -p tcp --sport 5301 -j DROP

# ---- opentoe loaded under running flows
echo "rule offload dev fwd lport $(cat "$work/e.lport")" >>"$work/fwd.conf"
echo "rule offload dev fwd rport 5202" >>"$work/fwd.conf"
echo "rule offload dev fwd lport $(cat "$work/g.lport")" >>"$work/fwd.conf"
dp_load r --dev r0 --dev r1 && fill_neigh "$PIN" || { fail "load, neighbours"; finish; }
# toed deaf to conntrack's destroy events (the tests' knob): what ends a
# fast path whose conntrack entry went is the fast path's own refresh, as
# for every entry made before toed listened (conntrack sends those no event)
nsx_bg r env TOE_TOED_NO_CT_EVENTS=1 toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$work/run" >"$work/toed.log" 2>&1
wait_for 10 test -S "$work/run/toed.sock" || { fail "toed starts"; cat "$work/toed.log"; finish; }
check "IPv4 flow running before the load: joined, on the fast path within 3 s (entry: $(entry a))" wait_for "$(slow 3)" on_fast a
check "IPv6 flow running before the load: joined too (entry: $(entry b))" wait_for "$(slow 3)" on_fast b
x0=$(st $FWD_STAT)
sleep 0.5
check "  $FWD_NAME forwards them ($(($(st $FWD_STAT) - x0)) packets in 0.5 s), fwd_joined $(st $STAT_FWD_JOINED)" \
	test "$(st $FWD_STAT)" -gt $((x0 + 100)) -a "$(st $STAT_FWD_JOINED)" -ge 2
check "the flow policy does not name (port 5999) never joins (entry: '$(entry n)')" test -z "$(entry n)"
check "the flow a rule names by its client's port (lport $(cat "$work/e.lport"), server port 5998) joins too (entry: $(entry e))" \
	wait_for "$(slow 3)" on_fast e
j0=$(st $STAT_FWD_JOINED)
touch "$work/go"
# (admitted, it waits in CT_WAIT (5) for toed's window-liberal entry and
# its next packet, which an idle flow does not send)
spoke() { [ "$(entry $1)" = "5 1" ] && [ "$(cat "$work/$1.got" 2>/dev/null)" = 100 ]; }
wait_for "$(slow 2)" spoke f
wait_for "$(slow 2)" spoke g
for x in "f named by its server's port 5202" "g named by its client's port $(cat "$work/g.lport")"; do
	set -- $x
	check "an idle flow whose first packet after the load is its server's (one message, the client's ACK), ${x#? }: admitted from those two (entry: '$(entry $1)', the client got $(cat "$work/$1.got" 2>/dev/null) of 100 bytes)" \
		test "$(entry $1)" = "5 1" -a "$(cat "$work/$1.got" 2>/dev/null)" = 100
done
check "  fwd_joined counted them: $j0 -> $(st $STAT_FWD_JOINED)" test "$(st $STAT_FWD_JOINED)" = $((j0 + 2))
pa=$(cat "$work/a.lport")
check "toectl flows -j says the IPv4 flow joined mid-stream, and the text a line under its row" \
	bash -c "toectl --run-dir '$work/run' -j flows | jq -e '.[] | select(.lport == $pa) | .joined == true' >/dev/null &&
		toectl --run-dir '$work/run' flows | grep -A2 ':$pa ' | grep -q 'joined mid-stream'"

# ---- conntrack's entry deleted and made again mid-stream
j0=$(st $STAT_FWD_JOINED) t0=$(date +%s%N)
nsx r conntrack -D -f ipv4 -p tcp --dport 5201 >/dev/null 2>&1
rejoined() { [ "$(st $STAT_FWD_JOINED)" -gt "$j0" ] && on_fast a; }
wait_for "$(slow 3)" rejoined
rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
# (the time it took, seen by 100 ms polls of bpftool: a figure, not a check)
check "conntrack -D of the IPv4 flow: its new conntrack entry brings it back (fwd_joined $j0 -> $(st $STAT_FWD_JOINED), entry: $(entry a)), in $ms ms" \
	test $rc = 0

# ---- a DROP rule for the joined flow: nothing on the fast path, then back
# fpk NAME: the packets the fast path forwarded of flow NAME (its entry's)
fpk() {
	bpftool -j map dump pinned "$PIN/$MAP_FWD" 2>/dev/null |
		jq --argjson c "$(cat "$work/$1.lport")" '[.[] | .formatted | select(.key.lport == $c or .key.rport == $c) | .value.dir_packets | add] | add // 0'
}
pa=$(cat "$work/a.lport")
nsx r iptables -I FORWARD -p tcp --sport "$pa" --dport 5201 -j DROP
sleep 0.3
p0=$(fpk a) j0=$(st $STAT_FWD_JOINED)
sleep 0.5
p1=$(fpk a)
check "a DROP rule for the joined IPv4 flow: $FWD_NAME forwards none of it ($((p1 - p0)) packets in 0.5 s; entry: $(entry a)), no join under it (fwd_joined $j0 -> $(st $STAT_FWD_JOINED))" \
	test "$p1" = "$p0" -a "$(entry a)" != "3 1" -a "$(st $STAT_FWD_JOINED)" = "$j0"
nsx r iptables -D FORWARD -p tcp --sport "$pa" --dport 5201 -j DROP
check "  the rule removed: the flow is back on the fast path (entry: $(entry a))" wait_for "$(slow 5)" on_fast a

# ---- the server's way dropped, the flow's entry gone (as an eviction
# would): the client's data still goes through the stack, but one way
# proves nothing, so it must not join
fkey() { # NAME: flow NAME's toe_fwd key, as bpftool takes it
	bpftool -j map dump pinned "$PIN/$MAP_FWD" 2>/dev/null |
		jq -r --argjson c "$(cat "$work/$1.lport")" '.[] | select(.formatted.key.lport == $c or .formatted.key.rport == $c) | .key | join(" ")'
}
nsx r iptables -I FORWARD -p tcp --sport 5201 --dport "$pa" -j DROP
j0=$(st $STAT_FWD_JOINED) k0=$(ip_forwarded)
bpftool map delete pinned "$PIN/$MAP_FWD" key $(fkey a)
sleep 0.5
check "the server's way dropped and the flow's entry deleted: the client's packets through the stack ($(($(ip_forwarded) - k0))) do not make it join (entry: '$(entry a)', fwd_joined $j0 -> $(st $STAT_FWD_JOINED))" \
	test -z "$(entry a)" -a "$(st $STAT_FWD_JOINED)" = "$j0" -a $(($(ip_forwarded) - k0)) -ge 2
nsx r iptables -D FORWARD -p tcp --sport 5201 --dport "$pa" -j DROP
check "  the rule removed: it joins again (entry: $(entry a))" wait_for "$(slow 5)" on_fast a
# (checked last: its client, its ACKs dropped, retransmits ever more
# rarely, and each of those is one more chance to be taken one way)
check "the flow FORWARD drops one way (server to client) never joins in all this time: only one way proved (entry: '$(entry d)', fwd_joined $(st $STAT_FWD_JOINED))" test -z "$(entry d)"
touch "$work/stop"
kill -USR1 "$PID_a" "$PID_b" "$PID_n" "$PID_e"
wait "$PID_a" "$PID_b" "$PID_n" "$PID_e"
check "the joined IPv4 transfer completes byte-exact" intact a
check "the joined IPv6 transfer completes byte-exact" intact b
check "the unnamed transfer completes byte-exact, all through the stack" intact n
check "the transfer named by its client's port completes byte-exact" intact e
finish
