#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A model-based test of the forward path (issue 50): a seeded random
# sequence of events applied to a real routed flow through the router
# (client, router, server: router.sh), conntrack tracking it, toed
# running there, and after every step the real state checked against
# what the stack alone would do.  The events: ruleset changes (a DROP one
# way or both ways, then removed; a DROP, a second change while the flow
# waits to be re-admitted, then the DROP removed; a change that drops
# nothing), a route change (unreachable, one way, then removed), a
# neighbour change (the server's or the client's MAC, announced),
# forwarding off then on, conntrack -D, the flow's toe_fwd entry deleted
# (an eviction), both again and again as the flow comes back (churn: to
# its join limit, then held in the stack), toed killed (SIGKILL) or stopped (TERM) and started
# again, toed killed and then a DROP (the fast path fails closed), the
# flow ended by a FIN or an RST from either end and a new one started,
# and one direction returned to the stack (the client's packets carrying
# IPv4 options or an IPv6 hop-by-hop header, the fast path's reason slow,
# while the server's stay on the fast path).  The flow (IPv4 or IPv6,
# drawn for each new one): fwd_model.py's stream, whose every byte the
# server checks (the word at offset 8k is k: none lost, repeated or out
# of place), at 2 MB/s.
# After each step, three checks:
#  1. during it: what the stack would forward, and no more.  A FORWARD
#     DROP, forwarding off, an unreachable route: from 0.3 s after the
#     command on (0.6 s for a route or forwarding, 1.2 s with toed dead),
#     the server's bytes (the client's way blocked) and the fast path's
#     packets of each blocked way stand still for 0.5 s; a ruleset DROP
#     leaves the flow's entry waiting (readmit), and toectl flows says so.
#     Every other event: the flow goes on (the server's bytes grow); one
#     way returned: the fast path carries none of the client's packets and
#     goes on carrying the server's.  An end: the ends agree on what
#     arrived (a FIN: every byte sent, once, in order).
#  2. after it: the flow goes on, every byte in order, and is where the
#     model says: on the fast path (toe_fwd established, toectl -j flows
#     too, its packets growing both ways), or held in the stack (a flow
#     that joined mid-stream TOE_FWD_JOIN_MAX times in its window of a
#     minute: fwd_join_limited moving), or either (at a window's edge).
#     An end: the new flow's admission (one fwd_admitted).
#  3. events and counters: the flow's fwd_returned / fwd_ended events in
#     toectl monitor -j, of the step's reason, within the bounds the
#     transition gives (one per transition, at most one a second while a
#     flow goes back and forth), no fwd_ended of another reason, a
#     fwd_admitted only for a join (and fwd_joined with it), and toectl -j
#     stats' fwd_flows_HOOK_REASON moving with them.
# Then: the last flow ends with a FIN, whole; and the events of all flows
# over the run within the sum of the steps' bounds (no storm over time).
# TOE_MODEL_SEED (random unless set; printed), TOE_MODEL_STEPS (5); a
# failure prints the command that replays the run.  make check runs the
# short run; make model MODEL_STEPS=N a long one on both hooks.  XDP, or
# tc (test_fwd_model_tc.sh).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
STEPS=${TOE_MODEL_STEPS:-4}
SEED=${TOE_MODEL_SEED:-$(((RANDOM << 15 | RANDOM) % 1000000))}
SELF=selftests/xdp/test_fwd_model.sh
[ "$FWD_HOOK" = tc ] && SELF=selftests/xdp/test_fwd_model_tc.sh
REPLAY="TOE_MODEL_SEED=$SEED TOE_MODEL_STEPS=$STEPS${TOE_MODEL_KINDS:+ TOE_MODEL_KINDS=\"$TOE_MODEL_KINDS\"}"
# (a long run needs more than the runner's 900 s)
[ "$STEPS" -gt 60 ] && REPLAY="$REPLAY TOE_TEST_TIMEOUT=$((STEPS * 10 + 120))"
REPLAY="$REPLAY bash selftests/run.sh $SELF"
echo "# seed $SEED, $STEPS steps, hook $FWD_HOOK; replay: $REPLAY"
plan $((2 + 3 * STEPS + 2))
need_cmd iptables ip6tables conntrack
need_built toectl
# every failure says how to replay the run
mcheck() {
	local desc=$1; shift
	if "$@" >/dev/null; then ok "$desc"; else fail "$desc"; echo "# FAILED at seed $SEED, step $STEP: replay with $REPLAY"; fi
}
fwd_router fwdmodel
defer "nsx r iptables -F FORWARD; nsx r ip6tables -F FORWARD"
nsx r iptables -A FORWARD -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT &&
	nsx r ip6tables -A FORWARD -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT || { fail "conntrack rules"; finish; }
