#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toed's control socket used badly (issue 17): garbage requests (a NUL
# before the newline, binary bytes, a 100 KB line, every command with bad
# arguments, a netns filter that is no inode or known name) each get an
# error answer and toed keeps serving; 100 idle clients and one that drips
# a byte a second do not slow `toectl status` (it answers in well under a
# second) and are dropped at their deadline and counted; a flood past the
# client limit is refused with a clear message; SIGTERM stops toed within
# a second with all of them still connected.
. "$(dirname "$0")/setup.sh"
plan 44
need_cmd python3 jq
need_built toe-tables
CTLC="python3 $TOE_TOP/selftests/tools/ctlclient.py"
toed_t3 abuse
SOCK=$RUN/toed.sock
# (jq 1.6 -e exits 0 on empty input: check toectl's own status first)
alive() { local o; o=$(ctl -j status) && jq -e ".pid == $TOED_PID" <<<"$o" >/dev/null; }
stats_has() { local o; o=$(ctl -j stats) && jq -e "$1" <<<"$o" >/dev/null; }
hex() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }

# send_err DESC HEX PATTERN: toed answers the bytes with "error ..." that
# matches PATTERN, and is still alive afterwards.  NBAD: how many were sent (malformed).
NBAD=0
bad() { ctl -j stats | jq '.control.requests_bad'; }
bad0=$(bad)
send_err() {
	local desc=$1 bytes=$2 pat=$3 out
	NBAD=$((NBAD + 1))
	# the bytes on stdin: a 100 KB line is past the 128 KiB of one argument
	out=$($CTLC "$SOCK" send - <<<"$bytes" | head -c 300 | tr -d '\0')
	if [[ $out == error* ]] && grep -qE -- "$pat" <<<"$out" && alive; then
		ok "$desc: $(head -n 1 <<<"$out")"
	else
		fail "$desc: answer '$(head -n 1 <<<"$out")', toed $(alive && echo alive || echo gone)"
	fi
}
send_err "a NUL before the newline" "$(hex stats)00$(hex x)0a" "NUL|byte"
send_err "a NUL as the first byte" "000a" "NUL|byte"
send_err "binary bytes" "ff fe 01 02 80 0a" "byte|text"
send_err "a 100 KB line" "$(head -c 100000 /dev/zero | tr '\0' a | od -An -v -tx1 | tr -d ' \n')0a" "too long"
send_err "no newline at all (half-closed)" "$(hex stats)" "incomplete|newline"
send_err "an empty line" "0a" "empty"
send_err "only -j" "$(hex '-j')0a" "empty"
send_err "an unknown command, the commands listed" "$(hex 'frobnicate')0a" "unknown command 'frobnicate' \\(expected [a-z]+(, [a-z]+)+ or [a-z]+\\)"
# toed's commands that take no argument (lib/ctl_cmds.h, through build/toe-tables):
# status devices neigh policy stats reload monitor
noargs=$(toe-tables -j | jq -r '.commands[] | select(.toed and .args == "") | .name')
check "toe-tables lists toed's commands without arguments, status and monitor among them ($(echo $noargs))" \
	test -n "$(grep -x status <<<"$noargs")" -a -n "$(grep -x monitor <<<"$noargs")"
for c in $noargs; do
	send_err "'$c' with an argument" "$(hex "$c extra")0a" "takes no argument"
done
for p in abc -1 65536 99999999999999999999 4294967296 " "; do
	send_err "flows port '$p'" "$(hex "flows port $p")0a" "bad port|needs a value"
done
for n in 0 18446744073709551616 a/b .. 'a%b' "$(printf 'n%.0s' {1..65})"; do
	send_err "flows netns '${n:0:20}'" "$(hex "flows netns $n")0a" "bad netns '${n:0:20}"
done
# and the inodes either side of those: a number in range is a filter
for n in 18446744073709551615 "$(stat -L -c %i /proc/self/ns/net)"; do
	out=$($CTLC "$SOCK" send "$(hex "flows netns $n")0a" | head -c 300 | tr -d '\0')
	check "flows netns $n: an answer, not an error ($(head -n 1 <<<"$out" | cut -c1-60))" \
		test -n "$out" -a "${out#error}" = "$out"
