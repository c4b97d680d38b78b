#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toe-loader short of file descriptors (RLIMIT_NOFILE): a load under each
# limit from 4 up to the first that is enough either completes or
# fails with exit 1 and leaves nothing behind (no pin, no XDP program on
# the device, no sock_ops on the cgroup), and a failure never blames a
# pinned map of an older load when nothing was pinned.  The load that
# completes is whole (toe-loader status).  Then unload under each limit
# from 4 up: each that fails says why, and the one that completes leaves
# nothing.
. "$(dirname "$0")/../lib.sh"
plan 4
need_cmd prlimit bpftool jq
ns=$(ns_name l)
ip netns add "$ns" && defer "ip netns del $ns" || { fail "netns"; finish; }
ip -n "$ns" link add va type veth peer name vb && ip -n "$ns" link set va up && ip -n "$ns" link set vb up ||
	{ fail "veth"; finish; }
PIN=/sys/fs/bpf/opentoe-t$TOE_TEST_ID
CG=/sys/fs/cgroup/unified/opentoe-t$TOE_TEST_ID-fdl
mkdir -p "$CG" && defer "rmdir $CG"
defer "toe-loader unload --pin-dir $PIN >/dev/null 2>&1; rm -rf $PIN"
# left: what a load left behind, as "pins xdp sock_ops" (0 none 0: nothing)
left() {
	echo "$(ls "$PIN" 2>/dev/null | wc -l) $(ip -n "$ns" -j link show va | jq -r '.[0].xdp.prog.id // "none"') $(bpftool cgroup show "$CG" 2>/dev/null | grep -c sock_ops)"
}
fails=0 emfile=0 bad= done=
for n in $(seq 4 160); do
	out=$(nsenter --net=/run/netns/"$ns" prlimit --nofile=$n:$n toe-loader load --cgroup "$CG" --pin-dir "$PIN" --dev va --hook xdp 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		done=$n
		break
	fi
	fails=$((fails + 1))
	grep -q "Too many open files" <<<"$out" && emfile=$((emfile + 1))
	[ $rc = 1 ] || bad="$bad; limit $n: exit $rc"
	[ "$(left)" = "0 none 0" ] || bad="$bad; limit $n: left $(left)"
	grep -q "pinned map from an older" <<<"$out" && bad="$bad; limit $n: blames a pinned map: $(tail -n 1 <<<"$out")"
done
check "toe-loader load under each limit from 4 up to ${done:-none}: $fails failed, exit 1, nothing left behind, no pinned map blamed${bad:+ ($bad)}" \
	test -n "$done" -a -z "$bad"
check "... the failures name the cause: EMFILE in $emfile of $fails" test "$emfile" -ge $((fails * 3 / 4))
check "the load that completes is whole: XDP on va, sock_ops on the cgroup ($(left))" \
	eval '[ "$(left | cut -d" " -f2)" != none ] && [ "$(left | cut -d" " -f3)" = 1 ] && toe-loader status --pin-dir "$PIN" >/dev/null'
# unload under each limit from 4 up, until one completes: each that
# fails says why (exit 1), and the one that completes leaves nothing, so
# an unload stopped half way is finished by the next
ufails=0 ubad= udone=
for n in $(seq 4 160); do
	out=$(nsenter --net=/run/netns/"$ns" prlimit --nofile=$n:$n toe-loader unload --pin-dir "$PIN" 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		udone=$n
		break
	fi
	ufails=$((ufails + 1))
	[ $rc = 1 ] && grep -q "Too many open files" <<<"$out" || ubad="$ubad; limit $n: exit $rc: $(tail -n 1 <<<"$out")"
done
check "unload under each limit from 4 up to ${udone:-none}: $ufails failed, exit 1 naming EMFILE; the one that completes leaves nothing ($(left))${ubad:+ ($ubad)}" \
	eval '[ -n "$udone" ] && [ -z "$ubad" ] && [ "$(left)" = "0 none 0" ]'
finish
