# SPDX-License-Identifier: GPL-2.0
# Shared by the toed tests: the policy tests' two hosts (namespaces a and b,
# one veth, a cgroup with opentoe's sock_ops), opentoe's XDP on a's end, and
# a toed running in namespace a with its own run folder.
. "$(dirname "${BASH_SOURCE[0]}")/../policy/setup.sh"
[ -x "$TOE_BUILD/toectl" ] || cannot_run "not built (make)"
RUN=$CONF_DIR/run
TOED_LOG=$CONF_DIR/toed.log

# load_toe_xdp: sock_ops on the test cgroup, XDP on va (in namespace a).
load_toe_xdp() {
	defer "toe-loader unload --pin-dir $PIN; rm -rf $PIN"
	nsx a toe-loader load --cgroup "$CG" --pin-dir "$PIN" --dev va --hook xdp >/dev/null
}

# start_toed CONF [toed args]: toed in namespace a, until the test ends.
start_toed() {
	local cfg=$1; shift
	# nsenter execs toed: $! is toed's own pid (for the signal tests)
	nsenter --net=/run/netns/"$(ns_name a)" toed --config "$cfg" --pin-dir "$PIN" --run-dir "$RUN" "$@" >>"$TOED_LOG" 2>&1 &
	TOED_PID=$!
	defer "kill -9 $TOED_PID"
	wait_for 10 test -S "$RUN/toed.sock" && wait_for 5 ctl status >/dev/null
}
ctl() { toectl --run-dir "$RUN" "$@"; }
stop_toed() { kill -"${1:-TERM}" "$TOED_PID" 2>/dev/null; wait "$TOED_PID" 2>/dev/null; }

# toed_t3 NAME [NCONN]: opentoe loaded on va (load_toe_xdp) and toed started
# on a configuration NAME (its path in $cfg) with one T3 device (nconn
# NCONN, 100 by default) and one rule offloading remote port 5300.  If
# either fails, the test ends with a failure.
toed_t3() {
	load_toe_xdp || { fail "load"; finish; }
	cfg=$(conf_t3 "$1" "${2:-100}")
	start_toed "$cfg" || { fail "toed starts"; cat "$TOED_LOG"; finish; }
}
