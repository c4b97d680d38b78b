#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Neighbour and address propagation: rtnetlink -> toe_neigh / toe_local_addr.
# Add, replace (new MAC) and delete, IPv4 and IPv6, on the interface opentoe
# is attached to; nothing from an interface it is not on; an interface that
# goes away takes its entries; and 100,000 updates through a deliberately
# small netlink receive buffer (overruns, resyncs) end with the map equal to
# `ip neigh show` (which, like toed, leaves out the NOARP multicast entries).
# The map is read with bpftool, not through toed.
. "$(dirname "$0")/setup.sh"
plan 31
NMAP=$TOE_TOP/selftests/tools/neighmap.py
load_toe_xdp || { fail "load"; finish; }
cfg=$(conf neigh <<'EOF2'
default host
EOF2
)
nsx a ip link add dz type veth peer name dzp && nsx a ip link set dz up && nsx a ip link set dzp up
nsx a ip link add du type veth peer name dup && nsx a ip link set du up && nsx a ip link set dup up
start_toed "$cfg" --interface dz || { fail "toed starts"; cat "$TOED_LOG"; finish; }
ifidx() { nsx a ip -j link show "$1" | jq '.[0].ifindex'; }
VA=$(ifidx va) DZ=$(ifidx dz) DU=$(ifidx du)
# rbuf: the receive buffer of the rtnetlink socket in a that listens to
# groups (toed's: nothing else in a does; ss: rb, which the kernel
# doubles from SO_RCVBUF(FORCE))
rbuf() {
	nsx a ss -f netlink -e -m | awk '$3 ~ /^rtnl:/ && !/groups=0x00000000/' |
		grep -o 'rb[0-9]*' | tr -d rb | sort -n | tail -n 1
}
check "toed's rtnetlink socket has the default --rcvbuf, 4 MiB (rb $(rbuf))" \
	test "$(rbuf)" -ge $((4 << 20))
