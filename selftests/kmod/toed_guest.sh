#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# Run by init.sh inside the module-test guest, after toe_kmod_test: the
# datapath (toe-loader), toed and toectl against opentoe.ko on Debian's 6.1
# kernel, with real TCP through a veth whose peer is in another network
# namespace.  Prints TAP lines ("ok N - toed: ...") that test_kmod.sh relays.
#
#   toed starts without the module: one info line, toectl works;
#   the module is loaded and a simulated T3 is made on veth6 while toed runs:
#   toe0 joins toe_devs (TOE_DEVF_KMOD), toectl devices shows its TOM;
#   a connection the rule offloads holds a TID (toectl flows and the
#   module's TID_GET agree on it and on the tuple), the module's L2T entry
#   for the peer has the MAC toed mirrored into toe_neigh, the TID is freed
#   at close; a flow routed elsewhere is refused by the module (ENETUNREACH)
#   and counted; toed killed with a flow open and restarted adopts its TID;
#   killed, the flow closed meanwhile, restarted: the TID is freed;
#   listeners a rule offloads on toe0 get a server TID each in the module
#   (LISTEN_GET, toectl devices), given back at close, 100 of them on 64
#   server TIDs, reconciled after a SIGKILL (closed meanwhile: stopped;
#   still open: kept, once); the module unloaded under toed:
#   configuration devices only again.
PATH=/bin:/sbin:/usr/bin:/usr/sbin
ip=/usr/sbin/ip
n=0
failed=0
CONF=/etc/opentoe/opentoe.conf
LOG=/tmp/toed.log

