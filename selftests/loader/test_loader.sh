#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toe-loader: load / status / unload, double load, bad input, rollback,
# coexistence with another XDP program (its chain slot only for its own
# namespace).  Two namespaces joined by a veth;
# sock_ops on a cgroup of the test's own; pins in a folder of the test's own.
. "$(dirname "$0")/../lib.sh"
plan 85
need_root
need_cmd bpftool jq iperf3 nsenter python3
[ -x "$TOE_BUILD/toe-loader" ] || cannot_run "toe-loader not built (make)"

PIN=$TOE_PIN_DIR
cg_add loader || skip "no cgroup v2 mount"
defer "nsx a toe-loader unload --pin-dir $PIN; rm -rf $PIN"
two_hosts 201 || exit 1

# (load: --hook xdp, the XDP loader tests; auto would put a veth on tc)
tl() { [ "$1" = load ] && { shift; set -- load --hook xdp "$@"; }; nsx a toe-loader "$@" --pin-dir "$PIN"; }
cg_progs() { bpftool -j cgroup show "$CG" | jq -s 'add | length'; }
xdp_id() { nsx a ip -j link show dev va | jq -r '.[0].xdp.prog.id // 0'; }
nothing_left() {
	# (links are counted through their attachments, not system-wide: other
	# loaders may come and go while the test runs)
	[ ! -e "$PIN" ] && [ "$(cg_progs)" = 0 ] && [ "$(xdp_id)" = 0 ]
}

# --- load, status, unload
# The sk_msg program is on a bpf_link pinned as link_skmsg (Linux 6.10+),
# or held by the pinned toe_bypass itself on older kernels (Debian 12's 6.1)
if toe-loader features -j | jq -e '.[] | select(.name == "sockmap_link") | .present' >/dev/null; then
	SKPIN=link_skmsg
else
	SKPIN=$MAP_BYPASS
fi
check "load attaches sock_ops and XDP" tl load --dev va --cgroup "$CG"
check "sock_ops is on the test cgroup" test "$(cg_progs)" = 1
check "XDP is on va" test "$(xdp_id)" != 0
for m in $MAP_FLOWS $MAP_DEVS $MAP_DEV_LIVE $MAP_STATS $MAP_EVENTS $MAP_POL_CELLS $MAP_POL_GEN link_sockops \
	$MAP_BYPASS $MAP_BYP_FLOWS $SKPIN; do
	[ -e "$PIN/$m" ] || fail "pinned: $m"
done
check "every map and link is pinned" test "$(ls "$PIN" | wc -l)" -ge 11
st=$(tl status -j)
check "status -j is one valid JSON document" jq -e . <<<"$st"
check "status lists the sock_ops program on the cgroup" \
	jq -e --arg cg "$CG" '.programs[] | select(.type == "sock_ops" and .attach == $cg)' <<<"$st"
check "status lists XDP on va with its mode" \
	jq -e '.programs[] | select(.type == "xdp" and .attach == "va" and (.xdp_mode == "native" or .xdp_mode == "skb"))' <<<"$st"
check "status lists the bypass sk_msg program on its sockhash (pin $SKPIN)" \
	jq -e --arg p $SKPIN --arg m "map $MAP_BYPASS" '.programs[] | select(.type == "sk_msg" and .attach == $m and .pin == $p)' <<<"$st"
check "status lists the flow map with its size" \
	jq -e --arg n "$MAP_FLOWS" '.maps[] | select(.name == $n and .type == "lru_hash" and .max_entries == 262144)' <<<"$st"
check "status text names the pin folder" bash -c "nsenter --net=/run/netns/$(ns_name a) $TOE_BUILD/toe-loader status --pin-dir $PIN | grep -q 'pin folder: $PIN'"
# entries: counted for a hash map (the flows: a number), not for an array
# (the stats: "-" in the text, null in JSON)
stt=$(nsx a toe-loader status --pin-dir "$PIN")
row() { awk -v m="$1" '$2 == m { print $5 }' <<<"$stt"; }
check "status text: the flow map's entries a number ($(row "$MAP_FLOWS")), the stats array's not ($(row "$MAP_STATS"))" \
	eval '[[ $(row "$MAP_FLOWS") =~ ^[0-9]+$ ]] && [ "$(row "$MAP_STATS")" = - ]'