S0=$(ctl -j stats)
MON=$CONF_DIR/monitor
ctl -j monitor >"$MON" 2>&1 &
defer "kill $!"
sleep 0.3
# grew JQ_KEYS: toectl stats' daemon counters KEYS (.daemon.a, .daemon.b)
# all above their value in S0
grew() { jq -e --argjson s0 "$S0" "[$1] as \$now | (\$s0 | [$1]) as \$was |
	[range(\$now | length) | \$now[.] > \$was[.]] | all" < <(ctl -j stats) >/dev/null; }

in_map() { # IFINDEX "DST LLADDR STATE"
	bpftool -j map dump pinned "$PIN/$MAP_NEIGH" | python3 "$NMAP" map "$1" | grep -xF -- "$2" >/dev/null
}
not_in_map() { # IFINDEX DST
	! bpftool -j map dump pinned "$PIN/$MAP_NEIGH" | python3 "$NMAP" map "$1" | grep -q "^$2 "
}
same() { # IFACE IFINDEX: the map equals ip neigh show for IFACE
	diff <(nsx a ip -j neigh show dev "$1" | python3 "$NMAP" ip) \
	     <(bpftool -j map dump pinned "$PIN/$MAP_NEIGH" | python3 "$NMAP" map "$2") >"$CONF_DIR/diff"
}

check "start: the map equals ip neigh show for va" same va "$VA"
nsx a ip neigh add 10.202.0.50 lladdr 02:00:00:00:50:01 dev va nud reachable
check "add: the new entry appears with its MAC" \
	wait_for 2 in_map "$VA" "10.202.0.50 02:00:00:00:50:01 REACHABLE"
nsx a ip neigh replace 10.202.0.50 lladdr 02:00:00:00:50:02 dev va nud permanent
check "replace: the map follows the new MAC and state" \
	wait_for 2 in_map "$VA" "10.202.0.50 02:00:00:00:50:02 PERMANENT"
nsx a ip neigh add fd00:202::50 lladdr 02:00:00:00:60:01 dev va nud permanent
check "IPv6 (NDP) entry" wait_for 2 in_map "$VA" "fd00:202::50 02:00:00:00:60:01 PERMANENT"
nsx a ip neigh del 10.202.0.50 dev va
check "delete: the entry is gone" wait_for 2 not_in_map "$VA" 10.202.0.50
nsx a ip neigh add 192.0.2.9 lladdr 02:00:00:00:70:01 dev du
sleep 0.3
check "an interface opentoe is not on is not mirrored" not_in_map "$DU" 192.0.2.9
nsx a ip neigh add 192.0.2.10 lladdr 02:00:00:00:70:02 dev dz
check "--interface dz is mirrored" wait_for 2 in_map "$DZ" "192.0.2.10 02:00:00:00:70:02 PERMANENT"
# toectl status lists every interface it mirrors: va (attached) and dz
# (not attached, named by --interface), not du
ifs_seen() {
	ctl -j status | jq -c --argjson va "$VA" --argjson dz "$DZ" --argjson du "$DU" '[.. | objects | select(has("neighbours_mirrored"))] |
		[(map(select(.ifindex == $va and .neighbours_mirrored and .hook != null)) | length),
		 (map(select(.ifindex == $dz and .neighbours_mirrored and .hook == null)) | length),
		 (map(select(.ifindex == $du)) | length)]'
}
check "toectl -j status: va attached and mirrored, dz mirrored only, du absent ($(ifs_seen), want [1,1,0])" \
	test "$(ifs_seen)" = "[1,1,0]"
check "after these, the map still equals ip neigh show" same va "$VA"
# A NOARP entry (as the kernel makes for each multicast group a link
# joins) and its deletion: never mirrored, so no change to tell.  The
# monitor's deletes are exactly the mirrored entry deleted above.
nsx a ip neigh add 10.202.0.70 dev va nud noarp
nsx a ip neigh del 10.202.0.70 dev va
nsx a ip neigh add 10.202.0.71 lladdr 02:00:00:00:71:01 dev va nud permanent
mon_set() { jq -e -s 'any(.[]; .event == "neigh" and .op == "set" and .dst == "10.202.0.71")' "$MON" >/dev/null; }
check "monitor: the marker entry's set arrives" wait_for 2 mon_set
dels=$(jq -r -s '[.[] | select(.event == "neigh" and .op == "delete") | .dst] | join(",")' "$MON")
check "monitor: one delete, the mirrored 10.202.0.50's; none for a NOARP entry or one never mirrored ($dels)" \
	test "$dels" = 10.202.0.50

# Local addresses
lkey() { python3 "$NMAP" localkey "$1"; }
nsx a ip addr add 10.203.0.1/24 dev va
check "an address added: in $MAP_LOCAL_ADDR" \
	wait_for 2 bpftool map lookup pinned "$PIN/$MAP_LOCAL_ADDR" key hex $(lkey 10.203.0.1)
nsx a ip addr del 10.203.0.1/24 dev va
lgone() { ! bpftool map lookup pinned "$PIN/$MAP_LOCAL_ADDR" key hex $(lkey 10.203.0.1) >/dev/null 2>&1; }
check "an address deleted: gone from $MAP_LOCAL_ADDR" wait_for 2 lgone
check "the peer address is not local" lgone
nsx a ip addr add fd00:203::1/64 dev va nodad
check "an IPv6 address added: in $MAP_LOCAL_ADDR" \
	wait_for 2 bpftool map lookup pinned "$PIN/$MAP_LOCAL_ADDR" key hex $(lkey fd00:203::1)
nsx a ip addr del fd00:203::1/64 dev va
lgone6() { ! bpftool map lookup pinned "$PIN/$MAP_LOCAL_ADDR" key hex $(lkey fd00:203::1) >/dev/null 2>&1; }
check "  deleted: gone" wait_for 2 lgone6
# More local addresses on va than toe_local_addr holds (4,096): the writes
# past it fail and are counted (map_errors); then they go again
me0=$(ctl -j stats | jq .daemon.map_errors)
for i in $(seq 0 4199); do echo "addr add 10.230.$((i / 250)).$((i % 250 + 1))/32 dev va"; done >"$CONF_DIR/addrs"
nsx a ip -batch "$CONF_DIR/addrs" || fail "ip -batch addr add"
merr() { [ "$(ctl -j stats | jq .daemon.map_errors)" -gt "$me0" ]; }
check "4,200 local addresses: the writes past $MAP_LOCAL_ADDR's 4,096 counted (map_errors $me0 -> $(ctl -j stats | jq .daemon.map_errors))" \
	wait_for 10 merr
sed 's/^addr add/addr del/' "$CONF_DIR/addrs" | nsx a ip -batch - || fail "ip -batch addr del"

# An interface that goes away takes its entries with it.
nsx a ip link del dz
check "interface deleted: its neighbours are gone" wait_for 2 not_in_map "$DZ" 192.0.2.10

check "toectl stats counted the neighbour writes and deletes, and the messages (neigh_set, neigh_del, netlink_messages)" \
	grew ".daemon.neigh_set, .daemon.neigh_del, .daemon.netlink_messages"
check "  the address writes and deletes (addr_set, addr_del)" grew ".daemon.addr_set, .daemon.addr_del"
check "  and the link events (link_events: dz deleted)" grew ".daemon.link_events"

# --- 100,000 updates, small receive buffer
stop_toed TERM
start_toed "$cfg" --rcvbuf 4096 || { fail "toed restarts with --rcvbuf 4096"; finish; }
check "  and --rcvbuf 4096 gives it 4 KiB (rb $(rbuf), 8 KiB at most)" \
	eval 'b=$(rbuf); test -n "$b" && test "$b" -le 8192'
BATCH=$CONF_DIR/batch
python3 - "$BATCH" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    n = 0
    for r in range(100):
        for i in range(1000):
            f.write("neigh replace 10.210.%d.%d lladdr 02:%02x:%02x:%02x:00:01 dev va\n"
                    % (i // 250, i % 250 + 1, r, i >> 8, i & 255))
            n += 1
    for i in range(0, 1000, 5):          # and delete a fifth of them
        f.write("neigh del 10.210.%d.%d dev va\n" % (i // 250, i % 250 + 1))
PY
t0=$(date +%s.%N)
nsx a ip -batch "$BATCH" || fail "ip -batch"
t1=$(date +%s.%N)
echo "# 100,200 neighbour updates in $(echo "$t1 - $t0" | bc 2>/dev/null || echo "?") s"
check "100,000 updates with a 4 KiB receive buffer: the map ends equal to ip neigh show" \
	wait_for 30 same va "$VA"
n=$(bpftool -j map dump pinned "$PIN/$MAP_NEIGH" | python3 "$NMAP" map "$VA" | grep -c "^10\.210\.")
check "... 800 of the 1,000 addresses left, with their last MAC ($n)" test "$n" = 800
check "... a last MAC from round 99" in_map "$VA" "10.210.0.2 02:63:00:01:00:01 PERMANENT"
st=$(ctl -j stats)
echo "# $(jq -c '.daemon | {netlink_overruns, resyncs, neigh_set, neigh_del}' <<<"$st")"
check "the receive queue overran and toed resynchronised" \
	jq -e '.daemon.netlink_overruns > 0 and .daemon.resyncs > 1' <<<"$st"
nsx a ip neigh flush dev va
check "flush: the map follows" wait_for 10 same va "$VA"
# A neighbour dump interrupted: the kernel flags a dump a change
# interrupted with NLM_F_DUMP_INTR (the neighbour dump never does, so
# toed's test knob TOE_TOED_NEIGH_DUMP_INTR flags its first N).  toed
# starts over with empty sets, each time, and the map ends equal to ip
# neigh show, an entry made while toed was away included.
stop_toed
nsx a ip neigh add 10.202.0.61 lladdr 02:00:00:00:61:01 dev va nud permanent
TOE_TOED_NEIGH_DUMP_INTR=3 start_toed "$cfg" || { fail "toed starts again"; tail -5 "$TOED_LOG"; }
restarts() { ctl -j stats | jq -e '.daemon.dump_restarts == 3' >/dev/null; }
check "three interrupted neighbour dumps: toed redid the dump three times ($(ctl -j stats | jq -c '.daemon | {resyncs, dump_restarts}'))" \
	wait_for 5 restarts
check "  and the map equals ip neigh show (the entry made while toed was away in it)" \
	wait_for 5 same va "$VA"
check "  (10.202.0.61 in it)" in_map "$VA" "10.202.0.61 02:00:00:00:61:01 PERMANENT"
finish
