#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-apps: real servers, each plain and through the local bypass,
# alternating in one invocation.  Workloads:
#   pgbench-S, pgbench-N  PostgreSQL (a private cluster), pgbench -S / -N,
#                         -c 8 -j 2 (tps)
#   memcached             memcaslap (Debian's name for memaslap), -T 2 -c 32,
#                         10% of gets verified (ops/s)
#   nginx-64k, nginx-10m  nginx (sendfile on), wrk -t2 -c50 --latency
#                         (req/s, p50/p99/max, errors)
#   redis, redis-P16      redis-benchmark -t set,get, unpipelined and -P 16
#                         (requests/s of SET and GET, p50/p99/max)
#   iperf3-1, iperf3-4    one and four streams (Gbit/s)
# Two instances of every server run side by side in one network namespace
# (lo only): "plain" outside opentoe's cgroup on port 89xx, its clients
# outside too (no sock_ops at all); "bypass" started inside the cgroup on
# port 79xx (a listener's cgroup is fixed when it is created and accepted
# sockets inherit it), its clients inside too, policy "rule bypass" on
# 7900-7999 netns any (a rule without netns matches only in toed's own
# namespace, and the servers run in the bench's).  Each round runs every workload against both, in an order that
# alternates from round to round.  Every run checks its data and that the
# bypass carried it: toe_stats' bypassed bytes must grow in a bypass run and
# stay flat in a plain one.  A failed run is kept out of the figures, its
# row marked FAILED, and the script exits 1.
#   ROUNDS=3 SECS=5     rounds, seconds per run
#   APPS="..."          a subset of the workloads above
#   PG_SCALE=10         pgbench scale (100,000 accounts each)
#   REDIS_N=, REDIS_NP= requests per redis-benchmark test, unpipelined and
#                       -P 16 (default 30,000 and 300,000 per second of SECS)
#   BENCH_SMOKE=1       one round of 1 s runs, PG_SCALE=1, REDIS_N=3000,
#                       REDIS_NP=30000 (bench/lib.sh: the checks as ever,
#                       the figures mean nothing); BENCH_RESULTS=DIR
# CSV: bench/results/apps.csv (per workload and variant) and
# bench/results/apps_runs.csv (every run).
. "$(dirname "$0")/lib.sh"
need_root
need_cmd bpftool jq nsenter setpriv python3 sha256sum curl iperf3 \
	redis-server redis-cli redis-benchmark nginx wrk memcached memcaslap memccp memccat \
	pgbench psql
need_built toe-loader toed
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$PGBIN/initdb" ] && [ -x "$PGBIN/pg_ctl" ] || cannot_run "no PostgreSQL server (make deps installs it)"
if smoke; then
	ROUNDS=${ROUNDS:-1} SECS=${SECS:-1} PG_SCALE=${PG_SCALE:-1}
	REDIS_N=${REDIS_N:-3000} REDIS_NP=${REDIS_NP:-30000}
fi
ROUNDS=${ROUNDS:-3} SECS=${SECS:-5}
ALL="pgbench-S pgbench-N memcached nginx-64k nginx-10m redis redis-P16 iperf3-1 iperf3-4"
APPS=${APPS:-$ALL}
PG_SCALE=${PG_SCALE:-10}
REDIS_N=${REDIS_N:-$((SECS * 30000))} REDIS_NP=${REDIS_NP:-$((SECS * 300000))}
T=$((SECS * 4 + 60)) # time-out of any one client
for a in $APPS; do
	[[ " $ALL " == *" $a "* ]] || cannot_run "APPS: unknown workload $a (one of: $ALL)"
done
has() { [[ " $APPS " == *" $1"* ]]; }

