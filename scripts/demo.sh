#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: two test hosts (network namespaces joined by a veth), opentoe
# loaded on them, an iperf3 transfer, the loader's status and the flow table,
# then everything removed.  Addresses exist only inside the namespaces.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=$top/build
PIN=/sys/fs/bpf/opentoe-demo
CLIENT=toe-demo-client SERVER=toe-demo-server
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
on() { local n=$1; shift; nsenter --net=/run/netns/"$n" "$@"; }

cleanup() {
	on $CLIENT "$B/toe-loader" unload --pin-dir $PIN >/dev/null 2>&1
	rm -rf $PIN 2>/dev/null
	ip netns pids $SERVER 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del $CLIENT 2>/dev/null
	ip netns del $SERVER 2>/dev/null
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] || { echo "make demo needs root" >&2; exit 1; }
cleanup

say "Two test hosts: $CLIENT (10.77.0.1) and $SERVER (10.77.0.2), one veth"
ip netns add $CLIENT && ip netns add $SERVER || exit 1
ip link add toe-c type veth peer name toe-s
ip link set toe-c netns $CLIENT && ip link set toe-s netns $SERVER
on $CLIENT ip addr add 10.77.0.1/24 dev toe-c && on $CLIENT ip link set toe-c up
on $SERVER ip addr add 10.77.0.2/24 dev toe-s && on $SERVER ip link set toe-s up
on $CLIENT ip link set lo up && on $SERVER ip link set lo up

say "toe-loader load --dev toe-c --pin-dir $PIN"
on $CLIENT "$B/toe-loader" load --dev toe-c --pin-dir $PIN || exit 1
on $CLIENT "$B/toe-loader" status --pin-dir $PIN

conf=$(mktemp /tmp/opentoe-demo.XXXXXX)
cat >"$conf" <<'EOF'
# The demo's policy: iperf3 to the server is offloaded on a software device.
device sw0 type software nconn 16 dev toe-c
default host
rule offload dev sw0 remote 10.77.0.2/32 rport 5201
EOF
chmod 600 "$conf"
say "Policy:"
grep -v '^#' "$conf"
say "toed --apply"
on $CLIENT "$B/toed" --apply "$conf" --pin-dir $PIN || exit 1
rm -f "$conf"

say "iperf3 for 3 seconds, $CLIENT -> $SERVER"
on $SERVER iperf3 -s -1 -D -p 5201 && sleep 0.3
on $CLIENT iperf3 -c 10.77.0.2 -p 5201 -t 3 -f g >/tmp/toe-demo-iperf.$$ &
sleep 1.5
say "The flow table while it runs: bpftool map dump pinned $PIN/toe_flows"
bpftool map dump pinned $PIN/toe_flows | sed -n '1,70p'
say "XDP on toe-c counted the offloaded flow's packets: bpftool map dump pinned $PIN/toe_flow_pkts"
bpftool map dump pinned $PIN/toe_flow_pkts | sed -n '1,40p'
wait
grep -E 'sender|receiver' /tmp/toe-demo-iperf.$$; rm -f /tmp/toe-demo-iperf.$$
say "Device sw0 after the transfer: bpftool map lookup pinned $PIN/toe_dev_live key 0 0 0 0"
bpftool map lookup pinned $PIN/toe_dev_live key 0 0 0 0

say "toe-loader unload"
on $CLIENT "$B/toe-loader" unload --pin-dir $PIN
trap - EXIT
cleanup
say "Done: namespaces, links and pins removed"
