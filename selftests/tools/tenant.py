#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One tenant of selftests/tenants: a connection to itself over loopback
with the 4-tuple every tenant uses, in whatever namespace it runs in.

  tenant.py DIR SEED BYTES

Listens on 127.0.0.1:7777, connects from 127.0.0.1:45000 (a fixed source
port: every tenant's connection has the same addresses and ports), sends
BYTES bytes of pattern SEED ((SEED + i) & 0xff) in two halves.  After the
first half has been read by the server end it writes DIR/paused and waits
for DIR/go; then it sends the rest, shuts down its write side, and the
server end checks every byte it read against the pattern.  At the end it
writes DIR/result (JSON: sent, received, ok) and exits 0 if every byte
arrived right.  Every wait has a time-out (30 s; 600 s for go; times
TOE_SLOW).
"""
import json
import os
import socket
import sys
import threading
import time

ADDR, SPORT, CPORT = "127.0.0.1", 7777, 45000
d, seed, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
block = bytes((seed + i) & 0xFF for i in range(65536))


def pattern(off, n):
    out = bytearray()
    while n:
        o = off % 65536
        k = min(n, 65536 - o)
        out += block[o:o + k]
        off += k
        n -= k
    return bytes(out)


srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((ADDR, SPORT))
srv.listen(1)
cli = socket.socket()
cli.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
cli.bind((ADDR, CPORT))
# TOE_SLOW (selftests/lib.sh slow()): every time-out scaled, as under TCG
SLOW = float(os.environ.get("TOE_SLOW", "1"))
cli.settimeout(30 * SLOW)
cli.connect((ADDR, SPORT))
conn, _ = srv.accept()
# the server end waits through the pause too (up to the go time-out)
conn.settimeout(630 * SLOW)
got = {"n": 0, "ok": True}


def serve():
    while True:
        b = conn.recv(65536)
        if not b:
            break
        if b != pattern(got["n"], len(b)):
            got["ok"] = False
        got["n"] += len(b)
    conn.close()


t = threading.Thread(target=serve)
t.start()
half = total // 2
cli.sendall(pattern(0, half))
deadline = time.time() + 30 * SLOW
while got["n"] < half and time.time() < deadline:
    time.sleep(0.01)
open(os.path.join(d, "paused"), "w").close()
# its own time-out: the test checks all 32 tenants before saying go, which
# on a loaded machine can outlast the first tenants' 30 s from the start;
# on a slower machine's make check (101 s for the file) it outlasted 90
# s, and the first tenants sent their second half before the checks of
# the pause ran.  Only a guard against a test gone: the runner's time-out
# and the test's cleanup end a tenant long before this.
deadline = time.time() + 600 * SLOW
while not os.path.exists(os.path.join(d, "go")) and time.time() < deadline:
    time.sleep(0.02)
cli.sendall(pattern(half, total - half))
cli.shutdown(socket.SHUT_WR)
t.join(30 * SLOW)
cli.close()
res = {"sent": total, "received": got["n"], "ok": got["ok"] and got["n"] == total}
with open(os.path.join(d, "result.tmp"), "w") as f:
    json.dump(res, f)
os.rename(os.path.join(d, "result.tmp"), os.path.join(d, "result"))
sys.exit(0 if res["ok"] else 1)
