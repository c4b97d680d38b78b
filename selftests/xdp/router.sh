# SPDX-License-Identifier: GPL-2.0
# Shared by the XDP forwarding tests and bench/bench_forward.sh: a client,
# a router and a server (namespaces c, r, s; veth pairs c0-r0 and r1-s1;
# IPv4 and IPv6), opentoe on both router interfaces, and helpers.
# Source after lib.sh.
C4=10.211.1.1 R4a=10.211.1.254 R4b=10.211.2.254 S4=10.211.2.1
C6=fd00:211:1::1 R6a=fd00:211:1::fe R6b=fd00:211:2::fe S6=fd00:211:2::1
PKT="python3 $TOE_TOP/selftests/tools/pkt.py"
XFER=$TOE_TOP/selftests/xdp/xfer.py
# FWD_HOOK: the hook the forward tests load the router's interfaces with
# (TOE_FWD_HOOK: xdp, the default, or tc; a test_*_tc.sh runs its test so);
# FWD_STAT: the counter of packets (tc: segments) that hook forwarded;
# FWD_MISS: of packets it left to the stack for want of a neighbour;
# FWD_PROG: its program's name (toe-loader status); FWD_NAME: the hook as
# the checks say it.  With xdp the veths are declared able to take XDP
# redirects (--xdp-veth-tx: the tests set their peers up for it,
# endpoints_for_hook).
FWD_HOOK=${TOE_FWD_HOOK:-xdp}
case $FWD_HOOK in
xdp) FWD_STAT=$STAT_XDP_FORWARD FWD_MISS=$STAT_XDP_NEIGH_MISS FWD_PROG=toe_xdp FWD_NAME=XDP
	DP_HOOK_ARGS="--hook xdp --xdp-veth-tx" ;;
tc) FWD_STAT=$STAT_TC_FWD_SEGS FWD_MISS=$STAT_TC_FWD_NEIGH_MISS FWD_PROG=toe_tc FWD_NAME=tc
	DP_HOOK_ARGS="--hook tc" ;; # segments, as XDP counts
*) echo "bad TOE_FWD_HOOK '$FWD_HOOK': xdp or tc" >&2; exit 1 ;;
esac

# router_test CGROUP: what a forwarding test starts with: root, its tools,
# toe-loader and toed built, $PIN, a cgroup ($CG), a work folder ($work)
# and the three hosts (lib.sh's dp_start, then router_topology).
router_test() {
	need_cmd bpftool jq python3 nsenter ethtool
	need_built toed
	dp_start "$1"
	router_topology
}

# fwd_router CGROUP: router_test, then what the forwarding tests share
# next: the end hosts as the hook forwards them (endpoints_for_hook: tc
# leaves the far ends their offloads, TSO and CHECKSUM_PARTIAL, the point
# of tc), the policy in $work/fwd.conf (fwd_conf), opentoe on r0 and r1
# and the router's neighbours filled.  Exits if one fails.
fwd_router() {
	router_test "$1" || exit 1
	endpoints_for_hook || exit 1
	fwd_conf "$work/fwd.conf" || exit 1
	dp_load r --dev r0 --dev r1 && fill_neigh "$PIN" || { fail "load, neighbours"; finish; }
}

# router_topology: the three hosts, routed, pinging each other.
router_topology() {
	ns_add c && ns_add r && ns_add s || return 1
	veth_pair c c0 r r0 && veth_pair r r1 s s1 || return 1
	nsx c ip addr add $C4/24 dev c0 && nsx c ip addr add $C6/64 dev c0 nodad
	nsx s ip addr add $S4/24 dev s1 && nsx s ip addr add $S6/64 dev s1 nodad
	nsx r ip addr add $R4a/24 dev r0 && nsx r ip addr add $R6a/64 dev r0 nodad
	nsx r ip addr add $R4b/24 dev r1 && nsx r ip addr add $R6b/64 dev r1 nodad
	local x
	for x in "c c0" "r r0" "r r1" "s s1"; do
		set -- $x
		nsx $1 ip link set $2 up || return 1
	done
	nsx c ip route add default via $R4a && nsx c ip -6 route add default via $R6a
	nsx s ip route add default via $R4b && nsx s ip -6 route add default via $R6b
	nsx r sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
}