PIN=$TOE_PIN_DIR
TMP=$(mktemp -d /tmp/opentoe-apps.XXXXXX)
defer "rm -rf $TMP"
chmod 755 "$TMP" # the servers' own users (postgres, redis, www-data) go through it
cg_add apps || skip "no cgroup v2"
ns_add a || exit 1
NSN=$(ns_name a)
NS=/run/netns/$NSN
# "plain" runs in this shell's own cgroup: it is plain only if no sock_ops
# program acts there (an opentoe attached higher up, say)
own=$(cgroup2_root)$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
n=$(cg_sockops "$own")
[ "$n" = 0 ] ||
	echo "bench-apps: warning: $n sock_ops program(s) act on $own (x: bpftool cannot tell): the plain variant is not without sock_ops" >&2
conf=$TMP/bypass.conf
printf 'default host\nrule bypass lport 7900-7999 netns any\nrule bypass rport 7900-7999 netns any\n' >"$conf"
chmod 600 "$conf"
defer "toe-loader unload --pin-dir $PIN --force; rm -rf $PIN"
toe-loader load --cgroup "$CG" --pin-dir "$PIN" >/dev/null || exit 1
toed --apply "$conf" --pin-dir "$PIN" >/dev/null || exit 1

# at VARIANT CMD...: CMD in the namespace; for "bypass" inside opentoe's
# cgroup (this subshell joins it, then execs: CMD and what it forks stay).
at() {
	local v=$1; shift
	if [ "$v" = bypass ]; then
		(echo $BASHPID >"$CG/cgroup.procs" && exec nsenter --net="$NS" "$@")
	else
		nsenter --net="$NS" "$@"
	fi
}
# "${AS_PG[@]}" CMD...: CMD as postgres (PostgreSQL refuses root), and
# AS_REDIS as redis.  setpriv: no PAM session that could move CMD to
# another cgroup; arrays, not functions, so that at can exec them.
AS_PG=(setpriv --reuid=postgres --regid=postgres --init-groups)
AS_REDIS=(setpriv --reuid=redis --regid=redis --init-groups)
# port VARIANT N: the port of server N of that variant.
port() { if [ "$1" = bypass ]; then echo $((7900 + $2)); else echo $((8900 + $2)); fi; }
listening() { nsenter --net="$NS" ss -Htln "sport = :$1" | grep -q .; }

# stat_sum INDEX: STAT_BYP_BYTES (bytes redirected to the peer), STAT_BYP_TO_TCP
# (sockets switched to TCP: flow control)
stat_sum() { stat_of "$PIN" "$1"; }
# bytes that went through the namespace's loopback as TCP
lo_bytes() { ip -n "$NSN" -s -j link show lo | jq '.[0].stats64.tx.bytes'; }

# ---------------------------------------------------------------- servers
# Each start_* starts the server of one variant and waits until it listens.
start_pg() {
	local v=$1 d=$TMP/pg-$1 p; p=$(port "$1" 10)
	cp -a "$TMP/pg-base" "$d" || return 1
	defer "${AS_PG[*]} $PGBIN/pg_ctl -D $d/data -m immediate stop"
	# fsync off: the disk is not what is measured
	at "$v" "${AS_PG[@]}" "$PGBIN/pg_ctl" -D "$d/data" -l "$d/log" -w -t 60 \
		-o "-p $p -k $d -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c max_connections=40" \
		start >/dev/null || { cat "$d/log" >&2; return 1; }
	at "$v" timeout 300 pgbench -h 127.0.0.1 -p "$p" -U postgres -i -s "$PG_SCALE" -q postgres \
		>"$d/init.log" 2>&1 || { cat "$d/init.log" >&2; return 1; }
}
start_memcached() {
	local v=$1 p; p=$(port "$1" 20)
	at "$v" memcached -u memcache -l 127.0.0.1 -p "$p" -m 1024 -t 2 -c 1024 >"$TMP/mc-$v.log" 2>&1 &
	defer "kill $!"
	wait_for 10 listening "$p"
}
start_nginx() {
	local v=$1 d=$TMP/ng-$1 p; p=$(port "$1" 30)
	mkdir -p "$d"
	cat >"$d/nginx.conf" <<-EOC
		daemon off;
		user www-data;
		worker_processes 2;
		pid $d/pid;
		error_log $d/error.log;
		events { worker_connections 1024; }
		http {
			access_log off;
			sendfile on;
			client_body_temp_path $d;
			proxy_temp_path $d;
			fastcgi_temp_path $d;
			uwsgi_temp_path $d;
			scgi_temp_path $d;
			server { listen 127.0.0.1:$p; root $TMP/www; }
		}
	EOC
	at "$v" nginx -c "$d/nginx.conf" -p "$d" >/dev/null 2>&1 &
	defer "kill $!"
	wait_for 10 listening "$p"
}
start_redis() {
	local v=$1 d=$TMP/redis-$1 p; p=$(port "$1" 40)
	mkdir -p "$d" && chown redis: "$d"
	at "$v" "${AS_REDIS[@]}" redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no --dir "$d" --logfile "$d/log" &
	defer "kill $!"
	wait_for 10 listening "$p"
}
start_iperf3() {
	local v=$1 p; p=$(port "$1" 50)
	at "$v" iperf3 -s -p "$p" >"$TMP/iperf3-$v.log" 2>&1 &
	defer "kill $!"
	wait_for 10 listening "$p"
}

