#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toe-loader load --hook tc: the accounting program on tc ingress (a tcx
# link) instead of XDP.  Real TCP between two namespaces: an offloaded
# flow's packets are counted per segment (a GRO packet counts gso_segs),
# its bytes in full; a host flow writes no map; the offload features of
# the interface and of its veth peer stay as they were (native XDP turns
# TSO off on the peer); malformed packets go on untouched, counted per
# reason; iptables still stops a host flow; an interface is
# XDP or tc, never both; unload leaves no tcx link behind.  Without tcx
# (before Linux 6.6; TOE_LOADER_NO_TCX=1 on a newer one) the same checks
# hold for the classic clsact filter toe-loader falls back to.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 51
need_cmd bpftool jq python3 nsenter ethtool iptables
need_built toed
dp_start tch
TCM=$(tc_mode) # tcx, or clsact on a kernel without tcx
two_hosts 213 4 || exit 1
A4=10.213.0.1 B4=10.213.0.2
nsx b ethtool -K vb gro on >/dev/null	# so the test sees GRO packets either way
feat() { nsx "$1" ethtool -k "$2" | grep -v '\[fixed\]' | sort; }
va0=$(feat a va) vb0=$(feat b vb)

defer "nsx b toe-loader unload --pin-dir $PIN >/dev/null 2>&1; rm -rf $PIN"
defer "rm -rf $PIN-2"
out=$(nsx b toe-loader load --dev vb --hook tc --cgroup "$CG" --pin-dir "$PIN") || { fail "load --hook tc"; finish; }
check "load --hook tc says where: '$out'" grep -q 'tc ingress on vb' <<<"$out"
st=$(nsx b toe-loader status -j --pin-dir "$PIN")
check "status: toe_tc, sched_cls, attached to vb, mode $TCM" \
	jq -e --arg m "$TCM" '[.programs[] | select(.name == "toe_tc" and .type == "sched_cls" and .attach == "vb" and .xdp_mode == $m)] | length == 1' <<<"$st"
check "status: no XDP program" jq -e '[.programs[] | select(.type == "xdp")] | length == 0' <<<"$st"
tcid=$(jq '.programs[] | select(.name == "toe_tc") | .id' <<<"$st")
check "the kernel runs it once on vb's tc ingress ($TCM)" test "$(tc_runs b vb ingress "$tcid")" = 1
check "vb's offload features unchanged" test "$(feat b vb)" = "$vb0"
check "the peer va keeps its features too (TSO on)" test "$(feat a va)" = "$va0"
check "  TSO on va" grep -q '^tcp-segmentation-offload: on' <<<"$(feat a va)"

# the server is in b: the rule names b's namespace
printf 'device c1 type software nconn 100\nrule offload dev c1 lport 7001 netns %s\ndefault host\n' "$(ns_name b)" >"$work/c.conf"
chmod 600 "$work/c.conf"
toed --apply "$work/c.conf" --pin-dir "$PIN" >/dev/null || { fail "apply"; finish; }

# The server in b, in the cgroup: sock_ops decides its side of each flow.
(echo $BASHPID >"$CG/cgroup.procs" && exec nsenter --net=/run/netns/$(ns_name b) python3 "$XFER" server --port 7001 --port 7002) >"$work/server.out" 2>&1 &
defer "kill $! 2>/dev/null"
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
# a transfer with a time-out: a wrong datapath fails it, does not hang the test
xfer() {
	nsx_t 90 a python3 "$XFER" client --addr $B4 "$@" >"$work/$NAME.json"
	[ $? != 124 ] || { fail "transfer $NAME ($*) timed out after 90 s"; return 1; }
}

N=40000000
h0=$(stat_of "$PIN" $STAT_XDP_FLOW_HIT)
NAME=off xfer --port 7001 --bytes $N
h1=$(stat_of "$PIN" $STAT_XDP_FLOW_HIT)
echo "offloaded flow: $N bytes; $MAP_STATS flow hits +$((h1 - h0))"
check "offloaded flow: $N bytes intact" intact off
# Segments, not GRO packets: at least one per 1500 bytes of data.
check "  counted in segments: flow hits +$((h1 - h0)) >= $((N / 1500))" test $((h1 - h0)) -ge $((N / 1500))