# endpoints_for_native: what native XDP redirects between veths need from
# the two end hosts.  A frame redirected into a veth is received by its
# peer's NAPI, which exists only with an XDP program or GRO on the peer;
# and veth hands XDP the sender's frame with its TCP checksum not yet
# computed (CHECKSUM_PARTIAL, which a redirected frame loses), so the
# senders must compute it (tx checksum offload off).  A real NIC has
# neither problem.
endpoints_for_native() {
	nsx c ethtool -K c0 gro on tx off >/dev/null &&
	nsx s ethtool -K s1 gro on tx off >/dev/null
}

# endpoints_for_hook: the end hosts as the hook under test forwards them:
# XDP endpoints_for_native; tc the kernel's default offloads (TSO,
# CHECKSUM_PARTIAL: what containers send, the skb kept whole).
endpoints_for_hook() { [ "$FWD_HOOK" = tc ] || endpoints_for_native; }

# endpoints_no_gso: MTU-sized frames on the veths, as on a wire (generic
# XDP sees a GSO packet as one frame over the egress MTU and leaves it to
# the stack).
endpoints_no_gso() {
	nsx c ethtool -K c0 tso off gso off >/dev/null &&
	nsx s ethtool -K s1 tso off gso off >/dev/null
}

# to_mac FILE MAC: the frame in FILE addressed to MAC (its first 6 bytes):
# a frame run through a hook as arriving on an interface is sent to that
# interface's MAC, or the fast path leaves it to the stack as another
# host's (fwd_not_host).
to_mac() {
	printf "$(sed 's/^/\\x/; s/:/\\x/g' <<<"$2")" | dd of="$1" bs=1 seek=0 count=6 conv=notrunc status=none
}

# fill_neigh PIN: what toed does, once: the router's neighbour table into
# toe_neigh (key: egress ifindex, family, address; value: MAC, NUD state),
# in one bpftool batch (pkt.py nbatch).
fill_neigh() {
	local pin=$1 b
	# (IPv6 needs the link-local addresses out of DAD first: retry)
	wait_for 5 nsx c ping -c1 -W1 $S4 >/dev/null && wait_for 5 nsx c ping -6 -c1 -W1 $S6 >/dev/null || return 1
	b=$(nsx r ip -j neigh show | $PKT nbatch "$pin/$MAP_NEIGH" "$(nsx r ip -j link show)") || return 1
	[ -z "$b" ] || bpftool batch file <(echo "$b") >/dev/null
}

# fwd_go NAME: once flow NAME (its client's port in $work/NAME.lport) is
# the fast path's to take, $work/NAME.go is made: a client started with
# --go-file sends its data only then.  A flow conntrack tracks waits after
# its admission until toed has made its conntrack entry true (toe_fwd
# state 5, ct_wait: the stack forwards it); toed's word in $MAP_FWD_CTOK
# hands it over at its next packet (docs/forwarding.md).  A transfer
# whose bytes a check wants all on the fast path starts after that.  One
# not tracked is the fast path's at once (state 3).  False (and no go-file)
# if neither came within 10 s (TOE_SLOW scaled).
fwd_go() {
	_fwd_go_ready() {
		local c
		fwd_states "$1" | grep -qx 3 && return 0
		c=$(cat "$work/$1.lport" 2>/dev/null) && [ -n "$c" ] || return 1
		bpftool -j map dump pinned "$PIN/$MAP_FWD_CTOK" |
			jq -e --argjson c "$c" '[.[] | .formatted.key | select(.lport == $c or .rport == $c)] | length > 0' >/dev/null
	}
	wait_for "$(slow 10)" _fwd_go_ready "$1" && touch "$work/$1.go"
}

