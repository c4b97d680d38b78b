#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-forward: one TCP flow (iperf3) through a router namespace,
# forwarded by
#   xdp        opentoe's XDP fast path ("steer forward", native mode), with
#              toed running as deployed (it watches the ruleset and holds
#              the lease on the firewall generation: without it every
#              fast-path flow is re-admitted through the stack each second),
#              each flow's route cached
#   xdp_lookup the same with toed --no-route-cache: every packet's route
#              looked up (bpf_fib_lookup, toe_ifaces, toe_neigh)
#   kernel     the kernel, no rule
#   conntrack  the kernel with a stateful rule loaded
#              (iptables -A FORWARD -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT)
# DURATION seconds each, ROUNDS rounds, the order of the variants rotating
# from round to round.  Throughput is the receiver's; CPU is every CPU's
# busy time (/proc/stat) per GB moved: client, router and server share the
# machine, so it includes both ends' TCP work, which is the same in every
# variant.  The end hosts send MTU-sized frames (no TSO/GSO), as a wire
# would carry them, in every variant.  Median, min-max, ratio to kernel.
# For xdp, also the program's own time per packet it ran on (bpf_stats:
# run_time_ns / run_cnt), to set against the router's whole cost.
# CSV: bench/results/forward.csv.
#
# Then small packets (what the veth throughput cannot show: the kernel pays
# for an skb per frame): bench/pktblast sends 64-byte TCP segments of an
# open connection (client -> server port 5202, which the fast path knows)
# from the client as fast as one thread can, PPS_SECS seconds each, PPS_ROUNDS
# rounds alternating kernel and xdp; the frames per second the server's
# interface received (the segments carry a wrong TCP checksum, so the
# server drops them without an answer), and what the router's kernel and
# XDP path forwarded.  Client, router and server share the CPUs: a frame's
# whole path is paid for by the sender's CPU (veth hands each frame on in
# the sender's softirq), so sent = delivered here.
# CSV: bench/results/forward_pps.csv.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
export TOE_TOP=$top TOE_BUILD=$top/build
. "$top/selftests/lib.sh"
. "$top/selftests/xdp/router.sh"
need_cmd iperf3 iptables ethtool jq
ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-5}
PPS_ROUNDS=${PPS_ROUNDS:-3} PPS_SECS=${PPS_SECS:-3}
BLAST=$TOE_BUILD/bench/pktblast
[ -x "$BLAST" ] || cannot_run "bench/pktblast not built (make)"
router_test bfwd || exit 1
endpoints_for_native && endpoints_no_gso || exit 1
printf 'device fwd type software nconn 100 steer forward\nrule offload dev fwd rport 5201\nrule offload dev fwd rport 5202\n' >"$work/fwd.conf"
chmod 600 "$work/fwd.conf"
defer "nsx r toe-loader unload --pin-dir $PIN; rm -rf $PIN"
nsx_bg s iperf3 -s -p 5201 >/dev/null 2>&1
sleep 0.5

on() {
	case $1 in
	xdp | xdp_lookup)
		nsx r toe-loader load --dev r0 --dev r1 --cgroup "$CG" --pin-dir "$PIN" >/dev/null || return 1
		nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$work/run" \
			$([ "$1" = xdp_lookup ] && echo --no-route-cache) >/dev/null 2>&1
		TOED=$NSX_PID
		wait_for 10 test -S "$work/run/toed.sock" && fill_neigh "$PIN" ;;
	conntrack)
		nsx r iptables -A FORWARD -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT ;;
	esac
}
off() {
	case $1 in
	xdp | xdp_lookup)
		kill "$TOED" && wait "$TOED" 2>/dev/null
		nsx r toe-loader unload --pin-dir "$PIN" >/dev/null ;;
	conntrack) nsx r iptables -D FORWARD -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT ;;
	esac
}
stats0=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
defer "sysctl -qw kernel.bpf_stats_enabled=$stats0"
prog_stats() { # -> "run_time_ns run_cnt" of opentoe's XDP program on r0
	local id
	id=$(nsx r toe-loader status -j --pin-dir "$PIN" |
		jq '[.programs[] | select(.type == "xdp" and (.chained | not))][0].id')
	bpftool -j prog show id "$id" | jq -r '"\(.run_time_ns // 0) \(.run_cnt // 0)"'
}
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
hz=$(getconf CLK_TCK)

