#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A flow conntrack tracks takes the fast path only once toed has made its
# conntrack entry true (ESTABLISHED, window-liberal): admitted, it waits
# (toe_fwd state ct_wait) and the stack forwards it; toed's word in
# toe_fwd_ctok hands it to the fast path at its next packet.  Before, the
# fast path took it at once and toed's update raced the flow: a short
# NATed flow could end first, its FIN went through the stack beyond the
# window conntrack last saw, INVALID, out untranslated, and the server
# reset it (seen under load: curl reset at 7,952,032 of 8,000,000 bytes).
# Here toed is made late on purpose (SIGSTOP), with
# nf_conntrack_tcp_be_liberal 0:
#  - masquerade, toed stopped: an 8 MB curl arrives whole, the stack
#    forwarded it all (fwd_ct_wait counts: over 100 packets, tc: GSO skbs),
#    the fast path none of it;
#  - IPv6 with an INVALID drop rule (conntrack tracks IPv6 too): the same,
#    no INVALID drop;
#  - a 60 s flow admitted while toed is stopped: in the stack (ct_wait)
#    until toed runs again, then on the fast path within 1 s
#    (fwd_ct_ready), intact;
#  - the admission's event gone before a new toed read it (another reader
#    took it off the ring): toed's start sweeps toe_fwd for flows still
#    waiting (fwd_ct_swept) and the flow takes the fast path;
#  - toed's word pushed out of toe_fwd_ctok (an LRU of 16,384) by 32,768
#    others from each CPU before the flow's next packet: the stack forwards the flow
#    until toed's sweep of flows still waiting (every 5 s while
#    fwd_ct_wait moves) writes it again, within 7 s.
# TOE_FWD_HOOK=tc: test_fwd_ct_wait_tc.sh.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 19
need_cmd iptables ip6tables conntrack curl
fwd_router fwdctw
defer "nsx r iptables -t nat -F; nsx r ip6tables -F FORWARD; true"
nsx r sysctl -qw net.netfilter.nf_conntrack_tcp_be_liberal=0 || { fail "sysctl"; finish; }
nsx r iptables -t nat -A POSTROUTING -o r1 -j MASQUERADE &&
	nsx r ip6tables -A FORWARD -m conntrack --ctstate INVALID -j DROP || { fail "ruleset"; finish; }
toed_start() {
	fwd_toed --log-level debug
}
toed_start || { fail "toed starts"; cat "$work/toed.log"; finish; }
defer 'kill -CONT $TOED 2>/dev/null; true'
ctl() { toectl --run-dir "$work/run" "$@"; }
head -c 8000000 /dev/urandom >"$work/file"
want=$(sha256sum <"$work/file" | cut -d' ' -f1)
nsx_bg s python3 -m http.server 5301 --bind :: --directory "$work" >/dev/null 2>&1
fwd_server s 5201 || { fail "server"; finish; }
wait_for 5 nsx s bash -c "exec 3<>/dev/tcp/127.0.0.1/5301" || { fail "http server"; finish; }
st() { stat_of "$PIN" "$1"; }
v6_invalid() { nsx r ip6tables -L FORWARD -v -x -n | awk '/INVALID/ { print $1; exit }'; }

# ---- curl (8 MB) with toed stopped: NAT (IPv4), then IPv6 with an INVALID drop
fetch() { # NAME ADDR
	local w0 x0 k0 got
	w0=$(st "$STAT_FWD_CT_WAIT") x0=$(st $FWD_STAT) k0=$(ip_forwarded)
	nsx_t 60 c curl -sS -g -o "$work/$1.got" "http://$2:5301/file" 2>"$work/$1.err"
	got=$(sha256sum <"$work/$1.got" | cut -d' ' -f1)
	echo "$1: $(stat -c %s "$work/$1.got") bytes $(cat "$work/$1.err")"
	check "$1, toed stopped: 8 MB fetched with curl through the router, intact" test "$got" = "$want"
	check "  the stack forwarded it ($(($(ip_forwarded) - k0)) packets), $FWD_HOOK none ($(($(st $FWD_STAT) - x0))), fwd_ct_wait counting ($(($(st "$STAT_FWD_CT_WAIT") - w0)))" \
		test $(($(ip_forwarded) - k0)) -gt 100 -a "$(st $FWD_STAT)" = "$x0" -a $(($(st "$STAT_FWD_CT_WAIT") - w0)) -gt 100
}
kill -STOP $TOED
fetch masq $S4
i0=$(v6_invalid)
fetch v6 "[$S6]"
check "  no IPv6 packet of it INVALID ($i0 -> $(v6_invalid) dropped)" test "$(v6_invalid)" = "$i0"
kill -CONT $TOED

# ---- a flow admitted while toed is stopped: the fast path's once toed runs
r0=$(st "$STAT_FWD_CT_READY")
kill -STOP $TOED
nsx_bg c python3 "$XFER" client --addr $S4 --port 5201 --seconds 60 --lport-file "$work/long.lport" >"$work/long.json"
cpid=$NSX_PID
waiting() { test "$(fwd_states long)" = 5; }
check "a flow admitted while toed is stopped waits in the stack ($MAP_FWD state 5, ct_wait)" wait_for 10 waiting
sleep 0.5
x0=$(st $FWD_STAT) k0=$(ip_forwarded)
sleep 0.5
check "  the stack forwards it meanwhile ($(($(ip_forwarded) - k0)) packets), $FWD_HOOK none ($(($(st $FWD_STAT) - x0)))" \
	test $(($(ip_forwarded) - k0)) -gt 100 -a "$(st $FWD_STAT)" = "$x0"
