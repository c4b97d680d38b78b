#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# Run by init.sh inside the module-test guest, after toe_kmod_test: the
# datapath (toe-loader), toed and toectl against opentoe.ko on Debian's 6.1
# kernel, with real TCP through a veth whose peer is in another network
# namespace.  Prints TAP lines ("ok N - toed: ...") that test_kmod.sh relays.
#
#   toed starts without the module: one info line, toectl works;
#   the module is loaded and a simulated T3 (nconn 16) is made on veth6
#   while toed runs: toe0 joins toe_devs (TOE_DEVF_KMOD), toectl devices
#   shows its TOM, and toed reserves its 16 TIDs into the datapath's pool;
#   a connection the rule offloads takes one there, synchronously, and toed
#   binds it to the flow (toectl flows and the module's TID_GET agree on it
#   and on the tuple); the module's L2T entry for the peer has the MAC toed
#   mirrored into toe_neigh; at close the TID goes back, and into the pool;
#   a flow routed through lo is refused by the datapath itself (reason
#   route); one the module refuses to bind (fail_connect) is demoted to the
#   host before any "offloaded" is heard (reason module);
#   1,000 binds refused for connections that had closed (toed stopped
#   while 16 connect and reset, batch after batch): the pool 16 TIDs,
#   none twice, each reserved in the module, no flow demoted;
#   then one truth, step by step: the datapath's live count, toed's TIDs and
#   the module's TIDs in use are equal after offloading up to capacity,
#   refusing past it, closing half, restarting toed, killing it, closing
#   flows while it is away (the datapath knows at once; the module when
#   toed is back), removing the device with flows open, a new device,
#   its flows closed while toed is stopped and the event ring full (the
#   TIDs back once toed reconciles for the lost events); and at each of
#   those steps and more (binds refused, the pool exhausted, listen,
#   accept), the TID invariant: pool + bound + in flight = the module's
#   host-held TIDs at once, the counts converged within 100 ms;
#   listeners a rule offloads on toe0 get a server TID each in the module
#   (LISTEN_GET, toectl devices), taken at listen time from the server pool
#   toed fills, given back at close; 100 of them on 64 server TIDs: 36 on
#   the host, reason no_stid, whose accepted connections take no TID;
#   toe_listeners full: the next listener host (listeners_full), its
#   server TID back in the pool at once, the invariant exact right after;
#   two SO_REUSEPORT listeners on one port: one in the module, the
#   invariant exact; a loss reconcile during takes (held back by hand):
#   the TID and the server TID kept, then bound and given back;
#   reconciled after a SIGKILL (closed meanwhile: stopped;
#   still open: kept, once); a tenant's listener kept home (reason route,
#   counted); a listener the device refuses (fail_listen); every tracepoint of the module recorded in
#   tracefs, and one connection's TID followed through them by
#   scripts/trace/tid.bt (bpftrace from this machine's root over
#   virtio-9p; tracefs without it); the module unloaded under toed:
#   configuration devices only again.
PATH=/bin:/sbin:/usr/bin:/usr/sbin
ip=/usr/sbin/ip
n=0
failed=0
CONF=/etc/opentoe/opentoe.conf
LOG=/tmp/toed.log
# the pinned maps' names (MAP_DEV_LIVE=...), build/toe_names.sh: test_kmod.sh
# copies it in
. /bin/toe_names.sh