# ---------------------------------------------------------------- runs
# run_WORKLOAD VARIANT ROUND: one measurement and its data check.  Appends
# "row|unit|value|p50_ms|p99_ms|max_ms|errors" to OUT (a workload can give
# several rows); on failure returns 1 with the reason in WHY.
OUT=() WHY=

run_pgbench() { # MODE(-S|-N) VARIANT ROUND
	local m=$1 v=$2 p o tps sums rc; p=$(port "$2" 10)
	# -n: no vacuum before the run (it would truncate pgbench_history,
	# which the -N check below sums over every run)
	o=$(at "$v" timeout $T pgbench -h 127.0.0.1 -p "$p" -U postgres -n "$m" -c 8 -j 2 -T "$SECS" postgres 2>&1)
	rc=$?
	loaded
	[ $rc = 0 ] || { WHY="pgbench exit: $(tail -2 <<<"$o" | tr '\n' ' ')"; return 1; }
	grep -q '^number of failed transactions: 0 ' <<<"$o" || { WHY="pgbench: failed transactions"; return 1; }
	tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$o")
	[ -n "$tps" ] || { WHY="pgbench: no tps"; return 1; }
	if [ "$m" = -N ]; then
		# every -N transaction adds its delta to one account and one
		# history row: the sums stay equal (read through the same path)
		sums=$(at "$v" timeout 60 psql -h 127.0.0.1 -p "$p" -U postgres -Atc \
			"select (select sum(abalance) from pgbench_accounts) = (select sum(delta) from pgbench_history), (select count(*) from pgbench_history)" postgres)
		[[ $sums == t\|* ]] && [ "${sums#t|}" -gt 0 ] ||
			{ WHY="sum(abalance) != sum(delta) of history ($sums)"; return 1; }
	fi
	OUT+=("pgbench$m|tps|$tps||||")
}
run_pgbench-S() { run_pgbench -S "$@"; }
run_pgbench-N() { run_pgbench -N "$@"; }