t0=$(date +%s%N)
kill -CONT $TOED
fast() { test "$(fwd_states long)" = 3; }
wait_for 5 fast
ms=$((($(date +%s%N) - t0) / 1000000))
check "  toed runs again: the flow is on the fast path within 1 s ($ms ms; state $(fwd_states long))" test "$ms" -le 1000 -a "$(fwd_states long)" = 3
x0=$(st $FWD_STAT)
sleep 0.3
check "  $FWD_HOOK forwards it ($(($(st $FWD_STAT) - x0)) packets in 0.3 s), fwd_ct_ready counted it ($r0 -> $(st "$STAT_FWD_CT_READY"))" \
	test $(($(st $FWD_STAT) - x0)) -gt 100 -a "$(st "$STAT_FWD_CT_READY")" -gt "$r0"
check "  conntrack ESTABLISHED, made liberal by toed" bash -c "nsenter --net=/run/netns/$(ns_name r) conntrack -L -p tcp --orig-port-dst 5201 2>/dev/null | grep -q ESTABLISHED"
kill -USR1 $cpid
wait $cpid
check "  and the transfer completes intact" intact long

# ---- the admission's event gone before toed read it: toed's start sweeps
kill $TOED
wait $TOED 2>/dev/null
# another reader of the ring takes the admission off it
"$TOE_BUILD/selftests/toe_events" "$PIN" >"$work/ring.json" 2>&1 &
rpid=$!
defer "kill $rpid 2>/dev/null; true"
nsx_bg c python3 "$XFER" client --addr $S4 --port 5201 --seconds 60 --lport-file "$work/lost.lport" >"$work/lost.json"
cpid=$NSX_PID
lost_wait() { test "$(fwd_states lost)" = 5 && grep -q fwd_admitted "$work/ring.json"; }
check "no toed: the flow is admitted to wait, its fwd_admitted taken off the ring by another reader" wait_for 10 lost_wait
kill $rpid
wait $rpid 2>/dev/null
toed_start || fail "toed starts again"
lost_fast() { test "$(fwd_states lost)" = 3; }
wait_for 5 lost_fast
sw=$(ctl -j stats | jq .daemon.fwd_ct_swept) ls=$(fwd_states lost)
check "  a new toed sweeps it: on the fast path (state $ls), fwd_ct_swept $sw" test "$ls" = 3 -a "$sw" -ge 1
kill -USR1 $cpid
wait $cpid
check "  and the transfer completes intact" intact lost

# ---- toed's word evicted before the flow's next packet took it
nsx_bg c python3 "$XFER" client --addr $S4 --port 5201 --seconds 60 --lport-file "$work/evict.lport" \
	--go-file "$work/evict.go" >"$work/evict.json"
cpid=$NSX_PID
has_word() {
	local c
	c=$(cat "$work/evict.lport" 2>/dev/null) && [ -n "$c" ] || return 1
	bpftool -j map dump pinned "$PIN/$MAP_FWD_CTOK" |
		jq -e --argjson c "$c" '[.[] | .formatted.key | select(.lport == $c or .rport == $c)] | length > 0' >/dev/null
}
check "an idle flow, admitted: toed's word for it in $MAP_FWD_CTOK" wait_for 10 has_word
# toed held (SIGSTOP) so that its sweep, which would soon write the word
# again, waits until the stack has been seen carrying the flow
sw0=$(ctl -j stats | jq .daemon.fwd_ct_swept)
kill -STOP $TOED
# 32,768 made-up keys (family 255: no flow's) through the LRU of 16,384,
# from each CPU: a new entry waits in its writer's CPU's pending list,
# which only that CPU's next insert past its free nodes flushes (kernel
# bpf_lru_list.c), so toed's word, written on any CPU, is evicted only
# when every CPU has inserted
ncpu=$(nproc)
for ((cpu = 0; cpu < ncpu; cpu++)); do
	python3 - "$PIN/$MAP_FWD_CTOK" "$cpu" >"$work/ctok.batch" <<'PY'
import sys
base = int(sys.argv[2]) << 16
for i in range(base, base + 32768):
    key = i.to_bytes(4, "little") + bytes(32) + bytes([0xff]) + bytes(11)
    print("map update pinned %s key hex %s value hex 01 00 00 00"
          % (sys.argv[1], " ".join("%02x" % b for b in key)))
PY
	taskset -c "$cpu" bpftool batch file "$work/ctok.batch" >/dev/null ||
		fail "bpftool batch on CPU $cpu: 32,768 words"
done
no_word() { ! has_word; }
check "  32,768 other words from each of the $ncpu CPUs pushed it out of the LRU" no_word
w0=$(st "$STAT_FWD_CT_WAIT")
touch "$work/evict.go"
sleep 1
check "  the flow sends: the stack forwards it, still waiting (state $(fwd_states evict), fwd_ct_wait $w0 -> $(st "$STAT_FWD_CT_WAIT"))" \
	test "$(fwd_states evict)" = 5 -a "$(st "$STAT_FWD_CT_WAIT")" -gt "$w0"
t0=$(date +%s%N)
kill -CONT $TOED
evict_fast() { test "$(fwd_states evict)" = 3; }
wait_for 10 evict_fast
ms=$((($(date +%s%N) - t0) / 1000000)) sw=$(ctl -j stats | jq .daemon.fwd_ct_swept)
check "  toed runs: its sweep writes the word again, on the fast path within 7 s ($ms ms; state $(fwd_states evict)), fwd_ct_swept $sw0 -> $sw" \
	test "$(fwd_states evict)" = 3 -a "$ms" -le 7000 -a "$sw" = $((sw0 + 1))
kill -USR1 $cpid
wait $cpid
check "  and the transfer completes intact" intact evict
finish
