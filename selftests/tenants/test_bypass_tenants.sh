#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Shared hosts (issue 16): bypassed tenants never get each other's bytes.
# The bypass key leaves the namespace out (a bypassed pair may span two
# namespaces); what keeps tenants with one 4-tuple apart is that it also
# holds both ends' initial sequence numbers.  NT namespaces, each process
# in its own child cgroup, each connecting 127.0.0.1:45000 ->
# 127.0.0.1:7777 at the same time under a bypass rule, each sending its own
# pattern (tools/tenant.py, seed = its number; the server end checks every
# byte).  Every tenant's bytes arrive intact, every pair was paired and
# bypassed (the bypass carried all their bytes), and nothing is left.
. "$(dirname "$0")/../policy/setup.sh"
NT=${TOE_TENANTS:-16}
plan 6

load_toe || { fail "load"; finish; }
cfg=$(printf 'default host\nrule bypass rport 7777 netns any\nrule bypass lport 7777 netns any\n' | conf bypass)
apply "$cfg" >/dev/null || { fail "the bypass policy applies"; finish; }
p0=$(stat_sum "$STAT_BYP_PAIRED") b0=$(stat_sum "$STAT_BYP_BYTES") n0=$(stat_sum "$STAT_BYP_NOT_LOCAL") u0=$(stat_sum "$STAT_BYP_UNSUPPORTED")
declare -a PIDS
total=0
for ((i = 0; i < NT; i++)); do
	ns_add "b$i" || { fail "namespace b$i"; finish; }
	nsx "b$i" ip link set lo up
	mkdir "$CG/b$i" "$CONF_DIR/b$i" && defer "cg_del $CG/b$i"
	touch "$CONF_DIR/b$i/go" # no pause half-way: all at once
	n=$((300000 + 7919 * i))
	total=$((total + n))
	(echo $BASHPID >"$CG/b$i/cgroup.procs" &&
		exec nsenter --net=/run/netns/"$(ns_name "b$i")" python3 "$TENANT" "$CONF_DIR/b$i" "$i" "$n") \
		>"$CONF_DIR/b$i/log" 2>&1 &
	PIDS[i]=$!
done
bad=
for ((i = 0; i < NT; i++)); do
	wait "${PIDS[i]}" || bad="$bad b$i($(cat "$CONF_DIR/b$i/result" "$CONF_DIR/b$i/log" 2>/dev/null | tr '\n' ' '))"
done
check "$NT tenants on one 4-tuple, bypassed at once: every byte of each arrived, in order, its own${bad:+: $bad}" \
	test -z "$bad"
p1=$(stat_sum "$STAT_BYP_PAIRED") b1=$(stat_sum "$STAT_BYP_BYTES") n1=$(stat_sum "$STAT_BYP_NOT_LOCAL") u1=$(stat_sum "$STAT_BYP_UNSUPPORTED")
check "  every pair found its own peer ($((p1 - p0)) paired)" test $((p1 - p0)) = "$NT"
check "  none was left to TCP as not local or unsupported (+$((n1 - n0)), +$((u1 - u0)))" \
	test $((n1 - n0)) = 0 -a $((u1 - u0)) = 0
check "  the bypass carried their $total bytes (+$((b1 - b0)))" test $((b1 - b0)) -ge "$total"
gone() { test "$(bpftool -j map dump pinned "$PIN/$MAP_FLOWS" | jq length)" = 0; }
check "every record is gone" wait_for 10 gone
check "$MAP_BYPASS holds no socket" test "$(bpftool map dump pinned "$PIN/$MAP_BYPASS" 2>/dev/null | grep -c '^key')" = 0
finish
