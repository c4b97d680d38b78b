#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/map-samples.sh [-n LINES] [MAP...]: regenerate the per-map samples
# of docs/maps.md ("Inspecting the maps with bpftool").
#
# Builds three hosts of its own (client, router, server: network namespaces
# joined by veth pairs, addresses only inside them) and a cgroup, loads
# opentoe on the router into a private pin folder (/sys/fs/bpf/opentoe-samples)
# with a plain XDP program already on r0 (so that opentoe chains it), starts
# toed with a policy that offloads, bypasses and leaves flows on the host,
# runs iperf3 so that every map has content, and prints for every pinned map
# the command an operator types (written with the default pin folder
# /sys/fs/bpf/opentoe) and the first LINES lines (default 30) of what it
# printed here.  Everything it made is removed on exit, also on failure.
# Needs root and a built tree (make).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
export TOE_TOP=$top TOE_TEST_ID=samples
# shellcheck source-path=SCRIPTDIR source=../selftests/lib.sh
. "$top/selftests/lib.sh"	# defer, ns_add, veth_pair, nsx, cg_add, wait_for
# A signal during the cleanup must not cut it short (lib.sh's INT/TERM trap
# would exit from inside the EXIT trap and leave the rest behind).
trap 'trap "" INT TERM; _toe_run_cleanups' EXIT

LINES_MAX=30
while getopts n: o; do
	case $o in
	n) LINES_MAX=$OPTARG ;;
	*) echo "usage: $0 [-n LINES] [MAP...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

[ "$(id -u)" -eq 0 ] || { echo "$0: needs root" >&2; exit 1; }
for c in bpftool jq iperf3 nsenter ethtool; do
	command -v $c >/dev/null || { echo "$0: missing command $c" >&2; exit 1; }
done
for f in toe-loader toed toectl selftests/xdp_pass.bpf.o; do
	[ -e "$TOE_BUILD/$f" ] || { echo "$0: $TOE_BUILD/$f missing: run make" >&2; exit 1; }
done

PIN=$TOE_PIN_DIR		# /sys/fs/bpf/opentoe-samples
SHOWN=/sys/fs/bpf/opentoe	# what the printed commands say
die() { echo "$0: $*" >&2; exit 1; }
[ -e "$PIN" ] && die "$PIN exists: another run, or a leftover (toe-loader unload --pin-dir $PIN)"

WORK=$(mktemp -d /tmp/opentoe-samples.XXXXXX)
defer "rm -rf $WORK"
cg_add cg || die "no cgroup v2 mount"
for n in client router server; do ns_add $n || die "cannot make namespace $n"; done
veth_pair client c0 router r0 || die "cannot make veth pair c0/r0"
veth_pair router r1 server s1 || die "cannot make veth pair r1/s1"
nsx client ip addr add 10.81.1.1/24 dev c0 && nsx client ip link set c0 up
nsx router ip addr add 10.81.1.254/24 dev r0 && nsx router ip link set r0 up
nsx router ip addr add 10.81.2.254/24 dev r1 && nsx router ip link set r1 up
nsx server ip addr add 10.81.2.1/24 dev s1 && nsx server ip link set s1 up
nsx client ip route add default via 10.81.1.254
nsx server ip route add default via 10.81.2.254
nsx router sysctl -qw net.ipv4.ip_forward=1
# veth: XDP-redirected frames need GRO on the far end, and senders that
# compute their own TCP checksums (docs/forwarding.md, "Interfaces and XDP modes")
nsx client ethtool -K c0 gro on tx off >/dev/null
nsx server ethtool -K s1 gro on tx off >/dev/null
nsx client ping -c1 -W2 10.81.2.1 >/dev/null || die "the hosts do not reach each other"

# A plain XDP program on r0 before opentoe: load chains it (toe_xdp_next).
bpftool prog load "$TOE_BUILD/selftests/xdp_pass.bpf.o" "$PIN-xdp_pass" type xdp || die "xdp_pass"
defer "rm -f $PIN-xdp_pass"
nsx router bpftool net attach xdpdrv pinned "$PIN-xdp_pass" dev r0 || die "attach xdp_pass"
rm -f "$PIN-xdp_pass"

