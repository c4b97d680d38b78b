#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Conntrack and the fast path agree after a loss (issue 46, item 5): a
# masqueraded flow runs on the fast path; toed is killed (its conntrack
# destroy events go unheard, as when its socket overflows or it
# restarts); the NAT rule is changed to SNAT to another of the router's
# addresses and conntrack flushed, so the stack makes the flow's entry
# again with the new translation.  The fast path, re-admitting the flow
# once its unwatched admission lapses, takes the translation from the
# conntrack entry in force (fwd_nat_moved, when a final one is there
# before the server resets the flow): from 2 s after the change no
# packet of the flow leaves the router with the old address (a capture
# on the server), where before the fix it went on with the old one for
# good.  Then toed, running again, frozen across a flush of 8,000 entries:
# the destroy events it lost are counted and every flow proved again.
# Last, NAT taken away: a masqueraded UDP flow on the fast path, its
# server paused and toed killed, so that the flow, its lease out, waits in
# the stack for a reply (READMIT); the masquerade removed and the flow's
# conntrack entry deleted, the stack makes it again untranslated: the
# entry drops its translation once (fwd_nat_moved +1, nat 0), where a flow
# that kept its NAT flag moved at every packet and never came back; the
# server resumed, it is proved again and carried untranslated.
# XDP on the router, or tc (test_fwd_nat_moved_tc.sh).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 8
need_cmd iptables conntrack tcpdump
fwd_router fwdnatmv
echo "rule offload dev fwd rport 5402 proto udp" >>"$work/fwd.conf"
NEW4=10.211.2.253
nsx r ip addr add $NEW4/24 dev r1 || { fail "second address"; finish; }
defer "nsx r iptables -t nat -F"
nsx r iptables -t nat -A POSTROUTING -o r1 -j MASQUERADE || { fail "masquerade"; finish; }
fwd_toed || { fail "toed starts"; cat "$work/toed.log"; finish; }
fwd_server s 5301 || { fail "server"; finish; }
st() { stat_of "$PIN" "$1"; }
# from ADDR SECONDS: the flow's segments the server receives from ADDR in SECONDS
from() {
	nsx s timeout "$2" tcpdump -i s1 -nn -q -l "tcp and src host $1 and dst port 5301" 2>/dev/null | grep -c .
}

nsx_bg c python3 "$XFER" client --addr $S4 --port 5301 --seconds 60 \
	--lport-file "$work/f.lport" --go-file "$work/f.go" >"$work/f.json"
CLIENT=$NSX_PID
wait_for 10 test -s "$work/f.lport" && fwd_go f || { fail "the masqueraded flow on the fast path"; finish; }
x0=$(st $FWD_STAT)
n=$(from $R4b 1)
check "the flow, masqueraded to $R4b, on the fast path ($FWD_NAME: $(($(st $FWD_STAT) - x0)) packets; the server saw $n from $R4b in 1 s)" \
	test "$(st $FWD_STAT)" -gt "$x0" -a "$n" -gt 0
m0=$(st $STAT_FWD_NAT_MOVED)
kill -KILL "$TOED"
wait "$TOED" 2>/dev/null
# the new rule, then the entries made again by the stack under it
nsx r iptables -t nat -F POSTROUTING
nsx r iptables -t nat -A POSTROUTING -o r1 -j SNAT --to-source $NEW4
nsx r conntrack -F >/dev/null 2>&1
sleep 2
n=$(from $R4b 2)
check "toed killed, SNAT to $NEW4, conntrack flushed: from 2 s on no packet of the flow leaves with the old address ($n in 2 s)" \
	test "$n" = 0
# the flow's entry now: gone (the server reset the flow when a packet of
# it came in by the new address, or by none), suspended (READMIT, 4), or
# on the fast path again with the new address; never on it with the old
ent=$(bpftool -j map dump pinned "$PIN/$MAP_FWD" |
	jq -c --argjson c "$(cat "$work/f.lport")" '[.[] | .formatted | select(.key.lport == $c or .key.rport == $c) | .value | [.state, .nat_tu[1].daddr[0]]]')
new_le=$(python3 -c "import socket,struct; print(struct.unpack('<I', socket.inet_aton('$NEW4'))[0])")
echo "the flow's $MAP_FWD entry [state, reply tuple's destination]: $ent; fwd_nat_moved $m0 -> $(st $STAT_FWD_NAT_MOVED)"
check "  its $MAP_FWD entry is gone, suspended, or carries the new address ($ent)" \
	bash -c "[ '$ent' = '[]' ] || jq -e '.[0][0] == 4 or .[0][1] == $new_le' <<<'$ent' >/dev/null"
kill "$CLIENT" 2>/dev/null
wait "$CLIENT" 2>/dev/null