run_memcached() {
	local v=$1 r=$2 p o ops d i rc; p=$(port "$1" 20)
	o=$(at "$v" timeout $T memcaslap -s "127.0.0.1:$p" -T 2 -c 32 -t "${SECS}s" -v 0.1 2>&1)
	rc=$?
	loaded
	[ $rc = 0 ] || { WHY="memcaslap exit: $(tail -2 <<<"$o" | tr '\n' ' ')"; return 1; }
	grep -q '^verify_failed: 0$' <<<"$o" && grep -q '^verify_misses: 0$' <<<"$o" ||
		{ WHY="memcaslap verify: $(grep -E '^(verify|get_misses)' <<<"$o" | tr '\n' ' ')"; return 1; }
	ops=$(sed -n 's/^Run time: .* TPS: \([0-9]*\) .*/\1/p' <<<"$o" | tail -1)
	[ -n "$ops" ] && [ "$ops" -gt 0 ] || { WHY="memcaslap: no TPS"; return 1; }
	# Known values through the same path: 64 files of 1 B to 512 KiB
	# stored with memccp (key: the file name), read back with memccat
	# (which ends each value with a newline), compared byte for byte.
	d=$TMP/mc-$v-$r
	mkdir -p "$d"
	for ((i = 0; i < 64; i++)); do
		head -c $(((i * 7919) % 524288 + 1)) /dev/urandom >"$d/k$v$r-$i"
	done
	(cd "$d" && at "$v" timeout 60 memccp --servers="127.0.0.1:$p" k*) ||
		{ WHY="memccp failed"; rm -rf "$d"; return 1; }
	if ! cmp -s <(for ((i = 0; i < 64; i++)); do cat "$d/k$v$r-$i"; echo; done) \
		<(at "$v" timeout 60 memccat --servers="127.0.0.1:$p" $(for ((i = 0; i < 64; i++)); do echo "k$v$r-$i"; done)); then
		WHY="memccat: values read back differ from those written"; rm -rf "$d"; return 1
	fi
	rm -rf "$d"
	OUT+=("memcached|ops/s|$ops||||")
}

# wrk's latency "1.61ms" / "850.00us" / "1.02s" -> ms
to_ms() { awk -v x="$1" 'BEGIN { u = x; sub(/^[0-9.]+/, "", u); n = x + 0;
	printf "%.3f", u == "us" ? n / 1000 : u == "s" ? n * 1000 : u == "m" ? n * 60000 : n }'; }
run_nginx() { # FILE VARIANT ROUND
	local f=$1 v=$2 p o rps p50 p99 max non2xx sock errs rc i bad=0 pids=(); p=$(port "$2" 30)
	o=$(at "$v" timeout $T wrk -t2 -c50 -d"${SECS}s" --timeout 10s --latency "http://127.0.0.1:$p/$f" 2>&1)
	rc=$?
	loaded
	[ $rc = 0 ] || { WHY="wrk exit: $(tail -2 <<<"$o" | tr '\n' ' ')"; return 1; }
	rps=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$o")
	p50=$(to_ms "$(awk '$1 == "50%" { print $2 }' <<<"$o")")
	p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' <<<"$o")")
	max=$(to_ms "$(awk '$1 == "Latency" && NF >= 4 { print $4; exit }' <<<"$o")")
	non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' <<<"$o")
	# "Socket errors: connect 0, read 0, write 0, timeout 0"
	sock=$(awk '/Socket errors:/ { gsub(/,/, ""); print $4 + $6 + $8 + $10 }' <<<"$o")
	errs=$((${non2xx:-0} + ${sock:-0}))
	[ -n "$rps" ] || { WHY="wrk: no Requests/sec"; return 1; }
	OUT+=("nginx-$f|req/s|$rps|$p50|$p99|$max|$errs")
	[ "$errs" = 0 ] || { WHY="wrk: $errs errors (non-2xx/3xx ${non2xx:-0}, socket ${sock:-0})"; return 1; }
	# 8 downloads at once through the same path, each sha256 compared
	for ((i = 0; i < 8; i++)); do
		at "$v" timeout 60 curl -sS --fail -o "$TMP/dl-$i" "http://127.0.0.1:$p/$f" &
		pids+=($!)
	done
	wait "${pids[@]}"
	for ((i = 0; i < 8; i++)); do
		[ "$(sha256sum <"$TMP/dl-$i" 2>/dev/null | cut -d' ' -f1)" = "$(cat "$TMP/www/$f.sha256")" ] || bad=$((bad + 1))
		rm -f "$TMP/dl-$i"
	done
	[ $bad = 0 ] || { WHY="curl: $bad of 8 downloads of $f differ from the file"; return 1; }
}
run_nginx-64k() { run_nginx 64k "$@"; }
run_nginx-10m() { run_nginx 10m "$@"; }