# Unloaded (then the pins removed) before the namespaces go: defer runs in
# reverse order.
defer "rm -rf $PIN"
defer "nsx router toe-loader unload --pin-dir $PIN --drain-timeout 2 --force"
nsx router toe-loader load --dev r0 --dev r1 --cgroup "$CG" --pin-dir "$PIN" >/dev/null ||
	die "toe-loader load failed"

cat >"$WORK/opentoe.conf" <<'EOF'
device t3a type chelsio-t3 nconn 64 dev r1 steer forward
device sw1 type software nconn 8 steer cpu 1    # only for a toe_cpumap entry
default host
rule offload dev t3a rport 5201-5202   # routed client -> server (XDP forwards it), router -> server
rule host rport 5301                   # router -> server, on the host
rule bypass lport 5401                 # both ends in the router: socket to socket
rule bypass rport 5401
EOF
chmod 600 "$WORK/opentoe.conf"
nsenter --net=/run/netns/"$(ns_name router)" toed --config "$WORK/opentoe.conf" \
	--pin-dir "$PIN" --run-dir "$WORK/run" --log-level warning 2>"$WORK/toed.log" &
TOEDPID=$!
defer "kill $TOEDPID; wait $TOEDPID"
wait_for 10 test -S "$WORK/run/toed.sock" || { cat "$WORK/toed.log" >&2; die "toed did not start"; }

# in_cg NS CMD...: CMD in namespace NS, in the cgroup (sock_ops sees it).
in_cg() { local n; n=$(ns_name "$1"); shift; (echo $BASHPID >"$CG/cgroup.procs" && exec nsenter --net=/run/netns/"$n" "$@"); }
for p in 5201 5202 5301; do nsx server iperf3 -s -D -p $p || die "iperf3 server"; done
in_cg router iperf3 -s -D -B 127.0.0.1 -p 5401 || die "iperf3 server"
sleep 0.5
# Rate-limited, long enough for every dump below; killed at exit (the
# router's and the bypass's with the cgroup, the client's with its netns).
nsx client iperf3 -c 10.81.2.1 -p 5201 -t 60 -b 100M >/dev/null 2>&1 &
in_cg router iperf3 -c 10.81.2.1 -p 5202 -t 60 -b 100M >/dev/null 2>&1 &
in_cg router iperf3 -c 10.81.2.1 -p 5301 -t 60 -b 100M >/dev/null 2>&1 &
in_cg router iperf3 -c 127.0.0.1 -p 5401 -t 60 -b 100M >/dev/null 2>&1 &
has() { [ "$(bpftool -j map dump pinned "$PIN/$1" 2>/dev/null | jq length)" -gt 0 ] 2>/dev/null; }
wait_for 10 has $MAP_FWD || echo "$0: warning: no forwarded flow in $MAP_FWD" >&2
wait_for 10 has $MAP_BYP_FLOWS || echo "$0: warning: no bypassed flow in $MAP_BYP_FLOWS" >&2
sleep 1

# show CMD...: print CMD as an operator would type it, then the first
# LINES_MAX lines of its output here (the private pin folder shown as the
# default one).
show() {
	echo "# $*" | sed "s|$PIN|$SHOWN|g"
	"$@" 2>&1 | head -n "$LINES_MAX" | sed "s|$PIN|$SHOWN|g"
}

# docs/maps.md's order; any other pinned map after them.
order=($MAP_FLOWS $MAP_FLOW_FILTER $MAP_DEVS $MAP_DEV_LIVE $MAP_STATS $MAP_EVENTS
	$MAP_POL_GEN $MAP_POL_HDR $MAP_POL_RULES $MAP_POL_TUPLES $MAP_POL_CELLS
	$MAP_POL_LCLASS $MAP_POL_RCLASS $MAP_RCU_SYNC $MAP_SK_STATE $MAP_XDP_NEXT
	$MAP_NEIGH $MAP_LOCAL_ADDR $MAP_FWD $MAP_DEVMAP $MAP_IFACES $MAP_CPUMAP
	$MAP_XDP_CONF $MAP_BYPASS $MAP_BYP_SK $MAP_BYP_FLOWS $MAP_BYP_CONF
	$MAP_LISTENERS)
