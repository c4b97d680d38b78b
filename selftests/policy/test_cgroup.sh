#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# cgroup rules decided for real: connections from two cgroups below the
# test's own (sock_ops runs for both), rules naming one of them by path or
# by id, IPv4 and IPv6; a connection from the cgroup a rule names is
# offloaded by it, one from the other cgroup or from their parent is not.
. "$(dirname "$0")/setup.sh"
plan 8
load_toe
# (registered after cg_add's: removed before the test cgroup itself)
mkdir "$CG/in" "$CG/out" || { fail "child cgroups"; finish; }
defer "cg_del $CG/in"
defer "cg_del $CG/out"
OUT_ID=$(stat -c %i "$CG/out")
cfg=$(conf cgroup <<EOF2
device t3a type chelsio-t3 nconn 100
device sw0 type software nconn 100
default host
rule offload dev t3a cgroup $CG/in rport 5009       # 0: by path, with a port
rule offload dev sw0 cgroup $OUT_ID rport 5010      # 1: by id
rule offload dev sw0 cgroup $CG/in family inet6     # 2: the cgroup alone, IPv6
EOF2
)
check "the configuration applies" apply "$cfg"
server 5009 5010 5011 || exit 1

NONE=4294967295
# expect CGDIR ADDR PORT DECISION RULE DEV (decision 1: offload, 0: host;
# host here means the default: reason 1, no rule, no device)
expect() {
	local cg=$1 addr=$2 port=$3 dec=$4 rule=$5 dev=$6 f want
	f=$(decided "$cg" "$addr" "$port")
	if [ "$dec" = 0 ]; then
		want=".decision == 0 and .reason == 1 and .rule == $NONE"
	else
		want=".decision == 1 and .reason == 0 and .rule == $rule and .dev == $dev"
	fi
	if jq -e "$want" <<<"$f" >/dev/null; then
		ok "from ${cg#"$CG"}/ to [$addr]:$port: decision $dec rule $rule"
	else
		fail "from ${cg#"$CG"}/ to [$addr]:$port: want decision $dec rule $rule dev $dev, got $f"
	fi
}
expect "$CG/in" $B4 5009 1 0 0       # the cgroup rule 0 names
expect "$CG/out" $B4 5009 0 - -      # another cgroup: not rule 0
expect "$CG" $B4 5009 0 - -          # their parent: a rule names one cgroup, not its ancestors
expect "$CG/out" $B4 5010 1 1 1      # by id
expect "$CG/in" $B4 5010 0 - -
expect "$CG/in" $B6 5011 1 2 1       # IPv6, the cgroup alone
expect "$CG/out" $B6 5011 0 - -
finish
