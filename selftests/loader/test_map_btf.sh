#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every pinned map carries BTF, so that `bpftool map dump pinned ...` prints
# field names (issue 9).  Loads opentoe into the test's pin folder (XDP on
# va, a plain XDP program chained behind it, toed running with a policy,
# one offloaded connection), then for every pinned map: it has a BTF id,
# and a JSON dump of it holding at least one entry (a zeroed one is added
# to a map the traffic left empty) prints "formatted" key and value whose
# fields are those of its struct in include/opentoe.h.  Also: every map
# bpf/ declares (bpf/maps_*.h) and every map the loaded programs use is
# pinned.  A map added without BTF fails the test, unless its type is one
# the kernel refuses BTF for (listed below, reported as skipped).
# shellcheck source-path=SCRIPTDIR source=../toed/setup.sh
. "$(dirname "$0")/../toed/setup.sh"
plan 125
need_cmd bpftool jq awk
[ -e "$TOE_BUILD/selftests/xdp_pass.bpf.o" ] || cannot_run "selftests not built (make)"
# the datapath's sources: its maps are declared in bpf/maps_*.h
BPF_SRC=("$TOE_TOP"/bpf/*.bpf.c "$TOE_TOP"/bpf/*.h)
# the layouts: include/opentoe.h and the per-concern headers it includes
HDR=("$TOE_TOP"/include/opentoe*.h)

# The kernel refuses BTF for these map types: map_check_no_btf answers
# ENOTSUPP for a sockhash, cpumap, devmap (hash) and map of maps, and a ring
# buffer has no key or value type to describe.  libbpf creates them without
# BTF.  NAME:TYPE, so that a new map without BTF fails even of these types.
NO_BTF=" $MAP_EVENTS:ringbuf $MAP_CAP_RING:ringbuf $MAP_RCU_SYNC:array_of_maps $MAP_TID_POOL:array_of_maps $MAP_DEVMAP:devmap_hash $MAP_CPUMAP:cpumap $MAP_BYPASS:sockhash "
# Types bpftool cannot walk (no get_next_key from user space): BTF only.
NO_DUMP=" sk_storage "

# A plain XDP program on va first: load chains it, so toe_xdp_next has an
# entry.  (bpftool, not ip: iproute2 would leave /sys/fs/bpf/{tc,ip,xdp}.)
XP=/sys/fs/bpf/xdp_pass-$TOE_TEST_ID
defer "rm -f $XP"
if ! bpftool prog load "$TOE_BUILD/selftests/xdp_pass.bpf.o" "$XP" type xdp ||
	! nsx a bpftool net attach xdpdrv pinned "$XP" dev va; then
	fail "attach xdp_pass to va"
	finish
fi
rm -f "$XP"
load_toe_xdp || { fail "load"; finish; }
cfg=$(conf btf <<'EOF'
device t3 type chelsio-t3 nconn 100 steer account
device sw1 type software nconn 8 steer cpu 1
rule offload dev t3 rport 5300
EOF
)
start_toed "$cfg" || { fail "toed starts"; cat "$TOED_LOG"; finish; }
server 5300 || { fail "server"; finish; }
# held open until the test ends: a flow's record goes at close
client --addr "$B4" --port 5300 --send 100000 --hold 600 >/dev/null &
defer "kill $!"
# expect DESC JQ-FILTER JSON: ok if the filter holds, else not ok with the JSON.
expect() {
	if jq -e "$2" <<<"$3" >/dev/null 2>&1; then ok "$1"; else fail "$1: $(jq -c . <<<"$3" 2>&1 | head -c 2000)"; fi
}
flows5300() { bpftool -j map dump pinned "$PIN/$MAP_FLOWS" | jq -c '[.[].formatted | select(.key.rport == 5300)]'; }
# (an open flow's counters are those of its last RTT callback: bytes_acked
# may stay below the 100,000 sent until the connection closes)
# shellcheck disable=SC2317 # (called through wait_for)
acked() { flows5300 | jq -e '[.[] | select(.value.bytes_acked > 1)] | length == 1' >/dev/null; }
wait_for 10 acked
expect "the offloaded connection is in $MAP_FLOWS, with data acknowledged" \
	'length == 1 and .[0].value.decision == 1 and .[0].value.bytes_acked > 1' "$(flows5300)"

# map_structs: "MAP key|value STRUCT" for every map of bpf/
# whose key or value is a struct.
map_structs() {
	awk '/^struct \{/ { k = ""; v = "" }
	     /__type\(key, struct / { k = $3; sub(/\).*/, "", k) }
	     /__type\(value, struct / { v = $3; sub(/\).*/, "", v) }
	     /^\} [a-z_0-9]+ SEC\("\.maps"\)/ {
		if (k != "") print $2, "key", k
		if (v != "") print $2, "value", v
	     }' "${BPF_SRC[@]}"
}
# fields STRUCT: the member names of STRUCT in include/opentoe.h.
fields() {
	awk -v s="$1" '$0 ~ "^struct " s " \\{" { on = 1; next }
	     on && /^\};/ { exit }
	     on && match($0, /^[ \t]+(struct [a-z_0-9]+|__[us][0-9]+|char|int)[ \t]+[a-z_0-9]+(\[[^]]*\])?([ \t]*,[ \t]*[a-z_0-9]+(\[[^]]*\])?)*;/) {
		# one name a declarator: "__u32 a, b[2];" is a and b
		f = substr($0, RSTART, RLENGTH); sub(/;.*/, "", f)
		sub(/^[ \t]+(struct [a-z_0-9]+|[a-z_0-9]+)[ \t]+/, "", f)
		n = split(f, w, /[ \t]*,[ \t]*/)
		for (i = 1; i <= n; i++) { sub(/\[.*/, "", w[i]); print w[i] }
	     }' "${HDR[@]}"
}
declared=$(awk '/^\} [a-z_0-9]+ SEC\("\.maps"\)/ { print $2 }' "${BPF_SRC[@]}" | sort)
pinned=$(find "$PIN" -maxdepth 1 -name 'toe_*' -printf '%f\n' | sort)
check "bpf/ declares maps (parsed: $(wc -w <<<"$declared"))" test "$(wc -w <<<"$declared")" -ge 20
for m in $declared; do
	[ -e "$PIN/$m" ] || fail "declared map $m is pinned"
