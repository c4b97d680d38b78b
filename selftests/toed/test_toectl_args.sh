#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toectl's own argument checks (issue 17), before anything is sent: a port
# that is not 0-65535 in plain decimal is refused naming it (never passed
# on, where it could read as "no filter" or "port 0"), a request longer
# than toed's 512-byte line is refused, and repeated -j (which used to
# overrun toectl's stack) are one -j.  No toed: a stand-in on a socket in
# a temporary run folder records the request line it gets, so each check
# also sees what reached it.
. "$(dirname "$0")/../lib.sh"
need_cmd python3
need_built toectl
plan 17

RUN=$(mktemp -d) && defer "rm -rf $RUN"
# The stand-in: one request line per connection into $RUN/req, answer ok.
python3 -c '
import os, socket, sys
d = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(d + "/toed.sock"); s.listen(8)
while True:
    c, _ = s.accept()
    b = b""
    while b"\n" not in b and len(b) < 4096:
        x = c.recv(4096)
        if not x: break
        b += x
    with open(d + "/req.tmp", "wb") as f: f.write(b)
    os.rename(d + "/req.tmp", d + "/req")
    c.sendall(b"ok\nanswered\n"); c.close()
' "$RUN" &
defer "kill $!"
wait_for 5 test -S "$RUN/toed.sock" || { fail "the stand-in toed listens"; finish; }

# ctl ARG...: toectl against the stand-in; stderr in $RUN/err, status in rc.
ctl() { rm -f "$RUN/req"; toectl --run-dir "$RUN" "$@" >"$RUN/out" 2>"$RUN/err"; rc=$?; }
# sent LINE: toectl exited 0 and the stand-in got exactly LINE.
sent() { [ "$rc" = 0 ] && [ "$(cat "$RUN/req" 2>/dev/null)" = "$1" ] && grep -qx answered "$RUN/out"; }
# refused MSG: toectl exited 1 saying MSG, and sent nothing.
refused() { [ "$rc" = 1 ] && [ ! -e "$RUN/req" ] && grep -qF -- "$1" "$RUN/err"; }

ctl flows port 443
check "flows port 443 is sent as it is" sent "flows port 443"
ctl flows port 0 dev vb port 65535
check "ports 0 and 65535 are ports" sent "flows port 0 dev vb port 65535"
for p in 99999999999999999999 4294967296 65536 -1 1x +1 0x10 ""; do
	ctl flows port "$p"
	check "flows port '$p' is refused naming it" refused "bad port '$p'"
done
ctl flows dev eth0 port 4294967296
check "a bad port after another filter is refused too" refused "bad port '4294967296'"

mapfile -t js < <(yes -- -j | head -n 200)
ctl flows "${js[@]}"
check "flows and 200 -j: one request 'flows -j' (no overrun)" sent "flows -j"

# "flows" then pairs "dev NAME": 5 + 7 * (5 + 64) + 5 + n bytes, and a newline
long=$(printf 'n%.0s' {1..64})
pairs=()
for ((i = 0; i < 7; i++)); do pairs+=(dev "$long"); done
ctl flows "${pairs[@]}" dev "$(printf 'x%.0s' {1..18})"
check "a request of exactly 512 bytes is sent" \
	test "$rc" = 0 -a "$(stat -c %s "$RUN/req" 2>/dev/null)" = 512
ctl flows "${pairs[@]}" dev "$(printf 'x%.0s' {1..19})"
check "a request of 513 bytes is refused" refused "request too long"
mapfile -t many < <(yes -- "dev $long" | head -n 40 | tr ' ' '\n')
ctl flows "${many[@]}"
check "a request of 40 filters is refused, not cut" refused "request too long"
ctl flows dev "$(printf 'a%.0s' {1..65})"
check "an argument over 64 bytes is refused" refused "bad argument"
# --help: every command's synopsis whole (a long one on a line of its
# own), from the one command table (user/lib/ctl_cmds.h)
whole() {
	local syn bad=0
	while IFS= read -r syn; do
		toectl --help | grep -qF "  $syn" || { echo "cut in --help: $syn"; bad=1; }
	done < <(sed -n 's/^[[:space:]]*X([A-Z_]*, "\([a-z]*\)", "\([^"]*\)".*/\1\2/p' \
		"$TOE_TOP/user/lib/ctl_cmds.h")
	return $bad
}
check "toectl --help shows every command's synopsis whole" whole
finish
