#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# How a reader sees its peer go away, over plain TCP and through the local
# bypass, compared in the same test: every reader mode {blocking read,
# non-blocking read, epoll} x every ending {FIN, abort (RST), process killed
# with data unread, process killed while blocked in read}.  The bypassed run
# must print what the TCP run printed (tools/endings.py: the sequence of
# reads, the poll() revents after them, two writes).  Two cells differ on
# this kernel for reasons in the kernel's sockmap receive path (docs/bypass.md,
# "Kernel limits seen on 6.18"); each is reported as a skip only when the
# bypassed run shows exactly that known difference, and fails otherwise.
. "$(dirname "$0")/setup.sh"
need_cmd python3
modes="block nonblock epoll"
ends="fin abort killunread killblocked"
plan 36
load_toe
apply "$BYPASS_CONF" || { fail "bypass policy applies"; finish; }
EN=$TOE_TOP/selftests/tools/endings.py

run() { in_cg a timeout 60 python3 "$EN" "$@" 2>&1 | tail -1; }
# known MODE END TCP BYP: the reason, if BYP differs from TCP only as the
# kernel limit named for this cell does; nothing otherwise
known() {
	local m=$1 e=$2 tcp=$3 byp=$4
	case $m/$e in
	block/abort)
		# tcp_bpf_recvmsg: a wake-up that finds neither a psock message
		# nor an skb returns -EAGAIN; the RST queues neither
		[ "$(jq -c '.seq' <<<"$tcp")" = '["data:1000","err:ECONNRESET"]' ] &&
		# (the error is then still pending: poll() shows ERR and the
		# writes get ECONNRESET where TCP's get EPIPE, on 6.1)
		jq -e '.seq == ["data:1000", "EAGAIN-woken"]' <<<"$byp" >/dev/null &&
		echo "known kernel limit: a blocking read woken by the RST returns EAGAIN (tcp_bpf_recvmsg: no data after tcp_msg_wait_data is -EAGAIN), TCP says ECONNRESET"
		;;
	*/killunread)
		# __tcp_close counts unread bytes in sk_receive_queue only; the
		# bypassed bytes were in the psock queue, so the close sends FIN
		jq -e '.seq | index("err:ECONNRESET") != null' <<<"$tcp" >/dev/null &&
		jq -e '(.seq | index("eof") != null) and (.seq | index("err:ECONNRESET") == null)' <<<"$byp" >/dev/null &&
		echo "known kernel limit: a peer killed with bypassed data unread sends FIN, not RST (__tcp_close counts sk_receive_queue only): EOF where TCP says ECONNRESET"
		;;
	esac
}

tport=8300 bport=7300
for m in $modes; do
	for e in $ends; do
		tcp=$(run $((tport++)) "$m" "$e")
		before=$(byp_bytes)
		byp=$(run $((bport++)) "$m" "$e")
		after=$(byp_bytes)
		if ! jq -e '.seq' <<<"$tcp" >/dev/null 2>&1 || ! jq -e '.seq' <<<"$byp" >/dev/null 2>&1; then
			fail "$m reader, $e: endings.py ran (TCP: ${tcp:-nothing}; bypass: ${byp:-nothing})"
			ok "$m reader, $e: # SKIP endings.py failed"
			ok "$m reader, $e: # SKIP endings.py failed"
			continue
		fi
		jqcheck "$m reader, $e: TCP run saw the 1000 bytes first: $(jq -c .seq <<<"$tcp")" \
			"$tcp" '.seq[0] == "data:1000" or .seq[1] == "data:1000"'
		check "$m reader, $e: the bypassed run was bypassed" test "$after" -gt "$before"
		if [ "$(jq -cS 'del(.mode, .end)' <<<"$tcp")" = "$(jq -cS 'del(.mode, .end)' <<<"$byp")" ]; then
			ok "$m reader, $e: the bypass shows what TCP shows"
		elif why=$(known "$m" "$e" "$tcp" "$byp") && [ -n "$why" ]; then
			ok "$m reader, $e: the bypass shows what TCP shows # SKIP $why"
		else
			fail "$m reader, $e: the bypass shows what TCP shows"
			echo "TCP:    $tcp"
			echo "bypass: $byp"
		fi
	done
done
finish
