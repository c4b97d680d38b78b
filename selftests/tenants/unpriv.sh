# SPDX-License-Identifier: GPL-2.0
# Sourced by the tenants tests after policy/setup.sh: an unprivileged
# tenant (nobody, in the test cgroup) in a namespace of its own.

need_cmd setpriv unshare ip

# t3_applies NAME DESC RULE: opentoe loaded, then a configuration NAME (its
# path in $cfg) with one device t3 of nconn 4 and RULE applied: one check,
# DESC.
t3_applies() {
	load_toe || { fail "load"; finish; }
	cfg=$(printf 'device t3 type chelsio-t3 nconn 4\n%s\n' "$3" | conf "$1")
	check "$2" apply "$cfg"
}

# operator_offloaded: a server on 443 in b, and the operator's connection
# to it from a (toed's namespace, the test cgroup) offloaded on t3 by its
# rule (one check).
operator_offloaded() {
	local d
	server 443
	d=$(decided "$CG" $B4 443)
	check "the operator's connection in a is offloaded on t3" \
		test "$(jq -c '[.decision, .reason, .dev]' <<<"$d")" = "[1,0,0]" || echo "$d"
}

# The tenant's tools, readable by nobody.
tools=$(mktemp -d /tmp/opentoe-tenant.XXXXXX)
defer "rm -rf $tools"
cp "$TCPX" "$(dirname "$TCPX")/tcpserve.py" "$tools/" && chmod -R a+rX "$tools"

# tenant ADDR COUNT HOLD OUT &: as nobody in the test cgroup, a namespace
# of its own (unshare -rn) with ADDR/8 on lo, a server on 443 and COUNT
# connections to ADDR:443 held HOLD seconds; the client's output in OUT.
# Run it in the background: it execs, so $! is the client (kill ends it).
tenant() {
	echo $BASHPID >"$CG/cgroup.procs" || return 1
	exec setpriv --reuid nobody --regid nogroup --clear-groups \
		unshare -rn sh -c "ip link set lo up && ip addr add $1/8 dev lo &&
		(python3 $tools/tcpx.py server --port 443 >/dev/null 2>&1 &) && sleep 0.5 &&
		exec python3 $tools/tcpx.py client --addr $1 --port 443 --count $2 --hold $3" >"$4" 2>&1
}
# tenant_up ADDR COUNT HOLD OUT [SECONDS]: tenant ... & in the background,
# killed on exit, its pid in $TPID; waits up to SECONDS (10) for its
# connections ("held"), and ends the test with a failure if they never come.
tenant_up() {
	tenant "$1" "$2" "$3" "$4" &
	TPID=$!
	defer "kill $TPID 2>/dev/null"
	wait_for "${5:-10}" grep -q held "$4" || { fail "the tenant at $1 connects"; cat "$4"; finish; }
}
# tenant_flows ADDR: the connecting records to ADDR:443 (any namespace)
tenant_flows() {
	local w; w=$(python3 -c "import socket,struct,sys; print(struct.unpack('<I', socket.inet_aton(sys.argv[1]))[0])" "$1")
	flows | jq -c "[.[] | select(.rport == 443 and .raddr[0] == $w)]"
}