# flow_entry NAME JQ: the toe_fwd entries of flow NAME (its client's port
# in $work/NAME.lport), each as jq's JQ makes it of the entry's key and
# value (bpftool's formatted {key, value}), one a line; nothing without
# the port or the entry.
flow_entry() {
	local c
	c=$(cat "$work/$1.lport" 2>/dev/null) && [ -n "$c" ] || return 0
	bpftool -j map dump pinned "$PIN/$MAP_FWD" 2>/dev/null |
		jq -r --argjson c "$c" ".[] | .formatted | select(.key.lport == \$c or .key.rport == \$c) | $2"
}
# fwd_states NAME: their states, one a line (3 established, 4 readmit,
# 5 ct_wait).
fwd_states() { flow_entry "$1" .value.state; }

# intact NAME [OUT]: the transfer xfer.py's client wrote to $work/NAME.json
# arrived whole: the server (its output in OUT, $work/server.out) read as
# many bytes, with the same sha256.
intact() {
	local c lp out=${2:-$work/server.out}
	c=$(cat "$work/$1.json"); lp=$(jq .lport <<<"$c")
	[ "$lp" != null ] || return 1
	wait_for "$(slow 5)" grep -q "\"peer_port\": $lp," "$out" || return 1
	grep "\"peer_port\": $lp," "$out" |
		jq -e --argjson c "$c" '.bytes == $c.bytes and .sha256 == $c.sha256 and .bytes > 0' >/dev/null
}

# fwd_toed [ARG...]: toed on the router with the forward tests' policy
# ($work/fwd.conf: fwd_conf), the maps at $PIN, its socket in $work/run,
# ARGs added; its output appended to $work/toed.log, its pid in $TOED.
# False if its socket did not come within 10 s.
fwd_toed() {
	nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$work/run" "$@" >>"$work/toed.log" 2>&1
	TOED=$NSX_PID
	wait_for "$(slow 10)" test -S "$work/run/toed.sock"
}

# fwd_server NS PORT [OUT]: xfer.py's server in namespace NS on PORT, its
# output in OUT ($work/server.out); false if it was not ready within 5 s.
fwd_server() {
	local out=${3:-$work/server.out}
	nsx_bg "$1" python3 "$XFER" server --port "$2" >"$out" 2>&1
	wait_for "$(slow 5)" grep -q ready "$out"
}

# ip_forwarded: datagrams the router's kernel forwarded (IPv4 + IPv6).
ip_forwarded() {
	nsx r awk '/^Ip: [0-9]/ { v4 = $7 } END { print v4 }' /proc/net/snmp |
		{ read -r v4; echo $((v4 + $(nsx r awk '$1 == "Ip6OutForwDatagrams" { print $2 }' /proc/net/snmp6))); }
}

# fwd_conf FILE: the forward tests' policy (a software device that steers
# forward, rules for the ports 5201 and 5301), private as toed wants it.
fwd_conf() {
	printf '%s\n' "device fwd type software nconn 100 steer forward" \
		"rule offload dev fwd rport 5201" "rule offload dev fwd rport 5301" >"$1" &&
		chmod 600 "$1"
}

# pod_topology: a container host: namespaces p1 and p2 (the pods, device
# e1 and e2, addresses $P1_4 and $P2_4 /32, default route via $GW4 on
# link) and h (the host: lxc1 and lxc2, each with $GW4/32 and a /32 route
# to its pod), the host routing between its two veth pairs.
P1_4=10.213.0.1 P2_4=10.213.0.2 GW4=169.254.1.1
pod_topology() {
	ns_add p1 && ns_add h && ns_add p2 || return 1
	veth_pair p1 e1 h lxc1 && veth_pair p2 e2 h lxc2 || return 1
	local x
	for x in "p1 e1 lxc1 $P1_4" "p2 e2 lxc2 $P2_4"; do
		set -- $x
		nsx $1 ip addr add $4/32 dev $2 && nsx $1 ip link set $2 up &&
		nsx h ip addr add $GW4/32 dev $3 && nsx h ip link set $3 up &&
		nsx $1 ip route add $GW4 dev $2 scope link &&
		nsx $1 ip route add default via $GW4 dev $2 &&
		nsx h ip route add $4/32 dev $3 || return 1
	done
	nsx h sysctl -qw net.ipv4.ip_forward=1
}
