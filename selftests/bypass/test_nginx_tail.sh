#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# nginx (sendfile on) serving a 10 MiB file to 50 concurrent clients, over
# plain TCP and through the bypass in the same test: 50 curl downloads at
# once, every sha256 right; then wrk -c50 for 5 s at tcp_rmem maxima of
# 32 and 6 MiB, no error, no request through the bypass slower than 3 times
# the slowest over TCP, and p99 within the ratio compare() is given.  A
# correctness check with a margin (the figures belong to make bench-apps):
# the flow-control switch to TCP once stranded connections for seconds
# (docs/bypass.md); tcp_rmem[2] is the bypass's hard queue limit.
. "$(dirname "$0")/setup.sh"
need_cmd nginx curl sha256sum wrk
CLIENTS=50 EACH=1
plan 14
load_toe
apply "$BYPASS_CONF" || { fail "bypass policy applies"; finish; }

mkdir -p "$TMP/www"
head -c $((10 << 20)) /dev/urandom >"$TMP/www/10m"
want=$(sha256sum <"$TMP/www/10m" | cut -d' ' -f1)
chmod -R a+rX "$TMP"
nginx_start 2 8604 7604 || { fail "nginx listens"; finish; }

# run PORT NAME: CLIENTS curls at once, EACH downloads each; one line
# "seconds sha256" a download in $TMP/NAME
run() {
	local port=$1 out=$TMP/$2 i pids=()
	: >"$out"
	for ((i = 0; i < CLIENTS; i++)); do
		(for ((j = 0; j < EACH; j++)); do
			in_cg a curl -sS --fail --max-time 60 -w '%{stderr}%{time_total}\n' \
				"http://127.0.0.1:$port/10m" 2>"$out.$i.t" | sha256sum | cut -d' ' -f1 >"$out.$i.s"
			echo "$(tail -1 "$out.$i.t") $(cat "$out.$i.s")" >>"$out"
		done) &
		pids+=($!)
	done
	wait "${pids[@]}"
}
# slowest FILE: its slowest download in ms; p99 likewise
slowest() { sort -n "$1" | tail -1 | awk '{ printf "%d", $1 * 1000 }'; }
p99() { sort -n "$1" | awk '{ t[NR] = $1 } END { printf "%d", t[int(NR * 0.99)] * 1000 }'; }
right() { # FILE: every one of CLIENTS x EACH downloads has the file's sha256
	[ "$(wc -l <"$1")" = $((CLIENTS * EACH)) ] &&
		[ "$(awk -v w="$want" '$2 == w' "$1" | wc -l)" = $((CLIENTS * EACH)) ]
}

# wrk PORT: wrk -t2 -c50 for 5 s; prints "requests errors max_ms p99_ms"
to_ms() { awk -v x="$1" 'BEGIN { u = x; sub(/^[0-9.]+/, "", u); n = x + 0;
	printf "%d", u == "us" ? n / 1000 : u == "s" ? n * 1000 : u == "m" ? n * 60000 : n }'; }
wrk_run() {
	local o
	o=$(in_cg a timeout 60 wrk -t2 -c$CLIENTS -d5s --timeout 10s --latency "http://127.0.0.1:$1/10m" 2>&1)
	echo "$(awk '/requests in/ { print $1 }' <<<"$o") \
$(awk '/Socket errors:/ { gsub(/,/, ""); e = $4 + $6 + $8 + $10 } /Non-2xx/ { e += $NF } END { print e + 0 }' <<<"$o") \
$(to_ms "$(awk '$1 == "Latency" && NF >= 4 { print $4; exit }' <<<"$o")") \
$(to_ms "$(awk '$1 == "99%" { print $2 }' <<<"$o")")"
}

run 8604 tcp
b0=$(byp_bytes)
run 7604 byp
moved=$(( $(byp_bytes) - b0 ))
check "TCP: $CLIENTS downloads at once, every sha256 right" right "$TMP/tcp"
check "bypass: $CLIENTS downloads at once, every sha256 right" right "$TMP/byp"
check "  they took the bypass ($((moved >> 20)) MiB redirected, at least half the bytes)" \
	test "$moved" -ge $((CLIENTS * EACH * 5 << 20))