run_redis_p() { # PIPELINE VARIANT ROUND
	local pl=$1 v=$2 r=$3 p o n=$REDIS_N name=redis i size k rc rps p50 p99 max; p=$(port "$2" 40)
	[ "$pl" -gt 1 ] && n=$REDIS_NP name=redis-P$pl
	o=$(at "$v" timeout $T redis-benchmark -p "$p" -c 50 -n "$n" -P "$pl" -t set,get -q --csv 2>&1)
	rc=$?
	loaded
	[ $rc = 0 ] || { WHY="redis-benchmark exit: $(tail -2 <<<"$o" | tr '\n' ' ')"; return 1; }
	! grep -qi error <<<"$o" || { WHY="redis-benchmark: $(grep -i error <<<"$o" | head -1)"; return 1; }
	# "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
	for k in SET GET; do
		i=$(awk -F'"' -v k="$k" '$2 == k { print $4 "|" $10 "|" $14 "|" $16 }' <<<"$o")
		[ -n "$i" ] || { WHY="redis-benchmark: no $k line"; return 1; }
		IFS='|' read -r rps p50 p99 max <<<"$i"
		OUT+=("$name-${k,,}|req/s|$rps|$p50|$p99|$max|0")
	done
	# Known values through the same path: 500 keys of hex values (1-4096
	# characters) set by redis-cli from a command file and read back with
	# MGET; then binary values of 1 MiB and 8 MiB (over the bypass's 4 MiB
	# queue limit) with SET -x / GET.
	python3 - "$TMP/rcmd" "$TMP/rwant" "$v:$r" <<-'PY'
		import os, sys
		with open(sys.argv[1], 'w') as c, open(sys.argv[2], 'w') as w:
		    for i in range(500):
		        size = (i * 7919) % 4096 + 1
		        val = os.urandom((size + 1) // 2).hex()[:size]
		        c.write('SET chk:%s:%d %s\n' % (sys.argv[3], i, val))
		        w.write(val + '\n')
	PY
	# Every redis-cli must succeed and print exactly what is expected
	# (its errors, on stderr, are part of what is compared).
	o=$(at "$v" timeout 60 redis-cli -p "$p" <"$TMP/rcmd" 2>&1)
	[ "$(grep -c '^OK$' <<<"$o")" = 500 ] ||
		{ WHY="redis-cli: 500 SETs not all OK: $(grep -v '^OK$' <<<"$o" | sort | uniq -c | head -3 | tr '\n' ' ')"; return 1; }
	at "$v" timeout 60 redis-cli -p "$p" --raw MGET $(for ((i = 0; i < 500; i++)); do echo "chk:$v:$r:$i"; done) \
		>"$TMP/rgot" 2>&1
	cmp -s "$TMP/rwant" "$TMP/rgot" ||
		{ WHY="redis: MGET of 500 keys differs from what was set: $(grep -a -m1 -i error "$TMP/rgot")"; return 1; }
	for size in 1048576 8388608; do
		head -c $size /dev/urandom >"$TMP/rval"
		o=$(at "$v" timeout 60 redis-cli -p "$p" -x SET "big:$v:$r:$size" <"$TMP/rval" 2>&1)
		[ "$o" = OK ] || { WHY="redis-cli SET of $size bytes: $o"; return 1; }
		# --raw GET: the value, then a newline
		at "$v" timeout 60 redis-cli -p "$p" --raw GET "big:$v:$r:$size" >"$TMP/rgot" 2>&1
		cmp -s "$TMP/rgot" <(cat "$TMP/rval"; echo) ||
			{ WHY="redis: GET of $size bytes differs from the value set: $(grep -a -m1 -i error "$TMP/rgot")"; return 1; }
	done
	o=$(at "$v" timeout 60 redis-cli -p "$p" FLUSHALL 2>&1)
	[ "$o" = OK ] || { WHY="redis-cli FLUSHALL: $o"; return 1; }
}
run_redis() { run_redis_p 1 "$@"; }
run_redis-P16() { run_redis_p 16 "$@"; }

run_iperf3() { # STREAMS VARIANT ROUND
	local n=$1 v=$2 p o; p=$(port "$2" 50)
	o=$(at "$v" timeout $T iperf3 -c 127.0.0.1 -p "$p" -t "$SECS" -P "$n" -J 2>&1)
	loaded
	# what the server received, all of it within 10% of what was sent
	jq -e '(.error == null) and .end.sum_received.bytes > 0 and
		.end.sum_received.bytes >= 0.9 * .end.sum_sent.bytes' <<<"$o" >/dev/null 2>&1 ||
		{ WHY="iperf3: $(jq -c '.error // {sent: .end.sum_sent.bytes, received: .end.sum_received.bytes}' <<<"$o" 2>/dev/null ||
			head -c 200 <<<"$o")"; return 1; }
	OUT+=("iperf3-$n|Gbit/s|$(jq '.end.sum_received.bits_per_second / 1e6 | round / 1e3' <<<"$o")||||")
}
run_iperf3-1() { run_iperf3 1 "$@"; }
run_iperf3-4() { run_iperf3 4 "$@"; }

# rows_of WORKLOAD: the CSV rows one run of it gives
rows_of() {
	case $1 in
	redis) echo redis-set redis-get ;;
	redis-P16) echo redis-P16-set redis-P16-get ;;
	*) echo "$1" ;;
	esac
}