tap() { # RC DESC: 0 for ok, as the test's own exit status
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - toed: $2"
		return 0
	fi
	echo "not ok $n - toed: $2"
	failed=1
	return 1
}
check() { # DESC CMD...
	d=$1
	shift
	"$@" >/dev/null 2>&1
	tap $? "$d"
}
skip_rest() {
	n=$((n + 1))
	echo "ok $n - toed: toed against the module # SKIP $*"
	exit 0
}
wait_for() { # TENTHS CMD...
	t=$1
	shift
	while [ "$t" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		usleep 100000
		t=$((t - 1))
	done
	return 1
}
# one JSON object a line, from toectl -j's compact arrays
objs() { sed 's/},{/}\n{/g'; }
field() { # NAME: the number or string value of "NAME" on each line
	sed -n "s/.*\"$1\":\"\\{0,1\\}\([^,\"}]*\).*/\1/p"
}

# server PORT [NETNS]: nc -l in the background.  Its stdin must stay open
# (a background job's stdin is /dev/null, and nc closes its side of the
# connection at EOF): a sleep feeds it.  The client closes first.
server() {
	if [ -n "${2:-}" ]; then
		sleep 20 | nsenter --net=/run/netns/"$2" nc -l -p "$1" >/tmp/got"$1" &
	else
		sleep 20 | nc -l -p "$1" >/tmp/got"$1" &
	fi
	SRV=$!
	usleep 300000
}

start_toed() {
	toed --config "$CONF" --log-level debug >>"$LOG" 2>&1 &
	TOED=$!
	wait_for 100 toectl status
}
stop_toed() { # SIGNAL
	kill "-$1" "$TOED" 2>/dev/null
	wait "$TOED" 2>/dev/null
}

mount -t bpf bpf /sys/fs/bpf || skip_rest "cannot mount bpffs"
mkdir -p /sys/fs/cgroup /run/netns /etc/opentoe
mount -t cgroup2 none /sys/fs/cgroup || skip_rest "cannot mount cgroup2"
# toe_kmod_test ends with the module unloaded; toed must first run without it
lsmod | grep -q '^opentoe' && rmmod opentoe

# ---- the hosts: veth6 10.7.0.1 here, veth7 10.7.0.2 in namespace peer
$ip netns add peer &&
	$ip link add veth6 type veth peer name veth7 &&
	$ip link set veth7 netns peer &&
	$ip addr add 10.7.0.1/24 dev veth6 && $ip link set veth6 up &&
	$ip -n peer addr add 10.7.0.2/24 dev veth7 && $ip -n peer link set veth7 up &&
	$ip -n peer link set lo up && $ip link set lo up ||
	skip_rest "cannot set up veth6/veth7 and namespace peer"
PEERMAC=$($ip -n peer link show veth7 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')

# ---- the datapath on Debian's kernel
if ! TOE_DEBUG=1 toe-loader load --dev veth6 --cgroup /sys/fs/cgroup >/tmp/loader.log 2>&1; then
	grep -iE 'toe-loader:|not allowed|invalid|unknown|failed' /tmp/loader.log | tail -n 15 | sed 's/^/# /'
	tap 1 "toe-loader loads the datapath on this kernel"
	exit 1
fi
tap 0 "toe-loader loads the datapath (sock_ops on the cgroup2 root, XDP on veth6)"

cat >"$CONF" <<'EOF'
# toe0 comes from the kernel module
device toe0 kmod
rule offload dev toe0 rport 5300
rule offload dev toe0 rport 5301
rule offload dev toe0 lport 5400-5599
EOF
chmod 600 "$CONF"
check "toed --check accepts a kmod device without the module" toed --check "$CONF"

# ---- toed without the module
start_toed
tap $? "toed starts without the module"
check "... and logs 'kernel module not loaded' at info, once" \
	test "$(grep -c 'info: kernel module not loaded: configuration devices only' "$LOG")" = 1
check "... toectl status says so" sh -c 'toectl status | grep -q "module: *not loaded"'
check "... toe0 is not a device yet" sh -c '! toectl -j devices | grep -q toe0'
check "... and its rule is kept, as 'device toe0 kmod'" sh -c 'toectl policy | grep -q "^device toe0 kmod"'

# ---- the module, loaded under toed, and a simulated T3 on veth6
insmod /lib/modules/opentoe.ko &&
	echo "1 veth6 3 16 toe%d" >/sys/bus/opentoe_sim/new_device
tap $? "insmod, a simulated T3 (nconn 16) on veth6"
toe0() { toectl -j devices | objs | grep '"device":"toe0"'; }
wait_for 50 toe0
tap $? "toed sees the module and its device: toe0 in toectl devices"
D=$(toe0)
echo "# $D"
check "... kmod, chelsio-t3, TOM chelsio_tom (the module's), on veth6, nconn 16" \
	sh -c "echo '$D' | grep -q '\"type\":\"chelsio-t3\",\"module\":\"chelsio_tom\",\"kmod\":true,\"interface\":\"veth6\".*\"nconn\":16'"
check "toed logged the module's arrival" grep -q 'kernel module loaded' "$LOG"

# ---- a real connection the rule offloads
server 5300 peer
(echo hello; sleep 6) | nc 10.7.0.2 5300 &
CLI=$!
flow() { toectl -j flows port 5300 | objs | grep '"rport":5300' | grep '"decision":"offload"'; }
held() { flow | grep -q '"tid":[0-9]'; }
wait_for 50 held
tap $? "the offloaded flow holds a TID (toectl flows)" || toectl -j flows | sed 's/^/# /'
F=$(flow)
echo "# $F"
TID=$(echo "$F" | field tid)
LPORT=$(echo "$F" | field lport)
toe_kmod_test tids >/tmp/tids
sed 's/^/# module: /' /tmp/tids
check "the module has TID $TID for 10.7.0.1:$LPORT -> 10.7.0.2:5300, held by the host" \
	grep -q "^tid $TID dev [0-9]* state [13] l2t [0-9]* src 10.7.0.1:$LPORT dst 10.7.0.2:5300$" /tmp/tids
one_tid() { toe0 | grep -q '"tids_used":1,"tids_held":1,'; }
check "toectl devices: toe0 has 1 TID in use, held by toed" one_tid
toe_kmod_test l2t >/tmp/l2t
sed 's/^/# module: /' /tmp/l2t
L2TMAC=$(sed -n 's/.* addr 10\.7\.0\.2 lladdr \([0-9a-f:]*\) .*/\1/p' /tmp/l2t)
NEIGHMAC=$(toectl -j neigh | objs | grep '"dst":"10.7.0.2"' | field lladdr)
echo "# L2T $L2TMAC, toe_neigh $NEIGHMAC, veth7 $PEERMAC"
check "the module's L2T entry for 10.7.0.2 has toed's toe_neigh MAC (veth7's)" \
	test -n "$L2TMAC" -a "$L2TMAC" = "$NEIGHMAC" -a "$L2TMAC" = "$PEERMAC"
check "toectl stats: toed finds the module's L2T in agreement with toe_neigh (1 entry, 0 differ)" \
	sh -c 'toectl -j stats | grep -q "\"kmod_l2t_used\":1,\"kmod_l2t_agree\":1,\"kmod_l2t_differ\":0,"'
wait "$CLI"
wait "$SRV"
check "the connection carried its data" grep -q hello /tmp/got5300
tidgone() { ! toe_kmod_test tids | grep -q "^tid $TID "; }
wait_for 50 tidgone
tap $? "the TID is freed after close (gone from TID_GET)"
check "... toectl stats: 1 allocated, 1 freed" \
	sh -c 'toectl -j stats | grep -q "\"kmod_tid_alloc\":1,.*\"kmod_tid_free\":1,"'

# ---- a flow the datapath offloads that the module refuses: its route
# leaves through lo, not veth6 (ENETUNREACH): logged and counted
server 5301
echo x | nc 127.0.0.1 5301
wait "$SRV"
unreach() { toectl -j stats | grep -q '"kmod_tid_alloc_unreach":1,.*"kmod_offloaded_no_tid":1,'; }
wait_for 30 unreach
tap $? "a flow routed through lo: the module refuses it (ENETUNREACH), counted as offloaded without a TID"
check "... and logged with the module's reason" grep -q 'warning: flow 127.0.0.1:[0-9]* -> 127.0.0.1:5301: offloaded by the datapath, refused by the kernel module' "$LOG"

# ---- toed restarts: adopts a held TID, frees one whose flow closed meanwhile
server 5300 peer
(echo a; sleep 5) | nc 10.7.0.2 5300 &
CLI=$!
wait_for 50 held
TID=$(flow | field tid)
stop_toed 9
start_toed
tap $? "toed killed (SIGKILL) with a flow open, started again"
check "... it adopts the flow's TID $TID" \
	sh -c "toectl -j flows port 5300 | grep -q '\"tid\":$TID[,}]' && toectl -j stats | grep -q '\"kmod_tids_adopted\":1,'"
wait "$CLI"
wait "$SRV"
wait_for 50 tidgone
tap $? "... and frees it when the flow closes"

server 5300 peer
(echo a; sleep 3) | nc 10.7.0.2 5300 &
CLI=$!
wait_for 50 held
TID=$(flow | field tid)
stop_toed 9
wait "$CLI"
wait "$SRV"
check "toed killed; the flow closes without it; its TID $TID stays held" \
	sh -c "toe_kmod_test tids | grep -q '^tid $TID '"
start_toed
wait_for 50 tidgone
tap $? "toed started again frees the TID no flow holds"
check "... counted as orphaned" sh -c 'toectl -j stats | grep -q "\"kmod_tids_orphaned\":1,"'

# ---- listeners the rule offloads (lport 5400-5599 on toe0): a server TID
# each in the module, asked for by toed and given back when they close
MIDX=$(toe0 | field kmod_index)
nlsn() { toe_kmod_test listeners | grep -c "^listener dev $MIDX tid [0-9]* .* port ${1:-[0-9]*}\$"; }
has_lsn() { [ "$(nlsn "$1")" = "$2" ]; }
lsn_dev() { toe0 | grep -q "\"listeners\":$1,\"listeners_held\":$2[,}]"; }
stat_of() { toectl -j stats | objs | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
sleep 30 | nc -l -p 5400 >/dev/null &
LSN=$!
wait_for 50 has_lsn 5400 1
tap $? "a listener on port 5400: the module has it on toe0 ($MIDX) with a server TID" ||
	{ toe_kmod_test listeners | sed 's/^/# module: /'; grep -i listen "$LOG" | tail -n 5 | sed 's/^/# toed: /'; }
toe_kmod_test listeners | sed 's/^/# module: /'
check "... the only one" has_lsn "" 1
check "toectl devices: toe0 has 1 listener, held by toed" lsn_dev 1 1
kill "$LSN"
wait "$LSN" 2>/dev/null
wait_for 50 has_lsn "" 0
tap $? "closed: the module's listener is gone"
check "... toectl devices: 0 listeners, 0 held" lsn_dev 0 0

# 100 listeners at once on a T3 (64 server TIDs): 64 held, 36 refused
rm -f /tmp/lm /tmp/lm.out
mkfifo /tmp/lm
toe_kmod_test listen-many 100 5450 </tmp/lm >/tmp/lm.out 2>&1 &
LM=$!
exec 7>/tmp/lm
wait_for 50 grep -q ready /tmp/lm.out
wait_for 100 has_lsn "" 64
tap $? "100 listeners: the module's 64 server TIDs all taken ($(nlsn) listeners)"
F=$(stat_of kmod_listen_failed)
check "... the other 36 refused and counted (kmod_listen_failed $F)" test "${F:-0}" -ge 36
check "... toectl devices: 64 listeners, 64 held" lsn_dev 64 64
exec 7>&-
wait "$LM"
wait_for 100 has_lsn "" 0
tap $? "closed: none left in the module ($(nlsn))"
none_held() { lsn_dev 0 0 && [ "$(stat_of kmod_listeners_held)" = 0 ]; }
check "... none held by toed (toectl devices, kmod_listeners_held 0)" none_held

# toed killed with a listener open, the listener closed meanwhile: the
# restarted toed stops the module's listener that nothing backs
sleep 30 | nc -l -p 5401 >/dev/null &
LSN=$!
wait_for 50 has_lsn 5401 1
stop_toed 9
kill "$LSN"
wait "$LSN" 2>/dev/null
check "toed killed, the listener closed meanwhile: the module keeps its server TID" has_lsn 5401 1
start_toed
wait_for 50 has_lsn 5401 0
tap $? "toed started again stops it (reconciled)"
check "... counted (kmod_listen_reconciled $(stat_of kmod_listen_reconciled))" \
	test "$(stat_of kmod_listen_reconciled)" = 1

# toed restarted with a listener still open keeps exactly one
sleep 30 | nc -l -p 5402 >/dev/null &
LSN=$!
wait_for 50 has_lsn 5402 1
stop_toed 9
start_toed
tap $? "toed killed and started again with a listener open on port 5402"
usleep 300000
check "... the module has exactly one listener for it" has_lsn 5402 1
kept() { lsn_dev 1 1 && [ "$(stat_of kmod_listen_reconciled)" = 0 ]; }
check "... held by toed, nothing reconciled (toectl devices 1/1)" kept
kill "$LSN"
wait "$LSN" 2>/dev/null
wait_for 50 has_lsn 5402 0
tap $? "... and stops it when the listener closes"

# ---- the module unloaded under toed
echo 1 >/sys/bus/opentoe_sim/del_device && rmmod opentoe
tap $? "del_device, rmmod opentoe with toed running"
gone() { ! toectl -j devices | grep -q toe0; }
wait_for 50 gone
tap $? "toe0 leaves toectl devices"
check "toed logged 'kernel module unloaded: configuration devices only'" \
	grep -q 'info: kernel module unloaded: configuration devices only' "$LOG"
check "toectl status: not loaded" sh -c 'toectl status | grep -q "module: *not loaded"'
check "toed is still running" toectl status

stop_toed TERM
grep -E 'error|warning' "$LOG" | sed 's/^/# toed: /' | head -n 20
toe-loader unload >/dev/null
$ip netns del peer
exit $failed
