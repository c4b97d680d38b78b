#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# conntrack kept true under a NATed fast-path flow (issue 33).  The router
# masquerades, its FORWARD policy is DROP with INVALID dropped first, and
# nf_conntrack_tcp_be_liberal is 0.  With the established timeout at 3 s a
# fast-path flow runs over 5 s: its conntrack entry survives (the fast path
# refreshes it) and `conntrack -L` shows it ESTABLISHED; then a ruleset
# change sends it back through the stack, which takes it without an
# INVALID drop (toed made the entry window-liberal at admission) and it
# finishes byte-exact.  A DROP rule for a running NATed flow stops its
# bytes at the server within 100 ms; forged handshakes through the NAT
# get nothing through and nothing onto the fast path.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 13
need_cmd iptables conntrack
# Debian's python3-scapy is for Debian's python3 (as test_fwd_admission.sh)
SPY=$(for p in python3 /usr/bin/python3; do $p -c 'import scapy.all' 2>/dev/null && { echo $p; break; }; done)
[ -n "$SPY" ] || cannot_run "python3-scapy missing (make deps)"
FORGE="$SPY $TOE_TOP/selftests/xdp/forge.py"
fwd_router fwdnatct
defer "nsx r iptables -t nat -F; nsx r iptables -F FORWARD; nsx r iptables -P FORWARD ACCEPT"
nsx r sysctl -qw net.netfilter.nf_conntrack_tcp_be_liberal=0 net.netfilter.nf_conntrack_tcp_timeout_established=3 || { fail "sysctls"; finish; }
nsx r iptables -t nat -A POSTROUTING -o r1 -j MASQUERADE &&
	nsx r iptables -P FORWARD DROP &&
	nsx r iptables -A FORWARD -m conntrack --ctstate INVALID -j DROP &&
	nsx r iptables -A FORWARD -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT &&
	nsx r iptables -A FORWARD -i r0 -o r1 -p tcp -m conntrack --ctstate NEW -j ACCEPT || { fail "ruleset"; finish; }
nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$work/run" >"$work/toed.log" 2>&1
wait_for 10 test -S "$work/run/toed.sock" || { fail "toed starts"; cat "$work/toed.log"; finish; }
nsx_bg s python3 "$XFER" server --port 5201 --port 5301 >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
st() { stat_of "$PIN" "$1"; }
invalid_drops() { nsx r iptables -L FORWARD -v -x -n | awk '/INVALID/ { print $1; exit }'; }
# Each flow is followed by its client port (xfer.py's NAME.lport): an
# earlier flow's entry of the same server port may still be in toe_fwd.
# fwd_state NAME PORT -> the state of flow NAME's toe_fwd entry (NATed)
fwd_state() {
	local c
	c=$(cat "$work/$1.lport" 2>/dev/null) && [ -n "$c" ] || return 0
	bpftool -j map dump pinned "$PIN/$MAP_FWD" |
		jq -r --argjson p "$2" --argjson c "$c" '[.[] | .formatted.key as $k | select(.formatted.value.nat == 1) |
			select(($k.lport == $c and $k.rport == $p) or ($k.lport == $p and $k.rport == $c)) | .formatted.value.state] |
			select(length == 1) | .[0]'
}
# flow NAME PORT: a client of PORT, as long as the checks need it (60 s at
# most, SIGUSR1 ends it): a loaded machine slows the checks, it does not
# end the flow under them
flow() {
	nsx_bg c python3 "$XFER" client --addr $S4 --port "$2" --seconds 60 --lport-file "$work/$1.lport" >"$work/$1.json"
}

# ---- over 5 s through the NAT, the established timeout 3 s
flow long 5201
cpid=$NSX_PID
est() { test "$(fwd_state long 5201)" = 3; }
check "the NATed flow is admitted" wait_for 10 est
sleep 4.5
x0=$(st $FWD_STAT)
nsx r conntrack -L -p tcp --orig-port-dst 5201 2>/dev/null >"$work/ct5"
sleep 0.3
x1=$(st $FWD_STAT)
cat "$work/ct5"
check "5 s in (timeout 3 s): conntrack still has it, ESTABLISHED, translated" \
	grep -Eq "ESTABLISHED .*src=$S4 dst=$R4b sport=5201" "$work/ct5"
check "  with at most the established timeout left ($(awk '{ print $3; exit }' "$work/ct5") s)" \
	test "$(awk '{ print $3; exit }' "$work/ct5")" -le 3
check "  and $FWD_HOOK still forwards it ($((x1 - x0)) packets in 0.3 s)" test $((x1 - x0)) -gt 100
r0=$(st $STAT_XDP_FWD_READMIT) k0=$(ip_forwarded)
nsx r iptables -I FORWARD -p tcp --dport 9 -j ACCEPT # a change that still accepts it
# the stack takes it (the readmit counted, the kernel forwarding), then
# the flow ends
back() { test "$(st $STAT_XDP_FWD_READMIT)" -gt "$r0" -a "$(ip_forwarded)" -gt "$k0"; }
wait_for 10 back
sleep 0.3
kill -USR1 $cpid
wait $cpid
r1=$(st $STAT_XDP_FWD_READMIT) k1=$(ip_forwarded)
check "a ruleset change sent it back to the stack (readmit $r0 -> $r1, the kernel forwarded $((k1 - k0)))" \
	test "$r1" -gt "$r0" -a $((k1 - k0)) -gt 0
check "  which finished it byte-exact" intact long
check "  with no INVALID drop ($(invalid_drops)), be_liberal 0" test "$(invalid_drops)" = 0