# snap: the counters now (bypassed bytes, switches to TCP, loopback bytes)
snap() { echo "$(stat_sum $STAT_BYP_BYTES) $(stat_sum $STAT_BYP_TO_TCP) $(lo_bytes)"; }
# loaded: called by run_* when its load generator is done, before its data
# checks (which move data of their own: an 8 MiB redis value is over the
# bypass's queue limit and partly goes over TCP).
LOADED=
loaded() { LOADED=$(snap); }

# measure WORKLOAD VARIANT ROUND: one run, its checks, its lines in $raw.
# The bypassed share is that of the load generator's traffic: bytes the
# bypass redirected / (those + bytes through loopback as TCP).  A bypass
# run fails its proof (bench/lib.sh) if the bypass carried less than half
# of the load (fewer bytes than went through loopback as TCP), a plain run
# if any byte (its data checks included) went through the bypass.
measure() {
	local w=$1 v=$2 r=$3 ok=1 s0 s1 s2 byp lo sw status row line got
	OUT=() WHY='' LOADED=''
	read -ra s0 <<<"$(snap)"
	"run_$w" "$v" "$r" || ok=0
	read -ra s2 <<<"$(snap)"
	[ -n "$LOADED" ] || LOADED="${s2[*]}"
	read -ra s1 <<<"$LOADED"
	byp=$((s1[0] - s0[0])) sw=$((s1[1] - s0[1])) lo=$((s1[2] - s0[2]))
	if [ $ok = 1 ] && [ "$v" = bypass ] &&
		! proof_grew "$w $v round $r: bypassed bytes ($MAP_STATS), at least the TCP bytes on loopback" \
			"${s0[0]}" "${s1[0]}" $((lo > 0 ? lo : 1)); then
		ok=0 WHY="the bypass carried less than half of the load ($MAP_STATS bypassed bytes $byp, loopback TCP $lo)"
	elif [ $ok = 1 ] && [ "$v" = plain ] &&
		! proof_grew "$w $v round $r: bypassed bytes ($MAP_STATS)" "${s0[0]}" "${s2[0]}" 0 0; then
		ok=0 WHY="bypassed bytes grew by $((s2[0] - s0[0])) in a plain run"
	fi
	status=ok
	[ $ok = 1 ] || { status="FAILED: ${WHY//[,\"$'\n']/;}"; fails=$((fails + 1)); }
	for row in $(rows_of "$w"); do
		got=
		for line in "${OUT[@]}"; do [ "${line%%|*}" = "$row" ] && got=$line; done
		[ -n "$got" ] || got="$row||nan||||"
		IFS='|' read -r row unit val p50 p99 max errs <<<"$got"
		echo "$row,$v,$r,$unit,$val,$p50,$p99,$max,$errs,$byp,$lo,$sw,$status" >>"$raw"
		printf '  %-16s %-7s %12.2f %-7s bypassed %6s MB, loopback TCP %6s MB%s\n' "$row" "$v" "$val" "$unit" \
			$((byp >> 20)) $((lo >> 20)) "$([ $ok = 1 ] || echo "  $status")" >&2
	done
}