# conntrack picks a flow up mid-stream from the stack (a deleted entry)
nsx r sysctl -qw net.netfilter.nf_conntrack_tcp_loose=1
MODEL=$TOE_TOP/selftests/xdp/fwd_model.py
RUN=$work/run
ctl() { toectl --run-dir "$RUN" "$@"; }
MON=
mon_start() { # toectl monitor -j of the toed running, appended to mon.json
	ctl monitor -j >>"$work/mon.json" 2>>"$work/mon.err" &
	MON=$!
	defer "kill $MON"
	sleep 0.2
}
toed_up() {
	fwd_toed || { fail "toed starts"; cat "$work/toed.log"; finish; }
	mon_start
}
toed_up
mkdir -p "$work/ctl"
nsx_bg s python3 "$MODEL" server --port 5201 --state "$work/server.state" --ctl "$work/ctl" >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }

# ---- the generator: a 31-bit LCG of the seed (bash's RANDOM is not
# the same sequence everywhere); rnd N: RV in 0..N-1
RS=$SEED
rnd() { RS=$(((RS * 1103515245 + 12345) & 0x7fffffff)); RV=$(((RS >> 8) % $1)); }
# (TOE_MODEL_KINDS: only these, e.g. "ctdel evict" to reach the join limit)
HEARD=1 # toed heard the flow's admission (its evictions are reported)
KINDS=(${TOE_MODEL_KINDS:-drop1 drop2 twice benign route neigh ipfwd ctdel evict churn toedkill toedterm toeddrop fin_c fin_s rst_c rst_s oneway})

# ---- the flow and what is read of it
NF=0 F=
# FAM (4 or 6, drawn): its family; SA, CA: the server's and the client's
# address; IPT: its FORWARD chain's command
flow_new() { # a new flow, F; false if it did not connect
	NF=$((NF + 1)) F=f$NF
	rnd 2
	if [ $RV = 0 ]; then FAM=4 SA=$S4 CA=$C4 IPT=iptables; else FAM=6 SA=$S6 CA=$C6 IPT=ip6tables; fi
	rm -f "$work/ctl/$F".*
	nsx_bg c python3 "$MODEL" client --addr $SA --port 5201 --state "$work/$F.state" --ctl "$work/ctl/$F"
	eval "PID_$F=$NSX_PID"
	wait_for 10 cstate_has lport || return 1
	jq .lport "$work/$F.state" >"$work/$F.lport"
	LP=$(cat "$work/$F.lport")
	model_reset # a new tuple: no join window
}
cstate_has() { [ -s "$work/$F.state" ] && jq -e ".$1 != null" "$work/$F.state" >/dev/null 2>&1; }
cst() { jq -r ".$1" "$work/$F.state" 2>/dev/null; } # the client's FIELD
sst() { jq -r --arg p "$LP" '.[$p].'"$1"' // "none"' "$work/server.state" 2>/dev/null; } # the server's
sbytes() { local b; b=$(sst bytes); [ "$b" = none ] && b=0; echo "$b"; }
# the flow's toe_fwd entry: "STATE C2S S2C" (fast-path packets each way), or "none"
ent() {
	local e
	e=$(flow_entry "$F" '"\(.value.state) \(.value.dir_packets[0]) \(.value.dir_packets[1])"')
	echo "${e:-none 0 0}"
}
# toectl -j flows' state of the flow (established, readmit, ct_wait), or none
tstate() { ctl -j flows port 5201 | jq -r --argjson p "$LP" '[.[] | select(.decision == "forward" and .lport == $p) | .state][0] // "none"'; }
# the flow's events: EVENT [REASON]
nev() {
	grep -F "\"event\":\"$1\"" "$work/mon.json" 2>/dev/null | grep -F "\"lport\":$LP," |
		grep -F "${2:+\"reason\":\"$2\"}" | grep -cF "\"hook\":\"$FWD_HOOK\""
}
rsn() { ctl -j stats | jq ".reasons.fwd_flows_${FWD_HOOK}_$1 // 0"; }
st() { stat_of "$PIN" "$1"; }

