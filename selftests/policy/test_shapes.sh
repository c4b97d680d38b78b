#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# First match across rule shapes.  The compiler makes one tuple (a hash
# lookup) per shape: family x local and remote prefix lengths x which of
# local port, remote port and cgroup the rule matches (user/toed/classify.c
# find_tuple), sorted by the lowest rule of each; the search visits them in
# that order and stops at a tuple whose lowest rule cannot beat its best
# match.  For every ordered pair of eight shapes X, Y, one connection that
# both match must be decided by rule 2 (X, on d0), the first that matches,
# under two decoys (rules of the same shapes that do not match) that set
# the tuples' order:
#   X listed before Y in shapes:  dY, dX, X, Y   Y's tuple is searched
#       first and matches rule 3: the search must go on to X's (no stop
#       at the first tuple that matches)
#   X after Y:                    dX, dY, X, Y   X's tuple first, rule 2;
#       Y's tuple then matches rule 3, which must not replace it (no
#       last match)
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
for ((i = 0; i < ${#shapes[@]}; i++)); do
	IFS='|' read -r xn xm xd <<<"${shapes[$i]}"
	for ((j = 0; j < ${#shapes[@]}; j++)); do
		[ $i = $j ] && continue
		IFS='|' read -r yn ym yd <<<"${shapes[$j]}"
		if [ $i -lt $j ]; then d1=$yd d2=$xd; else d1=$xd d2=$yd; fi
		f=$(conf "pair" <<EOF2
device d0 type software nconn 1000
device d1 type software nconn 1000
device d2 type software nconn 1000
default host
rule offload dev d2 $d1
rule offload dev d2 $d2
rule offload dev d0 $xm
rule offload dev d1 $ym
EOF2
)
		if ! out=$(apply "$f" 2>&1); then
			fail "$xn before $yn: the rules do not apply: $out"
			continue
		fi
		fl=$(decided "$CG" $B4 $P)
		if jq -e '.decision == 1 and .reason == 0 and .rule == 2 and .dev == 0' <<<"$fl" >/dev/null; then
			ok "$xn before $yn ($([ $i -lt $j ] && echo "$yn's tuple searched first" || echo "$xn's tuple searched first")): the first match decides"
		else
			fail "$xn before $yn: want rule 2 on d0, got $fl"
		fi
	done
done
finish