# ---- a DROP rule for a running NATed flow
flow drop 5301
est5301() { test "$(fwd_state drop 5301)" = 3; }
check "a second NATed flow is admitted" wait_for 10 est5301
nsx_bg s $FORGE rx s1 0.01 60 >"$work/rx"
RXP=$NSX_PID
# the sampler sees the flow
rx_runs() { awk 'NR == 1 { b = $2 } END { exit !($2 - b > 1000000) }' "$work/rx"; }
wait_for 10 rx_runs
t0=$(date +%s.%N)
nsx r iptables -I FORWARD -p tcp --dport 5301 -j DROP
t1=$(date +%s.%N)
sleep 1.5
kill $RXP
last=$(awk -v t0="$t0" 'NR > 1 && $2 - p > 2000 && $1 >= t0 { l = $1 } { p = $2 } END { printf "%.4f", l ? l : t0 }' "$work/rx")
lat=$(awk -v l="$last" -v t1="$t1" 'BEGIN { printf "%d", (l - t1) * 1000 }')
check "DROP for it: the server's bytes stop within 100 ms of the command ($lat ms)" test "$lat" -lt 100
check "  the server received its data before (it ran)" \
	awk -v t0="$t0" '$1 < t0 && NR > 1 && $2 - p > 100000 { ok = 1 } { p = $2 } END { exit !ok }' "$work/rx"
kill $(ip netns pids "$(ns_name c)") 2>/dev/null

# ---- forged handshakes through the NAT (FORWARD drops port 5301 now)
R0MAC=$(nsx r ip -j link show r0 | jq -r '.[0].address')
# forged_in MAP: entries of MAP naming the forged flow (client port 40500),
# in their key or, for $MAP_FWD_NAT's aliases, in the key they name (a
# count of the whole map would move with the killed flow's alias, which
# toed deletes when conntrack ends it)
forged_in() {
	bpftool -j map dump pinned "$PIN/$1" | jq '[.[].formatted | select(.key.lport == 40500 or .key.rport == 40500 or
		(.value | objects | .lport == 40500 or .rport == 40500))] | length'
}
f0=$(st $STAT_XDP_FWD_FLOWS)
# (counted from when the counter listens until 0.5 s after the forgery)
nsx s $FORGE count s1 5301 "$(slow 60)" "$work/forged.sent" >"$work/forged" &
fpid=$!
wait_for 10 test -e "$work/forged.sent.ready"
nsx c $FORGE handshake c0 $R0MAC sakd $C4 40500 $S4 5301 20000
touch "$work/forged.sent"
wait $fpid
check "forged: client alone through the NAT (SYN, SYN-ACK in the server's name, ACK, 20 kB): no byte at the server ($(cat "$work/forged"))" \
	test "$(cat "$work/forged")" = 0
check "  nothing admitted ($f0 -> $(st $STAT_XDP_FWD_FLOWS)), nothing of it in $MAP_FWD ($(forged_in $MAP_FWD)) or $MAP_FWD_NAT ($(forged_in $MAP_FWD_NAT))" \
	test "$(st $STAT_XDP_FWD_FLOWS)" = "$f0" -a "$(forged_in $MAP_FWD)" = 0 -a "$(forged_in $MAP_FWD_NAT)" = 0

# ---- conntrack -D of a running NATed flow: toed deletes its $MAP_FWD
# entry and the reply tuple's alias naming it in $MAP_FWD_NAT (ct.c)
flow ctd 5201
est_ctd() { test "$(fwd_state ctd 5201)" = 3; }
wait_for 10 est_ctd
cp=$(cat "$work/ctd.lport")
key=$(bpftool -j map dump pinned "$PIN/$MAP_FWD" | jq -c --argjson c "${cp:-0}" '[.[] | .formatted.key as $k |
	select(($k.lport == 5201 and $k.rport == $c) or ($k.rport == 5201 and $k.lport == $c)) |
	select(.formatted.value.state == 3)] | if length == 1 then .[0].formatted.key else null end')
aliases() { bpftool -j map dump pinned "$PIN/$MAP_FWD_NAT" | jq --argjson k "$key" '[.[] | select(.formatted.value == $k)] | length'; }
a0=$(aliases)
# joined NAME PORT: "1" if flow NAME's entry joined mid-stream (issue 48:
# conntrack's new entry, made from the flow's next packets, may bring the
# flow back before the check: a new entry then, with joined set)
joined() {
	bpftool -j map dump pinned "$PIN/$MAP_FWD" |
		jq -r --argjson p "$2" --argjson c "$(cat "$work/$1.lport")" '[.[] | .formatted.key as $k |
			select(($k.lport == $c and $k.rport == $p) or ($k.lport == $p and $k.rport == $c)) | .formatted.value.joined] | .[0] // empty'
}
nsx r conntrack -D -p tcp --orig-port-dst 5201 >/dev/null 2>&1
unadmitted() { test -z "$(fwd_state ctd 5201)" -o "$(joined ctd 5201)" = 1; }
wait_for 2 unadmitted
sleep 0.2
st1=$(fwd_state ctd 5201) j1=$(joined ctd 5201) a1=$(aliases)
check "conntrack -D of a NATed flow: its $MAP_FWD entry and its alias in $MAP_FWD_NAT gone ($a0 alias before, $a1 after; entry now '$st1', joined '$j1': a new one only if it joined mid-stream)" \
	test "$a0" = 1 -a \( -z "$st1" -a "$a1" = 0 -o "$j1" = 1 \)
kill $(ip netns pids "$(ns_name c)") 2>/dev/null
finish
