#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# First match across rule shapes.  The compiler makes one tuple (a hash
# lookup) per shape: family x local and remote prefix lengths x which of
# local port, remote port and cgroup the rule matches (user/policy.c
# find_tuple), sorted by the lowest rule of each.  For every ordered pair
# of eight shapes X, Y, one connection that both match decides, under the
# rules
#     rule offload dev d2 <Y, not matching>   # 0: gives Y's tuple the lowest rule
#     rule offload dev d0 <X>                 # 1
#     rule offload dev d1 <Y>                 # 2
# by rule 1 on d0: the first rule that matches, even though the search
# meets Y's tuple (and rule 2) first.
. "$(dirname "$0")/setup.sh"
plan 56
load_toe
mkdir "$CG/decoy" || { fail "decoy cgroup"; finish; }
defer "cg_del $CG/decoy"
P=6000
# name|matching|same shape, not matching (a connection from a, in $CG,
# 10.202.0.1 port >= 1024, to 10.202.0.2 port $P)
shapes=(
	"rport|rport $P|rport $((P + 1))"
	"lport|lport 1024-65535|lport 1-1023"
	"remote/32|remote 10.202.0.2/32|remote 10.202.0.3/32"
	"remote/24+rport|remote 10.202.0.0/24 rport $P|remote 10.202.0.0/24 rport $((P + 1))"
	"local/32|local 10.202.0.1/32|local 10.202.0.9/32"
	"family|family inet|family inet6"
	"cgroup|cgroup $CG|cgroup $CG/decoy"
	"all|local 10.202.0.0/16 remote 10.202.0.2/32 lport 1024-65535 rport $P cgroup $CG|local 10.202.0.0/16 remote 10.202.0.2/32 lport 1024-65535 rport $((P + 1)) cgroup $CG"
)
server $P || exit 1
for x in "${shapes[@]}"; do
	IFS='|' read -r xn xm _ <<<"$x"
	for y in "${shapes[@]}"; do
		[ "$x" = "$y" ] && continue
		IFS='|' read -r yn ym yd <<<"$y"
		f=$(conf "pair" <<EOF2
device d0 type software nconn 1000
device d1 type software nconn 1000
device d2 type software nconn 1000
default host
rule offload dev d2 $yd
rule offload dev d0 $xm
rule offload dev d1 $ym
EOF2
)
		if ! out=$(apply "$f" 2>&1); then
			fail "$xn before $yn: the rules do not apply: $out"
			continue
		fi
		fl=$(decided "$CG" $B4 $P)
		if jq -e '.decision == 1 and .reason == 0 and .rule == 1 and .dev == 0' <<<"$fl" >/dev/null; then
			ok "$xn before $yn: the first match (rule 1) decides"
		else
			fail "$xn before $yn: want rule 1 on d0, got $fl"
		fi
	done
done
finish
