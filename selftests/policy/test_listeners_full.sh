#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toe_listeners full: a listener policy offloads on a device (not the
# kernel module's) when toe_listeners holds TOE_LISTENERS_MAX listeners
# already is never "offload" without an entry: it stays on the host,
# reason listeners_full, counted (listeners_full); a connection it accepts
# takes no device and is not offloaded (reason listeners_full, counted in
# refused_listeners_full); once one listener closes, the next one is
# offloaded again and so is a connection it accepts.
. "$(dirname "$0")/setup.sh"
plan 11
load_toe
# the listeners in a, toed's namespace (no tenant's event share to run
# out of); the clients in b, left to the host
cfg=$(printf 'device t3 type chelsio-t3 nconn 100\nrule offload dev t3 lport 5320-5321\nrule offload dev t3 lport 20000-52000\n' | conf lfull)
apply "$cfg" >/dev/null || { fail "apply"; finish; }
MAX=$(bpftool -j map show pinned "$PIN/$MAP_LISTENERS" | jq .max_entries)
events_start

# one process in a (in the cgroup) holds the listeners, told by a fifo:
# "fill N" (N on 127.0.0.1, ports 20000 on), "open PORT" (on a's
# address), "close" (the first filler); it answers each with a line
FIFO=$CONF_DIR/lsn.fifo
OUT=$CONF_DIR/lsn.out
mkfifo "$FIFO"
: >"$OUT"
in_cg a python3 -c '
import resource, socket, sys, time
n = int(sys.argv[1]) + 64
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (n, max(n, hard)))
fill, own = [], []
out = open(sys.argv[3], "w", buffering=1)
for line in open(sys.argv[2]):
    w = line.split()
    t = time.monotonic()
    if w[0] == "fill":
        for i in range(int(w[1])):
            s = socket.socket()
            s.bind(("127.0.0.1", 20000 + i))
            s.listen(8)
            fill.append(s)
    elif w[0] == "open":
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((sys.argv[4], int(w[1])))
        s.listen(8)
        own.append(s)
    elif w[0] == "close":
        fill.pop(0).close()
    print("ok", w[0], len(fill), len(own), "%.3f s" % (time.monotonic() - t), file=out)
' "$MAX" "$FIFO" "$OUT" "$A4" &
LPID=$!
defer "kill $LPID 2>/dev/null"
exec 7>"$FIFO"
defer "exec 7>&-"
# say CMD N: send CMD, wait for the Nth answer
answered() { [ "$(grep -c '^ok' "$OUT")" -ge "$1" ]; }
say() { echo "$1" >&7; wait_for 30 answered "$2"; }

nlsn() { bpftool map dump pinned "$PIN/$MAP_LISTENERS" | grep -c '"lport"'; }
lf0=$(stat_sum "$STAT_LISTENERS_FULL")
rf0=$(rsn_of "$PIN" "$RSN_REFUSED_LISTENERS_FULL")
say "fill $MAX" 1
echo "# $(cat "$OUT")"
check "$MAX listeners offloaded fill $MAP_LISTENERS ($(nlsn) entries), none refused" \
	test "$(nlsn)" = "$MAX" -a "$(stat_sum "$STAT_LISTENERS_FULL")" = "$lf0"
say "open 5320" 2
evl() { grep -F "\"lport\":$1," "$EVENTS" | jq -s -c '[.[] | select(.type == "listen_start")]'; }
lev() { [ "$(evl "$1" | jq length)" = 1 ]; }
wait_for 10 lev 5320
echo "# listen_start 5320: $(evl 5320)"
check "the next listener (port 5320): host, reason listeners_full, no device" \
	jq -e '.[0].decision == 0 and .[0].reason == 11 and .[0].dev == -1' <<<"$(evl 5320)"
check "... not in $MAP_LISTENERS, which still holds $MAX" \
	test "$(nlsn)" = "$MAX" -a "$(bpftool map dump pinned "$PIN/$MAP_LISTENERS" | grep -c '"lport": 5320')" = 0
check "... counted: listeners_full +1" test "$(($(stat_sum "$STAT_LISTENERS_FULL") - lf0))" = 1

# a connection it accepts (held in its queue): host, no device, no slot
child() { flows | jq -c "[.[] | select(.lport == $1 and .direction == 1)][0] // {}"; }
conn() { # PORT: a connection from b to a's PORT, held 30 s
	in_cg b python3 -c '
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2]))); time.sleep(30)' "$A4" "$1" &
	defer "kill $! 2>/dev/null"
}
live0=$(dev_live 0 live)
conn 5320
has_child() { [ "$(child "$1")" != "{}" ]; }
wait_for 10 has_child 5320
C=$(child 5320)
echo "# its accepted connection: $C"
check "a connection it accepts: host, reason listeners_full, no device" \
	jq -e '.decision == 0 and .reason == 11 and .dev == 4294967295' <<<"$C"
check "... took no slot of t3 (live $live0 -> $(dev_live 0 live)), counted in refused_listeners_full" \
	test "$(dev_live 0 live)" = "$live0" -a "$(($(rsn_of "$PIN" "$RSN_REFUSED_LISTENERS_FULL") - rf0))" = 1

# one filler closes: room again
say close 3
say "open 5321" 4
wait_for 10 lev 5321
echo "# listen_start 5321: $(evl 5321)"
check "a filler closed: the next listener (port 5321) offloaded on t3 (device 0)" \
	jq -e '.[0].decision == 1 and .[0].dev == 0' <<<"$(evl 5321)"
check "... in $MAP_LISTENERS ($(nlsn) entries), listeners_full not counted again" \
	test "$(bpftool map dump pinned "$PIN/$MAP_LISTENERS" | grep -c '"lport": 5321')" = 1 -a \
	"$(($(stat_sum "$STAT_LISTENERS_FULL") - lf0))" = 1
conn 5321
wait_for 10 has_child 5321
C=$(child 5321)
echo "# its accepted connection: $C"
check "a connection it accepts: offloaded on t3" jq -e '.decision == 1 and .dev == 0' <<<"$C"
check "... holding a slot (live $live0 -> $(dev_live 0 live))" test "$(dev_live 0 live)" = "$((live0 + 1))"
events_stop
check "the listener kept home's connection took no slot: refused_listeners_full still +1" \
	test "$(($(rsn_of "$PIN" "$RSN_REFUSED_LISTENERS_FULL") - rf0))" = 1
finish
