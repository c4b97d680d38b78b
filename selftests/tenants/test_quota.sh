#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Per-tenant quota of device slots (issue 31, item 3).  A rule opened to
# every namespace ("netns any") on a device of nconn 4; by default a
# namespace other than toed's may hold half of it.  An unprivileged tenant
# (nobody, unshare -rn) opens 4 connections: 2 are offloaded, 2 stay on the
# host with reason quota (counted in quota_refused, and as flow_refused);
# a second tenant's connection and the operator's own (toed's namespace,
# a) are still offloaded.  Once they close, toe_tenants holds nothing for
# any tenant.
# "quota slots 100%" lets one tenant take the whole device.  A tenant with
# room in its share on a device another holds half of: 2 of its 4
# connections offloaded, 2 refused because the device is full (reason
# capacity), which give back the share they took first: once closed, no
# tenant holds anything.
. "$(dirname "$0")/../policy/setup.sh"
plan 12
. "$(dirname "$0")/unpriv.sh"
rule='rule offload dev t3 remote 10.0.0.0/8 rport 443 netns any'
t3_applies quota "the configuration applies (netns any, the default quota)" "$rule"

q0=$(stat_sum "$STAT_QUOTA") rq0=$(rsn_of "$PIN" $RSN_REFUSED_QUOTA)
out1=$CONF_DIR/tenant1
tenant_up 10.99.0.1 4 20 "$out1"
t1=$TPID
got=$(tenant_flows 10.99.0.1)
check "tenant 1: 2 of its 4 connections offloaded, 2 on the host with reason quota" \
	test "$(jq -c '[([.[] | select(.decision == 1)] | length), ([.[] | select(.decision == 0 and .reason == 9)] | length)]' <<<"$got")" = "[2,2]" ||
	echo "$got"
check "quota_refused counted 2" test "$(($(stat_sum "$STAT_QUOTA") - q0))" = 2
check "and the refusals by reason ($MAP_REASONS: refused_quota) 2" test "$(($(rsn_of "$PIN" $RSN_REFUSED_QUOTA) - rq0))" = 2
check "t3 holds 2 slots" test "$(dev_live 0 live)" = 2

out2=$CONF_DIR/tenant2
# (held until its record is read: unhold)
tenant_up 10.99.0.2 1 60 "$out2"
t2=$TPID
got=$(tenant_flows 10.99.0.2)
check "tenant 2's connection is offloaded" \
	test "$(jq '[.[] | select(.decision == 1)] | length' <<<"$got")" = 1 || echo "$got"
operator_offloaded
unhold "$out2"
wait $t2 2>/dev/null
kill $t1 2>/dev/null
wait $t1 2>/dev/null
all_free() { test "$(dev_live 0 live)" = 0; }
wait_for 5 all_free
check "closed: every slot of t3 is free" test "$(dev_live 0 live)" = 0

held=$(bpftool -j map dump pinned "$PIN/$MAP_TENANTS" | jq -c '[.[].formatted | select(.key.what < 64) | .value.held]')
check "closed: $MAP_TENANTS gave every tenant's slots back (held $held)" \
	test "$(jq 'add' <<<"$held")" = 0 -a "$(jq 'length' <<<"$held")" = 2

all=$(printf 'device t3 type chelsio-t3 nconn 4\nquota slots 100%%\n%s\n' "$rule" | conf all)
apply "$all" >/dev/null
out4=$CONF_DIR/tenant4
tenant 10.99.0.1 4 60 "$out4" &
t4=$!
wait_for 10 grep -q held "$out4"
got=$(tenant_flows 10.99.0.1)
unhold "$out4"
check "'quota slots 100%': one tenant may take all 4" \
	test "$(jq '[.[] | select(.decision == 1)] | length' <<<"$got")" = 4 || echo "$got"
wait $t4 2>/dev/null
wait_for 5 all_free
# the device full, not the tenant's share: tenant 1 holds 2, tenant 2
# asks for 4 and gets the other 2; its last 2 are refused for capacity
tenant_up 10.99.0.1 2 60 "$CONF_DIR/tenant5"
t5=$TPID
tenant_up 10.99.0.2 4 60 "$CONF_DIR/tenant6"
t6=$TPID
got=$(tenant_flows 10.99.0.2)
echo "# tenant 2's connections' [decision, reason]: $(jq -c '[.[] | [.decision, .reason]]' <<<"$got")"
check "a tenant with room in its share but the device full: 2 offloaded, 2 on the host with reason capacity" \
	test "$(jq -c '[([.[] | select(.decision == 1)] | length), ([.[] | select(.decision == 0 and .reason == 2)] | length)]' <<<"$got")" = "[2,2]"
unhold "$CONF_DIR/tenant5"
unhold "$CONF_DIR/tenant6"
kill $t5 $t6 2>/dev/null
wait $t5 $t6 2>/dev/null
wait_for 5 all_free
held=$(bpftool -j map dump pinned "$PIN/$MAP_TENANTS" | jq -c '[.[].formatted | select(.key.what < 64) | .value.held]')
check "closed: the refusals for capacity gave back the share they took (held $held)" \
	test "$(jq 'add' <<<"$held")" = 0
finish
