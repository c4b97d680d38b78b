#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# 10,000 rules of four shapes load and decide correctly (first match wins
# over a range rule placed first), and the lookup cost does not depend on
# the rule count: it is one hash lookup per shape (see `make bench`).
. "$(dirname "$0")/setup.sh"
plan 11
load_toe
f=$(python3 -c "
print('device d0 type chelsio-t3 nconn 1000')
print('device d1 type chelsio-t1 nconn 1000')
print('device d2 type software nconn 1000')
print('rule host rport 29990-29999')
for i in range(10000):
    dev, p = 'd%d' % (i % 3), 20000 + i
    m = ['remote 10.202.0.2/32', 'remote 10.202.0.0/24', 'family inet', 'remote fd00:202::/64'][i % 4]
    print('rule offload dev %s %s rport %d' % (dev, m, p))
" | conf scale)
out=$(nsenter --net=/run/netns/$(ns_name a) toed --apply "$f" --pin-dir "$PIN" -j)
echo "$out"
check "10,001 rules apply" jq -e '.rules == 10001 and .tuples == 5' <<<"$out"
samples=(0 1 2 3 4711 5002 7777 9989 9990 9999)
ports=(); for i in "${samples[@]}"; do ports+=($((20000 + i))); done
server "${ports[@]}" || exit 1
for i in "${samples[@]}"; do
	p=$((20000 + i)); addr=$B4; fam=2
	[ $((i % 4)) = 3 ] && addr=$B6 fam=10
	out=$CONF_DIR/c.$i
	# held open until its record is read, then stopped (a closed
	# connection's record is gone): $! is the client's own pid
	(echo $BASHPID >"$CG/cgroup.procs" &&
		exec nsenter --net=/run/netns/$(ns_name a) python3 "$TCPX" client --addr $addr --port $p --hold 30) >"$out" &
	cpid=$!
	wait_for 5 grep -q held "$out" || { fail "connect to $p"; kill $cpid; continue; }
	lp=$(head -1 "$out" | jq '.held[0]')
	fl=$(flows | jq -c "[.[] | select(.lport == $lp and .rport == $p and .family == $fam)][0]")
	kill $cpid 2>/dev/null
	wait $cpid 2>/dev/null
	if [ $i -ge 9990 ]; then
		want=".decision == 0 and .rule == 0"
	else
		want=".decision == 1 and .rule == $((i + 1)) and .dev == $((i % 3))"
	fi
	check "port $p decided by rule $([ $i -ge 9990 ] && echo 0 || echo $((i + 1)))" jq -e "$want" <<<"$fl"
done
finish