# The time each check took since the one before (its step's cost, under
# TCG): a line "step-time SECONDS N DESC" that test_kmod.sh sorts, to
# print the slowest ten at the end.
t_last=$(cut -d' ' -f1 /proc/uptime)
tap() { # RC DESC: 0 for ok, as the test's own exit status
	n=$((n + 1))
	t_now=$(cut -d' ' -f1 /proc/uptime)
	echo "step-time $(awk -v a="$t_last" -v b="$t_now" 'BEGIN { printf "%.1f", b - a }') $n toed: $2"
	t_last=$t_now
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
poll_us() { # USECS N CMD...: CMD every USECS us, N times at most
	local us=$1 t=$2
	shift 2
	while [ "$t" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		usleep "$us"
		t=$((t - 1))
	done
	return 1
}
wait_for() { poll_us 100000 "$@"; } # TENTHS CMD...
# listening PORT [NETNS]: a TCP socket listens on PORT (/proc/net/tcp and
# tcp6, state 0A) in NETNS or here; servers are waited for with it, not a fixed
# sleep, which a guest starved of CPU outruns
listening() {
	${2:+nsenter --net=/run/netns/$2} cat /proc/net/tcp /proc/net/tcp6 |
		grep -q "^ *[0-9]*: [0-9A-F]*:$(printf %04X "$1") 0*:0000 0A "
}
# one JSON object a line, from toectl -j's compact arrays
objs() { sed 's/},{/}\n{/g'; }
field() { # NAME: the number or string value of "NAME" on each line
	sed -n "s/.*\"$1\":\"\\{0,1\\}\([^,\"}]*\).*/\1/p"
}
# toectl -j stats' counter NAME, status' field NAME
stat_of() { toectl -j stats | objs | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
rst() { toectl -j status | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }

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
	wait_for 50 listening "$1" "${2:-}"
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
# a 64 KiB event ring (the tests' knob): events are lost quickly on purpose
if ! TOE_DEBUG=1 TOE_LOADER_EVENT_RING=65536 toe-loader load --hook xdp --dev veth6 --cgroup /sys/fs/cgroup >/tmp/loader.log 2>&1; then
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
rule offload dev toe0 rport 5302 netns any
rule offload dev toe0 lport 5600 netns any
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
insmod /lib/modules/opentoe.ko
# the module's tracepoints, recorded in tracefs from here to the end
TR=/sys/kernel/tracing
[ -d "$TR/events" ] || mount -t tracefs nodev "$TR"
echo 1 >"$TR/events/opentoe/enable"
lsmod | grep -q '^opentoe' &&
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
check "/proc/net/toe/devices agrees: toe0, chelsio_tom, veth6" \
	grep -q '^toe0  *chelsio_tom  *veth6$' /proc/net/toe/devices

# ---- a real connection the rule offloads: the TID it took from the pool.
# The device lets go of a closed TID 500 ms late (as a card acknowledges a
# close later): toed's refill at the close finds none free, and its timer
# must put it back into the pool.
SIMDBG=/sys/kernel/debug/opentoe_sim/opentoe_sim1
[ -d "$SIMDBG" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
echo 500 >"$SIMDBG/release_delay_ms"
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
# the datapath took the TID at connect; toed binds it when it reads the
# event (at once, but a slow guest may be a moment behind)
bound() {
	toe_kmod_test tids >/tmp/tids
	grep -q "^tid $TID dev [0-9]* state [13] l2t [0-9]* src 10.7.0.1:$LPORT dst 10.7.0.2:5300$" /tmp/tids
}
wait_for 50 bound
tap $? "the module has TID $TID for 10.7.0.1:$LPORT -> 10.7.0.2:5300, held by the host" ||
	sed 's/^/# module: /' /tmp/tids | head -n 4
check "... and the other 15 reserved, in the datapath's pool" \
	test "$(grep -c '^tid [0-9]* dev [0-9]* state 5 reserved$' /tmp/tids)" = 15
one_tid() { toe0 | grep -q '"tids_used":1,"tids_held":1,"tids_reserved":15,'; }
wait_for 30 one_tid
tap $? "toectl devices: toe0 has 1 TID in use, held by toed, 15 reserved"
toe_kmod_test l2t >/tmp/l2t
sed 's/^/# module: /' /tmp/l2t
L2TMAC=$(sed -n 's/.* addr 10\.7\.0\.2 lladdr \([0-9a-f:]*\) .*/\1/p' /tmp/l2t)
NEIGHMAC=$(toectl -j neigh | objs | grep '"dst":"10.7.0.2"' | field lladdr)
echo "# L2T $L2TMAC, $MAP_NEIGH $NEIGHMAC, veth7 $PEERMAC"
check "the module's L2T entry for 10.7.0.2 has toed's $MAP_NEIGH MAC (veth7's)" \
	test -n "$L2TMAC" -a "$L2TMAC" = "$NEIGHMAC" -a "$L2TMAC" = "$PEERMAC"
l2t_agree() { toectl -j stats | grep -q '"kmod_l2t_used":1,"kmod_l2t_agree":1,"kmod_l2t_differ":0,'; }
wait_for 30 l2t_agree
tap $? "toectl stats: toed finds the module's L2T in agreement with $MAP_NEIGH (1 entry, 0 differ)"
wait "$CLI"
wait "$SRV"
check "the connection carried its data" grep -q hello /tmp/got5300
tidgone() { ! toe_kmod_test tids | grep -q "src 10.7.0.1:$LPORT "; }
wait_for 50 tidgone
tap $? "its TID is freed after close (no TID of that flow in TID_GET)"
check "... toectl stats: 1 bound, 1 freed" \
	sh -c 'toectl -j stats | grep -q "\"kmod_tid_bound\":1,.*\"kmod_tid_free\":1,"'
refilled() { toe_kmod_test devs | grep -q ' used 0 reserved 16 '; }
wait_for 50 refilled
tap $? "... and reserved again into the pool after the device's late release (used 0, reserved 16)"
echo 0 >"$SIMDBG/release_delay_ms"

# ---- a flow routed through lo: the datapath refuses it itself, since its
# route does not leave through veth6 (what the module would say), and the
# module is never asked
server 5301
echo x | nc 127.0.0.1 5301
wait "$SRV"
routed() { grep -q 'warning: \[flow_refused\] 127.0.0.1:[0-9]* -> 127.0.0.1:5301 host dev - reason route ' "$LOG"; }
wait_for 30 routed
tap $? "a flow routed through lo: refused by the datapath, reason route (logged)"
check "... counted ($MAP_STATS tid_route_other_if), the module never asked" \
	sh -c 'toectl -j stats | grep -q "\"tid_route_other_if\":1," &&
		toectl -j stats | grep -q "\"kmod_tid_bind_unreach\":0,"'

# ---- the module refuses to bind a flow's TID (the simulated device's
# fail_connect): toed demotes it to the host before anyone hears "offloaded"
echo 1 >"$SIMDBG/fail_connect"
server 5300 peer
(echo demoted; sleep 3) | nc 10.7.0.2 5300 &
CLI=$!
demoted() { toectl -j flows port 5300 | objs | grep '"rport":5300' | grep -q '"decision":"host","reason":"module"'; }
wait_for 50 demoted
tap $? "the module refuses the TID (fail_connect): the flow is demoted, reason module" ||
	toectl -j flows | sed 's/^/# /'
check "... logged, and its event is flow_refused, not flow_offloaded" \
	sh -c "grep -q 'refused TID [0-9]* (.*): demoted to the host' '$LOG' &&
		grep -q 'warning: \[flow_refused\] 10.7.0.1:[0-9]* -> 10.7.0.2:5300 host dev toe0 reason module' '$LOG'"
nolive() { toe0 | grep -q '"live":0,' && toe_kmod_test devs | grep -q ' used 0 reserved 16 '; }
wait_for 30 nolive
tap $? "... its slot released (live 0), its TID back in the pool (used 0, reserved 16)"
echo 0 >"$SIMDBG/fail_connect"
wait "$CLI"
wait "$SRV"
check "... and the connection carried its data, on the host" grep -q demoted /tmp/got5300

# serve_hold PORT N [SRV_NS [CLI_NS]]: toe_kmod_test's server on PORT in
# namespace SRV_NS (peer), its pid in $SV; once it listens, N connections
# to it held from CLI_NS (toed's own namespace), their pid in $H, the
# holder's "connected N" in /tmp/heldPORT.
serve_hold() {
	nsenter --net=/run/netns/"${3:-peer}" toe_kmod_test serve "$1" &
	SV=$!
	wait_for 50 listening "$1" "${3:-peer}"
	${4:+nsenter --net=/run/netns/$4} toe_kmod_test hold 10.7.0.2 "$1" "$2" >/tmp/held"$1" &
	H=$!
}

# ---- binds the module refuses after their connections closed: the
# device takes 1 s to refuse (connect_delay_ms), and the clients are
# gone by then.  Each TID is given back once, by its flow_closed, and not
# also put back in the pool (then it was booked twice: freed in the module
# while in the pool, and the next flow to take it demoted, reason nodev;
# the steps below would see that)
echo 1 >"$SIMDBG/fail_connect"
echo 1000 >"$SIMDBG/connect_delay_ms"
serve_hold 5301 3
poll_us 20000 250 grep -q '^connected 3 ' /tmp/held5301
kill "$H"
wait "$H" 2>/dev/null
refusals() { toectl -j stats | sed -n 's/.*"kmod_tid_bind_refused":\([0-9]*\).*/\1/p'; }
gonefl() { [ "$(refusals)" -ge 4 ]; }
wait_for 50 gonefl
tap $? "3 binds refused after their connections closed (connect_delay_ms 1000; refusals $(refusals), 1 before)"
echo 0 >"$SIMDBG/connect_delay_ms"
echo 0 >"$SIMDBG/fail_connect"
kill "$SV" 2>/dev/null
wait "$SV" 2>/dev/null
wait_for 30 nolive
tap $? "... their TIDs given back once: live 0, the module's used 0 reserved 16 ($(toe_kmod_test devs | grep -o 'used [0-9]* reserved [0-9]*'))"

# ---- the same 4-tuple from a tenant's namespace whose interface has
# veth6's ifindex there, under a 'netns any' rule: toe0's TIDs are for
# sockets of toed's namespace only (its interface is there), so the
# tenant's flow stays on the host, reason route, and takes no TID
IDX6=$(cat /sys/class/net/veth6/ifindex)
$ip netns add ten && $ip netns add ten2 &&
	$ip -n ten link add tv0 index "$IDX6" type veth peer name tv1 netns ten2 &&
	$ip -n ten addr add 10.7.0.1/24 dev tv0 && $ip -n ten link set tv0 up &&
	$ip -n ten2 addr add 10.7.0.2/24 dev tv1 && $ip -n ten2 link set tv1 up
tap $? "a tenant's namespace with an interface of veth6's ifindex ($IDX6), 10.7.0.1 to 10.7.0.2 there too"
serve_hold 5302 1 ten2 ten
tenroute() { grep -q 'warning: \[flow_refused\] 10.7.0.1:[0-9]* -> 10.7.0.2:5302 host dev - reason route ' "$LOG"; }
wait_for 50 tenroute
tap $? "... its flow, matched by the rule: host, reason route (logged)" ||
	grep 5302 "$LOG" | sed 's/^/# /'
check "... the module's TIDs untouched (used 0 reserved 16)" \
	sh -c 'toe_kmod_test devs | grep -q " used 0 reserved 16 "'
kill "$H" "$SV" 2>/dev/null
wait "$H" "$SV" 2>/dev/null
$ip netns del ten
$ip netns del ten2

# ---- one truth: the datapath's live count, toed's TIDs and the module's
# TIDs in use agree after every step.  And the TID invariant
# (docs/architecture.md) holds at every step, not only once things
# settle: toe0's TIDs in the datapath's pool + bound by toed + in flight
# (taken by the datapath, not yet settled by toed) = the module's TIDs the
# host holds (DEV_TIDS_HOST), in a snapshot toed's tid_seq says is
# whole (toectl, the module, toectl again: toed changed nothing in the
# module in between), taken at once after the step; and the live counts
# converge (nothing in flight, the pool full again, toed's TIDs = the
# live count), toed's last settle of a TID (tid_settled_ms, its
# CLOCK_MONOTONIC) within 100 ms of the step, or of the datapath's last
# event with a TID if that came later (tid_event_ms: a close is done when
# TCP's is): under TCG a probe takes longer than that, so the times are
# toed's and the datapath's, not the probe's.  The pool full again waits
# for the device's release as well (its workqueue: later under load).
# Steps: connect, capacity, close, binds refused (fail_connect), the pool
# exhausted (release_delay_ms), toed restarted and killed, listen, accept,
# stop listening, the device removed, a new one, events lost (a 64 KiB
# ring, TOE_LOADER_EVENT_RING)
SERVE=
nsenter --net=/run/netns/peer toe_kmod_test serve 5300 &
SERVE=$!
wait_for 50 listening 5300 peer
counts() { # "live held used" of toe0 (index 0): the datapath's, toed's, the module's
	l=$(bpftool -j map lookup pinned "/sys/fs/bpf/opentoe/$MAP_DEV_LIVE" key 0 0 0 0 |
		sed -n 's/.*"live":\([0-9]*\),.*/\1/p')
	h=$(toectl -j stats | sed -n 's/.*"kmod_tids_held":\([0-9]*\),.*/\1/p')
	u=$(toe_kmod_test devs | sed -n 's/.* name toe0 .* used \([0-9]*\) .*/\1/p')
	echo "$l $h ${u:-0}"
}
agree() { [ "$(counts)" = "$1 $1 $1" ]; }
step() { # N DESC
	wait_for 50 agree "$1"
	tap $? "$2: live = toed's TIDs = the module's TIDs in use = $1 ($(counts))"
}
now_ms() { # since boot, in 10 ms steps (CLOCK_BOOTTIME: no suspend here)
	read -r up _ </proc/uptime
	echo "${up%.*}${up#*.}0"
}
T0=0 # when the step was done (now_ms)
seqs() { echo "$1" | sed -n 's/.*"tid_seq":\([0-9]*\).*"stid_seq":\([0-9]*\).*/\1 \2/p'; }
inv_snap() { # one snapshot of toe0's TID counts; false: torn or unread
	A=$(toe0)
	M=$(toe_kmod_test devs | grep ' name toe0 ')
	MHOST=$(echo "$M" | sed -n 's/.* host \([0-9]*\) .*/\1/p')
	MLSN=$(echo "$M" | sed -n 's/.* listeners \([0-9]*\) .*/\1/p')
	MSTID=$(echo "$M" | sed -n 's/.* stids \([0-9]*\).*/\1/p')
	S1=$(seqs "$A")
	[ -n "$S1" ] && [ "$S1" = "$(seqs "$(toe0)")" ] || return 1
	POOL=$(echo "$A" | field tid_pool)
	HELD=$(echo "$A" | field tids_held)
	FLIGHT=$(echo "$A" | field tid_in_flight)
	HOST=$(echo "$A" | field tids_host)
	USED=$(echo "$A" | field tids_used)
	LIVE=$(echo "$A" | field live)
	SPOOL=$(echo "$A" | field stid_pool)
	SHELD=$(echo "$A" | field listeners_held)
	SFLIGHT=$(echo "$A" | field stid_in_flight)
	SLSN=$(echo "$A" | field listeners)
	SRES=$(echo "$A" | field stids_reserved)
	[ -n "$POOL" ] && [ -n "$HELD" ] && [ -n "$FLIGHT" ] && [ -n "$MHOST" ] &&
		[ -n "$SPOOL" ] && [ -n "$SFLIGHT" ] && [ -n "$MLSN" ] && [ -n "$MSTID" ]
}
inv_str() {
	echo "pool $POOL + bound $HELD + in flight $FLIGHT = module $MHOST (toed read $HOST); server: pool $SPOOL + listeners $SHELD + in flight $SFLIGHT = module $MLSN listeners + $MSTID reserved (toed read $SLSN + $SRES)"
}
# the server TIDs too: in the server pool + bound to toed's listeners +
# taken by a listener, not yet settled = the module's listeners + its
# server TIDs reserved on none
inv_holds() {
	[ $((POOL + HELD + FLIGHT)) = "$MHOST" ] && [ "$HOST" = "$MHOST" ] &&
		[ $((SPOOL + SHELD + SFLIGHT)) = $((MLSN + MSTID)) ] &&
		[ "$SLSN" = "$MLSN" ] && [ "$SRES" = "$MSTID" ]
}
converged() { [ "$FLIGHT" = 0 ] && [ "$HELD" = "$LIVE" ] && [ $((POOL + USED)) = 16 ] && [ "$SFLIGHT" = 0 ]; }
INV_WHOLE=0
INV_TORN=0
CONV_MAX=0
CONVS=
NSTEPS=0
N100=0
inv_step() { # DESC: the invariant at once, then the counts converged 100 ms after T0
	w=0 k=0 bad= first=
	while [ $w -lt 1 ] && [ $k -lt 10 ]; do
		k=$((k + 1))
		inv_snap || { INV_TORN=$((INV_TORN + 1)); continue; }
		w=$((w + 1))
		[ -n "$first" ] || first=$(inv_str)
		inv_holds || bad="$bad; broken: $(inv_str)"
	done
	INV_WHOLE=$((INV_WHOLE + w))
	tap "$([ $w -gt 0 ] && [ -z "$bad" ] && echo 0 || echo 1)" \
		"$1: at once, $first ($w whole snapshots of $k)$bad"
	k=0 conv=
	while [ $k -lt 50 ]; do
		k=$((k + 1))
		inv_snap || continue
		if converged && inv_holds; then
			# from the step, or from the datapath's last event
			# with a TID when it came later (a close is done when
			# TCP's is, a round trip after the process went)
			ev=$(echo "$A" | field tid_event_ms)
			[ "${ev:-0}" -gt "$T0" ] && T0=$ev
			conv=$(($(echo "$A" | field tid_settled_ms) - T0))
			[ "$conv" -lt 0 ] && conv=0
			break
		fi
		usleep 20000
	done
	[ -n "$conv" ] && [ "$conv" -gt "$CONV_MAX" ] && CONV_MAX=$conv
	NSTEPS=$((NSTEPS + 1))
	[ -n "$conv" ] && [ "$conv" -le 100 ] && N100=$((N100 + 1))
	CONVS="$CONVS ${conv:-never}"
	# each within 1 s here (a toed that waited for the next event, or
	# for a periodic look, instead of following this one takes longer
	# or never converges); within 100 ms: at least half the steps,
	# counted at the end.  A TCG guest at idle priority beside other
	# work can lose its CPU for longer than 100 ms at any moment: 174 ms
	# seen with three guests running, 389 ms in a clean-clone make check
	# with both guests and the host tests running.
	tap "$([ -n "$conv" ] && [ "$conv" -le 1000 ] && echo 0 || echo 1)" \
		"... converged: nothing in flight, bound = live, the pool full again; toed followed in ${conv:-never} ms (its last settle after the step; $(inv_str), live $LIVE, used $USED)"
}
HOLD=
hold() { # N [PORT ADDR NETNS]: N connections held open (one process); T0 once they are up
	rm -f /tmp/hold.out
	${4:+nsenter --net=/run/netns/$4} toe_kmod_test hold "${3:-10.7.0.2}" "${2:-5300}" "$1" >/tmp/hold.out 2>&1 &
	HOLD="$HOLD $!"
	wait_for 100 grep -q '^connected' /tmp/hold.out
	T0=$(sed -n 's/^connected [0-9]* at //p' /tmp/hold.out)
	T0=${T0:-$(now_ms)}
}
closed() { # PID...: their connections closed; T0 just before
	T0=$(now_ms)
	kill "$@" 2>/dev/null
	wait "$@" 2>/dev/null
}
# ---- binds refused after close, 1,000 times: toed stopped (SIGSTOP)
# while 16 connections (the pool's TIDs) connect and reset at once, then
# run again: each bind it tries is refused (fail_connect, no delay) for a
# connection that has closed, and its TID must be given back once, by its
# flow_closed, not also put back in the pool; in batches until 1,000 were
# refused.  Then the pool, read with toed stopped: 16 TIDs, none twice,
# each reserved in the module; no flow demoted (reason nodev), no TID_FREE
# refused; the invariant
wait_ms() { poll_us 20000 "$@"; } # N CMD...: every 20 ms, N times at most
# toed's pool full again and nothing in flight: every close read
pfull() {
	A=$(toe0)
	[ "$(echo "$A" | field tid_pool)" = 16 ] && [ "$(echo "$A" | field tid_in_flight)" = 0 ]
}
echo 1 >"$SIMDBG/fail_connect"
nsenter --net=/run/netns/peer toe_kmod_test serve 5301 &
SV=$!
wait_for 50 listening 5301 peer
RF0=$(refusals) DM0=$(stat_of kmod_flows_demoted) FF0=$(stat_of kmod_tid_free_failed)
NV0=$(grep -c 'reason nodev' "$LOG")
T1=$(date +%s)
b=0
# 63 batches of 16, then more only if some found fewer TIDs
while [ $b -lt 63 ] || { [ $(($(refusals) - RF0)) -lt 1000 ] && [ $b -lt 80 ]; }; do
	# (not full again within 5 s: toed lost count; the checks below say so)
	wait_ms 250 pfull || break
	kill -STOP "$TOED"
	toe_kmod_test churn 10.7.0.2 5301 16 >/dev/null
	kill -CONT "$TOED"
	b=$((b + 1))
done
echo 0 >"$SIMDBG/fail_connect"
wait_ms 250 pfull
RFN=$(($(refusals) - RF0))
TS=$(($(date +%s) - T1))
echo "# $RFN binds refused after close in $b batches, $TS s ($((RFN / (TS ? TS : 1))) a second)"
tap "$([ "$RFN" -ge 1000 ] && echo 0 || echo 1)" "$RFN binds refused after their connections closed, in $b batches of 16 ($TS s)"
kill "$SV" 2>/dev/null
wait "$SV" 2>/dev/null
kill -STOP "$TOED"
toe_kmod_test pool 0 | sed -n 's/^pool //p' | sort -n >/tmp/pooled
toe_kmod_test tids | sed -n 's/^tid \([0-9]*\) dev [0-9]* state 5 reserved$/\1/p' | sort -n >/tmp/resv
kill -CONT "$TOED"
pool_ok() { [ "$(wc -l </tmp/pooled)" = 16 ] && [ -z "$(uniq -d /tmp/pooled)" ] && cmp -s /tmp/pooled /tmp/resv; }
check "... the pool: 16 TIDs, none twice, each reserved in the module ($(wc -l </tmp/pooled) pooled, $(uniq -d /tmp/pooled | wc -l) twice, $(wc -l </tmp/resv) reserved)" pool_ok
nodemote() {
	[ -n "$DM0" ] && [ -n "$FF0" ] && [ "$(stat_of kmod_flows_demoted)" = "$DM0" ] && [ "$(stat_of kmod_tid_free_failed)" = "$FF0" ] &&
		[ "$(grep -c 'reason nodev' "$LOG")" = "$NV0" ]
}
check "... no flow demoted, none for a TID the module no longer had (reason nodev), no TID_FREE refused (kmod_flows_demoted ${DM0:-?} -> $(stat_of kmod_flows_demoted), kmod_tid_free_failed ${FF0:-?} -> $(stat_of kmod_tid_free_failed))" nodemote
T0=$(now_ms)
inv_step "1,000 binds refused after close"
T0=$(now_ms)
inv_step "at rest, before the sequence"
hold 4
inv_step "connect: 4 connections offloaded"
for g in 2 3 4; do hold 4; done
set -- $HOLD
G1=$1 G2=$2 G3=$3 G4=$4
inv_step "connect: 16, up to the capacity"
step 16 "16 connections offloaded, up to the capacity"
check "... none of them demoted for a TID the module no longer had (reason nodev)" \
	sh -c '! toectl -j flows port 5300 | grep -q "\"reason\":\"nodev\""'
hold 2
G5=${HOLD##* }
refused=$(toectl -j flows port 5300 | objs | grep '"rport":5300' | grep -c '"decision":"host","reason":"capacity"')
tap "$([ "$refused" = 2 ] && echo 0 || echo 1)" "2 more refused for capacity ($refused)"
inv_step "2 refused for capacity"
step 16 "... and nothing else changed"
closed "$G5" "$G1" "$G2"
inv_step "close: 8 of them"
step 8 "half of them closed"
# binds the module refuses (fail_connect): demoted, their TIDs back in the pool
echo 1 >"$SIMDBG/fail_connect"
hold 2
G7=${HOLD##* }
inv_step "2 binds refused by the module (fail_connect)"
echo 0 >"$SIMDBG/fail_connect"
closed "$G7"
step 8 "... demoted to the host: nothing else changed"
# the pool exhausted: 4 close and the device releases their TIDs 20 s
# late, so 8 TIDs are free of 16 (8 live, 4 closing), and 10 more
# connections find 8 in the pool: 2 stay on the host, reason no_tid.  (8 s
# late was too soon: under a make check's load the steps between took
# longer, the releases came first and all 10 found a TID.)
echo 20000 >"$SIMDBG/release_delay_ms"
closed "$G3"
inv_step "close: 4 more, the device releasing them late"
hold 10
G8=${HOLD##* }
inv_step "the pool exhausted: 10 connections on 8 free TIDs"
notid=$(toectl -j flows port 5300 | objs | grep '"rport":5300' | grep -c '"decision":"host","reason":"no_tid"')
tap "$([ "$notid" = 2 ] && echo 0 || echo 1)" "... 2 of them on the host, reason no_tid ($notid)"
echo 0 >"$SIMDBG/release_delay_ms"
closed "$G8"
inv_step "close: the 8 that had a TID (4 more still releasing)"
# the device's late releases: toed's timer puts them back in the pool
wait_for 300 agree 4
step 4 "4 left, the late releases in"
stop_toed TERM
NL=$(($(wc -l <"$LOG") + 1))
start_toed
T0=$(now_ms)
inv_step "toed stopped (SIGTERM) and started"
# its start's reconcile, part by part: the pools part looks up the
# toe_tid_pool indexes of the module's devices only (one here, and its
# server pool), not all 128 (a grace period each before 6.8: about 2 s
# under TCG).  Counted by toed, not timed: under a loaded make check the
# two lookups took 926 ms once.
RL=$(tail -n +"$NL" "$LOG" | grep -m 1 'TID reconcile, in us')
echo "# toed started again: $RL"
PUS=$(echo "$RL" | sed -n 's/.*pools \([0-9]*\) (.*/\1/p')
PIDX=$(echo "$RL" | sed -n 's/.*pools [0-9]* ([0-9]* TIDs, \([0-9]*\) indexes looked up).*/\1/p')
check "... its start's reconcile looked up ${PIDX:-?} TID pool indexes, its device's two at most, not all 128 (in ${PUS:-?} us)" \
	test -n "$PIDX" -a "${PIDX:-999}" -le 2
step 4 "toed stopped (SIGTERM) and started with 4 open"
# listen, accept, stop listening: a listener the rule offloads on toe0
# (lport 5400-5599), the connections it accepts take a TID each
toe_kmod_test serve 5410 &
LS=$!
lsn5410() { toe_kmod_test listeners | grep -q " port 5410\$"; }
wait_for 50 lsn5410
T0=$(now_ms)
inv_step "listen: a listener offloaded on toe0"
hold 2 5410 10.7.0.1 peer
G9=${HOLD##* }
inv_step "accept: 2 connections accepted"
step 6 "... they took a TID each (4 + 2)"
closed "$G9"
inv_step "close: the 2 accepted ones"
closed "$LS"
inv_step "stop listening"
stop_toed 9
closed "$G4"
usleep 500000
dplive() { [ "$(counts | cut -d' ' -f1)" = "$1" ]; }
wait_for 30 dplive 0
tap $? "toed killed; 4 close while it is away: the datapath's live count is 0 at once"
check "... the module, told by nobody, still has 4 in use" \
	sh -c 'toe_kmod_test devs | grep -q " name toe0 .* used 4 "'
start_toed
T0=$(now_ms)
inv_step "toed started again"
step 0 "toed started again: the 4 TIDs no flow holds are freed"
hold 4
G10=${HOLD##* }
step 4 "4 connections offloaded"
echo 1 >/sys/bus/opentoe_sim/del_device
step 0 "the device removed with 4 flows open: they are demoted"
check "... counted as demoted ($MAP_STATS tid_demoted 4 + 3 before)" \
	sh -c 'toectl -j stats | grep -q "\"tid_demoted\":7[,}]"'
closed "$G10"
echo "1 veth6 3 16 toe%d" >/sys/bus/opentoe_sim/new_device
wait_for 50 toe0
T0=$(now_ms)
inv_step "a new device in its place"
hold 3
G6=${HOLD##* }
inv_step "connect: 3 on the new device"
step 3 "a new simulated device, 3 connections offloaded on it"

# ---- events lost, made good (user/toed/reconcile.c): toed stopped, the
# event ring (64 KiB here: TOE_LOADER_EVENT_RING) filled by 400 listeners
# opened and closed on lo (800 events, toed's own namespace: no event
# budget; no packets, so quick under TCG), then the 3 offloaded flows
# close: their flow_closed events, which give the module its TIDs back,
# are lost; toed, running again, sees event_dropped move at its first
# read of the ring and reconciles with the module at once.
dropped() { # toe_stats' event_dropped, summed over the CPUs
	s=0
	for v in $(bpftool -j map lookup pinned "/sys/fs/bpf/opentoe/$MAP_STATS" key "$STAT_EVENT_DROPPED" 0 0 0 |
		grep -o '"value":[0-9]*' | cut -d: -f2); do
		s=$((s + v))
	done
	echo "$s"
}
D0=$(dropped)
T1=$(date +%s)
kill -STOP "$TOED"
toe_kmod_test storm 400 >/tmp/storm 2>&1
echo "# the storm took $(($(date +%s) - T1)) s"
kill "$G6"
wait "$G6" 2>/dev/null
usleep 500000
D1=$(dropped)
check "toed stopped, the ring filled ($(cat /tmp/storm) listeners on lo), the 3 flows closed: events lost (event_dropped $D0 -> $D1)" \
	test "$D1" -gt "$D0"
check "... the module, told by nobody, still has 3 in use" \
	sh -c 'toe_kmod_test devs | grep -q " name toe0 .* used 3 "'
T0=$(now_ms)
kill -CONT "$TOED"
reconciled() { toectl -j status | grep -q '"event_loss":[1-9]'; }
wait_for 100 reconciled
tap $? "toed running again reconciles for the lost events (toectl status)"
# the reconcile begins at once, reads what the ring holds first, then puts
# the TIDs and the listeners right: 31-116 ms after toed runs again
# here.  Begun within 500 ms, done within 800 ms allowed: a TCG guest
# beside other work loses its CPU (527 ms to begin seen with three guests
# running), and what the bounds are for is slower by more: a toed that
# waited for the next event never begins here (the ring is quiet), and
# one that looked up toe_tid_pool's 64 indexes at every reconcile took a
# second.  The convergence is timed from toed running again and counted
# with the other steps.
RS=$(rst last_ms)
RD=$(rst last_read_ms)
echo "# toed began its reconcile $((${RS:-0} - T0)) ms after it ran again, read the ring in ${RD:-?} ms, was done in $(rst last_took_ms) ms"
check "... at once: within 500 ms of running again ($((${RS:-0} - T0)) ms)" \
	test -n "$RS" -a "$((${RS:-0} - T0))" -le 500
RE=$((${RS:-0} + $(rst last_took_ms) - T0))
check "... and done within 800 ms of running again ($RE ms; its convergence is counted below with the other steps)" \
	test -n "$RS" -a "$RE" -le 800
inv_step "events lost, toed running again and reconciled"
wait_for 10 agree 0
tap $? "... within 1 s the TIDs are back: live = toed's TIDs = the module's TIDs in use = 0 ($(counts))"
grep -E 'TID reconcile|reconciled' "$LOG" | tail -n 2 | sed 's/^/# toed: /'
echo "# the lost events' part took $(($(date +%s) - T1)) s"

# ---- connections that close, or open and close, between a loss
# reconcile's read of the ring and its own reads (toe_tid_held, TID_GET),
# the window widened to 3 s by the tests' knob TOE_TEST_RECONCILE_DELAY_MS:
# the reconcile sees no connection holding their TIDs and gives them back;
# their events, read after it, must not give them back again nor bind
# them (kmod.c: unbound_add, disposed): no TID freed twice, nothing
# settled twice (the invariant, nothing in flight), no TID_FREE refused
T1=$(date +%s)
stop_toed TERM
export TOE_TEST_RECONCILE_DELAY_MS=3000
start_toed
unset TOE_TEST_RECONCILE_DELAY_MS
hold 4
G11=${HOLD##* }
step 4 "toed with a 3 s pause in its loss reconciles; 4 connections offloaded"
U0=$(stat_of kmod_tid_stale)
F0=$(stat_of kmod_tid_free_failed)
kill -STOP "$TOED"
toe_kmod_test storm 400 >/tmp/storm 2>&1
kill -CONT "$TOED"
paused() { grep -q 'a pause of 3000 ms' "$LOG"; }
wait_for 50 paused
tap $? "... events lost: toed reconciles, and pauses between the ring and the rest"
closed "$G11"
hold 2
closed "${HOLD##* }"
wait_for 100 toectl status
RS=$(rst last_ms)
T0=$((${RS:-0} + $(rst last_took_ms)))
inv_step "4 closed, 2 opened and closed in the reconcile's pause"
U1=$(stat_of kmod_tid_stale)
F1=$(stat_of kmod_tid_free_failed)
check "... their events found the TIDs dealt with: not freed or bound again (kmod_tid_stale $U0 -> $U1: 4 closes, 2 offloads and their 2 closes; kmod_tid_free_failed $F0 -> $F1)" \
	test "$((U1 - U0))" -ge 4 -a "$F1" = "$F0"
stop_toed TERM
start_toed
step 0 "... toed without the pause again; live = toed's TIDs = the module's = 0"
echo "# the closes in the reconcile's pause took $(($(date +%s) - T1)) s"
kill "$SERVE" 2>/dev/null
wait "$SERVE" 2>/dev/null
step 0 "... all closed"
echo "# the TID invariant: $INV_WHOLE whole snapshots, $INV_TORN torn (retaken); converged at most $CONV_MAX ms after a step"
P50=$(echo $CONVS | tr ' ' '\n' | sort -n | sed -n "$(((NSTEPS + 1) / 2))p")
echo "# converged after each step, ms: $CONVS (p50 $P50, max $CONV_MAX)"
tap "$([ $((2 * N100)) -ge "$NSTEPS" ] && echo 0 || echo 1)" \
	"toed followed within 100 ms at $N100 of $NSTEPS steps (half needed: the median; p50 $P50 ms, the slowest $CONV_MAX ms)"

# ---- MIDX: toe0's index in the module
MIDX=$(toe0 | field kmod_index)
nlsn() { toe_kmod_test listeners | grep -c "^listener dev $MIDX tid [0-9]* .* port ${1:-[0-9]*}\$"; }
has_lsn() { [ "$(nlsn "$1")" = "$2" ]; }
lsn_dev() { toe0 | grep -q "\"listeners\":$1,\"listeners_held\":$2[,}]"; }

# ---- a loss reconcile while the datapath is between a pop and its entry
# (docs/architecture.md): toed stopped, the ring filled, a connection
# takes TID X (its flow_offloaded lost) and a listener on port 5431
# takes server TID S and closes (its listen_start and listen_stop lost).
# The window is made by hand: X's toe_tid_held entry hidden and
# toe_dev_live's tid_taking and stid_taking set to 1, as if both takes
# were still to write their entries.  The reconcile must keep X and S
# (either may be the take's), then, the takes done (X's entry back, the
# counts 0), reconcile again on its own: X bound to its connection, S
# (which no listener holds) given back to the module and settled
T1=$(date +%s)
nsenter --net=/run/netns/peer toe_kmod_test serve 5300 &
SERVE=$!
wait_for 50 listening 5300 peer
EL0=$(rst event_loss)
SO0=$(stat_of kmod_stids_orphaned)
TO0=$(stat_of kmod_tids_orphaned)
kill -STOP "$TOED"
toe_kmod_test storm 400 >/tmp/storm 2>&1
sleep 30 | nc -l -p 5431 >/dev/null &
LSN=$!
hold 1
G12=${HOLD##* }
kill "$LSN"
wait "$LSN" 2>/dev/null
toe_kmod_test held-hide /tmp/held.bin >/tmp/hh
XT=$(sed -n 's/^tid \([0-9]*\) dev 0$/\1/p' /tmp/hh)
toe_kmod_test taking 0 1 1 >/dev/null
kill -CONT "$TOED"
lossrec() { [ "$(rst event_loss)" -gt "${EL0:-0}" ]; }
wait_for 100 lossrec
tap $? "toed stopped, a connection took TID ${XT:-?} and a listener a server TID, their events lost; the takes made to look in progress: toed reconciles" ||
	cat /tmp/hh | sed 's/^/# /'
# X not freed: still in flight (toed's count), no orphan freed, and the
# module has it reserved (not a new reservation of the same number: none
# freed)
xres() {
	toe_kmod_test tids | grep -q "^tid ${XT:-x} dev [0-9]* state 5 reserved\$" &&
		[ "$(toe0 | field tid_in_flight)" = 1 ] && [ "$(stat_of kmod_tids_orphaned)" = "$TO0" ]
}
sflight() { [ "$(toe0 | field stid_in_flight)" = "$1" ]; }
usleep 300000
check "... TID ${XT:-?} kept reserved in the module while a take is in progress: not freed as orphaned, in flight ($(toe0 | field tid_in_flight); kmod_tids_orphaned ${TO0:-?} -> $(stat_of kmod_tids_orphaned))" xres
skept() { sflight 1 && [ "$(stat_of kmod_stids_orphaned)" = "$SO0" ]; }
check "... the server TID kept too: 1 in flight, kmod_stids_orphaned unmoved (${SO0:-?} -> $(stat_of kmod_stids_orphaned))" skept
check "... logged: a take in progress, its TIDs kept" grep -q 'TID take in progress on device 0: its unheld TIDs kept' "$LOG"
toe_kmod_test held-show /tmp/held.bin >/dev/null
toe_kmod_test taking 0 0 0 >/dev/null
T0=$(now_ms)
xbound() { toe_kmod_test tids | grep -q "^tid ${XT:-x} dev [0-9]* state [13] l2t [0-9]* src 10.7.0.1:[0-9]* dst 10.7.0.2:5300\$"; }
wait_for 50 xbound
tap $? "the takes done: toed reconciles again on its own, TID ${XT:-?} bound to its connection" ||
	toe_kmod_test tids | sed 's/^/# module: /'
sorphan() { [ "$(stat_of kmod_stids_orphaned)" = "$((SO0 + 1))" ] && sflight 0; }
wait_for 50 sorphan
tap $? "... and the server TID no listener holds given back, settled (kmod_stids_orphaned ${SO0:-?} -> $(stat_of kmod_stids_orphaned), in flight $(toe0 | field stid_in_flight))"
inv_step "a loss reconcile during takes, then the takes done"
closed "$G12"
step 0 "... its connection closed"
kill "$SERVE" 2>/dev/null
wait "$SERVE" 2>/dev/null
echo "# the takes in progress took $(($(date +%s) - T1)) s"

# ---- listeners the rule offloads (lport 5400-5599 on toe0): a server TID
# each in the module, asked for by toed and given back when they close
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

# 100 listeners at once on a T3 (64 server TIDs, all in the datapath's
# server pool): the first 64 take one at listen time and the module has
# them on it; the other 36 stay on the host, reason no_stid, and a
# connection one of them accepts takes no TID
stids_pooled() { toe_kmod_test devs | grep -q " name toe0 .* stids 64$"; }
wait_for 50 stids_pooled
tap $? "toed keeps the device's 64 server TIDs reserved in the server pool" ||
	toe_kmod_test devs | sed 's/^/# module: /'
toectl -j monitor >/tmp/mon 2>&1 &
MON=$!
# subscribed once it shows a listener's listen_start (port 5390, which no
# rule offloads), not after a fixed wait a starved guest outruns
mon_ready() { timeout 1 nc -l -p 5390 </dev/null >/dev/null 2>&1; grep -q '"lport":5390[,}]' /tmp/mon; }
wait_for 50 mon_ready
rm -f /tmp/lm /tmp/lm.out
mkfifo /tmp/lm
toe_kmod_test listen-many 100 5450 </tmp/lm >/tmp/lm.out 2>&1 &
LM=$!
exec 7>/tmp/lm
wait_for 50 grep -q ready /tmp/lm.out
wait_for 100 has_lsn "" 64
tap $? "100 listeners: 64 on the module's 64 server TIDs ($(nlsn) listeners)"
lstart() { grep '"event":"listen_start"' /tmp/mon | grep "$1"; }
nostid() { [ "$(lstart '"decision":"host","reason":"no_stid"' | wc -l)" = 36 ]; }
wait_for 50 nostid
tap $? "... the other 36 host, reason no_stid (toectl monitor: $(lstart no_stid | wc -l))" ||
	grep listen_start /tmp/mon | tail -n 3 | sed 's/^/# /'
F=$(stat_of kmod_listen_failed)
check "... none refused by the module (kmod_listen_failed ${F:-?})" test "${F:-1}" = 0
check "... toectl devices: 64 listeners, 64 held" lsn_dev 64 64
HOSTP=$(lstart no_stid | head -n 1 | field lport)
OFFP=$(lstart '"decision":"offload"' | head -n 1 | field lport)
USED0=$(toe0 | field tids_used)
(echo hi; sleep 3) | nsenter --net=/run/netns/peer nc 10.7.0.1 "$HOSTP" >/dev/null 2>&1 &
C1=$!
child() { toectl -j flows port "$1" | objs | grep "\"lport\":$1," | grep -q "$2"; }
wait_for 50 child "$HOSTP" '"decision":"host","reason":"no_stid"'
tap $? "a connection the host listener on port ${HOSTP:-?} accepted: host, reason no_stid" ||
	toectl -j flows | sed 's/^/# /'
check "... it took no TID: toe0's TIDs in use unchanged (${USED0:-?})" \
	test -n "$HOSTP" -a "$(toe0 | field tids_used)" = "${USED0:-x}"
(echo hi; sleep 3) | nsenter --net=/run/netns/peer nc 10.7.0.1 "$OFFP" >/dev/null 2>&1 &
C2=$!
wait_for 50 child "$OFFP" '"decision":"offload"'
tap $? "... one the offloaded listener on port ${OFFP:-?} accepted: offloaded" ||
	toectl -j flows | sed 's/^/# /'
kill "$C1" "$C2" 2>/dev/null
wait "$C1" "$C2" 2>/dev/null
exec 7>&-
wait "$LM"
wait_for 100 has_lsn "" 0
tap $? "closed: none left in the module ($(nlsn))"
none_held() { lsn_dev 0 0 && [ "$(stat_of kmod_listeners_held)" = 0 ]; }
check "... none held by toed (toectl devices, kmod_listeners_held 0)" none_held
wait_for 50 stids_pooled
tap $? "... their server TIDs back: the server pool holds 64 again" ||
	toe_kmod_test devs | sed 's/^/# module: /'
kill "$MON" 2>/dev/null
wait "$MON" 2>/dev/null

# toe_listeners full (filled by hand with entries of no device's, index
# 63, which toed's reconcile passes over): a listener the rule offloads on
# toe0 pops a server TID, finds no room for its entry and gives the TID
# back to the server pool at once: host, reason listeners_full, nothing in
# flight, no take left in progress, the server invariant exact right
# after, not after a reconcile (kmod_stids_orphaned unmoved); a
# connection it accepts: host, no TID.  Emptied again: offloaded again.
# (toe_kmod_test mapbatch and mapcount: one syscall an entry, where
# bpftool batch and dump took two minutes under TCG)
LMAP=/sys/fs/bpf/opentoe/$MAP_LISTENERS
lfill() { # OP: update (fill the map to its size) or delete those entries
	lmax=$(bpftool -j map show pinned "$LMAP" | sed -n 's/.*"max_entries":\([0-9]*\).*/\1/p')
	awk -v n="${lmax:-0}" -v op="$1" 'BEGIN {
		for (i = 0; i < n; i++) {
			k = sprintf("%d %d 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 2 0 0 0 1 0 0 0 0 0 0 0", int(i / 256), i % 256)
			if (op == "update")
				printf "update 10 99 %s value 63 0 0 0 255 255 255 255 0 0 0 0 255 255 255 255 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", k
			else
				printf "delete 10 99 %s\n", k
		} }' >/tmp/lfill
	toe_kmod_test mapbatch "$MAP_LISTENERS" /tmp/lfill >/dev/null
}
nlmap() { toe_kmod_test mapcount "$MAP_LISTENERS" | sed -n 's/^entries //p'; }
lfill update
check "$MAP_LISTENERS filled by hand: $(nlmap) entries of ${lmax:-?}" test "$(nlmap)" = "${lmax:-x}"
SO0=$(stat_of kmod_stids_orphaned)
USED0=$(toe0 | field tids_used)
TOEI=$(toe0 | field index)
sleep 30 | nc -l -p 5412 >/dev/null &
LSN=$!
T0=$(now_ms)
lfull() { grep -q '\[listen_start\] .*:5412 host dev - reason listeners_full' "$LOG"; }
wait_for 50 lfull
tap $? "a listener on port 5412 the rule offloads on toe0, the map full: host, reason listeners_full (logged)" ||
	grep 5412 "$LOG" | sed 's/^/# /'
inv_step "a listener on toe0 with $MAP_LISTENERS full"
backnow() { inv_snap && [ "$SPOOL" = 64 ] && [ "$SFLIGHT" = 0 ] && inv_holds; }
backnow
tap $? "... its server TID back in the server pool right after: pool $SPOOL + listeners $SHELD + in flight $SFLIGHT = module $MLSN listeners + $MSTID reserved"
# the server pool's queue itself, read back with toed stopped (the
# invariant's pool is toed's count of it: a server TID popped and never
# pushed back is invisible there)
kill -STOP "$TOED"
SQ=$(toe_kmod_test pool $((${TOEI:-0} + 64)) | grep -c '^pool ')
kill -CONT "$TOED"
check "... the server pool's queue read back: $SQ server TIDs, all 64" test "$SQ" = 64
taking() {
	bpftool -j map lookup pinned "/sys/fs/bpf/opentoe/$MAP_DEV_LIVE" key "${TOEI:-0}" 0 0 0 |
		sed -n 's/.*"stid_taking":\([0-9]*\).*/\1/p'
}
check "... its take over: $MAP_DEV_LIVE stid_taking $(taking)" test "$(taking)" = 0
check "... not in the module" sh -c '! toe_kmod_test listeners | grep -q " port 5412\$"'
check "... none orphaned: kmod_stids_orphaned ${SO0:-?} -> $(stat_of kmod_stids_orphaned)" \
	test "$(stat_of kmod_stids_orphaned)" = "${SO0:-x}"
(echo hi; sleep 3) | nsenter --net=/run/netns/peer nc 10.7.0.1 5412 >/dev/null 2>&1 &
C1=$!
wait_for 50 child 5412 '"decision":"host","reason":"listeners_full"'
tap $? "... a connection it accepts: host, reason listeners_full" ||
	toectl -j flows | sed 's/^/# /'
check "... no TID taken: toe0's TIDs in use unchanged (${USED0:-?})" test "$(toe0 | field tids_used)" = "${USED0:-x}"
kill "$C1" "$LSN" 2>/dev/null
wait "$C1" "$LSN" 2>/dev/null
lfill delete
sleep 30 | nc -l -p 5411 >/dev/null &
LSN=$!
wait_for 50 has_lsn 5411 1
tap $? "$MAP_LISTENERS emptied ($(nlmap) entries): a listener on port 5411 offloaded again, in the module"
kill "$LSN"
wait "$LSN" 2>/dev/null
wait_for 50 has_lsn 5411 0
wait_for 50 stids_pooled
tap $? "... closed: the server pool holds 64 again"

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

# two SO_REUSEPORT listeners on one port: one key in toe_listeners (the
# last one's), one listener in the module; each took a server TID at
# listen time, and the second's must go back to the server pool, not stay
# reserved for nothing (the server invariant off by one), nor be counted
# as a second listener held
rm -f /tmp/ls /tmp/ls.out
mkfifo /tmp/ls
SIB0=$(stat_of kmod_listen_siblings)
toe_kmod_test listen-same 2 5430 </tmp/ls >/tmp/ls.out 2>&1 &
LS=$!
exec 8>/tmp/ls
wait_for 50 grep -q ready /tmp/ls.out
T0=$(now_ms)
wait_for 50 has_lsn 5430 1
tap $? "two SO_REUSEPORT listeners on port 5430: one listener in the module ($(nlsn 5430))"
inv_step "two SO_REUSEPORT listeners on port 5430"
check "... toectl devices: 1 listener, 1 held" lsn_dev 1 1
spool() { [ "$(toe0 | field stid_pool)" = "$1" ]; }
check "... the second's server TID back in the server pool (stid_pool $(toe0 | field stid_pool) of 63)" spool 63
sib1() { [ "$(stat_of kmod_listen_siblings)" = $((SIB0 + 1)) ]; }
check "... toectl stats counts it: kmod_listen_siblings $SIB0 -> $(stat_of kmod_listen_siblings)" sib1
T0=$(now_ms)
echo 0 >&8
wait_for 50 grep -q 'closed 0' /tmp/ls.out
inv_step "the first of them closed, the second listening"
kept1() { has_lsn 5430 1 && lsn_dev 1 1; }
check "... the module keeps its listener (1, held 1)" kept1
T0=$(now_ms)
exec 8>&-
wait "$LS"
wait_for 50 has_lsn 5430 0
inv_step "the second closed"
wait_for 50 stids_pooled
tap $? "... none left: the server pool holds 64 again, 0 listeners held" ||
	toe_kmod_test devs | sed 's/^/# module: /'

# a tenant's listener under a 'netns any' rule on toe0: the module's
# server TIDs are for sockets of toed's namespace (its interface is
# there), so it stays on the host, reason route, counted as
# tid_route_other_if, and takes no server TID
R0=$(stat_of tid_route_other_if)
$ip netns add ten3 && $ip -n ten3 link set lo up
nsenter --net=/run/netns/ten3 toe_kmod_test serve 5600 &
SV=$!
tlsn() { grep -q '\[listen_start\] .*:5600 .*host dev - reason route' "$LOG"; }
wait_for 50 tlsn
tap $? "a tenant's listener matched by a 'netns any' rule on toe0: host, reason route (logged)" ||
	grep 5600 "$LOG" | sed 's/^/# /'
check "... counted: tid_route_other_if $R0 -> $(stat_of tid_route_other_if)" \
	test "$(stat_of tid_route_other_if)" = "$((R0 + 1))"
check "... no listener in the module for it, the server pool whole (64)" \
	sh -c '! toe_kmod_test listeners | grep -q " port 5600\$" &&
		toe_kmod_test devs | grep -q " name toe0 .* stids 64\$"'
kill "$SV" 2>/dev/null
wait "$SV" 2>/dev/null
$ip netns del ten3

# the device refuses a listener (fail_listen): toed takes it out of
# toe_listeners (its accepted connections take no TID) and puts its
# server TID, reserved still, back in the server pool
echo 1 >"$SIMDBG/fail_listen"
FL0=$(stat_of kmod_listen_failed)
toe_kmod_test serve 5420 &
SV=$!
lfailed() { [ "$(stat_of kmod_listen_failed)" -gt "${FL0:-0}" ]; }
wait_for 50 lfailed
tap $? "the device refuses a listener on port 5420 (fail_listen): kmod_listen_failed ${FL0:-?} -> $(stat_of kmod_listen_failed)"
echo 0 >"$SIMDBG/fail_listen"
check "... logged: refused by the kernel module" \
	grep -q 'listener .*:5420: offloaded by the datapath, refused by the kernel module' "$LOG"
check "... the module has no listener on port 5420" \
	sh -c '! toe_kmod_test listeners | grep -q " port 5420\$"'
wait_for 50 stids_pooled
tap $? "... its server TID back in the server pool (64)" ||
	toe_kmod_test devs | sed 's/^/# module: /'
(echo hi; sleep 3) | nsenter --net=/run/netns/peer nc 10.7.0.1 5420 >/dev/null 2>&1 &
C1=$!
wait_for 50 child 5420 '"decision":"host","reason":"no_stid"'
tap $? "... a connection it accepts: host, reason no_stid, no TID" ||
	toectl -j flows | sed 's/^/# /'
kill "$C1" "$SV" 2>/dev/null
wait "$C1" "$SV" 2>/dev/null

# ---- a bind the device refuses (fail_connect: -EIO) is counted as
# failed: kmod_tid_bind_unreach is for a route the module finds leaving by
# another interface (-ENETUNREACH), which no flow here has
RF0=$(stat_of kmod_tid_bind_refused) BF0=$(stat_of kmod_tid_bind_failed) BU0=$(stat_of kmod_tid_bind_unreach)
echo 1 >"$SIMDBG/fail_connect"
serve_hold 5301 1
refused1() { [ "$(stat_of kmod_tid_bind_refused)" -gt "${RF0:-0}" ]; }
wait_for 50 refused1
tap $? "the device refuses a bind (fail_connect): kmod_tid_bind_refused ${RF0:-?} -> $(stat_of kmod_tid_bind_refused)"
echo 0 >"$SIMDBG/fail_connect"
# its warning carries the module's own answer (the device's -EIO), not
# toed's word for a device gone (-ENODEV only)
eioline() { grep 'the kernel module refused TID' "$LOG" | tail -n 1 | grep -q ' (TID_ALLOC of reserved TID [0-9]* on module device '; }
wait_for 20 eioline
tap $? "... logged with the module's answer: $(grep 'the kernel module refused TID' "$LOG" | tail -n 1 | sed 's/.*refused TID/TID/')"
check "... counted as failed (${BF0:-?} -> $(stat_of kmod_tid_bind_failed)), not unreach (${BU0:-?} -> $(stat_of kmod_tid_bind_unreach))" \
	test "$(stat_of kmod_tid_bind_failed)" = "$((BF0 + 1))" -a "$(stat_of kmod_tid_bind_unreach)" = "$BU0"
kill "$H" "$SV" 2>/dev/null
wait "$H" "$SV" 2>/dev/null
wait_for 30 nolive

# ---- a listener on toe0 closed, then its device deleted, while toed is
# stopped (SIGSTOP): continued, toed reads the listen_stop first and stops
# the listener in the module, which let it go with its device (ENOENT):
# nothing failed.  Then the device again, for the steps below.
FL1=$(stat_of kmod_listen_failed)
sleep 30 | nc -l -p 5410 >/dev/null &
LSN=$!
l5410() { toe_kmod_test listeners | grep -q " port 5410\$"; }
wait_for 50 l5410
tap $? "a listener on port 5410 offloaded on toe0 (the module has it)"
kill -STOP "$TOED"
kill "$LSN"
wait "$LSN" 2>/dev/null
usleep 200000
echo 1 >/sys/bus/opentoe_sim/del_device
kill -CONT "$TOED"
notoe0() { ! toectl -j devices | grep -q '"device":"toe0"'; }
wait_for 50 notoe0
check "... closed, its device deleted, toed stopped meanwhile: no listener failure (kmod_listen_failed ${FL1:-?} -> $(stat_of kmod_listen_failed))" \
	test "$(stat_of kmod_listen_failed)" = "$FL1"
echo "1 veth6 3 16 toe%d" >/sys/bus/opentoe_sim/new_device
wait_for 50 toe0
wait_for 50 refilled

# ---- the module's tracepoints (kmod/trace.h), as tracefs recorded them
# since insmod: every one of them fired in the steps above
for ev in toedev_register toedev_unregister tid_reserve tid_bind tid_free \
	tid_release l2t_update listen_start listen_stop stid_reserve; do
	c=$(grep -c " $ev: " "$TR/trace")
	tap "$([ "$c" -gt 0 ] && echo 0 || echo 1)" "tracepoint opentoe:$ev recorded in tracefs ($c)"
done
echo 0 >"$TR/events/opentoe/enable"

# ---- one connection's TID followed through the tracepoints, from its
# reservation on a fresh device to the device's release: by
# scripts/trace/tid.bt when test_kmod.sh lent this machine's root over
# virtio-9p (for its bpftrace and LLVM, run in a chroot with the guest's
# proc, sys and tracefs over the host's); else (no bpftrace there, or
# TOE_KMOD_BPFTRACE=0) by tracefs
bt_host() {
	for m in $(cat /lib/modules/9p.list); do
		insmod "/lib/modules/$m.ko" || return 1
	done
	mkdir -p /host &&
		mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro,cache=loose hostroot /host &&
		mount -t proc proc /host/proc && mount -t sysfs sys /host/sys &&
		mount -t tracefs nodev /host/sys/kernel/tracing &&
		mount -t devtmpfs dev /host/dev && mount -t tmpfs tmp /host/tmp &&
		cp /bin/tid.bt /host/tmp/
}
BT=
T0=$(date +%s)
if [ -f /lib/modules/9p.list ]; then
	if bt_host; then
		chroot /host /usr/bin/bpftrace /tmp/tid.bt >/tmp/tid.out 2>&1 &
		BT=$!
		# attached, or gone (an error), or 3 minutes
		btup() { grep -q '^tracing' /tmp/tid.out || ! kill -0 "$BT" 2>/dev/null; }
		wait_for 1800 btup
		grep -q '^tracing' /tmp/tid.out
		tap $? "bpftrace scripts/trace/tid.bt attaches to the module's tracepoints (in $(($(date +%s) - T0)) s)" ||
			sed 's/^/# /' /tmp/tid.out | head -n 20
	else
		tap 1 "this machine's root mounted over virtio-9p for bpftrace"
	fi
else
	echo 1 >"$TR/events/opentoe/enable"
	echo >"$TR/trace"
	tap $? "tracefs: the module's events on, the trace buffer cleared (no bpftrace)"
fi
# a fresh device: its TIDs are reserved while they are watched
echo 1 >/sys/bus/opentoe_sim/del_device
echo "1 veth6 3 16 toe%d" >/sys/bus/opentoe_sim/new_device
wait_for 50 toe0
refilled() { toe_kmod_test devs | grep -q ' used 0 reserved 16 '; }
wait_for 50 refilled
NIDX=$(toe0 | field kmod_index)
serve_hold 5300 1
if [ -n "$BT" ]; then
	OUT=/tmp/tid.out
	bound_re='^[0-9]* *bind  *toe0 .* -> 10\.7\.0\.2:5300 '
	ev_re() { echo "^[0-9]* *$1  *toe0  *$2 "; }
else
	OUT=/tmp/trace.out
	bound_re=' tid_bind: .* name=toe0 tid=[0-9]* .*:10\.7\.0\.2:5300 l2t=[0-9]* ret=0$'
	ev_re() { echo " tid_$1: index=${NIDX:-x} name=toe0 tid=$2\\( \\|\$\\)"; }
fi
snap() { [ -n "$BT" ] || cat "$TR/trace" >"$OUT"; }
btbound() { snap; grep -q "$bound_re" "$OUT"; }
wait_for 100 btbound
if [ -n "$BT" ]; then
	BTID=$(grep "$bound_re" "$OUT" | awk '{print $4}' | head -n 1)
else
	BTID=$(grep "$bound_re" "$OUT" | sed -n 's/.* tid=\([0-9]*\) .*/\1/p' | head -n 1)
fi
kill "$H"
wait "$H" 2>/dev/null
btrel() { snap; grep -q "$(ev_re release "${BTID:-x}")" "$OUT"; }
wait_for 100 btrel
if [ -n "$BT" ]; then
	kill -INT "$BT"
	wait "$BT" 2>/dev/null
else
	echo 0 >"$TR/events/opentoe/enable"
	snap
fi
kill "$SV" 2>/dev/null
wait "$SV" 2>/dev/null
grep -E "tid=${BTID:-x}( |\$)|toedev_|^[0-9]+ +[a-z]+ +toe0 +(${BTID:-x}|-) " "$OUT" |
	sed 's/^ */# trace: /' | head -n 20
for ev in reserve bind free release; do
	check "the connection's TID ${BTID:-?} on toe0: $ev seen ($([ -n "$BT" ] && echo tid.bt || echo tracefs))" \
		grep -q "$(ev_re "$ev" "${BTID:-x}")" "$OUT"
done
if [ -n "$BT" ]; then
	check "tid.bt: its life line, and the device's register and unregister" \
		sh -c "grep -q '$(ev_re life "${BTID:-x}")' $OUT && grep -q '^[0-9]* *register  *toe0 ' $OUT && grep -q '^[0-9]* *unregist  *toe0 ' $OUT"
else
	check "tracefs: in order (reserve, bind, free, release), and the device's register and unregister" \
		sh -c "grep -E ' tid_(reserve|bind|free|release): index=${NIDX:-x} name=toe0 tid=${BTID:-x}( |\$)' $OUT | sed 's/.* tid_\([a-z]*\): .*/\1/' | tr '\n' ' ' | grep -q '^reserve bind free release ' &&
			grep -q ' toedev_register: index=${NIDX:-x} name=toe0 ' $OUT && grep -q ' toedev_unregister: index=[0-9]* name=toe0\$' $OUT"
fi
echo "# following one TID took $(($(date +%s) - T0)) s"

# ---- two module devices whose TIDs differ: toe1 (nconn 4, TIDs 0-3) on
# veth8 beside toe0 (nconn 16, TIDs 0-15) on veth6.  toed finds a module
# device's toe_devs index by its module index (kmod.c, kmod_toe_index): at
# each reconcile (a device comes; toed starts) the TIDs the module says
# are reserved for the host go back into their own device's pool, none
# is freed as unheld, each pool is its own device's size, and a
# connection on each device binds a TID of that device (TID_GET).
two_devices() {
	$ip link add veth8 type veth peer name veth9 && $ip link set veth9 netns peer &&
		$ip addr add 10.8.0.1/24 dev veth8 && $ip link set veth8 up &&
		$ip -n peer addr add 10.8.0.2/24 dev veth9 && $ip -n peer link set veth9 up
	tap $? "two devices: veth8 10.8.0.1 here, veth9 10.8.0.2 in namespace peer" || return
	printf 'device toe1 kmod\nrule offload dev toe1 rport 5310\nrule offload dev toe0 rport 5311\n' >>"$CONF"
	toectl reload >/dev/null
	tap $? "... toe1 and the rules of 5310 (toe1) and 5311 (toe0) added (toectl reload)"
	O0=$(stat_of kmod_tids_orphaned)
	echo "2 veth8 3 4 toe%d" >/sys/bus/opentoe_sim/new_device
	toe1() { toectl -j devices | objs | grep '"device":"toe1"'; }
	pools() { [ "$(toe0 | field tid_pool)/$(toe1 | field tid_pool)" = 16/4 ]; }
	wait_for 50 toe1 && wait_for 50 pools
	tap $? "a second simulated T3, toe1 (nconn 4) on veth8: each pool its own device's size (toe0's/toe1's: $(toe0 | field tid_pool)/$(toe1 | field tid_pool), want 16/4)"
	O1=$(stat_of kmod_tids_orphaned)
	check "... the reconcile at its coming freed no TID as unheld (kmod_tids_orphaned $O0 -> $O1)" test "$O1" = "$O0"
	stop_toed KILL
	start_toed
	wait_for 50 pools
	tap $? "toed killed and started: its reconcile puts each device's reserved TIDs back in its pool (16/4: $(toe0 | field tid_pool)/$(toe1 | field tid_pool))"
	O2=$(stat_of kmod_tids_orphaned)
	check "... and frees none as unheld (kmod_tids_orphaned $O1 -> $O2, a new toed's count)" test "$O2" = 0
	K0=$(toe0 | field kmod_index)
	K1=$(toe1 | field kmod_index)
	nsenter --net=/run/netns/peer toe_kmod_test serve 5310 &
	S1=$!
	nsenter --net=/run/netns/peer toe_kmod_test serve 5311 &
	S2=$!
	wait_for 50 listening 5310 peer
	wait_for 50 listening 5311 peer
	hold 4 5310 10.8.0.2
	P1=${HOLD##* }
	hold 4 5311 10.7.0.2
	P2=${HOLD##* }
	on() { toe_kmod_test tids | grep -c "^tid [0-9]* dev $1 state [13] l2t [0-9]* src [0-9.:]* dst $2$"; }
	both() { [ "$(on "$K1" 10.8.0.2:5310)/$(on "$K0" 10.7.0.2:5311)" = 4/4 ]; }
	wait_for 50 both
	tap $? "4 connections on toe1 and 4 on toe0 each bind a TID of their own device (TID_GET: $(on "$K1" 10.8.0.2:5310) on toe1 $K1, $(on "$K0" 10.7.0.2:5311) on toe0 $K0, want 4/4)" ||
		toe_kmod_test tids | sed 's/^/# /'
	# each L2T entry compared with toe_neigh under its own address: an entry
	# on each device (10.8.0.2 on toe1's veth8, 10.7.0.2 on toe0's veth7)
	l2t_all() {
		LU=$(stat_of kmod_l2t_used) LA=$(stat_of kmod_l2t_agree) LD=$(stat_of kmod_l2t_differ)
		[ "${LU:-0}" -ge 2 ] && [ "$LA" = "$LU" ] && [ "$LD" = 0 ]
	}
	wait_for 30 l2t_all
	tap $? "toectl stats: the module's L2T entries on both devices each agree with $MAP_NEIGH (used ${LU:-?}, agree ${LA:-?}, differ ${LD:-?})" ||
		toe_kmod_test l2t | sed 's/^/# module: /'
	# every module device's row carries the module's last TID change (one
	# clock for the module: toe1's the same as toe0's, not 0)
	DV=$(toectl -j devices | objs)
	CM0=$(echo "$DV" | grep '"device":"toe0"' | field tid_changed_ms)
	CM1=$(echo "$DV" | grep '"device":"toe1"' | field tid_changed_ms)
	check "toectl devices: toe1's tid_changed_ms is the module's, as toe0's (${CM1:-?} and ${CM0:-?}, not 0)" \
		test -n "$CM0" -a "$CM0" != 0 -a "$CM1" = "$CM0"
	# toed killed (SIGKILL) while the 8 hold their TIDs, the connections
	# closed while it is dead (the datapath deletes their toe_tid_held
	# entries): the next toed's reconcile frees, in one pass over both
	# devices, each bound TID no flow holds, and logs each under its own
	# device (the module's index, as toe_kmod_test tids shows it)
	tids_on() { toe_kmod_test tids | sed -n "s/^tid \([0-9]*\) dev $1 state [13] .*/\1/p" | sort -n | tr '\n' ' '; }
	TD1=$(tids_on "$K1") TD0=$(tids_on "$K0")
	stop_toed KILL
	closed "$P1" "$P2"
	NL=$(($(wc -l <"$LOG") + 1))
	start_toed
	freed() { tail -n +"$NL" "$LOG" | sed -n "s/.*freed TID \([0-9]*\) on module device $1: .*/\1/p" | sort -n | tr '\n' ' '; }
	fboth() { [ -n "$TD1" ] && [ "$(freed "$K1")" = "$TD1" ] && [ "$(freed "$K0")" = "$TD0" ]; }
	wait_for 50 fboth
	tap $? "toed killed, the 8 connections closed while it was dead: its reconcile frees each device's TIDs and names the device of each (toe1 $K1: $(freed "$K1")want $TD1; toe0 $K0: $(freed "$K0")want $TD0)" ||
		tail -n +"$NL" "$LOG" | grep -i tid | head -n 20 | sed 's/^/# /'
	kill "$S1" "$S2" 2>/dev/null
	wait "$S1" "$S2" 2>/dev/null
	echo 2 >/sys/bus/opentoe_sim/del_device
	gone1() { ! toectl -j devices | grep -q '"device":"toe1"'; }
	wait_for 50 gone1
	tap $? "toe1 removed: it leaves toectl devices"
	$ip link del veth8
}
two_devices

# ---- a datapath without the toe_tid_held pin (as an older toe-loader
# left it: an optional pin): toed cannot see which connections hold the
# TIDs it would reserve, so it reserves none (tidpool.c, demote_open),
# says so once, naming the pin, and a connection on an offload rule's
# port stays on the host (reason no_tid); pinned again, a new toed fills the
# pool.
HP=/sys/fs/bpf/opentoe/$MAP_TID_HELD
HID=$(bpftool -j map show pinned "$HP" | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')
stop_toed TERM
rm -f "$HP"
NL=$(($(wc -l <"$LOG") + 1))
start_toed
nohl() { tail -n +"$NL" "$LOG" | grep -c "warning: the datapath has no $MAP_TID_HELD pin (an older toe-loader's): no kernel module TIDs are reserved"; }
wait_for 50 eval '[ "$(nohl)" -ge 1 ]'
server 5300 peer
hold 1
PX=${HOLD##* }
nhost() { toectl -j flows port 5300 | objs | grep '"rport":5300' | grep -c '"decision":"host","reason":"no_tid"'; }
wait_for 100 eval '[ "$(nhost)" = 1 ]'
check "without the $MAP_TID_HELD pin: toed says so once ($(nohl)), reserves no TID (toe0's pool $(toe0 | field tid_pool), want 0)" \
	test "$(nohl)/$(toe0 | field tid_pool)" = 1/0
check "... a connection on an offload rule's port stays on the host, reason no_tid ($(nhost))" test "$(nhost)" = 1 ||
	{ toectl -j flows port 5300 | objs | sed 's/^/# /'; sed 's/^/# hold: /' /tmp/hold.out; }
closed "$PX"
kill "$SRV" 2>/dev/null
wait "$SRV" 2>/dev/null
stop_toed TERM
bpftool map pin id "${HID:-0}" "$HP"
start_toed
pool16() { [ "$(toe0 | field tid_pool)" = 16 ]; }
wait_for 50 pool16
tap $? "... pinned again (map id ${HID:-?}), a new toed fills the pool ($(toe0 | field tid_pool), want 16)"

# ---- the module unloaded under toed: toed re-reads the devices after the
# del_device event, and a generic-netlink request in flight holds the
# module (rmmod: EAGAIN) for that moment, so rmmod is tried again.
echo 1 >/sys/bus/opentoe_sim/del_device && wait_for 50 rmmod opentoe 2>/dev/null
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