check "status -j: the same, a number and null" \
	jq -e --arg f "$MAP_FLOWS" --arg s "$MAP_STATS" \
	'(.maps[] | select(.name == $f) | .entries | type == "number") and (.maps[] | select(.name == $s) | .entries == null)' <<<"$st"

# Real traffic from the test cgroup: flows are recorded.
# (waits in emulated time: the 6.1 guest's iperf3 starts take seconds)
nsx b iperf3 -s -1 -D -p 5301
wait_for "$(slow 5)" eval 'nsx b ss -Hltn "sport = :5301" | grep -q .'
# The connection is held open until the check has seen it (a long -t,
# ended by SIGINT once the flow table has been read): under TCG one dump of
# the flows takes seconds and the client's start as long, so a connection
# of fixed length could end between two polls (it did, once, in CI).
ipout=$(mktemp); defer "rm -f $ipout"
(echo $BASHPID >"$CG/cgroup.procs" && exec nsenter --net=/run/netns/$(ns_name a) timeout 600 iperf3 -c 10.201.0.2 -p 5301 -t 600 >"$ipout" 2>&1) &
cli=$!
defer "kill $cli 2>/dev/null"
flows5301() { bpftool -j map dump pinned "$PIN/$MAP_FLOWS" 2>/dev/null | jq '[.[] | select(.formatted.key.rport == 5301)] | length' 2>/dev/null; }
wait_for "$(slow 6)" eval '[ "$(flows5301)" -ge 1 ] 2>/dev/null || ! kill -0 $cli 2>/dev/null'
nflows=$(flows5301)
kill -0 $cli 2>/dev/null || { echo "# the iperf3 client ended before its flow was seen:"; sed 's/^/#   /' "$ipout"; }
check "a live iperf3 connection is in the flow table" test "${nflows:-0}" -ge 1
kill -INT $cli 2>/dev/null
wait $cli

# --- features: every probe once, each with what opentoe does without it
fj=$(tl features -j)
check "features -j: one JSON array, every entry present true|false, refused, falls_back or limited" \
	jq -e 'length >= 20 and all(.[]; (.present | type) == "boolean" and (.without == "refused" or .without == "falls_back" or .without == "limited") and (.since | length) > 0)' <<<"$fj"
check "features: the text table has the same rows, and netfilter_prog, tcx, sockmap_link, kern_ctx and ext fall back" \
	test "$(tl features | sed '/^$/q' | tail -n +2 | grep -c .)" = "$(jq length <<<"$fj")" -a \
	"$(jq -r '[.[] | select(.without == "falls_back") | .name] | sort | join(",")' <<<"$fj")" = "ext,kern_ctx,netfilter_prog,sockmap_link,tcx"

# --- double load: in place, maps kept
sock_link=$(bpftool -j link show pinned "$PIN/link_sockops" | jq .id)
old_prog=$(bpftool -j link show pinned "$PIN/link_sockops" | jq .prog_id)
skmsg_link=$(bpftool -j link show pinned "$PIN/link_skmsg" 2>/dev/null | jq .id)
skmsg_prog=$(jq '.programs[] | select(.type == "sk_msg") | .id' <<<"$st")
XLINK=$(ls -d "$PIN"/link_xdp_* | head -1)
old_xdp=$(xdp_id)
xdp_link=$(bpftool -j link show pinned "$XLINK" | jq .id)
bpftool map update pinned "$PIN/$MAP_POL_GEN" key 0 0 0 0 value 1 0 0 0
# An offloaded record no socket counted in the XDP filter (as a sock_ops
# program without the filter would have left it): the next load counts it.
PKT="python3 $TOE_TOP/selftests/tools/pkt.py"
bpftool map update pinned "$PIN/$MAP_FLOWS" key hex $($PKT key 4 10.201.0.1 10.201.0.9 80 40000) value hex $($PKT flow 1)
fslot=$($PKT filter 4 10.201.0.1 10.201.0.9 80 40000); fslot=${fslot%% value*}
bpftool map update pinned "$PIN/$MAP_FLOW_FILTER" $fslot value 0 0 0 0 0 0 0 0
check "second load succeeds" tl load --dev va --cgroup "$CG"
check "it counted the offloaded record in the XDP filter (loaded)" test \
	"$(bpftool -j map lookup pinned "$PIN/$MAP_FLOW_FILTER" $fslot | jq .formatted.value.loaded)" = 1