# compare MAX TENTHS [SLACK_MS]: the wrk runs with the namespace's
# tcp_rmem[2] at MAX bytes; the bypass's p99 must be at most TENTHS/10 of
# TCP's, plus SLACK_MS.  The two runs are 5 s apart: a load that comes or
# goes between them moves one side's tail alone, so a pair whose tails miss
# the bounds is run again, 3 pairs at most, each reported; errors and what
# the bypass carried count over every pair, the tails from the last.
compare() {
	local n_tcp e_tcp max_tcp p99_tcp n_byp e_byp max_byp p99_byp moved=0 b0 m=$(($1 >> 20)) r=$2 sl=${3:-0}
	local try nb=0 errs=0 nt=0
	nsx a sysctl -qw net.ipv4.tcp_rmem="4096 131072 $1" || { fail "tcp_rmem set in namespace a"; return; }
	for ((try = 1; try <= 3; try++)); do
		read -r n_tcp e_tcp max_tcp p99_tcp <<<"$(wrk_run 8604)"
		b0=$(byp_bytes)
		read -r n_byp e_byp max_byp p99_byp <<<"$(wrk_run 7604)"
		moved=$((moved + $(byp_bytes) - b0))
		nt=$((nt + ${n_tcp:-0})) nb=$((nb + ${n_byp:-0})) errs=$((errs + ${e_tcp:-1} + ${e_byp:-1}))
		[ "${n_tcp:-0}" -gt 0 ] && [ "${n_byp:-0}" -gt 0 ] || errs=$((errs + 1))
		echo "tcp_rmem max $m MiB, pair $try: wrk over TCP: $n_tcp requests, p99 $p99_tcp ms, slowest $max_tcp ms; through the bypass: $n_byp requests, p99 $p99_byp ms, slowest $max_byp ms"
		[ "${max_byp:-999999}" -le $((3 * ${max_tcp:-0})) ] &&
			[ $((10 * ${p99_byp:-999999})) -le $((r * ${p99_tcp:-0} + 10 * sl)) ] && break
	done
	check "$m MiB: wrk over TCP and through the bypass: requests done, no error (TCP $nt, bypass $nb requests, $errs errors in $((try > 3 ? 3 : try)) pairs)" \
		test "$errs" = 0
	check "  the bypass carried them ($((moved >> 20)) MiB redirected)" test "$moved" -ge $((nb * 5 << 20))
	check "  no request slower than 3 x the slowest over TCP (bypass $max_byp ms, TCP $max_tcp ms)" \
		test "${max_byp:-999999}" -le $((3 * ${max_tcp:-0}))
	check "  p99 at most $((r / 10)).$((r % 10)) x TCP's${3:+ + $sl ms} (bypass $p99_byp ms, TCP $p99_tcp ms)" \
		test $((10 * ${p99_byp:-999999})) -le $((r * ${p99_tcp:-0} + 10 * sl))
}
# 32 MiB (this host's maximum): the issue's goal, p99 no worse than TCP's
# (measured 0.4-0.6x).  At Debian's 6 MiB the bypass's p99 is 1.2-1.4x
# TCP's on a quiet machine, 1.65x and 2.26x (743 against 328 ms) with
# make check's qemu guests beside it: a ratio there is the benchmark's
# (make bench-apps); what this test guards against is a stall, which
# is seconds: TCP's p99 plus 1 s
compare $((32 << 20)) 10
compare $((6 << 20)) 10 1000
check "nginx logged no error" test ! -s "$TMP/nginx/error.log"
# (closes finish after wrk returns: a loaded machine takes a moment; a
# leaked entry never goes)
check "no bypass socket is left in $MAP_BYP_FLOWS (within 5 s)" \
	wait_for 5 bash -c "[ \"\$(bpftool -j map dump pinned $PIN/$MAP_BYP_FLOWS | jq length)\" = 0 ]"
check "every test connection closed (none left in the namespace)" \
	bash -c "! nsenter --net=$NSA ss -Htn state established | grep -q ."
finish
