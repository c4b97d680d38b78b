#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The forward path's proof (issue 31, item 6): a flow is admitted only if
# the router's stack forwarded it (toe_nf_fwd at the end of netfilter's
# FORWARD), never because a tc action carried its packets from one router
# interface to the other.  Client, router and server namespaces; the
# client's and server's MACs are made those of the router's far
# interfaces, so frames tc moves across the router unchanged are taken by
# the other end and TCP really runs over them.
#  - tc mirred redirect (r0 ingress -> r1 egress, and back) of port 5201;
#    tc mirred mirror of port 5301, whose originals a FORWARD DROP rule
#    drops: the transfers arrive, nothing enters toe_fwd, XDP forwards
#    nothing.
#  - the filters removed: the stack forwards port 5201, which is admitted.
#  - the tc egress fallback (TOE_LOADER_NO_NF=1, the proof of kernels
#    before 6.4) does admit the redirected flow: the limit the netfilter
#    proof removes, shown so that this test fails on a datapath without it.
# XDP on the router's interfaces, or tc (test_fwd_redirect_tc.sh: opentoe's
# tcx program runs before the test's clsact filters, which see what it
# passes on).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 14
need_cmd tc iptables
router_test fwdredir || exit 1
endpoints_for_hook || exit 1
fwd_conf "$work/fwd.conf" || exit 1
# frames moved unchanged across the router reach the other end
R0MAC=$(nsx r ip -j link show r0 | jq -r '.[0].address') R1MAC=$(nsx r ip -j link show r1 | jq -r '.[0].address')
nsx c ip link set c0 address "$R1MAC" && nsx s ip link set s1 address "$R0MAC" || { fail "MACs"; finish; }
load() { # [env...]: the datapath on both router interfaces, policy, neighbours
	nsx r env "$@" toe-loader load --dev r0 --dev r1 --cgroup "$CG" --pin-dir "$PIN" $DP_HOOK_ARGS >/dev/null &&
		toed --apply "$work/fwd.conf" --pin-dir "$PIN" >/dev/null && fill_neigh "$PIN"
}
defer "nsx r toe-loader unload --pin-dir $PIN; rm -rf $PIN"
load || { fail "load, apply, neighbours"; finish; }
check "toe-loader status: the proof in force is netfilter FORWARD" \
	test "$(nsx r toe-loader status -j --pin-dir "$PIN" | jq -r .admission)" = netfilter
nsx_bg s python3 "$XFER" server --port 5201 --port 5301 >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
st() { stat_of "$PIN" "$1"; }
n_port() { # PORT -> toe_fwd entries of PORT
	bpftool -j map dump pinned "$PIN/$MAP_FWD" |
		jq --argjson p "$1" '[.[] | select(.formatted.key.lport == $p or .formatted.key.rport == $p)] | length'
}
# tcmove ACTION PORT: both router interfaces move PORT's frames to the other
u32() { echo "u32 match ip $1 $2 0xffff"; }
tcmove() {
	local a=$1 p=$2
	nsx r tc qdisc replace dev r0 clsact && nsx r tc qdisc replace dev r1 clsact &&
		nsx r tc filter add dev r0 ingress protocol ip $(u32 dport $p) action mirred egress $a dev r1 &&
		nsx r tc filter add dev r1 ingress protocol ip $(u32 sport $p) action mirred egress $a dev r0
}
untc() { nsx r tc qdisc del dev r0 clsact 2>/dev/null; nsx r tc qdisc del dev r1 clsact 2>/dev/null; true; }
defer untc
# moved NAME PORT: a 2 MB transfer to PORT while tc moves it; A, F, X: admissions,
# forwarded by the stack, by the fast path (XDP or tc) meanwhile
moved() {
	local a0 f0 x0
	a0=$(st $STAT_XDP_FWD_FLOWS) f0=$(ip_forwarded) x0=$(st $FWD_STAT)
	nsx_t 30 c python3 "$XFER" client --addr $S4 --port $2 --bytes 2000000 --connect-timeout 3 >"$work/$1.json"
	A=$(($(st $STAT_XDP_FWD_FLOWS) - a0)) F=$(($(ip_forwarded) - f0)) X=$(($(st $FWD_STAT) - x0))
	echo "# $1: admitted $A, stack forwarded $F, $FWD_NAME forwarded $X, $MAP_FWD entries of port $2: $(n_port $2)"
}