check "no duplicate sock_ops attachment" test "$(cg_progs)" = 1
if [ $SKPIN = link_skmsg ]; then
	check "sk_msg link kept across load" test \
		"$(bpftool -j link show pinned "$PIN/link_skmsg" | jq .id)" = "$skmsg_link"
else
	sk=$(tl status -j | jq -c '[.programs[] | select(.type == "sk_msg") | .id]')
	check "sk_msg program on $MAP_BYPASS replaced in place: $sk (was $skmsg_prog)" \
		jq -e --argjson o "$skmsg_prog" 'length == 1 and .[0] != $o' <<<"$sk"
fi
check "sock_ops link kept, program replaced" test \
	"$(bpftool -j link show pinned "$PIN/link_sockops" | jq .id)" = "$sock_link" -a \
	"$(bpftool -j link show pinned "$PIN/link_sockops" | jq .prog_id)" != "$old_prog"
check "va's XDP link kept (swapped in place), the program on va replaced" test \
	"$(bpftool -j link show pinned "$XLINK" | jq .id)" = "$xdp_link" -a \
	"$(bpftool -j link show pinned "$XLINK" | jq .prog_id)" = "$(xdp_id)" -a "$(xdp_id)" != "$old_xdp"
check "maps keep their contents across load" test \
	"$(bpftool -j map lookup pinned "$PIN/$MAP_POL_GEN" key 0 0 0 0 | jq '.formatted.value')" = 1
check "one XDP program on va" test "$(nsx a ip -j link show dev va | jq '[.[0].xdp.prog // empty] | length')" = 1
# Someone detaches opentoe's links behind its back: the next load repairs.
bpftool link detach pinned "$PIN/link_sockops"
bpftool link detach pinned "$(ls -d "$PIN"/link_xdp_* | head -1)"
check "links detached from outside" test "$(cg_progs)" = 0 -a "$(xdp_id)" = 0
check "the next load replaces the stale links" tl load --dev va --cgroup "$CG"
check "sock_ops and XDP attached again" test "$(cg_progs)" = 1 -a "$(xdp_id)" != 0
check "unload succeeds" tl unload
check "unload leaves no pin, link or attachment" nothing_left
check_not "unload when not loaded fails" tl unload
# A kernel without a feature load cannot do without (here: the ring buffer,
# hidden by the loader's fault knob): refused before anything changes.
err=$(TOE_LOADER_HIDE_FEATURE=ringbuf tl load --dev va --cgroup "$CG" 2>&1)
check "a kernel without ringbuf: load refused, naming it and its kernel" \
	grep -q "this kernel lacks ringbuf (map type, Linux 5.8), which opentoe needs for events to toed" <<<"$err"
check "  and saying nothing was changed" grep -q "not loaded: nothing was changed" <<<"$err"
check "  nothing left" nothing_left
check "features lists it as absent and refused" \
	bash -c "TOE_LOADER_HIDE_FEATURE=ringbuf toe-loader features -j | jq -e '.[] | select(.name == \"ringbuf\" and (.present | not) and .without == \"refused\")'"
# One that only limits opentoe (FIONREAD on a bypassed socket): the load
# goes on, and features says limited
out=$(TOE_LOADER_HIDE_FEATURE=sockmap_fionread tl load --dev va --cgroup "$CG" 2>&1); rc=$?
check "a kernel without sockmap_fionread: load goes on (rc $rc)" test "$rc" = 0
check "  features lists it as absent and limited" \
	bash -c "TOE_LOADER_HIDE_FEATURE=sockmap_fionread toe-loader features -j | jq -e '.[] | select(.name == \"sockmap_fionread\" and (.present | not) and .without == \"limited\")'"
check "  and it unloads, leaving nothing" eval 'tl unload && nothing_left'
# The tests' knob TOE_LOADER_EVENT_RING: the event ring's size (a small one
# loses events on purpose, selftests/kmod/toed_guest.sh); a bad size is
# refused, naming it, before anything changes
err=$(TOE_LOADER_EVENT_RING=5000 tl load --dev va --cgroup "$CG" 2>&1)
check "TOE_LOADER_EVENT_RING=5000: load refused, naming it" \
	grep -q "TOE_LOADER_EVENT_RING=5000: not a power of 2 between 4096 and 2^30 bytes" <<<"$err"