# ---- a forced overflow of toed's destroy socket: toed frozen (SIGSTOP)
# while 8,000 conntrack entries (forged SYNs) are flushed; once it runs
# again it reads ENOBUFS, counts it, and sends every fast-path flow back
# through the stack (a generation bump: no ruleset change in between)
fwd_toed || { fail "toed starts again"; finish; }
gen() { bpftool -j map lookup pinned "$PIN/$MAP_FWD_GEN" key 0 0 0 0 | jq '.formatted.value.gen'; }
lost() { toectl --run-dir "$work/run" -j stats | jq '.daemon.fwd_ct_events_lost // empty'; }
wait_for 5 test -n "$(lost)"
g0=$(gen) l0=$(lost)
kill -STOP "$TOED"
nsx c python3 "$TOE_TOP/selftests/xdp/forge.py" flood c0 "$(nsx r ip -j link show r0 | jq -r '.[0].address')" \
	8000 10.211.1 $S4 5301 >/dev/null
made=$(nsx r conntrack -C 2>/dev/null)
nsx r conntrack -F >/dev/null 2>&1
kill -CONT "$TOED"
bumped() { test "$(lost)" -gt "${l0:-0}" -a "$(gen)" -gt "$g0"; }
wait_for 10 bumped
check "toed frozen across a flush of $made conntrack entries: its destroy events lost, counted (fwd_ct_events_lost ${l0:-?} -> $(lost)), every flow proved again (generation $g0 -> $(gen))" \
	bumped

# ---- NAT taken away under a suspended UDP flow (a FORWARD rule that uses
# conntrack, as a router's firewall does: without it, the netns's last NAT
# rule gone, conntrack tracks nothing and the flow stays in the stack)
UDPSEQ=$TOE_TOP/selftests/xdp/udpseq.py
defer "nsx r iptables -F FORWARD"
nsx r iptables -A FORWARD -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT || { fail "conntrack rule"; finish; }
nsx r iptables -t nat -F POSTROUTING
nsx r iptables -t nat -A POSTROUTING -o r1 -p udp --dport 5402 -j MASQUERADE || { fail "UDP masquerade"; finish; }
nsx_bg s python3 "$UDPSEQ" server --port 5402 >"$work/userver.out" 2>&1
USERVER=$NSX_PID
wait_for 5 grep -q ready "$work/userver.out" || { fail "UDP server"; finish; }
nsx_bg c python3 "$UDPSEQ" client --addr $S4 --port 5402 --rate 500 --stop "$work/ustop" --lport-file "$work/u.lport" >"$work/u.json"
UCLIENT=$NSX_PID
defer "touch $work/ustop; kill -CONT $USERVER"
# uent: flow u's entry as "state proto nat"; ufpk: the packets the fast path carried of it
uent() { flow_entry u 'select(.key.proto == 17) | "\(.value.state) \(.key.proto) \(.value.nat)"'; }
ufpk() { flow_entry u 'select(.key.proto == 17) | .value.dir_packets | add' | awk '{ n += $1 } END { print n + 0 }'; }
u_is() { [ "$(uent)" = "$1" ]; }
wait_for 5 test -s "$work/u.lport" || { fail "the UDP flow starts"; finish; }
check "a masqueraded UDP flow on the fast path with its translation (entry: $(uent))" wait_for "$(slow 3)" u_is "3 17 1"
m0=$(st $STAT_FWD_NAT_MOVED)
kill -STOP "$USERVER"
kill -KILL "$TOED"
wait "$TOED" 2>/dev/null
# its lease and its unwatched second out: back to the stack, which sees
# only the client's side now
wait_for "$(slow 3)" u_is "4 17 1" || fail "  the flow, its server paused and toed killed, suspended (entry: $(uent))"
nsx r iptables -t nat -F POSTROUTING
nsx r conntrack -D -p udp --orig-port-src "$(cat "$work/u.lport")" >/dev/null 2>&1
sleep 1
m1=$(st $STAT_FWD_NAT_MOVED)
check "the masquerade removed, the flow's conntrack entry deleted: its entry drops the translation once (fwd_nat_moved $m0 -> $m1, entry: $(uent))" \
	test $((m1 - m0)) = 1 -a "$(uent)" = "4 17 0"
kill -CONT "$USERVER"
check "  its server resumed: proved again, back on the fast path untranslated, toed still dead (entry: $(uent))" wait_for "$(slow 3)" u_is "3 17 0"
p0=$(ufpk)
sleep 0.5
touch "$work/ustop"
wait "$UCLIENT"
check "  the fast path carries it ($(($(ufpk) - p0)) packets in 0.5 s); the server heard it from $C4 ($(jq -c '[.sent, .server.received, .server.dup, .server.bad]' "$work/u.json"): none twice nor changed)" \
	bash -c "[ $(($(ufpk) - p0)) -gt 100 ] && jq -e '.server.received > 0 and .server.dup == 0 and .server.bad == 0' '$work/u.json' >/dev/null"
finish
