# SPDX-License-Identifier: GPL-2.0
# Shared by the policy tests: two hosts (namespaces a and b, one veth, IPv4
# and IPv6), a cgroup of the test's own with opentoe's sock_ops on it, and
# helpers.  Both ends run inside the cgroup, so opentoe sees both sides.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
need_root
need_cmd bpftool jq python3 nsenter
[ -x "$TOE_BUILD/toe-loader" ] && [ -x "$TOE_BUILD/toed" ] || cannot_run "not built (make)"

PIN=$TOE_PIN_DIR
TCPX=$TOE_TOP/selftests/tools/tcpx.py
TENANT=$TOE_TOP/selftests/tools/tenant.py
CONF_DIR=$(mktemp -d /tmp/opentoe-conf.XXXXXX)
defer "rm -rf $CONF_DIR"
cg_add pol || skip "no cgroup v2 mount"
two_hosts 202 || exit 1
A4=10.202.0.1 B4=10.202.0.2 A6=fd00:202::1 B6=fd00:202::2

load_toe() { # extra toe-loader args
	defer "toe-loader unload --pin-dir $PIN; rm -rf $PIN"
	toe-loader load --cgroup "$CG" --pin-dir "$PIN" "$@" >/dev/null
}

# in_cg NS CMD...: run CMD in namespace NS, inside the test cgroup.
in_cg() {
	local ns=$1; shift
	(echo $BASHPID >"$CG/cgroup.procs" && exec nsenter --net=/run/netns/$(ns_name "$ns") "$@")
}

# conf NAME <<EOF ... : write a root-owned 0600 configuration, print its path.
conf() {
	local f=$CONF_DIR/$1.conf
	cat >"$f" && chmod 600 "$f" && echo "$f"
}
# conf_t3 NAME [NCONN [PORT]]: a configuration NAME with one T3 device t3
# (nconn NCONN, 100 by default) and one rule offloading remote port PORT
# (5300 by default); prints its path.
conf_t3() {
	printf 'device t3 type chelsio-t3 nconn %s\nrule offload dev t3 rport %s\n' \
		"${2:-100}" "${3:-5300}" | conf "$1"
}
# apply FILE: toed --apply in namespace a, as toed runs in production in the
# namespace its rules are for: a rule without a netns clause matches there.
apply() { nsenter --net=/run/netns/$(ns_name a) toed --apply "$1" --pin-dir "$PIN"; }

# server PORT...: a tcpx server in b, in the cgroup, until the test ends.
server() {
	local args=() p out
	for p; do args+=(--port "$p"); done
	out=$CONF_DIR/server.$RANDOM
	: >"$out"
	in_cg b python3 "$TCPX" server "${args[@]}" --reply "${SERVER_REPLY:-0}" >"$out" 2>&1 &
	defer "kill $!"
	wait_for 5 grep -q ready "$out"
}
client() { in_cg a python3 "$TCPX" client "$@"; }

flows() { bpftool -j map dump pinned "$PIN/$MAP_FLOWS" | jq -c '[.[].formatted | .key + .value]'; }
dev_live() { # DEVINDEX FIELD
	bpftool -j map lookup pinned "$PIN/$MAP_DEV_LIVE" key "$1" 0 0 0 | jq ".formatted.value.$2"
}
# Offloaded sockets counted in toe_flow_filter (its live halves, summed;
# awk, not jq: 65536 entries).
filter_live() {
	bpftool map dump pinned "$PIN/$MAP_FLOW_FILTER" | awk '$1 == "\"live\":" { s += $2 } END { print s + 0 }'
}
stat_sum() { stat_of "$PIN" "$1"; } # INDEX (STAT_ESTABLISHED ...)
policy_serial() {
	local g; g=$(bpftool -j map lookup pinned "$PIN/$MAP_POL_GEN" key 0 0 0 0 | jq .formatted.value)
	bpftool -j map lookup pinned "$PIN/$MAP_POL_HDR" key "$g" 0 0 0 | jq .formatted.value.serial
}
# policy_state: the policy in force, to compare before and after a change
# that must be refused: its serial and every generation's header.
policy_state() {
	echo "$(policy_serial) $(bpftool -j map dump pinned "$PIN/$MAP_POL_HDR" | jq -c .)"
}
# refused WANT CMD...: CMD fails with status 1 saying WANT and the policy in
# force is still $before (policy_state); CMD's output in $out, status in $rc.
refused() {
	local want=$1; shift
	out=$("$@" 2>&1); rc=$?
	[ $rc = 1 ] && grep -qF -- "$want" <<<"$out" && [ "$(policy_state)" = "$before" ]
}
# events_start: record ring-buffer events into $EVENTS until events_stop.
events_start() {
	EVENTS=$CONF_DIR/events.$RANDOM
	"$TOE_BUILD/selftests/toe_events" "$PIN" >"$EVENTS" &
	EVPID=$!
	defer "kill $EVPID"
	sleep "$(slow 0.2)"
}
events_stop() { sleep "$(slow 0.3)"; kill -TERM $EVPID; wait $EVPID 2>/dev/null; }

# decided CGDIR ADDR PORT: connect from namespace a, from cgroup CGDIR (the
# test cgroup or one below it, where opentoe's sock_ops also runs), to
# ADDR:PORT (a server in b) and print the flow record of the connecting
# side as policy decided it ({} if there is none).
decided() {
	local cg=$1 addr=$2 port=$3 out lp fam=2
	[[ $addr == *:* ]] && fam=10
	out=$CONF_DIR/decided.$RANDOM
	: >"$out"
	(echo $BASHPID >"$cg/cgroup.procs" &&
		exec nsenter --net=/run/netns/$(ns_name a) python3 "$TCPX" client --addr "$addr" --port "$port" --hold 30) >"$out" &
	local cpid=$!
	if ! wait_for 10 grep -q held "$out"; then
		kill $cpid 2>/dev/null; wait $cpid
		echo "{\"error\": \"no connection: $(tr -d '"\n' <"$out")\"}"
		return 1
	fi
	lp=$(head -1 "$out" | jq '.held[0]')
	# held open until read: a closed connection's record is gone
	flows | jq -c "[.[] | select(.family == $fam and .lport == $lp and .rport == $port)][0] // {}"
	kill $cpid 2>/dev/null
	wait $cpid 2>/dev/null
}