done
check "every declared map is pinned ($(wc -w <<<"$pinned") pinned)" test "$declared" = "$pinned"
# The programs' maps, by id: none unpinned but the object's frozen .rodata
# (load-time constants the loader sets before the load, e.g. toe_nf_admit:
# read-only, no state to keep); a .bss or .data map would hold state no pin
# keeps.
pinned_ids=$(for m in $pinned; do bpftool -j map show pinned "$PIN/$m" | jq .id; done | sort -u)
prog_ids=$(for l in "$PIN"/link_*; do bpftool -j link show pinned "$l" | jq .prog_id; done)
used_ids=$(for p in $prog_ids; do bpftool -j prog show id "$p" | jq '.map_ids[]?'; done | sort -u)
check "the loaded programs use maps ($(wc -w <<<"$used_ids"))" test -n "$used_ids"
unpinned_ok() {
	local id
	for id in $(comm -23 <(echo "$used_ids") <(echo "$pinned_ids")); do
		bpftool -j map show id "$id" | jq -e '.frozen == 1 and (.name | endswith(".rodata"))' >/dev/null ||
			{ echo "map id $id: used, not pinned, not a frozen .rodata"; return 1; }
	done
}
check "every map the loaded programs use is pinned (or the frozen .rodata)" unpinned_ok
check "the field list of struct toe_flow is read from include/opentoe.h" \
	test "$(fields toe_flow | tr '\n' ' ')" = "start_ns cookie bytes_acked bytes_received segs_in segs_out total_retrans srtt_us dev rule decision reason direction state policy xdp_packets xdp_bytes netns_ino "