# on_fast: the flow established in toe_fwd, toectl flows saying so, the
# fast path carrying it both ways (packets growing)
on_fast() {
	local a b
	set -- $(ent); a="$1 $2 $3"
	[ "$1" = 3 ] || return 1
	[ "$(tstate)" = established ] || return 1
	sleep 0.2
	set -- $(ent)
	b=($a)
	[ "$1" = 3 ] && [ "$2" -gt "${b[1]}" ] && [ "$3" -gt "${b[2]}" ]
}
# grows [BYTES]: the server's bytes grow by BYTES (100 kB) from now
grows() {
	local b0; b0=$(sbytes)
	_grown() { [ "$(sbytes)" -gt $((b0 + ${1:-100000})) ]; }
	wait_for "$(slow 15)" _grown "$@"
}
good() { [ "$(sst bad)" = none ]; } # no byte out of place so far (null: none)
# ---- the model of joins (bpf/egress.h, egress_join): a flow whose
# entry went (conntrack -D, an eviction) joins again mid-stream, at most
# TOE_FWD_JOIN_MAX times in a window of 60 s that its first loss opens
# (the join record's start_ns, kept across joins) and a decision 60 s on
# or later opens again; held back, it waits in the stack until then.
# E: what the flow must be now: fast, stack, or may (near a window's edge,
# where a loaded machine's delays decide).
JMAX=$(sed -n 's/^#define TOE_FWD_JOIN_MAX \([0-9]*\)$/\1/p' "$TOE_TOP/include/opentoe_forward.h")
JMAX=${JMAX:-4}
model_reset() { WS= WJ=0 LIM=0 UNK=0; }
expect() {
	local now=$EPOCHSECONDS
	E=fast
	if [ $UNK = 1 ]; then
		E=may
	elif [ $LIM -gt 0 ]; then
		if [ $now -lt $((LIM - 2)) ]; then
			E=stack
		elif [ $now -le $((LIM + 3)) ]; then
			E=may
		else # it joined again as the window ended: a new one
			WS=$LIM WJ=1 LIM=0
		fi
	fi
}
# loss: the flow's entry went (it was on the fast path): a join to come
loss() {
	local t=$EPOCHSECONDS
	if [ "$E" != fast ]; then
		[ "$E" = may ] && UNK=1
		return
	fi
	if [ -z "$WS" ] || [ $((t - WS)) -ge 62 ]; then
		WS=$t WJ=0
	elif [ $((t - WS)) -ge 58 ]; then
		UNK=1 # at the window's edge: either
		return
	fi
	if [ "$WJ" -ge "$JMAX" ]; then
		LIM=$((WS + 60))
	else
		WJ=$((WJ + 1)) NJOIN=$((NJOIN + 1))
	fi
}
# ct_del: conntrack -D of the flow's entry, the way round it is (an entry
# conntrack made again mid-stream has as its original direction the way
# of the first packet it saw; one command, or a second would delete the
# entry the first one's deletion made again)
ct_del() {
	local sel=(--dport 5201 --sport "$LP")
	nsx r conntrack -L -f ipv$FAM -p tcp "${sel[@]}" 2>/dev/null | grep -q . || sel=(--sport 5201 --dport "$LP")
	nsx r conntrack -D -f ipv$FAM -p tcp "${sel[@]}" >/dev/null 2>&1
}
# fwd_del: the flow's toe_fwd entry deleted, as the LRU evicts; false if
# it had none
fwd_del() {
	local key
	key=$(bpftool -j map dump pinned "$PIN/$MAP_FWD" |
		jq -r --argjson c "$LP" '.[] | select(.formatted.key.lport == $c or .formatted.key.rport == $c) | .key | join(" ")')
	[ -n "$key" ] && bpftool map delete pinned "$PIN/$MAP_FWD" key $key
}
# secs_since T0: seconds since EPOCHREALTIME T0, rounded up
secs_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { d = b - a; n = int(d); if (n < d) n++; print n }'; }
# frozen WHAT...: the server's bytes (srv) and the fast path's packets of
# each way named (c2s, s2c) stand still for 0.5 s; FROZE: what was read
frozen() {
	local s0 s1 e0 e1 r=0
	s0=$(sbytes) e0=$(ent)
	sleep 0.5
	s1=$(sbytes) e1=$(ent)
	FROZE="server $s0 -> $s1 bytes, entry [$e0] -> [$e1]"
	set -- "$@"
	local a=($e0) b=($e1) w
	for w; do
		case $w in
		srv) [ "$s0" = "$s1" ] || r=1 ;;
		c2s) [ "${a[1]}" = "${b[1]}" ] || [ "${b[0]}" = none ] || r=1 ;;
		s2c) [ "${a[2]}" = "${b[2]}" ] || [ "${b[0]}" = none ] || r=1 ;;
		esac
	done
	return $r
}
BUDGET=0 # the sum of the steps' event bounds (the run's check)