check "  nothing left" nothing_left
TOE_LOADER_EVENT_RING=65536 tl load --dev va --cgroup "$CG" >/dev/null 2>&1
ring=$(tl status -j | jq '[.. | objects | select(.name? == "'"$MAP_EVENTS"'") | .max_entries] | first')
check "TOE_LOADER_EVENT_RING=65536: the event ring is 65536 bytes ($ring)" test "$ring" = 65536
tl unload >/dev/null 2>&1

# --- bad input: one line, exit 1, nothing done
expect_err() { # desc pattern cmd...
	local desc=$1 pat=$2 out rc; shift 2
	out=$("$@" 2>&1); rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q -- "$pat" <<<"$out" && nothing_left; then
		ok "$desc"
	else
		fail "$desc (rc=$rc: $out)"
	fi
}
expect_err "unknown interface" "unknown interface 'nosuch0'" tl load --dev nosuch0 --cgroup "$CG"
expect_err "not a cgroup v2 folder" "'/tmp' is not a cgroup v2 folder" tl load --dev va --cgroup /tmp
expect_err "kernel without BTF" "kernel has no BTF" env TOE_SYSFS_BTF=/nonexistent \
	nsenter --net=/run/netns/$(ns_name a) toe-loader load --dev va --cgroup "$CG" --pin-dir "$PIN"
mkdir -p /tmp/opentoe-$TOE_TEST_ID && defer "rm -rf /tmp/opentoe-$TOE_TEST_ID"
expect_err "pin folder not on bpffs" "not on a bpf filesystem" \
	nsx a toe-loader load --dev va --cgroup "$CG" --pin-dir /tmp/opentoe-$TOE_TEST_ID/opentoe-$TOE_TEST_ID-nobpf
expect_err "bad XDP mode" "bad --xdp-mode 'fast'" tl load --dev va --xdp-mode fast --cgroup "$CG"
if command -v setpriv >/dev/null; then
	expect_err "not root" "must be run as root" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$TOE_BUILD/toe-loader" load --cgroup "$CG" --pin-dir "$PIN"
fi

# --- the command line: each subcommand has its own options and --help
# help_lists CMD OPTION...: CMD --help exits 0 and lists every OPTION (and
# none of the others' options); each option it lists is in the man page.
help_lists() {
	local cmd=$1 out o; shift
	out=$(toe-loader "$cmd" --help) || return 1
	for o in "$@"; do grep -q -- "$o\b" <<<"$out" || { echo "missing $o"; return 1; }; done
	for o in --dev --hook --xdp-mode --cgroup --flows --json --drain-timeout --force; do
		[[ " $* " == *" $o "* ]] || ! grep -q -- "$o\b" <<<"$(grep '^ *-' <<<"$out")" ||
			{ echo "lists $o"; return 1; }
	done
	for o in $(grep -o -- '--[a-z][a-z-]*' <<<"$out" | sort -u); do
		grep -qF -- "$(sed 's/-/\\-/g' <<<"$o")" "$TOE_TOP/man/toe-loader.8" || { echo "man: no $o"; return 1; }
	done
}
check "load --help lists load's options" help_lists load --dev --hook --xdp-mode --cgroup --flows --wait --pin-dir --help
check "status --help lists status's options" help_lists status --json --pin-dir --help
check "unload --help lists unload's options" help_lists unload --drain-timeout --force --wait --pin-dir --help
check "toe-loader --help lists the subcommands" \
	bash -c 'toe-loader --help | grep -q "^  load " && toe-loader --help | grep -q "^  status " && toe-loader --help | grep -q "^  unload "'
# refused DESC PATTERN CMD...: exit status 1, PATTERN on stderr, nothing done.
refused() {
	local desc=$1 pat=$2 out rc; shift 2
	out=$("$@" 2>&1 >/dev/null); rc=$?
	if [ $rc -eq 1 ] && grep -q -- "$pat" <<<"$out" && nothing_left; then
		ok "$desc"
	else
		fail "$desc (rc=$rc: $(head -3 <<<"$out"))"
	fi
}
refused "status --flows (load's option) is refused, naming it" \
	"^toe-loader: --flows is an option of 'toe-loader load', not of 'status'" tl status --flows 5
refused "  and so is its --flows=5 form" \
	"^toe-loader: --flows is an option of 'toe-loader load', not of 'status'" tl status --flows=5
refused "unload -j (status's option) is refused, naming it" \
	"^toe-loader: -j is an option of 'toe-loader status', not of 'unload'" tl unload -j