# The per-flow counters live as long as the flow: read them while it runs
# (each flow runs until its record is read, SIGUSR1, 60 s at most, and is
# followed by its client port: a loaded machine slows the reads, it does
# not end the flow under them).
flow() { # NAME PORT: a client of PORT in a, its port in $work/NAME.lport
	nsx_bg a python3 "$XFER" client --addr $B4 --port "$2" --seconds 60 --lport-file "$work/$1.lport" >"$work/$1.json"
}
# record NAME PORT FIELDS: the server's record of flow NAME, FIELDS of it
record() {
	local c
	c=$(cat "$work/$1.lport" 2>/dev/null) && [ -n "$c" ] || return 0
	bpftool -j map dump pinned "$PIN/$MAP_FLOWS" |
		jq -r --argjson p "$2" --argjson c "$c" '[.[] | select(.formatted.key.lport == $p and .formatted.key.rport == $c)] |
			select(length == 1) | .[0] | .formatted.value | '"$3"
}
flow live 7001
cpid=$NSX_PID
sample() { record live 7001 '"\(.xdp_packets) \(.xdp_bytes)"'; }
counting() { set -- $(sample); [ "${1:-0}" -gt 0 ]; }
wait_for 10 counting
set -- $(sample) ; p1=${1:-0} b1=${2:-0}
sleep 0.5
set -- $(sample) ; p2=${1:-0} b2=${2:-0}
kill -USR1 $cpid
wait $cpid
lp=$(jq .lport "$work/live.json")
echo "while running: xdp_packets $p1 packets $b1 bytes, then $p2 packets $b2 bytes (client port $lp)"
check "live flow: counted while it runs" test -n "$lp" -a "$p1" -gt 0
check "  its record's counters grow (packets $p1 -> $p2, bytes $b1 -> $b2)" test "$p2" -gt "$p1" -a "$b2" -gt "$b1"
# A GRO packet counted as one would average tens of KB a packet.
check "  counted per segment: $((b2 / (p2 > 0 ? p2 : 1))) bytes a packet on average, <= 1600" \
	test "$p2" -gt 0 -a $((b2 / (p2 > 0 ? p2 : 1))) -le 1600
check "  and arrives intact" intact live

h0=$(stat_of "$PIN" $STAT_XDP_FLOW_HIT)
flow host 7002
cpid=$NSX_PID
# (while it runs: its record goes at close; the flow has moved data by then)
hrec() { record host 7002 '"\(.decision) \(.xdp_packets) \(.xdp_bytes)"'; }
has_hrec() { test -n "$(hrec)"; }
wait_for 10 has_hrec
sleep 0.5
host=$(hrec)
kill -USR1 $cpid
wait $cpid
check "host flow (port 7002): intact" intact host
check "  its record (decision host) counted nothing: '$host'" test "$host" = "0 0 0"
check "  and no flow hit counted" test "$(stat_of "$PIN" $STAT_XDP_FLOW_HIT)" = "$h0"

# Malformed packets through toe_tc (BPF_PROG_TEST_RUN): TCX_NEXT, untouched,
# counted per reason, as XDP does.
for m in "badihl $PARSE_BAD_IHL" "baddoff $PARSE_BAD_DOFF" "trunc $PARSE_TRUNC_L4"; do
	set -- $m
	$PKT $1 "$work/$1.bin"
	b=$(stat_of "$PIN" $2)
	rv=$(bpftool prog run id "$tcid" data_in "$work/$1.bin" data_out "$work/$1.out" repeat 3 2>&1 |
		sed -n 's/^Return value: \([0-9]*\).*/\1/p')
	check "malformed ($1) through toe_tc: TCX_NEXT ($rv), counted under reason $2" \
		test "$rv" = 4294967295 -a "$(stat_of "$PIN" $2)" = $((b + 3))
	check "  and passed on unchanged" cmp -s "$work/$1.bin" "$work/$1.out"
done

# The stack still decides: an iptables DROP stops a host flow with tc on.
nsx b iptables -I INPUT -p tcp --dport 7002 -j DROP
defer "nsx b iptables -D INPUT -p tcp --dport 7002 -j DROP 2>/dev/null"
check_not "iptables DROP in INPUT stops the host flow" nsx a timeout 5 python3 "$XFER" client --addr $B4 --port 7002 --bytes 1000 --connect-timeout 2
nsx b iptables -D INPUT -p tcp --dport 7002 -j DROP

