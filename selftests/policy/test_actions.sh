#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Policy decisions on real TCP between two namespaces, IPv4 and IPv6: each
# action, first-match order, port and prefix edges, active and passive side,
# keepalive set by a rule.
. "$(dirname "$0")/setup.sh"
plan 20
load_toe
cfg=$(conf actions <<'EOF2'
# first match wins
device t3a type chelsio-t3 nconn 100
device sw0 type software nconn 100
default host
rule host rport 5001                                 # 0
rule offload dev t3a rport 5001-5003                 # 1 (5001 taken by rule 0)
rule bypass family inet6 rport 5004                  # 2
rule offload dev sw0 remote 10.202.0.2/32 rport 5005 # 3
rule offload dev sw0 remote 10.202.0.3/32 rport 5006 # 4 (one address off)
rule offload dev t3a remote fd00:202::/127 rport 5006 # 5 (::2 is just outside)
rule offload dev t3a lport 5007 netns any            # 6 (server side, in b)
rule offload dev sw0 rport 5008 keepalive 33 7 4     # 7
rule offload dev sw0 remote 10.202.0.1/32 lport 5009 netns any # 8 (server side, by the client's address)
EOF2
)
check "the configuration applies" apply "$cfg"
server 5000 5001 5002 5003 5004 5005 5006 5007 5008 5009 || exit 1

# expect FAMILY PORT DECISION REASON RULE DEVNAME [side]
declare -A devidx=([t3a]=0 [sw0]=1 [-]=4294967295)
expect() {
	local fam=$1 port=$2 dec=$3 reason=$4 rule=$5 dev=${devidx[$6]} side=${7:-client}
	local addr=$B4 famno=2 out lp f sel
	[ "$fam" = 6 ] && addr=$B6 famno=10
	out=$CONF_DIR/client.$RANDOM
	# held open until its record is read, then stopped (the record of a
	# closed connection is gone): $! is the client's own pid
	(echo $BASHPID >"$CG/cgroup.procs" &&
		exec nsenter --net=/run/netns/$(ns_name a) python3 "$TCPX" client --addr "$addr" --port "$port" --hold 30) >"$out" &
	local cpid=$!
	wait_for 5 grep -q held "$out" || { fail "connect $fam/$port"; kill $cpid; wait $cpid; return; }
	lp=$(head -1 "$out" | jq '.held[0]')
	if [ "$side" = client ]; then
		sel=".family == $famno and .lport == $lp and .rport == $port"
	else
		sel=".family == $famno and .lport == $port and .rport == $lp"
	fi
	f=$(flows | jq -c "[.[] | select($sel)][0]")
	kill $cpid 2>/dev/null
	wait $cpid 2>/dev/null
	if jq -e ".decision == $dec and .reason == $reason and .rule == $rule and .dev == $dev" <<<"$f" >/dev/null; then
		ok "IPv$fam port $port ($side): decision $dec reason $reason rule $rule"
	else
		fail "IPv$fam port $port ($side): want decision $dec reason $reason rule $rule dev $dev, got $f"
	fi
}
NONE=4294967295
# decisions: 0 host, 1 offload, 2 bypass; reasons: 0 rule, 1 default
expect 4 5000 0 1 $NONE -            # below every range: default
expect 4 5001 0 0 0 -                # rule 0 shadows rule 1
expect 6 5001 0 0 0 -
expect 4 5002 1 0 1 t3a              # range start
expect 6 5003 1 0 1 t3a              # range end, IPv6
expect 4 5004 0 1 $NONE -            # rule 2 is IPv6 only
expect 6 5004 2 0 2 -
expect 4 5005 1 0 3 sw0              # /32 matches (v4 through a dual-stack listener)
expect 6 5005 0 1 $NONE -            # IPv4 prefix, IPv6 flow
expect 4 5006 0 1 $NONE -            # prefix one address off
expect 6 5006 0 1 $NONE -            # ::2 outside ::/127
expect 4 5007 0 1 $NONE -            # client side of 5007: no rule
expect 4 5007 1 0 6 t3a server       # server side: lport rule
expect 6 5007 1 0 6 t3a server
# the server's socket of an IPv4 client is v4-mapped (a dual-stack
# listener): keyed by its IPv4 addresses, so an address rule matches it
expect 4 5009 1 0 8 sw0 server       # server side: the client's /32
expect 6 5009 0 1 $NONE - server     # IPv4 prefix, IPv6 flow

# keepalive from rule 7, read back from the application's own socket
out=$(client --addr $B4 --port 5008 | tail -1)
check "keepalive applied to the offloaded socket (idle 33, intvl 7, cnt 4)" \
	jq -e '.conns[0] | .keepalive == 1 and .keepidle == 33 and .keepintvl == 7 and .keepcnt == 4' <<<"$out"
out=$(client --addr $B4 --port 5002 | tail -1)
check "no keepalive where the rule sets none" jq -e '.conns[0].keepalive == 0' <<<"$out"
all_released() { [ "$(dev_live 0 live)" = 0 ] && [ "$(dev_live 1 live)" = 0 ]; }
check "every device slot released after the connections closed" wait_for 5 all_released
echo "t3a: $(bpftool -j map lookup pinned "$PIN/$MAP_DEV_LIVE" key 0 0 0 0 | jq -c .formatted.value)"
echo "sw0: $(bpftool -j map lookup pinned "$PIN/$MAP_DEV_LIVE" key 1 0 0 0 | jq -c .formatted.value)"
finish
