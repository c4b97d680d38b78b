#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: the whole story in about a minute.  Three test hosts (client,
# router, server: network namespaces joined by veth pairs, addresses only
# inside them), opentoe loaded on the router, toed applying a policy that
# uses offload, bypass and host and mirroring the router's neighbours, an
# offloaded flow forwarded by the tc fast path next to a host flow forwarded by the
# kernel, toectl and bpftool views, a neighbour's MAC changing and
# propagating, redis-benchmark through the local bypass, bypass against
# plain TCP, then everything removed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=$top/build
export PATH=$B:$PATH
# the pinned maps' names (MAP_FWD=toe_fwd ...), which make writes from
# include/'s tables (scripts/gen-names.py)
. "$B/toe_names.sh"
ID=toedemo
PIN=/sys/fs/bpf/opentoe-demo
RUN=/run/opentoe-demo
C=$ID-client R=$ID-router S=$ID-server
CG=
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '\033[2m# %s\033[0m\n' "$*"; "$@"; }
on() { local n=$1; shift; nsenter --net=/run/netns/"$n" "$@"; }
ctl() { run toectl --run-dir $RUN "$@"; }

cleanup() {
	[ -n "${MONPID:-}" ] && kill "$MONPID" 2>/dev/null
	[ -n "${TOEDPID:-}" ] && kill "$TOEDPID" 2>/dev/null && wait "$TOEDPID" 2>/dev/null
	on $R toe-loader unload --pin-dir $PIN >/dev/null 2>&1
	rm -rf $PIN $RUN "${WORK:-/nonexistent}" 2>/dev/null
	for n in $C $R $S; do
		ip netns pids $n 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del $n 2>/dev/null
	done
	# every process it held killed; their exits may still be in flight
	# (EBUSY): try for a few seconds, as the tests' cg_del does
	if [ -n "$CG" ] && [ -d "$CG" ]; then
		xargs -r kill -9 <"$CG/cgroup.procs" 2>/dev/null
		for _ in $(seq 50); do rmdir "$CG" 2>/dev/null && break; sleep 0.1; done
	fi
	return 0
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] || { echo "make demo needs root" >&2; exit 1; }
cleanup
WORK=$(mktemp -d /tmp/opentoe-demo.XXXXXX)
CG=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)/opentoe-demo
mkdir -p "$CG"

say "Three hosts: client 10.80.1.1 -- router 10.80.1.254 | 10.80.2.254 -- server 10.80.2.1"
for n in $C $R $S; do ip netns add $n && on $n ip link set lo up || exit 1; done
ip link add c0 netns $C type veth peer name r0 netns $R
ip link add r1 netns $R type veth peer name s1 netns $S
on $C ip addr add 10.80.1.1/24 dev c0 && on $C ip link set c0 up
on $R ip addr add 10.80.1.254/24 dev r0 && on $R ip link set r0 up
on $R ip addr add 10.80.2.254/24 dev r1 && on $R ip link set r1 up
on $S ip addr add 10.80.2.1/24 dev s1 && on $S ip link set s1 up
on $C ip route add default via 10.80.1.254
on $S ip route add default via 10.80.2.254
on $R sysctl -qw net.ipv4.ip_forward=1
# the far ends keep the kernel's default offloads (TSO, checksum offload):
# on a veth, toe-loader's --hook auto puts the fast path at tc ingress,
# which keeps the skb (GSO packets move whole) and needs no ethtool
on $C ping -c1 -W2 10.80.2.1 >/dev/null || { echo "the hosts do not reach each other" >&2; exit 1; }

say "Load opentoe on the router: r0 and r1 are veths, so tc ingress (--hook auto), sock_ops on the demo's cgroup"
run on $R toe-loader load --dev r0 --dev r1 --cgroup "$CG" --pin-dir $PIN || exit 1
on $R toe-loader status --pin-dir $PIN | sed -n '1,12p'

# (unquoted: $S, the server's namespace, is where the bypass rules apply;
# a rule with no netns clause matches in toed's namespace, the router's)
cat >"$WORK/opentoe.conf" <<EOF
# The demo's policy.
device t3a type chelsio-t3 nconn 64 steer forward   # the fast path forwards its flows
default host
rule offload dev t3a rport 5201     # iperf3 to the server: offloaded
rule host rport 5301                # the same, on another port: the kernel's
rule bypass lport 6379 netns $S     # redis, both ends on the server host:
rule bypass rport 6379 netns $S     #   socket to socket, no TCP/IP
rule bypass lport 7001 netns $S     # loadgen, bypassed ...
rule bypass rport 7001 netns $S
rule host rport 7002                # ... and over plain TCP loopback
EOF
chmod 600 "$WORK/opentoe.conf"
say "The policy (toed --check, then toed on the router)"
grep -v '^#' "$WORK/opentoe.conf"
run toed --check "$WORK/opentoe.conf"
nsenter --net=/run/netns/$R toed --config "$WORK/opentoe.conf" --pin-dir $PIN --run-dir $RUN \
	--log-level warning &