refused "load --force (unload's option) is refused, naming it" \
	"^toe-loader: --force is an option of 'toe-loader unload', not of 'load'" tl load --force --dev va --cgroup "$CG"
refused "an unknown subcommand is refused, naming it" \
	"^toe-loader: unknown command 'frobnicate' (load, status, features, unload; --help)" tl frobnicate
refused "so is its --help" "^toe-loader: unknown command 'frobnicate'" tl frobnicate --help

# --- pins an older opentoe left: toe_flows with the record as it was
# before the XDP counters moved into it (72 bytes), and the retired
# toe_flow_pkts.  Refused before anything is attached; unload removes both.
mkdir -p "$PIN"
bpftool map create "$PIN/$MAP_FLOWS" type lru_hash key 40 value 72 entries 64 name $MAP_FLOWS
bpftool map create "$PIN/toe_flow_pkts" type lru_percpu_hash key 40 value 16 entries 64 name toe_flow_pkts
out=$(tl load --dev va --cgroup "$CG" 2>&1); rc=$?
check "load over an older opentoe's pins is refused (rc $rc)" test $rc = 1
check "  naming the map, its layout and the way out" \
	grep -q "pinned map $PIN/$MAP_FLOWS is not this opentoe's (type 9, key 40, value 72 bytes; expected 9, 48, 88).*toe-loader unload" <<<"$out"
check "  attaching nothing" test "$(cg_progs)" = 0 -a "$(xdp_id)" = 0
check "  and pinning nothing" test "$(ls "$PIN" | tr '\n' ' ')" = "toe_flow_pkts $MAP_FLOWS "
check "unload removes the older pins, the retired toe_flow_pkts too" tl unload
check "  and the folder" test ! -e "$PIN"
# old_pin WHAT MAP TYPE TYPENO KEY VALUE WANTKEY WANTVALUE: one map pinned
# with an older layout; load refuses it naming the layout, attaching
# nothing; unload removes it and the folder.
old_pin() {
	local what=$1 map=$2 type=$3 tno=$4 key=$5 val=$6 wkey=$7 wval=$8 out rc
	mkdir -p "$PIN"
	bpftool map create "$PIN/$map" type "$type" key "$key" value "$val" entries 2 name "$map"
	out=$(tl load --dev va --cgroup "$CG" 2>&1); rc=$?
	check "load over $what is refused (rc $rc)" test $rc = 1 -a "$(cg_progs)" = 0
	check "  naming its layout ($map: key $key, value $val)" \
		grep -q "pinned map $PIN/$map is not this opentoe's (type $tno, key $key, value $val bytes; expected $tno, $wkey, $wval).*toe-loader unload" <<<"$out"
	check "  unload removes it" tl unload
	check "  and the folder" test ! -e "$PIN"
}
# The layout before flow keys carried the network namespace.
old_pin "pins from before the netns key" $MAP_FLOWS lru_hash 9 40 80 48 88
# A record that grew with the key unchanged: the value size alone refuses it
# (56: struct toe_pol_hdr since the netns scope and the tenant quotas).
old_pin "a $MAP_POL_HDR from before 'track'" $MAP_POL_HDR array 2 4 32 4 56

# --- rollback: XDP fails on the second interface after sock_ops and the
# first XDP attach succeeded (lo has no native XDP).
out=$(tl load --dev va --dev lo --xdp-mode native --cgroup "$CG" 2>&1); rc=$?
check "failing XDP attach fails the load" test $rc = 1
check "the error names the interface" grep -q "^toe-loader: lo: cannot attach XDP in native mode" <<<"$out"
check "rollback leaves nothing attached or pinned" nothing_left

# --- coexistence: an XDP program already on va keeps working
# (bpftool, not ip: iproute2 would leave /sys/fs/bpf/{tc,ip,xdp} behind)
defer "rm -f /sys/fs/bpf/xdp_count-$TOE_TEST_ID"
bpftool prog load "$TOE_BUILD/selftests/xdp_count.bpf.o" /sys/fs/bpf/xdp_count-$TOE_TEST_ID type xdp &&
	nsx a bpftool net attach xdpgeneric pinned /sys/fs/bpf/xdp_count-$TOE_TEST_ID dev va &&
	rm -f /sys/fs/bpf/xdp_count-$TOE_TEST_ID || fail "attach xdp_count"
