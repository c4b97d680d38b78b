#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The forward path across 802.1Q VLAN sub-interfaces (issue 33): a router
# whose client side is VLAN 10 over the veth r0 (r0.10; the client on
# c0.10) and whose server side is VLAN 20 over r1 (r1.20; the server on
# s1.20).  toe-loader refuses --hook xdp on a VLAN sub-interface, naming
# it, and changes nothing; --hook auto puts tc there (status: why "vlan").
# A plain flow and a masqueraded one (out of r1.20), and a file fetched
# back with curl through the masquerade, arrive byte-exact (sha256) with
# tc forwarding them (its segment counter moving, the kernel forwarding
# only the handshakes).  Then XDP on the parents r0 and r1 too (--hook auto
# --xdp-mode native: XDP there, tc still on the VLANs): XDP sees the VLANs'
# frames and leaves them to the stack and tc, never dropping one; the flow
# still arrives byte-exact on the tc fast path, admitted (by the tc egress
# proof on 6.1) although the parents' egress sees the VLANs' packets too.  (That second load
# comes after the masquerade loaded nf_conntrack: on 6.1 it is a module.)
# Needs the 8021q module (not in every kernel: SKIP with the reason).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 12
need_cmd iptables conntrack curl
need_root
modprobe 8021q 2>/dev/null
[ -d /proc/net/vlan ] || skip "no 802.1Q VLAN support in this kernel (8021q module: CONFIG_VLAN_8021Q)"
router_test fwdvlan || exit 1

# vlan_on NS DEV ID ADDR: DEV.ID over DEV in NS, up, with ADDR/24.
vlan_on() {
	nsx $1 ip link add link $2 name $2.$3 type vlan id $3 &&
		nsx $1 ip addr add $4/24 dev $2.$3 && nsx $1 ip link set $2.$3 up
}
# the subnets move onto the VLANs: nothing untagged routes any more
for x in "c c0 $C4" "r r0 $R4a" "r r1 $R4b" "s s1 $S4"; do
	set -- $x
	nsx $1 ip -4 addr del $3/24 dev $2 || exit 1
done
vlan_on c c0 10 $C4 && vlan_on r r0 10 $R4a && vlan_on r r1 20 $R4b && vlan_on s s1 20 $S4 || exit 1
nsx c ip route replace default via $R4a && nsx s ip route replace default via $R4b || exit 1
wait_for 5 nsx c ping -c1 -W1 $S4 >/dev/null || { fail "ping across the VLANs"; finish; }

out=$(nsx r toe-loader load --hook xdp --dev r0.10 --dev r1.20 --cgroup "$CG" --pin-dir "$PIN" 2>&1)
rc=$?
echo "# $out"
check "--hook xdp on a VLAN sub-interface: refused, naming it" \
	test $rc != 0 -a "$(grep -c "r0.10 is a VLAN sub-interface.*--hook tc" <<<"$out")" = 1
check "  and nothing was changed (no pin folder, no program on r0.10)" \
	test ! -e "$PIN" -a -z "$(nsx r ip -j link show r0.10 | jq -r '.[0].xdp // empty')"
fwd_conf "$work/fwd.conf" || exit 1
dp_load r --hook auto --dev r0.10 --dev r1.20 || { fail "load --hook auto"; finish; }
hook_of() { nsx r toe-loader status -j --pin-dir "$PIN" | jq -r --arg i "$1" '.hooks[] | select(.iface == $i) | "\(.hook) \(.why)"'; }
check "--hook auto: tc on both VLAN sub-interfaces (status -j: vlan)" \
	test "$(hook_of r0.10),$(hook_of r1.20)" = "tc vlan,tc vlan"
nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$work/run" >"$work/toed.log" 2>&1
TOED=$NSX_PID
wait_for "$(slow 10)" test -S "$work/run/toed.sock" || { fail "toed starts"; cat "$work/toed.log"; finish; }
nsx_bg s python3 "$XFER" server --port 5201 >"$work/server.out" 2>&1
head -c 6000000 /dev/urandom >"$work/file"
nsx_bg s python3 -m http.server 5301 --bind 0.0.0.0 --directory "$work" >/dev/null 2>&1
wait_for "$(slow 5)" grep -q ready "$work/server.out" || { fail "server"; finish; }
wait_for "$(slow 5)" nsx s bash -c "exec 3<>/dev/tcp/127.0.0.1/5301" 2>/dev/null || { fail "http server"; finish; }
defer "nsx r iptables -t nat -F"
st() { stat_of "$PIN" "$1"; }

