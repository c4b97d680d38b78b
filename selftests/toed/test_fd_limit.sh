#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toed short of file descriptors (RLIMIT_NOFILE), as a careless operator's
# unit file or a descriptor leak leaves it.  Started under every limit
# from 4 up to the first that is enough, toed either exits nonzero with a
# message naming the cause (EMFILE: "Too many open files"), or runs and
# says what it could not do; none of them calls the loaded datapath "not
# loaded", none says EBADF (a failed socket() used anyway), and none
# leaves its control socket behind.  Then a running toed whose limit is
# lowered to the descriptors it holds (prlimit --pid): a toectl request is
# told "out of file descriptors" at once (toed accepts it on a descriptor
# it keeps spare) instead of hanging while toed spins on a listening
# socket it cannot accept from; /metrics does not spin it either; the
# pins it cannot read then are not taken for an unload; and with the
# limit raised again everything answers, the refusals counted.
. "$(dirname "$0")/setup.sh"
plan 9
need_cmd prlimit curl jq
load_toe_xdp || { fail "load"; finish; }
cfg=$(conf_t3 fdlim)
toed_in_a() { nsenter --net=/run/netns/"$(ns_name a)" "$@"; }
# cpu PID: its user + system time so far, in clock ticks
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# ---- the sweep: toed started under each limit
exits=0 runs=0 enough= bad=
for n in $(seq ${FDLIM_FROM:-4} 64); do
	rm -rf "$RUN"
	log=$CONF_DIR/lim.$n
	# (exec: $! is toed's own pid, not a subshell's that forks it)
	(exec nsenter --net=/run/netns/"$(ns_name a)" prlimit --nofile=$n:$n toed --config "$cfg" --pin-dir "$PIN" --run-dir "$RUN" >"$log" 2>&1) &
	p=$!
	wait_for 5 eval "[ -S '$RUN/toed.sock' ] || ! kill -0 $p 2>/dev/null"
	if kill -0 $p 2>/dev/null; then
		runs=$((runs + 1))
		# (a loaded machine: its socket may come later than 5 s)
		wait_for 10 eval "[ -S '$RUN/toed.sock' ] || ! kill -0 $p 2>/dev/null"
		# running: a request answered, or refused saying why, within
		# toectl's 10 s; toed not spinning meanwhile
		c0=$(cpu $p)
		out=$(timeout 15 toectl --run-dir "$RUN" -j status 2>&1)
		rc=$?
		sleep 1
		c1=$(cpu $p)
		kill $p
		wait_for 3 eval "! kill -0 $p 2>/dev/null" || { bad="$bad; limit $n: SIGTERM did not stop it"; kill -9 $p; }
		wait $p
		if [ $rc = 124 ]; then
			bad="$bad; limit $n: toectl status hung"
		elif [ $rc != 0 ] && ! grep -q "out of file descriptors" <<<"$out"; then
			bad="$bad; limit $n: toectl status failed: $(head -c 200 <<<"$out")"
		fi
		[ $((c1 - c0)) -le 50 ] || bad="$bad; limit $n: toed used $((c1 - c0)) ticks in a request and 1 s idle"
		if ! grep -q "Too many open files" "$log" && [ $rc = 0 ]; then
			enough=$n
			break
		fi
	else
		wait $p
		rc=$?
		exits=$((exits + 1))
		[ $rc != 0 ] || bad="$bad; limit $n: exit 0 without running"
		grep -q "Too many open files\|out of file descriptors" "$log" ||
			bad="$bad; limit $n: no word of the cause: $(tr '\n' '|' <"$log" | head -c 200)"
		[ ! -e "$RUN/toed.sock" ] || bad="$bad; limit $n: its socket left behind"
	fi
	grep -q "Bad file descriptor" "$log" && bad="$bad; limit $n: EBADF: $(grep -m1 'Bad file' "$log")"
	grep -q "is not loaded" "$log" && bad="$bad; limit $n: $(grep -m1 'is not loaded' "$log")"
done
check "toed under each limit from 4 up to $enough: $exits exited naming EMFILE, $runs ran and answered or refused toectl, none said EBADF or 'not loaded'${bad:+ ($bad)}" \
	test -n "$enough" -a -z "$bad"

# ---- a running toed's limit lowered to what it holds
rm -rf "$RUN"
MPORT=$(toed_in_a python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_toed "$cfg" --metrics 127.0.0.1:$MPORT || { fail "toed starts"; cat "$TOED_LOG"; finish; }
toed_in_a curl -sf --max-time 5 "http://127.0.0.1:$MPORT/metrics" >/dev/null || { fail "metrics answers"; finish; }
unl0=$(ctl -j stats | jq .control.datapath_unloads)
# the lowest descriptor number free: no new one can be had under it
low=$(ls "/proc/$TOED_PID/fd" | sort -n | awk 'BEGIN { n = 0 } $1 == n { n++ } END { print n }')
# (the soft limit: toed keeps no CAP_SYS_RESOURCE to take a hard one back)
prlimit --pid "$TOED_PID" --nofile=$low:
c0=$(cpu "$TOED_PID") t0=$(date +%s%N)
out=$(timeout 15 toectl --run-dir "$RUN" status 2>&1)
rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
check "limit lowered to $low (toed's descriptors): toectl status is told why at once, exit 1 in $ms ms ($(head -c 160 <<<"$out"))" \
	eval '[ $rc = 1 ] && grep -q "out of file descriptors" <<<"$out" && [ $ms -lt 5000 ]'
mout=$(toed_in_a curl -s --max-time 3 "http://127.0.0.1:$MPORT/metrics" 2>&1 | head -c 100)
sleep 3 # past toed's 2 s look at the pins, which it cannot open now
c1=$(cpu "$TOED_PID")
check "... toed does not spin on the clients it cannot accept, control or metrics ($((c1 - c0)) ticks in 3 s and more)" \
	test $((c1 - c0)) -le 100
check "... the pins it cannot read are not an unload: said so, the datapath kept" \
	wait_for 5 grep -q "cannot read the datapath's pins at .*Too many open files: the datapath open is kept" "$TOED_LOG"
prlimit --pid "$TOED_PID" --nofile=1024:
check "limit raised: toectl status answers, the datapath loaded" \
	eval 'ctl -j status | jq -e ".loaded == true or .datapath.loaded == true" >/dev/null'
check "... datapath_unloads unmoved ($unl0 -> $(ctl -j stats | jq .control.datapath_unloads))" \
	test "$(ctl -j stats | jq .control.datapath_unloads)" = "$unl0"
check "... stats count the client refused for want of a descriptor (control.clients_no_fd $(ctl -j stats | jq .control.clients_no_fd))" \
	eval 'ctl -j stats | jq -e ".control.clients_no_fd >= 1" >/dev/null'
check "... /metrics answers again, with opentoe_control_clients_no_fd_total" \
	eval 'toed_in_a curl -sf --max-time 5 "http://127.0.0.1:$MPORT/metrics" | grep -q "^opentoe_control_clients_no_fd_total [1-9]"'
t0=$(date +%s%N)
stop_toed TERM
check "... SIGTERM stops toed ($((($(date +%s%N) - t0) / 1000000)) ms), its socket gone" test ! -e "$RUN/toed.sock"
echo "# metrics while short of descriptors: ${mout:-nothing}"
finish
