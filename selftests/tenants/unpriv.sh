# SPDX-License-Identifier: GPL-2.0
# Sourced by the tenants tests after policy/setup.sh: an unprivileged
# tenant (nobody, in the test cgroup) in a namespace of its own.

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
# tenant_flows ADDR: the connecting records to ADDR:443 (any namespace)
tenant_flows() {
	local w; w=$(python3 -c "import socket,struct,sys; print(struct.unpack('<I', socket.inet_aton(sys.argv[1]))[0])" "$1")
	flows | jq -c "[.[] | select(.rport == 443 and .raddr[0] == $w)]"
}