# steer cpu on a tc interface: refused, policy in force kept; steer
# forward: tc has a forward path (fwd_path, bpf/forward.h), accepted.
serial() { bpftool -j map dump pinned "$PIN/$MAP_POL_HDR" | jq '[.[].formatted.value.serial] | max'; }
s0=$(serial)
printf 'device c2 type software nconn 10 dev vb steer cpu 1\nrule offload dev c2 lport 7001\n' >"$work/bad.conf"
chmod 600 "$work/bad.conf"
err=$(nsx b toed --apply "$work/bad.conf" --pin-dir "$PIN" 2>&1)
check "steer cpu on vb (tc): apply refused, naming the device and the hook: $err" \
	grep -q "device 'c2' (line 1): steer cpu needs XDP on vb, .*--hook tc" <<<"$err"
check "  the policy in force is unchanged" test "$(serial)" = "$s0"
printf 'device c2 type software nconn 10 dev vb steer forward\nrule offload dev c2 lport 7001\n' >"$work/fwd.conf"
chmod 600 "$work/fwd.conf"
check "steer forward on vb (tc): applied" nsx b toed --apply "$work/fwd.conf" --pin-dir "$PIN"
check "  a new policy in force" test "$(serial)" != "$s0"

# One hook per interface.
err=$(nsx b toe-loader load --dev vb --hook xdp --cgroup "$CG" --pin-dir "$PIN" 2>&1)
check "load --hook xdp on a tc interface: refused" test $? -ne 0
check "  naming the interface and the way out: $err" grep -q "vb: opentoe is attached there with tc.*unload" <<<"$err"
check "  nothing attached by it" test "$(nsx b bpftool -j net show dev vb | jq '[.[0].xdp[]] | length')" = 0
check "  the tc attachment still there" test "$(tc_runs b vb ingress "$tcid")" = 1
check "reload with --hook tc: replaced in place" nsx b toe-loader load --dev vb --hook tc --cgroup "$CG" --pin-dir "$PIN"
tcid2=$(nsx b toe-loader status -j --pin-dir "$PIN" | jq '.programs[] | select(.name == "toe_tc") | .id')
check "  still one tc program on vb ($TCM), the new one" \
	test "$(tc_runs b vb ingress "$tcid2")" = 1 -a "$(tc_runs b vb ingress "$tcid")" = 0
err=$(nsx b toe-loader load --dev vb --hook tcp --pin-dir "$PIN" 2>&1)
check "--hook tcp: refused, naming it ($err)" grep -q "bad --hook 'tcp'" <<<"$err"
err=$(nsx b toe-loader load --dev vb --hook tc --xdp-mode skb --pin-dir "$PIN" 2>&1)
check "--hook tc with --xdp-mode: refused ($err)" test $? -ne 0

nsx b toe-loader unload --pin-dir "$PIN" >/dev/null
check "unload: pin folder gone" test ! -e "$PIN"
check "  no toe_tc left on vb's tc ingress" test "$(tc_runs b vb ingress "$tcid2")" = 0
check "  features still as before" test "$(feat b vb)" = "$vb0" -a "$(feat a va)" = "$va0"

# The converse: --hook tc under a policy whose device steers on vb.
nsx b toe-loader load --cgroup "$CG" --pin-dir "$PIN" >/dev/null
printf 'device c3 type software nconn 10 dev vb steer cpu 1\n' >"$work/steer.conf"
chmod 600 "$work/steer.conf"
nsx b toed --apply "$work/steer.conf" --pin-dir "$PIN" >/dev/null
err=$(nsx b toe-loader load --dev vb --hook tc --cgroup "$CG" --pin-dir "$PIN" 2>&1)
check "load --hook tc under 'steer cpu' on vb: refused: $err" \
	grep -q "vb: device 'c3' of the policy in force steers to a CPU there, which needs XDP" <<<"$err"
check "  no tc attachment made" test -z "$(ls -d "$PIN"/link_tc_* "$PIN"/tc_ingress_* 2>/dev/null)" -a \
	-z "$(nsx b tc filter show dev vb ingress 2>/dev/null)"
nsx b toe-loader unload --pin-dir "$PIN" >/dev/null