if [ $# -gt 0 ]; then
	maps=("$@")
else
	maps=("${order[@]}")
	for p in "$PIN"/*; do
		m=${p##*/}
		[[ $m == link_* || $m == chain_* ]] && continue
		[[ " ${order[*]} " == *" $m "* ]] || maps+=("$m")
	done
fi

# show_index MAP N: bpftool map lookup of index N (four little-endian bytes).
show_index() {
	local k=($(($2 & 255)) $(($2 >> 8 & 255)) $(($2 >> 16 & 255)) $(($2 >> 24 & 255)))
	show bpftool map lookup pinned "$PIN/$1" key "${k[@]}"
}
# no_btf KIND WHAT: a map type the kernel takes no BTF for: say so, show, dump.
no_btf() {
	echo "# no BTF (the kernel refuses it for a $1: ENOTSUPP): dump prints $2"
	show bpftool map show pinned "$PIN/$m"
	show bpftool map dump pinned "$PIN/$m"
}
gen=$(bpftool -j map lookup pinned "$PIN/$MAP_POL_GEN" key 0 0 0 0 | jq .formatted.value)

echo "# opentoe map samples, $(date +%F), kernel $(uname -r), $(bpftool version | head -1)"
for m in "${maps[@]}"; do
	[ -e "$PIN/$m" ] || { echo; echo "#### $m: not pinned"; continue; }
	type=$(bpftool -j map show pinned "$PIN/$m" | jq -r .type)
	echo
	echo "#### $m ($type)"
	case $type in
	ringbuf)
		echo "# no BTF (a ring buffer has no key or value type) and nothing to dump (records, not entries: 'Found 0 elements'); toed consumes it, toectl monitor shows the events"
		show bpftool map show pinned "$PIN/$m" ;;
	sockhash | sockmap) no_btf "$type" "keys in hex, values are socket cookies" ;;
	devmap | devmap_hash) no_btf "$type" "hex, key and value an ifindex, then a program id (0: none)" ;;
	cpumap) no_btf cpumap "hex, key a CPU, value the queue size, then a program id (0: none)" ;;
	array_of_maps | hash_of_maps) no_btf "map of maps" "hex, the value the inner map's id" ;;
	sk_storage)
		echo "# has BTF, but dump prints [] (socket storage cannot be walked from user space; a lookup takes a socket fd): map show"
		show bpftool map show pinned "$PIN/$m" ;;
	prog_array)
		echo "# has BTF; dump prints each slot (the ifindex of the interface) and the id of the program chained there"
		show bpftool map dump pinned "$PIN/$m" ;;
	*)
		show bpftool map dump pinned "$PIN/$m" ;;
	esac
	case $m in
	$MAP_FLOW_FILTER)
		echo "# 65536 slots, nearly all zero: the ones in use (jq)"
		echo "# bpftool -j map dump pinned $SHOWN/$m | jq -c '.[].formatted | select(.value.live + .value.loaded > 0)'"
		bpftool -j map dump pinned "$PIN/$m" |
			jq -c '.[].formatted | select(.value.live + .value.loaded > 0)' | head -n "$LINES_MAX" ;;
	$MAP_STATS)
		echo "# index $STAT_ESTABLISHED = TOE_S_ESTABLISHED (enum toe_stat, include/opentoe.h)"
		show bpftool map lookup pinned "$PIN/$m" key $STAT_ESTABLISHED 0 0 0 ;;
	$MAP_POL_RULES)
		echo "# rule 0 of generation $gen (in force): index $gen * 131072 + 0"
		show_index "$m" $((gen * 131072)) ;;
	$MAP_POL_TUPLES)
		echo "# tuple 0 of generation $gen (in force): index $gen * 64 + 0"
		show_index "$m" $((gen * 64)) ;;
	$MAP_POL_LCLASS | $MAP_POL_RCLASS)
		echo "# port 5401 in generation $gen (in force): index $gen * 65536 + 5401"
		show_index "$m" $((gen * 65536 + 5401)) ;;
	esac
done