# flow NAME BYTES: BYTES to the server, sent once the flow is the fast
# path's (fwd_go: a masqueraded flow waits for toed to make its conntrack
# entry true); "intact segs kernel" on stdout.
flow() {
	local x0 k0 x1 k1 cpid
	x0=$(st $STAT_TC_FWD_SEGS) k0=$(ip_forwarded)
	nsx_bg c python3 "$XFER" client --addr $S4 --port 5201 --bytes $2 \
		--lport-file "$work/$1.lport" --go-file "$work/$1.go" >"$work/$1.json"
	cpid=$NSX_PID
	fwd_go "$1" || echo "# $1: not the fast path's in time" >&2
	timeout 60 tail --pid=$cpid -f /dev/null
	x1=$(st $STAT_TC_FWD_SEGS) k1=$(ip_forwarded)
	echo "$(intact $1 && echo y || echo n) $((x1 - x0)) $((k1 - k0))"
}
# fast SEGS KERNEL: tc forwarded most of it (a 6 MB stream: 4000 segments of
# 1448 bytes), the kernel under a twentieth of that.
fast() { [ "$1" -ge 3000 ] && [ $(($2 * 20)) -lt "$1" ]; }

read -r ok segs kern < <(flow plain 6000000)
check "plain: 6 MB client (VLAN 10) -> server (VLAN 20) byte-exact" test "$ok" = y
check "  on the tc fast path ($segs segments; the kernel forwarded $kern)" fast "$segs" "$kern"

nsx r iptables -t nat -A POSTROUTING -o r1.20 -j MASQUERADE || { fail "masquerade rule"; finish; }
read -r ok segs kern < <(flow masq 6000000)
check "masqueraded out of r1.20: 6 MB byte-exact" test "$ok" = y
check "  on the tc fast path ($segs segments; the kernel forwarded $kern)" fast "$segs" "$kern"
nsx r conntrack -L -p tcp --orig-port-dst 5201 >"$work/ct" 2>/dev/null
check "  conntrack translated it (reply to the router's $R4b)" grep -q "src=$S4 dst=$R4b sport=5201" "$work/ct"
# (curl asks at once: what the stack forwarded while the flow waited for
# toed, fwd_ct_wait, is not held against the fast path; at 4 MB/s the
# 6 MB outlast the wait, and the fast path must carry half of them)
x0=$(st $STAT_TC_FWD_SEGS) k0=$(ip_forwarded) w0=$(st "$STAT_FWD_CT_WAIT")
nsx_t 60 c curl -sS --limit-rate 4M -o "$work/got" "http://$S4:5301/file"
x1=$(st $STAT_TC_FWD_SEGS) k1=$(ip_forwarded) w1=$(st "$STAT_FWD_CT_WAIT")
check "  6 MB fetched back through the masquerade with curl, sha256 intact" \
	test "$(sha256sum <"$work/got" | cut -d' ' -f1)" = "$(sha256sum <"$work/file" | cut -d' ' -f1)"
check "  on the tc fast path ($((x1 - x0)) segments; the kernel forwarded $((k1 - k0)), $((w1 - w0)) while it waited for toed)" \
	test $((x1 - x0)) -ge 2000 -a $(((k1 - k0 - (w1 - w0)) * 20)) -lt $((x1 - x0))

# ---- XDP on the parents: --hook auto with --xdp-mode native puts XDP on
# r0, r1 and still tc on the sub-interfaces; the VLANs' frames go on to
# the stack (and tc), none dropped
kill $TOED && wait $TOED 2>/dev/null
nsx r toe-loader unload --pin-dir "$PIN" >/dev/null
TOE_DEBUG=1 nsx r toe-loader load --hook auto --xdp-mode native --dev r0 --dev r1 --dev r0.10 --dev r1.20 \
	--cgroup "$CG" --pin-dir "$PIN" >"$work/load2.out" 2>&1 || { fail "load XDP on r0 r1"; grep -v "^libbpf: \(elf\|sec\|map\|CO-RE\|prog '[a-z_]*': relo\)" "$work/load2.out" | tail -40; finish; }
nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$work/run2" >"$work/toed2.log" 2>&1
wait_for "$(slow 10)" test -S "$work/run2/toed.sock" || { fail "toed starts again"; cat "$work/toed2.log"; finish; }
p0=$(st $STAT_XDP_FORWARD)
read -r ok segs kern < <(flow parents 6000000)
check "XDP on the parents ($(hook_of r0)), tc on the VLANs ($(hook_of r0.10)): 6 MB byte-exact through the masquerade" \
	test "$ok,$(hook_of r1),$(hook_of r1.20)" = "y,xdp xdp_mode,tc vlan"
check "  on the tc fast path of the sub-interfaces ($segs segments; the kernel forwarded $kern), XDP redirecting none ($(($(st $STAT_XDP_FORWARD) - p0)))" \
	test "$(fast "$segs" "$kern" && echo y)" = y -a "$(st $STAT_XDP_FORWARD)" = "$p0"
finish