done
send_err "flows netns of a name ip netns does not know" "$(hex 'flows netns toe-nosuchns')0a" \
	"unknown netns 'toe-nosuchns'"
NBAD=$((NBAD - 1)) # well-formed: refused when run, not counted as malformed
send_err "flows with a filter and no value" "$(hex 'flows dev')0a" "needs a value"
send_err "17 words" "$(hex "flows $(printf 'x %.0s' $(seq 16))")0a" "too many"
bad1=$(bad)
check "toectl stats counts each of the $NBAD malformed requests under control.requests_bad ($bad0 -> $bad1)" \
	test "$((bad1 - bad0))" = "$NBAD"
# random bytes, 50 requests: every one answered or closed, toed alive (ten
# clients at a time: one whose bytes hold no newline waits out toed's 2 s
# request deadline)
pids=()
for i in $(seq 50); do
	$CTLC "$SOCK" send "$(head -c $((RANDOM % 600 + 1)) /dev/urandom | od -An -v -tx1 | tr -d ' \n')" >/dev/null 2>&1 &
	pids+=($!)
	[ ${#pids[@]} = 10 ] && { wait "${pids[@]}"; pids=(); }
done
check "50 random requests later toed still answers status" alive

# --- slow and idle clients
ms() { echo $(( $(date +%s%N) / 1000000 )); }
$CTLC "$SOCK" idle 100 5 >"$CONF_DIR/idle" &
IDLE=$!
$CTLC "$SOCK" drip 8 >"$CONF_DIR/drip" &
DRIP=$!
sleep 0.5
t0=$(ms); ctl status >/dev/null; rc=$?; t1=$(ms)
check "toectl status with 100 idle clients and a dripping one answers (rc $rc) in $((t1 - t0)) ms (< 1000)" \
	test "$rc" = 0 -a $((t1 - t0)) -lt 1000
wait "$IDLE" "$DRIP"
read -r _ nclosed _ <"$CONF_DIR/idle"
check "toed dropped the 100 idle clients at their deadline: $(cat "$CONF_DIR/idle")" test "$nclosed" = 100
check "the dripping client was answered with an error, not served: $(cat "$CONF_DIR/drip")" \
	grep -q "error .*time" "$CONF_DIR/drip"
check "stats counts the clients dropped for time" stats_has '.control.clients_timed_out >= 101'

# --- a client still writing after its answer: toed reads what it sends
# until it closes (the linger), so its writes do not fail and its answer
# stays whole
tr=$($CTLC "$SOCK" trail 2>&1)
check "a client writing 2 bytes after its answer: both accepted, the answer whole ($tr)" \
	grep -q "^wrote 2 of 2 after the request; answer: ok" <<<"$tr"

# --- a flood past the limit: refused clearly, served again afterwards
$CTLC "$SOCK" flood 300 >"$CONF_DIR/flood"
check "300 clients at once: the ones past the limit are told so ($(tr '\n' ';' <"$CONF_DIR/flood"))" \
	grep -q "error too many control clients" "$CONF_DIR/flood"
check "300 clients at once: every answer is ok or that refusal" \
	test -z "$(grep -v -e ' ok$' -e 'error too many control clients' "$CONF_DIR/flood")"
check "after the flood toed serves again" alive

# --- SIGTERM with idle clients connected
$CTLC "$SOCK" idle 100 5 >/dev/null &
defer "kill $!"
sleep 0.5
t0=$(ms); kill -TERM "$TOED_PID"
for ((i = 0; i < 30; i++)); do kill -0 "$TOED_PID" 2>/dev/null || break; sleep 0.05; done
t1=$(ms)
gone=yes; kill -0 "$TOED_PID" 2>/dev/null && gone=no
check "SIGTERM with 100 idle clients stops toed (gone: $gone) in $((t1 - t0)) ms (< 1000)" \
	test "$gone" = yes -a "$((t1 - t0))" -lt 1000
finish