other=$(xdp_id)
cnt_map=$(bpftool -j prog show id "$other" | jq '.map_ids[0]')
cnt() { # the map has no BTF: value is 8 little-endian hex bytes
	printf '%d' "0x$(bpftool -j map lookup id "$cnt_map" key "$1" 0 0 0 |
		jq -r '.value | reverse | map(ltrimstr("0x")) | join("")')"
}
check "load on an interface with another XDP program" tl load --dev va --xdp-mode skb --cgroup "$CG"
st=$(tl status -j)
check "status shows the other program chained on va" \
	jq -e --argjson id "$other" '.programs[] | select(.id == $id and .chained and .attach == "va")' <<<"$st"
before=$(cnt 0); dropped=$(cnt 1)
sysctl -qw kernel.bpf_stats_enabled=1; defer "sysctl -qw kernel.bpf_stats_enabled=0"
toe_id=$(jq '.programs[] | select(.type == "xdp" and (.chained | not)) | .id' <<<"$st")
toe_runs=$(bpftool -j prog show id "$toe_id" | jq '.run_cnt // 0')
nsx b ping -c 5 -i 0.05 -q 10.201.0.1 >/dev/null
for i in 1 2 3; do nsx b bash -c 'echo x >/dev/udp/10.201.0.1/9'; done
check "the other program still sees traffic" test "$(cnt 0)" -ge $((before + 8))
check "the other program still enforces its verdict (UDP/9 dropped)" test "$(cnt 1)" -ge $((dropped + 3))
check "opentoe's XDP program runs too" test "$(bpftool -j prog show id "$toe_id" | jq '.run_cnt // 0')" -ge $((toe_runs + 8))
check "ping still works through both" nsx b ping -c 2 -i 0.1 -W 1 -q 10.201.0.1
# Chain slots are per namespace: a tun device of another namespace with
# va's ifindex.  toe-loader refuses it (the collision check holds for
# interfaces that are not Ethernet too: issue 31); frames arriving on it
# must not run va's chained program.  A test run of UDP/9 says which ran:
# xdp_count drops it, opentoe alone passes it.
ns_add c
ifidx() { nsx "$1" ip -j link show dev "$2" | jq '.[0].ifindex'; }
va_idx=$(ifidx a va)
for ((i = 0; i < 8; i++)); do
	nsx c ip tuntap add dev "tunc$i" mode tun
	[ "$(ifidx c "tunc$i")" -lt "$va_idx" ] || break
done
work=$(mktemp -d) && defer "rm -rf $work"
python3 "$TOE_TOP/selftests/tools/pkt.py" udp9 "$work/udp9"
python3 "$TOE_TOP/selftests/tools/pkt.py" ctx "$work/ctx" "$va_idx" "$(stat -c %s "$work/udp9")"
err=$(nsx c toe-loader load --dev "tunc$i" --xdp-mode skb --cgroup "$CG" --pin-dir "$PIN" 2>&1)
check "load on tunc$i of another namespace, ifindex $(ifidx c "tunc$i") as va's $va_idx: refused (not Ethernet, checked all the same)" \
	grep -q "is already a forwarding target for an interface of another network namespace" <<<"$err"
xdp_run() { # NS: opentoe's XDP program's verdict on UDP/9 arriving on ifindex $va_idx there
	nsx "$1" bpftool prog run id "$(xdp_id)" data_in "$work/udp9" ctx_in "$work/ctx" 2>&1 |
		sed -n 's/^Return value: \([0-9]*\).*/\1/p'
}
check "  UDP/9 on va (namespace a) runs the chained program: dropped" test "$(xdp_run a)" = 1
check "  on tunc$i (namespace c, same ifindex) it does not: passed" test "$(xdp_run c)" = 2
check "unload with a chained program" tl unload
check "the other program is back on va" test "$(xdp_id)" = "$other"
check "and opentoe left nothing" test ! -e "$PIN"
nsx a bpftool net detach xdpgeneric dev va

# conntrack's kfuncs (the forward path's refresh, bpf/fwd_ct.h) come from
# nf_conntrack's own BTF where it is a module (Debian's 6.1): the object
# loads with it loaded too (removed again if it was not there)
[ -d /sys/module/nf_conntrack ] || defer "modprobe -r nf_conntrack 2>/dev/null"
modprobe -q nf_conntrack
check "load with nf_conntrack loaded (conntrack's kfuncs from the kernel's or its own BTF)" tl load --dev va --cgroup "$CG"
tl unload >/dev/null
finish