# ---------------------------------------------------------------- setup
if has nginx; then
	mkdir -p "$TMP/www"
	head -c $((64 << 10)) /dev/urandom >"$TMP/www/64k"
	head -c $((10 << 20)) /dev/urandom >"$TMP/www/10m"
	for f in 64k 10m; do sha256sum <"$TMP/www/$f" | cut -d' ' -f1 >"$TMP/www/$f.sha256"; done
	chmod 755 "$TMP/www" && chmod 644 "$TMP/www"/*
fi
if has pgbench; then
	mkdir -p "$TMP/pg-base" && chown postgres: "$TMP/pg-base" && chmod 700 "$TMP/pg-base"
	"${AS_PG[@]}" "$PGBIN/initdb" -D "$TMP/pg-base/data" --auth=trust -U postgres >"$TMP/initdb.log" 2>&1 ||
		{ cat "$TMP/initdb.log"; exit 1; }
fi
for v in plain bypass; do
	has pgbench && { start_pg $v || { echo "bench-apps: PostgreSQL ($v) does not start" >&2; exit 1; }; }
	has memcached && { start_memcached $v || { echo "bench-apps: memcached ($v) does not start" >&2; exit 1; }; }
	has nginx && { start_nginx $v || { echo "bench-apps: nginx ($v) does not start" >&2; exit 1; }; }
	has redis && { start_redis $v || { echo "bench-apps: redis ($v) does not start" >&2; exit 1; }; }
	has iperf3 && { start_iperf3 $v || { echo "bench-apps: iperf3 ($v) does not start" >&2; exit 1; }; }
done

# ---------------------------------------------------------------- rounds
raw=$TMP/raw.csv
: >"$raw"
fails=0
variants=(plain bypass)
start=$SECONDS
for ((r = 1; r <= ROUNDS; r++)); do
	i=0
	for w in $APPS; do
		# the order of the two variants alternates from workload to
		# workload and from round to round
		for j in 0 1; do measure "$w" "${variants[$(((i + j + r) % 2))]}" "$r"; done
		i=$((i + 1))
	done
	echo "round $r of $ROUNDS done ($((SECONDS - start)) s)" >&2
done

python3 - "$raw" "$BENCH_OUT" "$ROUNDS" "$SECS" <<'PY'
import csv, statistics, sys, datetime, math
raw, outdir, rounds, secs = sys.argv[1:5]
cols = ['app', 'variant', 'round', 'unit', 'value', 'p50_ms', 'p99_ms', 'max_ms',
        'errors', 'byp_bytes', 'lo_bytes', 'to_tcp', 'status']
runs = [dict(zip(cols, l)) for l in csv.reader(open(raw))]
stamp = '# bench-apps %s, rounds %s x %s s' % (datetime.date.today().isoformat(), rounds, secs)
with open(outdir + '/apps_runs.csv', 'w') as f:
    c = csv.writer(f)
    c.writerow([stamp])
    c.writerow(cols)
    c.writerows([r[k] for k in cols] for r in runs)
fl = lambda x: float(x) if x not in ('', 'nan') else None
med = lambda xs: statistics.median(xs) if xs else None
apps = list(dict.fromkeys(r['app'] for r in runs))
rows = []
for a in apps:
    mine = [r for r in runs if r['app'] == a]
    unit = next((r['unit'] for r in mine if r['unit']), '')
    ok = {v: {r['round']: fl(r['value']) for r in mine if r['variant'] == v and r['status'] == 'ok'
              and fl(r['value']) is not None} for v in ('plain', 'bypass')}
    base = med(list(ok['plain'].values()))
    for v in ('plain', 'bypass'):
        vr = [r for r in mine if r['variant'] == v]
        good = [r for r in vr if r['status'] == 'ok' and fl(r['value']) is not None]
        xs = [fl(r['value']) for r in good]
        m = med(xs)
        pr = med([ok[v][k] / ok['plain'][k] for k in ok[v] if ok['plain'].get(k)])
        lat = [med([fl(r[k]) for r in good if fl(r[k]) is not None]) for k in ('p50_ms', 'p99_ms')]
        mx = [fl(r['max_ms']) for r in good if fl(r['max_ms']) is not None]
        errs = [int(r['errors']) for r in vr if r['errors'] not in ('', 'nan')]
        share = med([int(r['byp_bytes']) / (int(r['byp_bytes']) + int(r['lo_bytes']))
                     for r in good if int(r['byp_bytes']) + int(r['lo_bytes']) > 0])
        bad = [r for r in vr if r['status'] != 'ok']
        status = 'ok' if not bad else 'FAILED %d of %d runs (%s)' % (len(bad), len(vr), bad[0]['status'][8:])
        r3 = lambda x, n=3: '' if x is None else round(x, n)
        rows.append([a, v, unit, r3(m, 2), r3(min(xs) if xs else None, 2), r3(max(xs) if xs else None, 2),
                     r3(m / base if m is not None and base else None), r3(pr), len(xs), secs,
                     r3(lat[0]), r3(lat[1]), r3(max(mx) if mx else None), sum(errs) if errs else '',
                     r3(share), sum(int(r['to_tcp']) for r in vr), status])
with open(outdir + '/apps.csv', 'w') as f:
    c = csv.writer(f)
    c.writerow([stamp])
    c.writerow(['app', 'variant', 'unit', 'median', 'min', 'max', 'ratio_plain', 'paired_ratio',
                'runs', 'secs', 'p50_ms', 'p99_ms', 'max_ms', 'errors', 'byp_share', 'to_tcp', 'status'])
    c.writerows(rows)
s = lambda x: '-' if x == '' else str(x)
print('%-15s %-7s %-7s %12s %23s %6s %6s %8s %8s %6s %6s  %s' % ('app', 'variant', 'unit', 'median', 'min-max',
      'ratio', 'paired', 'p50 ms', 'p99 ms', 'errs', 'bypass', 'status'))
for (a, v, u, m, lo, hi, rt, pr, n, _, p50, p99, mx, e, sh, sw, st) in rows:
    print('%-15s %-7s %-7s %12s %23s %6s %6s %8s %8s %6s %6s  %s' % (a, v, u, s(m), '-' if lo == '' else '%s-%s' % (lo, hi),
          s(rt), s(pr), s(p50), s(p99), s(e), '-' if sh == '' else '%.0f%%' % (100 * sh), st))
PY
echo "bench-apps: $((SECONDS - start)) s of runs; $fails failed run(s)" >&2
# A failed run is a finding (its row says FAILED): the CSVs are written
# all the same, and the script exits 1.
bench_publish
[ $fails = 0 ]