# zeroed_entry MAP INFO: add an entry of zero bytes (bpftool's hex syntax).
zeroed_entry() {
	local k=(hex) v=(hex) i nk nv
	# (the sizes read once: a jq in the loop's condition ran once a byte)
	nk=$(jq .bytes_key <<<"$2") nv=$(jq .bytes_value <<<"$2")
	for ((i = 0; i < nk; i++)); do k+=(00); done
	for ((i = 0; i < nv; i++)); do v+=(00); done
	bpftool map update pinned "$PIN/$1" key "${k[@]}" value "${v[@]}"
}
DUMP=$CONF_DIR/dump.json
for m in $pinned; do
	info=$(bpftool -j map show pinned "$PIN/$m")
	type=$(jq -r .type <<<"$info")
	btf=$(jq -r '.btf_id // 0' <<<"$info")
	if [[ $NO_BTF == *" $m:$type "* ]]; then
		ok "$m has BTF # SKIP map type $type: the kernel takes no BTF for it"
		continue
	fi
	if [ "$btf" = 0 ]; then
		fail "$m ($type) has BTF"
		continue
	fi
	ok "$m ($type) has BTF (id $btf)"
	[[ $NO_DUMP == *" $type "* ]] && continue

	if [[ $type == *array && $(jq .max_entries <<<"$info") -gt 4096 ]]; then
		# every index of an array exists; dumping 262,144 of them
		# prints 80 MB: entry 0 goes through the same formatter
		bpftool -j map lookup pinned "$PIN/$m" key 0 0 0 0 | jq -s . >"$DUMP" ||
			{ fail "$m: bpftool map lookup"; continue; }
	else
		bpftool -j map dump pinned "$PIN/$m" >"$DUMP" 2>&1 || { fail "$m: bpftool map dump"; continue; }
	fi
	if [ "$(jq length "$DUMP")" = 0 ]; then
		# only hash maps can be empty here: give one a zeroed entry
		zeroed_entry "$m" "$info" && bpftool -j map dump pinned "$PIN/$m" >"$DUMP" 2>&1
		echo "$m: empty after the traffic, a zeroed entry added"
	fi
	expect "$m: dump prints formatted key and value" \
		'length > 0 and (.[0].formatted | has("key") and (has("value") or has("values")))' "$(jq '.[0:1]' "$DUMP" 2>&1)"
	while read -r _ part st; do
		want=$(fields "$st" | sort | tr '\n' ' ')
		[ -n "$want" ] || { fail "$m: struct $st found in include/opentoe.h"; continue; }
		got=$(jq -r --arg p "$part" '.[0].formatted |
			(if $p == "key" then .key elif has("values") then .values[0].value else .value end) |
			# an anonymous union is printed under the key "": its members
			. as $o | keys_unsorted[] | if . == "" then ($o[""] | keys_unsorted[]) else . end' "$DUMP" | sort | tr '\n' ' ')
		if [ "$got" = "$want" ]; then
			ok "$m: $part fields are struct $st's ($want)"
		else
			fail "$m: $part fields are struct $st's ($want): bpftool printed ($got)"
		fi
	done < <(map_structs | awk -v m="$m" '$1 == m')
done

# A few fields by name and value, from the traffic above.
expect "$MAP_FLOWS: decision, reason, dev, bytes_acked of the offloaded flow" \
	'.[0] | .value.decision == 1 and .value.reason == 0 and .value.dev == 0 and .value.rule == 0 and .value.bytes_acked > 1 and .value.segs_out > 1 and .key.family == 2' \
	"$(flows5300)"
expect "$MAP_DEVS: entry 0 is named t3, type 3 (chelsio-t3)" \
	'.formatted.value.name == "t3" and .formatted.value.type == 3' \
	"$(bpftool -j map lookup pinned "$PIN/$MAP_DEVS" key 0 0 0 0)"
expect "$MAP_DEV_LIVE: entry 0 counted the offloaded connection" \
	'.formatted.value.offloaded == 1' "$(bpftool -j map lookup pinned "$PIN/$MAP_DEV_LIVE" key 0 0 0 0)"
expect "$MAP_FLOWS: XDP counted packets and bytes of the offloaded flow in its record" \
	'.[0] | .value.xdp_packets > 0 and .value.xdp_bytes >= 54 * .value.xdp_packets' \
	"$(flows5300)"
expect "$MAP_NEIGH: toed mirrored b's MAC (value field mac)" \
	'[.[].formatted.value | select(.has_mac == 1 and (.mac | length) == 6)] | length > 0' \
	"$(bpftool -j map dump pinned "$PIN/$MAP_NEIGH")"
expect "$MAP_LOCAL_ADDR: a's address with its prefix length" \
	'[.[].formatted | select(.key.family == 2 and .value.prefixlen == 24)] | length > 0' \
	"$(bpftool -j map dump pinned "$PIN/$MAP_LOCAL_ADDR")"
expect "$MAP_XDP_CONF: one device in cpu mode" \
	'.[0].formatted.value.cpu_devs == 1' "$(bpftool -j map dump pinned "$PIN/$MAP_XDP_CONF")"
expect "$MAP_XDP_NEXT: the chained program by id" \
	'length == 1 and (.[0].formatted.value > 0)' "$(bpftool -j map dump pinned "$PIN/$MAP_XDP_NEXT")"
expect "$MAP_POL_HDR: one rule in the generation in force" \
	'[.[].formatted.value | select(.serial > 0 and .nrules == 1)] | length == 1' \
	"$(bpftool -j map dump pinned "$PIN/$MAP_POL_HDR")"
check "bpftool's plain (non-JSON) dump prints field names too" \
	bash -c "bpftool map dump pinned $PIN/$MAP_FLOWS | grep -q '\"decision\": 1'"

# Unload here, so that the test shows it leaves nothing pinned (the
# deferred unload is for a failure before this point).
stop_toed TERM
check "unload" nsx a toe-loader unload --pin-dir "$PIN"
check "nothing left pinned" test ! -e "$PIN"
finish
