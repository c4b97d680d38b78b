#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Shared hosts (issue 16): pod-to-pod traffic on a container host.  Four
# pods (namespaces p0..p3, each process in its own child cgroup under the
# one opentoe is attached to) on one host bridge (namespace h, br0), rules
# by cgroup:
#   p0 -> p1   bypass on both ends (socket to socket across namespaces)
#   p2 -> p1   offloaded on t3 at p2's end, the host at p1's
#   p3 -> p1   the host (no rule: the default)
# While the three connections are open, each end's record has its own
# decision and namespace; the bypass carries p0's bytes and nobody else's;
# every transfer arrives byte-exact both ways (tcpx checks every byte);
# afterwards every record, sockhash entry, filter count and slot is gone
# and nothing was counted evicted.
. "$(dirname "$0")/../toed/setup.sh"
plan 15
need_cmd ping
SEND=3000000 REPLY=2000000

ns_add h || { fail "namespace h"; finish; }
nsx h ip link add br0 type bridge && nsx h ip link set br0 up || { fail "bridge"; finish; }
declare -a INO
for i in 0 1 2 3; do
	ns_add "p$i" && veth_pair "p$i" eth0 h "h$i" || { fail "pod p$i"; finish; }
	nsx h ip link set "h$i" master br0 up &&
		nsx "p$i" ip addr add "10.217.0.$((i + 1))/24" dev eth0 && nsx "p$i" ip link set eth0 up ||
		{ fail "pod p$i's link"; finish; }
	mkdir "$CG/p$i" && defer "cg_del $CG/p$i"
	INO[i]=$(stat -L -c %i /run/netns/"$(ns_name "p$i")")
done
check "every pod reaches p1 over the bridge" \
	bash -c "for i in 0 2 3; do nsenter --net=/run/netns/$(ns_name p)\$i ping -c1 -W2 10.217.0.2 >/dev/null || exit 1; done"
# in_pod I CMD...: CMD in pod I's namespace and cgroup
in_pod() {
	local i=$1; shift
	(echo $BASHPID >"$CG/p$i/cgroup.procs" && exec nsenter --net=/run/netns/"$(ns_name "p$i")" "$@")
}

load_toe || { fail "load"; finish; }
cfg=$(conf pods <<EOF2
device t3 type chelsio-t3 nconn 100
default host
rule bypass cgroup $CG/p0 rport 8000 netns any
rule bypass cgroup $CG/p1 lport 8000 remote 10.217.0.1/32 netns any
rule offload dev t3 cgroup $CG/p2 rport 8000 netns any
EOF2
)
start_toed "$cfg" || { fail "toed starts"; cat "$TOED_LOG"; finish; }
MON=$CONF_DIR/monitor # the text monitor: events name a namespace not toed's
ctl monitor >"$MON" 2>&1 &
defer "kill $!"
in_pod 1 python3 "$TCPX" server --port 8000 --reply $REPLY >"$CONF_DIR/server" 2>&1 &
defer "kill $!"
wait_for 5 grep -q ready "$CONF_DIR/server" || { fail "server in p1"; finish; }
declare -a CPID LP
# (held open until the checks below have read their records, unhold, 60 s
# at most: a loaded machine slows the checks, it does not close the
# connections under them)
for i in 0 2 3; do
	in_pod $i python3 "$TCPX" client --addr 10.217.0.2 --port 8000 --send $SEND --hold 60 \
		>"$CONF_DIR/c$i" 2>&1 &
	CPID[i]=$!
done
held() { grep -q held "$CONF_DIR/c0" && grep -q held "$CONF_DIR/c2" && grep -q held "$CONF_DIR/c3"; }
check "the three pods' connections are open" wait_for 15 held
for i in 0 2 3; do LP[i]=$(grep held "$CONF_DIR/c$i" | jq '.held[0]'); done
fl=$(ctl -j flows)
# row NS LPORT RPORT: the record of that end
row() { jq -c --argjson ns "$1" --argjson l "$2" --argjson r "$3" \
	'[.[] | select(.netns == $ns and .lport == $l and .rport == $r)] | if length == 1 then .[0] else {n: length} end' <<<"$fl"; }
