#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Policy scoped by namespace (issue 31, item 3).  The operator's rule
# "offload remote 10.0.0.0/8 rport 443" on a device of nconn 4, applied by
# toed in namespace a.  An unprivileged user of the cgroup (nobody, through
# unshare -rn) makes its own namespace, gives its loopback 10.99.0.1/8 and
# opens 4 connections to 10.99.0.1:443: they match the rule's addresses
# and ports, but not its namespace, so they take no device slot (host,
# reason default), and the operator's own connection from a still gets one.
# "netns any" opens the rule to every namespace (the tenant's connection
# takes a slot); a rule naming namespace b does not match in a; a netns
# name that does not exist is refused, naming it, with the policy in force
# left as it was.
. "$(dirname "$0")/../policy/setup.sh"
plan 8
. "$(dirname "$0")/unpriv.sh"
rule='rule offload dev t3 remote 10.0.0.0/8 rport 443'
t3_applies scoped "the operator's configuration applies (toed in namespace a)" "$rule"
out=$CONF_DIR/tenant1
tenant_up 10.99.0.1 4 20 "$out"
check "the tenant's 4 connections take no slot of t3" test "$(dev_live 0 live)" = 0
got=$(tenant_flows 10.99.0.1)
check "its 4 records: host, reason default (the rule is not its namespace's)" \
	test "$(jq '[.[] | select(.decision == 0 and .reason == 1)] | length' <<<"$got")" = 4 ||
	echo "$got"

operator_offloaded
kill $TPID 2>/dev/null
wait $TPID 2>/dev/null

any=$(printf 'device t3 type chelsio-t3 nconn 4\n%s netns any\n' "$rule" | conf any)
apply "$any" >/dev/null
out=$CONF_DIR/tenant2
tenant_up 10.99.0.1 1 5 "$out"
got=$(tenant_flows 10.99.0.1)
check "with 'netns any' the tenant's connection is offloaded" \
	test "$(jq '[.[] | select(.decision == 1)] | length' <<<"$got")" = 1 || echo "$got"
kill $TPID 2>/dev/null
wait $TPID 2>/dev/null

nsb=$(ns_name b)
onlyb=$(printf 'device t3 type chelsio-t3 nconn 4\n%s netns %s\n' "$rule" "$nsb" | conf onlyb)
apply "$onlyb" >/dev/null
d=$(decided "$CG" $B4 443)
check "a rule naming namespace b does not match in a" \
	test "$(jq -c '[.decision, .reason]' <<<"$d")" = "[0,1]" || echo "$d"

before=$(policy_state)
bad=$(printf 'device t3 type chelsio-t3 nconn 4\n%s netns host,nosuch%s\n' "$rule" $$ | conf bad)
check "netns of a name that does not exist is refused, naming it" \
	refused "$bad:2:" apply "$bad"
check "the message names the namespace and /run/netns" \
	grep -qF "netns nosuch$$: no such network namespace (/run/netns/nosuch$$" <<<"$out" || echo "$out"
finish