TOEDPID=$!
for i in $(seq 50); do [ -S $RUN/toed.sock ] && break; sleep 0.1; done
toectl --run-dir $RUN monitor >"$WORK/monitor" &
MONPID=$!
ctl status
ctl neigh

fwd() { on $R awk '/^Ip: [0-9]/ { print $7 }' /proc/net/snmp; }
# the fast path's skbs (a GSO skb carries many segments) and segments
tcfwd() { toectl --run-dir $RUN -j stats | jq "[.datapath.tc_forward, .datapath.tc_forward_segs] | join(\" \")"; }
on $S iperf3 -s -D -p 5201 && on $S iperf3 -s -D -p 5301 && sleep 0.3
for port in 5201 5301; do
	k0=$(fwd)
	read -r x0 g0 <<<"$(tcfwd | tr -d '"')"
	say "iperf3 client -> server:$port for 3 s, through the router"
	on $C iperf3 -c 10.80.2.1 -p $port -t 3 -f g | grep -E 'sender|receiver'
	read -r x1 g1 <<<"$(tcfwd | tr -d '"')"
	echo "router: the kernel forwarded $(($(fwd) - k0)) datagrams, the tc fast path $((x1 - x0)) skbs ($((g1 - g0)) segments)"
done

say "The router's fast-path flows while one runs: bpftool map dump pinned $PIN/$MAP_FWD"
on $C iperf3 -c 10.80.2.1 -p 5201 -t 3 >/dev/null &
LONG=$!
sleep 1.5
run bpftool map dump pinned $PIN/$MAP_FWD | sed -n '1,40p'
ctl devices
ctl flows
wait $LONG

say "A neighbour changes: the server's MAC, as the router sees it"
real=$(on $R ip -j neigh show 10.80.2.1 dev r1 | jq -r '.[0].lladdr')
run on $R ip neigh replace 10.80.2.1 lladdr 02:de:ad:be:ef:01 dev r1 nud permanent
sleep 0.3
ctl neigh
run on $R ip neigh replace 10.80.2.1 lladdr "$real" dev r1 nud reachable
sleep 0.3
echo "toectl monitor saw:"
grep '^\[neigh\]' "$WORK/monitor"

# in_cg NS CMD...: CMD in namespace NS, in the demo's cgroup (sock_ops sees it)
in_cg() { local n=$1; shift; (echo $BASHPID >"$CG/cgroup.procs" && exec nsenter --net=/run/netns/"$n" "$@"); }
byp() { toectl --run-dir $RUN -j stats | jq .datapath.bypass_bytes; }
say "Local bypass: redis-server and redis-benchmark, both on the server host"
in_cg $S redis-server --port 6379 --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 &
for i in $(seq 50); do on $S redis-cli -p 6379 ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
b0=$(byp)
in_cg $S redis-benchmark -p 6379 -q -n 20000 -c 10 -t set,get,incr 2>&1 | tr '\r' '\n' | grep -a "per second"
echo "bypassed: $(($(byp) - b0)) bytes went socket to socket (toectl stats: bypass_bytes)"
run in_cg $S redis-cli -p 6379 set demo "hello through the bypass" >/dev/null
in_cg $S redis-cli -p 6379 get demo
# (not through in_cg: from a function run with &, $! would be the function's
# subshell and the kill would leave redis-cli running until the cleanup)
(echo $BASHPID >"$CG/cgroup.procs" && exec nsenter --net=/run/netns/$S redis-cli -p 6379 subscribe demo >/dev/null) &
SUB=$!
sleep 0.3
ctl flows port 6379
kill $SUB && wait $SUB 2>/dev/null

say "Bypass against plain TCP loopback: 1-byte request/response, 1 s each, both ends on CPU 0"
for v in "bypass 7001" "TCP 7002"; do
	set -- $v
	r=$(in_cg $S "$B/bench/loadgen" --mode rr --size 1 --seconds 1 --addr 127.0.0.1 --port $2 --cpu 0 --srv-cpu 0 | jq .ops_per_s)
	printf '%-7s %10.0f round trips/s\n' "$1" "$r"
done
echo "(make bench-bypass measures it properly: rounds, both pinnings, AF_UNIX too)"

say "Counters: toectl stats (part)"
toectl --run-dir $RUN stats | grep -E 'tc_forward|tc_fwd|neigh_miss|established|bypass_(sockets|paired|bytes)|neigh_set|resyncs'

say "Unload: toed stops, toe-loader unload removes every link and pin"
kill $MONPID; MONPID=
kill $TOEDPID && wait $TOEDPID 2>/dev/null; TOEDPID=
run on $R toe-loader unload --pin-dir $PIN
trap - EXIT
cleanup
say "Done: namespaces, links, pins, cgroup and processes removed"