# Without tcx (the path a 6.1 kernel takes; TOE_LOADER_NO_TCX=1 here): a
# classic clsact filter, replaced in place by a reload, deleted by unload;
# someone else's filter at opentoe's handle and priority is never replaced.
ntl() { nsx b env TOE_LOADER_NO_TCX=1 toe-loader "$@" --pin-dir "$PIN"; }
tcprog() { ntl status -j | jq '.programs[] | select(.name == "toe_tc") | .id'; }
ntl load --dev vb --hook tc --cgroup "$CG" >/dev/null || fail "load --hook tc without tcx"
id1=$(tcprog)
check "no tcx: toe_tc is a clsact filter on vb (status mode clsact, in tc filter show)" \
	test "$(tc_runs b vb ingress "${id1:-0}")" = 1 -a \
	"$(ntl status -j | jq -r '.programs[] | select(.name == "toe_tc") | .xdp_mode')" = clsact
ntl load --dev vb --hook tc --cgroup "$CG" >/dev/null
id2=$(tcprog)
check "  a reload replaces its program in place (one filter, the new program)" \
	test "$(tc_runs b vb ingress "${id2:-0}")" = 1 -a "$(tc_runs b vb ingress "${id1:-0}")" = 0 -a \
	"$(nsx b tc -j filter show dev vb ingress | jq '[.[] | select(.options.handle != null)] | length')" = 1
ntl unload >/dev/null
check "  unload deletes the filter" test -z "$(nsx b tc filter show dev vb ingress)"
# a classic BPF filter (accept all) of someone else at 0x70e, prio 0x70e
nsx b tc filter add dev vb ingress pref 1806 handle 0x70e bpf bytecode '1,6 0 0 4294967295,' 2>/dev/null
err=$(ntl load --dev vb --hook tc --cgroup "$CG" 2>&1)
check "  a foreign filter at opentoe's handle and priority: load refused: $err" \
	grep -q "vb: tc ingress filter handle 0x70e priority 1806 (opentoe's) is taken by a filter that is not opentoe's" <<<"$err"
check "  and that filter is left as it was, nothing of opentoe's pinned" \
	test "$(nsx b tc -j filter show dev vb ingress | jq '[.[] | select(.options.handle != null)] | length')" = 1 -a \
	! -e "$PIN"
nsx b tc filter del dev vb ingress pref 1806 2>/dev/null
# and an eBPF one: another opentoe's (its own pin folder) on the same hook
ntl load --dev vb --hook tc --cgroup "$CG" >/dev/null
id3=$(tcprog)
err=$(nsx b env TOE_LOADER_NO_TCX=1 toe-loader load --dev vb --hook tc --cgroup "$CG" --pin-dir "$PIN-2" 2>&1)
check "  another pin folder's filter there: refused, naming its program: $err" \
	grep -q "vb: tc ingress filter handle 0x70e priority 1806 (opentoe's) holds program id ${id3:-x}, not the one pinned in $PIN-2" <<<"$err"
check "  the first one's filter untouched" test "$(tc_runs b vb ingress "${id3:-0}")" = 1 -a ! -e "$PIN-2"
# unload's delete of the filter, done, then reported failing (fault knob
# TOE_LOADER_TC_DEL_ERR): EINVAL, as when the filter went in between, is
# nothing to do; EPERM, a delete that failed, fails the unload, naming it
err=$(nsx b env TOE_LOADER_TC_DEL_ERR=22 TOE_LOADER_NO_TCX=1 toe-loader unload --pin-dir "$PIN" 2>&1 >/dev/null)
rc=$?
check "  unload, the filter's delete reporting EINVAL (gone meanwhile): succeeds (exit $rc)${err:+: $err}" \
	test $rc = 0 -a -z "$err" -a ! -e "$PIN"
check "  and the filter is gone" test -z "$(nsx b tc filter show dev vb ingress)"
ntl load --dev vb --hook tc --cgroup "$CG" >/dev/null || fail "load --hook tc without tcx, again"
err=$(nsx b env TOE_LOADER_TC_DEL_ERR=1 TOE_LOADER_NO_TCX=1 toe-loader unload --pin-dir "$PIN" 2>&1)
rc=$?
check "  unload, the filter's delete failing (EPERM): fails (exit $rc), naming it: $err" \
	eval '[ $rc != 0 ] && grep -q "cannot delete the tc filter of $PIN/tc_ingress_.*: Operation not permitted" <<<"$err"'
ntl unload >/dev/null 2>&1
check "  a plain unload afterwards leaves nothing" test -z "$(nsx b tc filter show dev vb ingress)" -a ! -e "$PIN"
finish