tcmove redirect 5201 || { fail "tc mirred redirect"; finish; }
moved redir 5201
check "mirred redirect: the transfer arrives (tc carried it, the stack forwarded $F packets)" intact redir
check "  no admission, nothing in $MAP_FWD, $FWD_NAME forwarded nothing" test "$A" = 0 -a "$(n_port 5201)" = 0 -a "$X" = 0
untc
defer "nsx r iptables -F FORWARD"
nsx r iptables -A FORWARD -p tcp --dport 5301 -j DROP && nsx r iptables -A FORWARD -p tcp --sport 5301 -j DROP
tcmove mirror 5301 || { fail "tc mirred mirror"; finish; }
moved mirror 5301
check "mirred mirror, the originals dropped at FORWARD: the transfer arrives" intact mirror
check "  no admission, nothing in $MAP_FWD, $FWD_NAME forwarded nothing" test "$A" = 0 -a "$(n_port 5301)" = 0 -a "$X" = 0
untc
moved routed 5201
check "the filters gone, the stack forwards port 5201: intact" intact routed
check "  and it is admitted (admissions $A, $FWD_NAME forwarded $X packets)" test "$A" -ge 1 -a "$X" -gt 100

# ---- the fallback proof on the same router
nsx r toe-loader unload --pin-dir "$PIN" >/dev/null
load TOE_LOADER_NO_NF=1 || { fail "fallback load"; finish; }
s=$(nsx r toe-loader status -j --pin-dir "$PIN")
check "TOE_LOADER_NO_NF=1: status names tc egress, and why" \
	jq -e '.admission == "tc-egress" and (.admission_why | test("TOE_LOADER_NO_NF"))' <<<"$s"
check "  toe_egress on both router interfaces, no netfilter link" \
	jq -e '([.programs[] | select(.name == "toe_egress")] | length) == 2 and ([.programs[] | select(.xdp_mode == "netfilter")] | length) == 0' <<<"$s"
# toectl status says it too, of each interface: its hook and toe_egress's
# (issue 45: status listed only the interfaces toed mirrors)
RUN=$work/run
nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$RUN" >"$work/toed.log" 2>&1
TOED=$NSX_PID
wait_for 10 test -S "$RUN/toed.sock" || { fail "toed starts"; cat "$work/toed.log"; finish; }
EG=$(tc_mode) IFM=$([ $FWD_HOOK = tc ] && echo "$EG" || echo native)
ifs=$(toectl --run-dir "$RUN" -j status | jq -c '.interfaces')
check "toectl -j status: r0 and r1 on $FWD_HOOK $IFM with toe_egress at $EG egress ($ifs)" \
	jq -e --arg h $FWD_HOOK --arg m "$IFM" --arg e "$EG" \
	'[.[] | select(.hook == $h and .mode == $m and .egress == $e) | .name] | sort == ["r0", "r1"]' <<<"$ifs"
kill $TOED
wait $TOED 2>/dev/null
tcmove redirect 5201 || { fail "tc mirred redirect"; finish; }
moved fb_redir 5201
check "fallback, mirred redirect: the transfer arrives" intact fb_redir
check "  no admission: the frames carry no route of the host ($A admitted)" test "$A" = 0 -a "$X" = 0
untc
moved fb_routed 5201
check "fallback, the stack forwards: intact" intact fb_routed
check "  and admitted ($A)" test "$A" -ge 1
finish