p0=$(row "${INO[0]}" "${LP[0]}" 8000) p1a=$(row "${INO[1]}" 8000 "${LP[0]}")
p2=$(row "${INO[2]}" "${LP[2]}" 8000) p1b=$(row "${INO[1]}" 8000 "${LP[2]}")
p3=$(row "${INO[3]}" "${LP[3]}" 8000) p1c=$(row "${INO[1]}" 8000 "${LP[3]}")
d() { jq -r '"\(.decision // "none") in \(.netns_name // "?")"' <<<"$1"; }
check "p0 -> p1: both ends bypassed, each in its own namespace ($(d "$p0") / $(d "$p1a"))" \
	jq -e -s '.[0].decision == "bypass" and .[0].direction == "active" and
		.[1].decision == "bypass" and .[1].direction == "passive"' <<<"$p0 $p1a"
check "p2 -> p1: p2's end offloaded on t3, p1's on the host ($(d "$p2") / $(d "$p1b"))" \
	jq -e -s '.[0].decision == "offload" and .[0].device == "t3" and .[1].decision == "host"' <<<"$p2 $p1b"
check "p3 -> p1: the host at both ends, by the default ($(d "$p3") / $(d "$p1c"))" \
	jq -e -s '.[0].decision == "host" and .[0].reason == "default" and .[1].decision == "host"' <<<"$p3 $p1c"
check "  six records in all, named by their pods' namespaces" \
	jq -e '[.[] | select(.rport == 8000 or .lport == 8000) | .netns_name] | sort ==
		(["'"$(ns_name p0)"'", "'"$(ns_name p1)"'", "'"$(ns_name p1)"'", "'"$(ns_name p1)"'",
		  "'"$(ns_name p2)"'", "'"$(ns_name p3)"'"] | sort)' <<<"$fl"
check "t3 holds one live offloaded connection (p2's)" test "$(dev_live 0 live)" = 1
for i in 0 2 3; do unhold "$CONF_DIR/c$i"; done
for i in 0 2 3; do wait "${CPID[i]}" || fail "pod p$i's client: $(cat "$CONF_DIR/c$i")"; done
exact() { # I: its client sent SEND and got REPLY back, and the server read SEND from it
	jq -e -s --argjson s $SEND --argjson r $REPLY '.[-1].conns[0] | .sent == $s and .received == $r' \
		"$CONF_DIR/c$1" >/dev/null &&
		grep '^{' "$CONF_DIR/server" | jq -e -s --argjson p "${LP[$1]}" --argjson s $SEND \
			'[.[] | select(.peer_port == $p)] | length == 1 and .[0].bytes == $s and .[0].ok' >/dev/null
}
r=; for i in 0 2 3; do exact $i && r="$r p$i"; done
check "every transfer byte-exact both ways (exact:$r)" test "$r" = " p0 p2 p3"
bo() { jq -r '.bypass.bytes_out // 0' <<<"$1"; }
bi() { jq -r '.bypass.bytes_in // 0' <<<"$1"; }
check "the bypass carried p0's $SEND bytes to p1 (p0 out $(bo "$p0"), p1 in $(bi "$p1a"))" \
	test "$(bo "$p0")" = $SEND -a "$(bi "$p1a")" = $SEND
check "  and nobody else's (p2 $(bo "$p2"), p3 $(bo "$p3"), p1's other ends $(bi "$p1b") $(bi "$p1c"))" \
	test "$(bo "$p2")$(bo "$p3")$(bi "$p1b")$(bi "$p1c")" = 0000
gone() { test "$(bpftool -j map dump pinned "$PIN/$MAP_FLOWS" | jq length)" = 0; }
check "every record is gone once the connections closed" wait_for 10 gone
check "$MAP_BYPASS holds no socket" test "$(bpftool map dump pinned "$PIN/$MAP_BYPASS" 2>/dev/null | grep -c '^key')" = 0
check "$MAP_FLOW_FILTER counts nothing, t3's slots are free" test "$(filter_live)" = 0 -a "$(dev_live 0 live)" = 0
check "no record was counted evicted" test "$(stat_sum $STAT_FLOW_EVICTED)" = 0
closes() { # NS LPORT: the text monitor's flow_closed lines of that end
	grep -F "[flow_closed]" "$MON" | grep -F ":$2 " | grep -c " netns $1\$"
}
# (the monitor writes the close events as it reads them: a loaded machine
# delays the last ones)
closed_all() { test "$(closes "${INO[0]}" "${LP[0]}")" = 1 -a "$(closes "${INO[1]}" 8000)" = 3; }
wait_for 10 closed_all
check "the text monitor names each end's namespace in its close event (p0 $(closes "${INO[0]}" "${LP[0]}"), p1 $(closes "${INO[1]}" 8000))" \
	closed_all
finish
