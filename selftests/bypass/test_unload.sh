#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bypassed connections outlive the policy and the datapath, losing nothing:
# unload mid-stream (the stream goes on over TCP, checked byte for byte);
# unload while redirected data waits unread (unload waits for the reader;
# with a short --drain-timeout it refuses, and succeeds once read); the
# bypass rule removed mid-stream (the open connection stays bypassed, a new
# one takes TCP).
. "$(dirname "$0")/setup.sh"
plan 22

# started STREAMOUT: wait for bypass_check's "connected" / "written" line
started() { touch "$1"; wait_for 10 grep -q -e connected -e written "$1"; }
# stop STREAMOUT: end the stream (its "connected pid N" line: SIGUSR1 to N).
# Streams run until the checks are done with them (60 s at most): a loaded
# machine slows the checks, it does not end the stream under them.
stop() { kill -USR1 "$(sed -n 's/^connected pid //p' "$1")" 2>/dev/null; }

# --- unload mid-stream
load_toe
apply "$BYPASS_CONF" || { fail "bypass policy applies"; finish; }
in_cg a "$BC" --port 7500 --seconds 60 stream >"$TMP/s1" &
pid=$!
started "$TMP/s1" || fail "stream started"
sleep 1
b0=$(byp_bytes); sleep 0.3; b1=$(byp_bytes)
check "the live stream is bypassed ($((b1 - b0)) bytes in 0.3 s)" test "$b1" -gt "$b0"
check "unload with the stream running" toe-loader unload --pin-dir "$PIN"
check "  nothing left: pin folder gone, no sock_ops on the cgroup" \
	test ! -e "$PIN" -a "$(bpftool -j cgroup show "$CG" | jq -s 'add | length')" = 0
sleep 1 # (it goes on over TCP)
stop "$TMP/s1"
wait $pid
out=$(tail -1 "$TMP/s1")
jqcheck "the stream completes after the unload, every byte right both ways" "$out" '.ok'
jqcheck "  and it went on over TCP (client tcp bytes acked: $(jq .client.tcp_acked <<<"$out"))" "$out" \
	'.client.tcp_acked > 65536 and .server.tcp_acked > 65536'

# slow_reader PORT SECONDS OUT: opentoe loaded again with the bypass
# policy, and a reader in the cgroup that naps SECONDS before reading 2 MiB
# redirected to it (bypass_check slowreader, output in OUT); its pid in $pid.
slow_reader() {
	load_toe
	apply "$BYPASS_CONF" || fail "bypass policy applies again"
	in_cg a "$BC" --port "$1" --seconds "$2" slowreader >"$3" &
	pid=$!
	started "$3" || fail "slow reader started"
	sleep 0.3
}

# --- unload while 2 MiB wait unread: unload waits for the reader
slow_reader 7501 2 "$TMP/s2"
toe-loader unload --pin-dir "$PIN" >"$TMP/u2" 2>&1
rc=$?
check "unload with 2 MiB redirected and unread succeeds" test $rc = 0
check "  after waiting for the reader" \
	grep -q "waiting for the readers" "$TMP/u2"
wait $pid
out=$(tail -1 "$TMP/s2")
jqcheck "the reader gets all 3 MiB (2 bypassed before the unload, 1 over TCP after)" "$out" \
	'.ok and .server.recvd == 3145728'

# --- the same with a drain timeout shorter than the reader's nap: refused
slow_reader 7502 3 "$TMP/s3"
toe-loader unload --pin-dir "$PIN" --drain-timeout 0.5 >"$TMP/u3" 2>&1
check "unload --drain-timeout 0.5 refuses while 2 MiB are unread" test $? = 1
check "  and says why" grep -q "still hold data redirected to them and not read" "$TMP/u3"
check "  the datapath is still there" test -e "$PIN/link_sockops"
wait_for 10 bash -c "toe-loader unload --pin-dir $PIN >/dev/null 2>&1"
check "a later unload succeeds once the reader has read" test ! -e "$PIN"
wait $pid
out=$(tail -1 "$TMP/s3")
jqcheck "  the reader got all 3 MiB" "$out" '.ok and .server.recvd == 3145728'

# --- the probe cannot be loaded (a toe_bypass of another layout):
# unload cannot tell whether the reader has read, so it refuses, not drops
slow_reader 7505 1 "$TMP/s5"
TOE_LOADER_NO_PROBE=1 toe-loader unload --pin-dir "$PIN" --drain-timeout 0.2 >"$TMP/u5" 2>&1
check "unload without its bypass probe refuses while 2 MiB may be unread" test $? = 1
check "  and says why" grep -q "cannot tell whether the sockets" "$TMP/u5"
check "  the datapath is still there" test -e "$PIN/link_sockops"
wait $pid
TOE_LOADER_NO_PROBE=1 toe-loader unload --pin-dir "$PIN" --force --drain-timeout 0.2 >"$TMP/u5f" 2>&1
check "unload --force without the probe takes the datapath away" test ! -e "$PIN"
out=$(tail -1 "$TMP/s5")
jqcheck "  the reader got all 3 MiB before" "$out" '.ok and .server.recvd == 3145728'

# --- the bypass rule removed mid-stream
load_toe
apply "$BYPASS_CONF" || fail "bypass policy applies again"
in_cg a "$BC" --port 7503 --seconds 60 stream >"$TMP/s4" &
pid=$!
started "$TMP/s4" || fail "stream started"
sleep 0.5
check "policy without the bypass rule applies mid-stream" apply "$HOST_CONF"
sleep 0.2
b0=$(byp_bytes); sleep 0.5; b1=$(byp_bytes)
check "the open connection stays bypassed ($((b1 - b0)) bytes in 0.5 s)" test "$b1" -gt "$b0"
out=$(bcheck a --port 7504 sizes)
jqcheck "a new connection on a formerly bypassed port takes TCP" "$out" \
	'.ok and .client.tcp_acked > 5000000'
stop "$TMP/s4"
wait $pid
jqcheck "the stream completes, every byte right" "$(tail -1 "$TMP/s4")" '.ok'
finish