# summarize CSV <<'PY' ... PY: the Python on stdin, run on CSV's rows grouped
# by variant (by[VARIANT]) with med(VARIANT, FIELD), their median.
summarize() {
	python3 - "$1" <<<"import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault(r['variant'], []).append(r)
med = lambda v, f: statistics.median(float(x[f]) for x in by[v])
$(cat)"
}

csv=$top/bench/results/forward.csv
echo "variant,round,gbit_s,cpu_s_per_gb,kernel_forwarded,xdp_forwarded,xdp_ns_per_pkt" >"$csv"
order=(xdp kernel xdp_lookup conntrack)
for ((r = 1; r <= ROUNDS; r++)); do
	for ((i = 0; i < ${#order[@]}; i++)); do
		v=${order[$(((i + r) % ${#order[@]}))]}
		on $v || { echo "cannot set up $v" >&2; exit 1; }
		k0=$(ip_forwarded); x0=0
		rt0=0 rc0=0 rt1=0 rc1=0
		if [ $v = xdp ] || [ $v = xdp_lookup ]; then
			x0=$(stat_of "$PIN" $STAT_XDP_FORWARD)
			read -r rt0 rc0 < <(prog_stats)
		fi
		b0=$(busy)
		nsx c iperf3 -c $S4 -p 5201 -t "$DURATION" -J >"$work/out.json"
		b1=$(busy)
		k=$(( $(ip_forwarded) - k0 )); x=0
		if [ $v = xdp ] || [ $v = xdp_lookup ]; then
			x=$(( $(stat_of "$PIN" $STAT_XDP_FORWARD) - x0 ))
			read -r rt1 rc1 < <(prog_stats)
		fi
		off $v
		bytes=$(jq .end.sum_received.bytes "$work/out.json")
		bps=$(jq .end.sum_received.bits_per_second "$work/out.json")
		[ "$bytes" -gt 0 ] 2>/dev/null || { echo "$v: iperf3 failed: $(jq -c .error "$work/out.json")" >&2; exit 1; }
		python3 -c "import sys; b, bps, c, hz, t, n = map(float, sys.argv[1:]); print('%s,%d,%.3f,%.3f,%d,%d,%.1f' % ('$v', $r, bps / 1e9, c / hz / (b / 1e9), $k, $x, t / n if n else 0))" \
			"$bytes" "$bps" $((b1 - b0)) "$hz" $((rt1 - rt0)) $((rc1 - rc0)) >>"$csv"
		tail -n 1 "$csv"
	done
done
summarize "$csv" <<'PY'
print('%-11s %8s %13s %6s %11s %13s %6s %12s %12s %10s' % ('variant', 'Gbit/s', 'min-max', 'ratio', 'CPU s/GB', 'min-max', 'ratio',
                                                          'kernel fwd', 'XDP fwd', 'XDP ns/pkt'))
for v in ['kernel', 'conntrack', 'xdp_lookup', 'xdp']:
    g = [float(x['gbit_s']) for x in by[v]]
    c = [float(x['cpu_s_per_gb']) for x in by[v]]
    print('%-11s %8.2f %6.2f-%-6.2f %6.2f %11.2f %6.2f-%-6.2f %6.2f %12.0f %12.0f %10s' % (
        v, med(v, 'gbit_s'), min(g), max(g), med(v, 'gbit_s') / med('kernel', 'gbit_s'),
        med(v, 'cpu_s_per_gb'), min(c), max(c), med(v, 'cpu_s_per_gb') / med('kernel', 'cpu_s_per_gb'),
        med(v, 'kernel_forwarded'), med(v, 'xdp_forwarded'),
        '%.0f' % med(v, 'xdp_ns_per_pkt') if v.startswith('xdp') else '-'))
PY

# ---- small packets: frames per second through the router
# The server end of port 5202 accepts, echoes one message and holds the
# connection; the client end opens one, has its 1,000 bytes echoed (the
# stack forwards the handshake, which admits the flow to the fast path) and
# holds it while pktblast sends its segments.
nsx_bg s python3 -c '
import socket, threading
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("0.0.0.0", 5202)); l.listen(16)
def serve(c):
    c.sendall(c.recv(4096))
    while c.recv(65536): pass
while True:
    threading.Thread(target=serve, args=(l.accept()[0],), daemon=True).start()
' >/dev/null 2>&1
wait_for 5 bash -c "nsenter --net=/run/netns/$(ns_name s) ss -Hltn 'sport = :5202' | grep -q ." ||
	{ echo "pps: server does not listen" >&2; exit 1; }
cmac=$(nsx c ip -j link show c0 | jq -r '.[0].address') rmac=$(nsx r ip -j link show r0 | jq -r '.[0].address')
pcsv=$top/bench/results/forward_pps.csv
echo "variant,round,sent_pps,delivered_pps,kernel_forwarded,xdp_forwarded" >"$pcsv"
rx_s1() { nsx s ip -s -j link show s1 | jq '.[0].stats64.rx.packets'; }
porder=(xdp kernel)
for ((r = 1; r <= PPS_ROUNDS; r++)); do
	for ((i = 0; i < ${#porder[@]}; i++)); do
		v=${porder[$(((i + r) % ${#porder[@]}))]}
		on $v || { echo "cannot set up $v" >&2; exit 1; }
		rm -f "$work/hold"
		nsx c python3 -c '
import socket, sys, time
c = socket.create_connection(("'$S4'", 5202)); c.sendall(b"x" * 1000)
got = 0
while got < 1000: got += len(c.recv(4096))
open(sys.argv[1], "w").write("%d\n" % c.getsockname()[1]); time.sleep(600)
' "$work/hold" &
		hold=$!
		wait_for 5 test -s "$work/hold" || { echo "pps: no connection through the router ($v)" >&2; exit 1; }
		k0=$(ip_forwarded); x0=0; s0=$(rx_s1)
		[ $v = xdp ] && x0=$(stat_of "$PIN" $STAT_XDP_FORWARD)
		out=$(nsx c "$BLAST" -i c0 -s "$cmac" -d "$rmac" -S $C4 -D $S4 -p "$(cat "$work/hold")" -P 5202 -t "$PPS_SECS") ||
			{ echo "pps: pktblast failed ($v)" >&2; exit 1; }
		sleep 0.2
		k=$(( $(ip_forwarded) - k0 )); x=0; rx=$(( $(rx_s1) - s0 ))
		[ $v = xdp ] && x=$(( $(stat_of "$PIN" $STAT_XDP_FORWARD) - x0 ))
		kill $hold; wait $hold 2>/dev/null
		off $v
		jq -r --arg v $v --argjson r $r --argjson k $k --argjson x $x --argjson rx $rx \
			'"\($v),\($r),\(.pps),\(($rx / .secs) | floor),\($k),\($x)"' <<<"$out" >>"$pcsv"
		echo "  sent $(jq .sent <<<"$out") in $(jq .secs <<<"$out") s" >&2
		tail -n 1 "$pcsv"
	done
done
summarize "$pcsv" <<'PY'
print('%-8s %14s %14s %21s %6s' % ('variant', 'sent pps', 'delivered pps', 'min-max', 'ratio'))
for v in ['kernel', 'xdp']:
    f = [float(x['delivered_pps']) for x in by[v]]
    print('%-8s %14.0f %14.0f %10.0f-%-10.0f %6.2f' % (v, med(v, 'sent_pps'), med(v, 'delivered_pps'), min(f), max(f),
                                               med(v, 'delivered_pps') / med('kernel', 'delivered_pps')))
PY