# ---- the start: a flow on the fast path
flow_new || { fail "the first flow connects"; finish; }
mcheck "a flow (IPv$FAM, port $LP) is admitted and on the fast path both ways (entry: $(ent))" wait_for "$(slow 10)" on_fast
mcheck "  toectl monitor -j: one fwd_admitted for it ($(nev fwd_admitted))" test "$(nev fwd_admitted)" = 1
BUDGET=1

# ---- the steps
for ((STEP = 1; STEP <= STEPS; STEP++)); do
	rnd ${#KINDS[@]}; K=${KINDS[$RV]}
	rnd 10; D=$(awk -v d=$RV 'BEGIN { printf "%.1f", 0.5 + d / 10 }') # a duration, 0.5 .. 1.4 s
	rnd 2; SIDE=$RV
	expect; E0=$E
	ts0=$EPOCHREALTIME
	echo "# step $STEP: $K (duration $D s, side $SIDE), flow $F (IPv$FAM) port $LP, model: $E0 (joins $WJ in the window from ${WS:--}, held until ${LIM})"
	end0=$(nev fwd_ended) adm0=$(nev fwd_admitted) NJOIN=0
	jn0=$(st $STAT_FWD_JOINED) jl0=$(st $STAT_FWD_JOIN_LIMITED)
	A=0 ADESC="" B=0 BDESC="" C=0 CDESC="" T=0
	# the entry a blocked flow leaves: readmit (4) on the fast path, none in the stack
	case $E0 in fast) WAIT="4" ;; stack) WAIT="none" ;; *) WAIT="4 none 5" ;; esac
	case $K in
	drop1 | drop2 | twice | benign)
		# changes: the ruleset commits of the step
		r0=$(rsn ruleset); e0=$(nev fwd_returned ruleset); changes=2
		if [ $K = benign ]; then
			nsx r $IPT -I FORWARD -p udp --dport 9 -j DROP
			grows; A=$?
			ADESC="a ruleset change that drops nothing (a rule for UDP port 9): the flow goes on (server $(sbytes) bytes)"
			nsx r $IPT -D FORWARD -p udp --dport 9 -j DROP
		else
			nsx r $IPT -I FORWARD -p tcp --dport 5201 -j DROP
			[ $K = drop2 ] && nsx r $IPT -I FORWARD -p tcp --sport 5201 -j DROP && changes=4
			sleep 0.3 # (toed running: a DROP holds within 100 ms)
			if [ $K = twice ]; then # a second change while the flow waits
				nsx r $IPT -I FORWARD -p udp --dport 9 -j DROP
				changes=4
				sleep 0.2
			fi
			frozen srv c2s s2c; A=$?
			ts=$(tstate) en=$(ent)
			[[ " $WAIT " = *" ${en%% *} "* ]] && [ "$ts" != established ] || A=1
			ADESC="FORWARD DROP ($K: $([ $K = drop2 ] && echo both ways || echo the client\'s way)$([ $K = twice ] && echo ', then a second change while the flow waits')): nothing reaches the server, the fast path carries nothing ($FROZE), the entry $WAIT (toectl: $ts)"
			nsx r $IPT -D FORWARD -p tcp --dport 5201 -j DROP
			[ $K = drop2 ] && nsx r $IPT -D FORWARD -p tcp --sport 5201 -j DROP
			[ $K = twice ] && nsx r $IPT -D FORWARD -p udp --dport 9 -j DROP
		fi ;;
	route)
		if [ $SIDE = 0 ]; then dst=$SA ways="srv c2s" w="the server"; else dst=$CA ways="s2c" w="the client"; fi
		dst=$dst/$([ $FAM = 4 ] && echo 32 || echo 128)
		r0=$(rsn route); e0=$(nev fwd_returned route)
		t0=$EPOCHREALTIME
		nsx r ip -$FAM route add unreachable $dst
		sleep 0.6
		frozen $ways; A=$?
		ADESC="route to $w unreachable: the fast path carries nothing that way ($FROZE)"
		nsx r ip -$FAM route del unreachable $dst
		T=$(secs_since $t0) ;;
	ipfwd)
		r0=$(rsn route); e0=$(nev fwd_returned route)
		t0=$EPOCHREALTIME
		fsys=net.ipv4.ip_forward; [ $FAM = 6 ] && fsys=net.ipv6.conf.all.forwarding
		nsx r sysctl -qw $fsys=0
		sleep 0.6
		frozen srv c2s s2c; A=$?
		ADESC="$fsys=0: nothing reaches the server, the fast path carries nothing ($FROZE)"
		nsx r sysctl -qw $fsys=1
		T=$(secs_since $t0) ;;
	neigh)
		r0=$(rsn neigh); e0=$(nev fwd_returned neigh)
		mac=$(printf '02:5e:00:50:%02x:%02x' $((NF % 256)) $((STEP % 256)))
		if [ $SIDE = 0 ]; then ns=s dev=s1; else ns=c dev=c0; fi
		# (announced: a gratuitous ARP, an unsolicited neighbour advertisement)
		nsx $ns sysctl -qw net.ipv4.conf.$dev.arp_notify=1 net.ipv6.conf.$dev.ndisc_notify=1
		nsx $ns ip link set $dev address $mac
		grows; A=$?
		ADESC="$dev's MAC changed to $mac (announced): the flow goes on (server $(sbytes) bytes)" ;;
	ctdel)
		r0=$(rsn conntrack_gone); e0=$(nev fwd_ended conntrack_gone)
		ct_del
		loss
		gone() { [ "$(nev fwd_ended conntrack_gone)" -gt "$e0" ]; }
		[ $E0 = fast ] && { wait_for "$(slow 3)" gone || A=1; }
		grows || A=1
		ADESC="conntrack -D: $([ $E0 = fast ] && echo "the flow's fast path ends (fwd_ended conntrack_gone $(($(nev fwd_ended conntrack_gone) - e0))) and ")it goes on (server $(sbytes) bytes)" ;;
	evict)
		r0=$(rsn evicted); e0=$(nev fwd_ended evicted)
		key=$(ent)
		tdel=$EPOCHREALTIME
		fwd_del && loss
		grows; A=$?
		ADESC="its $MAP_FWD entry deleted ($([ "${key%% *}" != none ] && echo "evicted" || echo "there was none")): the flow goes on (server $(sbytes) bytes)" ;;
	churn)
		# the flow thrown off the fast path again and again, conntrack -D
		# and evictions in turn, each time once it is back: joins until
		# its window holds TOE_FWD_JOIN_MAX, then held in the stack
		r0=$(rsn conntrack_gone); e0=$(nev fwd_ended conntrack_gone) ev0=$(nev fwd_ended evicted)
		nct=0 nloss=0 tdel=$EPOCHREALTIME
		for ((i = 0; i <= JMAX; i++)); do
			expect
			[ $E = fast ] || break
			wait_for "$(slow 10)" on_fast || { A=1; break; }
			if ((i % 2)); then
				fwd_del || { A=1; break; }
			else
				ct_del
				nct=$((nct + 1))
			fi
			tdel=$EPOCHREALTIME
			loss
			nloss=$((nloss + 1))
		done
		grows || A=1
		ADESC="thrown off the fast path $nloss times ($nct conntrack -D, the others evicted), each time once it was back: the flow goes on (server $(sbytes) bytes)" ;;
	toedkill | toedterm)
		r0=$(rsn lease); e0=$(nev fwd_returned lease)
		sig=KILL; [ $K = toedterm ] && sig=TERM
		t0=$EPOCHREALTIME
		kill -$sig "$TOED"; wait "$TOED" 2>/dev/null
		kill "$MON" 2>/dev/null
		[ $sig = KILL ] && rm -f "$RUN/toed.sock"
		sleep "$D"
		grows; A=$?
		ADESC="toed stopped ($sig) for $D s: the flow goes on (server $(sbytes) bytes)"
		toed_up
		T=$(secs_since $t0) ;;
	toeddrop)
		# toed killed, then a DROP: nobody watches the ruleset, so the
		# fast path fails closed: toed's lease (500 ms) runs out and an
		# admission nobody vouches for holds 1 s at most
		r0=$(rsn lease); e0=$(nev fwd_returned lease)
		t0=$EPOCHREALTIME
		kill -KILL "$TOED"; wait "$TOED" 2>/dev/null
		kill "$MON" 2>/dev/null
		rm -f "$RUN/toed.sock"
		sleep 0.3
		nsx r $IPT -I FORWARD -p tcp --dport 5201 -j DROP
		sleep 1.2
		frozen srv c2s s2c; A=$?
		en=$(ent)
		[ "${en%% *}" != 3 ] || A=1
		ADESC="toed killed, then a FORWARD DROP: from 1.2 s after it nothing reaches the server, the fast path carries nothing ($FROZE), the entry not established"
		nsx r $IPT -D FORWARD -p tcp --dport 5201 -j DROP
		toed_up
		T=$(secs_since $t0) ;;
	oneway)
		r0=$(rsn slow); e0=$(nev fwd_returned slow)
		t0=$EPOCHREALTIME
		touch "$work/ctl/$F.opts"
		sleep 0.4
		set -- $(ent); c0=$2 s0=$3 b0=$(sbytes)
		sleep "$D"
		set -- $(ent); c1=$2 s1=$3 b1=$(sbytes)
		[ "$(cst opts)" = true ] && [ "$c1" = "$c0" ] && [ "$b1" -gt "$b0" ]; A=$?
		[ $E0 = fast ] && { [ "$s1" -gt "$s0" ] || A=1; }
		ADESC="the client's way returned ($([ $FAM = 4 ] && echo IPv4 options || echo an IPv6 hop-by-hop header)) for $D s: the fast path carries none of its packets ($c0 -> $c1)$([ $E0 = fast ] && echo " and goes on with the server's ($s0 -> $s1)"); the server's bytes grow ($b0 -> $b1)"
		rm -f "$work/ctl/$F.opts"
		T=$(secs_since $t0) ;;
	fin_c | fin_s | rst_c | rst_s)
		how=${K%_*} who=client; [ ${K#*_} = s ] && who=server
		e0=$(nev fwd_ended $how); r0=$(rsn $how)
		ofast=0; set -- $(ent); [ "$1" = 3 ] && ofast=1
		if [ $who = client ]; then touch "$work/ctl/$F.$how"; else touch "$work/ctl/$LP.$how"; fi
		ended() { [ "$(cst end)" != open ] && [ "$(sst end)" != open ]; }
		wait_for "$(slow 10)" ended
		# the client done: its last state is final
		wait_for 5 eval "! kill -0 \$PID_$F 2>/dev/null"
		sent=$(cst sent) got=$(sbytes) ce=$(cst end) se=$(sst end)
		case $K in
		fin_c) [ "$ce" = fin ] && [ "$se" = eof ] && [ "$got" = "$sent" ] && good ;;
		fin_s) [ "$ce" = peer_fin ] && [ "$se" = fin ] && [ "$got" = "$sent" ] && good ;;
		rst_c) [ "$ce" = rst ] && [ "$se" = reset ] && [ "$got" -le "$sent" ] && good ;;
		rst_s) [ "$se" = rst ] && [ "$ce" = reset ] && [ "$got" -le "$sent" ] && good ;;
		esac
		A=$?
		ADESC="$how from the $who: the client sent $sent bytes, the server got $got$([ $how = fin ] && echo ", all" || echo ", no more"), every byte in place (ends: client $ce, server $se)"
		sleep 0.2
		ev_old=$(($(nev fwd_ended $how) - e0)); oth_old=$(($(nev fwd_ended) - end0 - ev_old)); adm_old=$(($(nev fwd_admitted) - adm0))
		flow_new || { fail "step $STEP: a new flow connects"; finish; } ;;
	esac
	mcheck "step $STEP $K: $ADESC" test $A = 0

	# ---- 2. after it: the flow goes on, in order, where the model says
	expect; E1=$E
	case $K in
	fin_* | rst_*)
		wait_for "$(slow 10)" on_fast; B=$?
		[ $B = 0 ] && [ "$(nev fwd_admitted)" = 1 ] && grows && good; B=$?
		BDESC="a new flow (port $LP) is admitted (fwd_admitted $(nev fwd_admitted)), on the fast path (entry: $(ent)), its bytes in place" ;;
	*)
		grows && good; B=$?
		case $E1 in
		fast) wait_for "$(slow 10)" on_fast || B=1; fs="on the fast path" ;;
		stack)
			# held back: in the stack, its joins counted as limited
			limited() { [ "$(st $STAT_FWD_JOIN_LIMITED)" -gt "$jl0" ]; }
			wait_for "$(slow 3)" limited || B=1
			set -- $(ent); [ "$1" != 3 ] && [ "$(tstate)" != established ] || B=1
			fs="held in the stack ($JMAX joins in its window; fwd_join_limited $jl0 -> $(st $STAT_FWD_JOIN_LIMITED))" ;;
		*) fs="may be on the fast path or not (at its join window's edge)" ;;
		esac
		BDESC="the flow goes on, every byte in place (server $(sbytes) bytes, first bad $(sst bad)), $fs (entry: $(ent), toectl: $(tstate))" ;;
	esac
	mcheck "  after it: $BDESC" test $B = 0

	# ---- 3. events and counters
	# (toed reads the ring at once, and reports evictions at its 2 s timer)
	sleep 0.3
	adm=0 # fwd_admitted the step brings for the flow
	case $K in
	drop1 | drop2 | twice | benign)
		# one transition a ruleset change; toed bumps the generation a
		# second time 50 ms after each, which may make it two
		lo=1 hi=$((2 * changes)) rs=ruleset ev=fwd_returned ;;
	route | ipfwd)
		# at most one a second while the flow goes back and forth (T
		# seconds), and one as it comes back
		lo=1 hi=$((T + 1)) rs=route ev=fwd_returned ;;
	neigh) lo=0 hi=2 rs=neigh ev=fwd_returned ;;
	ctdel) lo=1 hi=1 rs=conntrack_gone ev=fwd_ended ;;
	churn)
		# one conntrack_gone each conntrack -D; the evictions toed may
		# find at its timer (2.2 s from the last)
		sleep "$(awk -v a="$tdel" -v b="$EPOCHREALTIME" 'BEGIN { d = 2.2 - (b - a); print (d > 0 ? d : 0) }')"
		lo=$nct hi=$nct rs=conntrack_gone ev=fwd_ended ;;
	evict)
		# exactly one: toed reports it when the flow joins again
		# (fwdev.c's evict_readmitted), or at its 2 s timer if it has
		# not by then (2.2 s from the deletion)
		sleep "$(awk -v a="$tdel" -v b="$EPOCHREALTIME" 'BEGIN { d = 2.2 - (b - a); print (d > 0 ? d : 0) }')"
		# (toed reports the evictions of the flows whose admission it
		# heard: one admitted before a toed that runs now started is
		# not among them, HEARD 0, until it is admitted again)
		lo=$HEARD hi=1 rs=evicted ev=fwd_ended ;;
	toedkill | toedterm | toeddrop)
		# toed's lease out: the flow through the stack once a second,
		# while no toed vouches (the events of that time are toed's to
		# read when it is back, or lost with it)
		lo=0 hi=$((T + 1)) rs=lease ev=fwd_returned ;;
	oneway) lo=1 hi=$((T + 1)) rs=slow ev=fwd_returned ;;
	fin_* | rst_*) lo=$ofast hi=1 rs=$how ev=fwd_ended ;;
	esac
	[ $E0 = fast ] || lo=0
	[ $E0 = stack ] && [ $ev = fwd_ended ] && hi=0 # no entry to end
	if [ "${K#fin_}" != "$K" ] || [ "${K#rst_}" != "$K" ]; then
		n=$ev_old oth=$oth_old adesc="the old flow $adm_old fwd_admitted"
		[ "$adm_old" = 0 ] || C=1
	else
		n=$(($(nev $ev $rs) - e0))
		# no end of another kind; a fwd_admitted only for a join
		oth=$(($(nev fwd_ended) - end0))
		[ $ev = fwd_ended ] && oth=$((oth - n))
		adm=$(($(nev fwd_admitted) - adm0)) jn=$(($(st $STAT_FWD_JOINED) - jn0))
		adesc="$adm fwd_admitted, fwd_joined +$jn"
		case $K in
		churn)
			# the evictions toed found (at most one each), and a
			# fwd_admitted for each join the model predicts
			nevi=$(($(nev fwd_ended evicted) - ${ev0:-0}))
			[ "$nevi" -le $((nloss - nct)) ] || C=1
			oth=$((oth - nevi))
			adesc="$adm fwd_admitted for $NJOIN joins, fwd_joined +$jn, $nevi evicted"
			if [ $E1 = may ]; then
				[ "$adm" -le $NJOIN ] || C=1
			else
				[ "$adm" = $NJOIN ] && [ "$jn" -ge $NJOIN ] || C=1
			fi ;;
		ctdel | evict)
			if [ $E0 = fast ] && [ $E1 = fast ]; then
				# toed's own word needs the ring read: at its timer at worst
				[ "$adm" = 1 ] && [ "$jn" -ge 1 ] || C=1
			elif [ $E1 = stack ]; then
				[ "$adm" = 0 ] || C=1
			else
				[ "$adm" -le 1 ] || C=1
			fi ;;
		*) [ "$adm" = 0 ] || C=1 ;;
		esac
	fi
	moved() { [ $(($(rsn $rs) - r0)) -ge "$n" ]; }
	wait_for 3 moved; mv=$(($(rsn $rs) - r0))
	[ "$n" -ge $lo ] && [ "$n" -le $hi ] && [ "$oth" = 0 ] && [ "$mv" -ge "$n" ] || C=1
	# a DROP, a route, ip_forward...: no transition unannounced while toed ran
	case $K in drop* | twice | benign | route | ipfwd | oneway | ctdel) [ "$mv" -ge $lo ] || C=1 ;; esac
	# (+ the joins' fwd_admitted, toed's evictions, the next flow's fwd_admitted)
	BUDGET=$((BUDGET + hi + 1 + NJOIN))
	[ $K = churn ] && BUDGET=$((BUDGET + nloss - nct))
	mcheck "  events: $n $ev ($rs) for the flow (bounds $lo..$hi), $oth fwd_ended of another reason, $adesc; toectl stats fwd_flows_${FWD_HOOK}_$rs moved $mv" test $C = 0
	case $K in
	toedkill | toedterm | toeddrop) HEARD=0 ;;
	fin_* | rst_*) HEARD=1 ;;
	*) [ "${adm:-0}" -ge 1 ] && HEARD=1 ;;
	esac
	echo "# step $STEP took $(awk -v a="$ts0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
done

# ---- the end
STEP=end
touch "$work/ctl/$F.fin"
wait_for "$(slow 10)" eval '[ "$(cst end)" != open ] && [ "$(sst end)" = eof ]'
sent=$(cst sent) got=$(sbytes)
mcheck "the last flow ends with a FIN: the server got every byte sent ($got of $sent), in place" \
	eval '[ "$(cst end)" = fin ] && [ "$got" = "$sent" ] && good'
all=$(grep -F "\"hook\":\"$FWD_HOOK\"" "$work/mon.json" | grep -cE '"event":"fwd_(returned|ended|admitted)"')
mcheck "over the run: $all events of the flows, within the steps' bounds ($BUDGET)" test "$all" -le "$BUDGET"
finish
