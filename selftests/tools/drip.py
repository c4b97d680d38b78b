#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Slow HTTP clients: N connections to HOST:PORT, each sending a request
line and then one header line every --every seconds, never finishing the
request; a connection the server closes is opened again 0.2 s later.  Runs
--for seconds, then prints one JSON line: connections opened, and the
longest a connection lived (s)."""
import argparse, json, selectors, socket, time

ap = argparse.ArgumentParser()
ap.add_argument("host")
ap.add_argument("port", type=int)
ap.add_argument("-n", type=int, default=16)
ap.add_argument("--every", type=float, default=1.0)
ap.add_argument("--for", dest="dur", type=float, default=8.0)
ap.add_argument("--src", default="", help="source addresses, a,b,...: in turn")
a = ap.parse_args()
sel = selectors.DefaultSelector()
opened, longest = 0, 0.0


srcs = a.src.split(",") if a.src else []
again = []  # when a closed connection may be opened again


def connect():
    global opened
    s = socket.socket()
    if srcs:
        s.bind((srcs[opened % len(srcs)], 0))
    try:
        s.connect((a.host, a.port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    except OSError:
        s.close()
        time.sleep(0.05)
        return
    opened += 1
    sel.register(s, selectors.EVENT_READ, [time.monotonic(), time.monotonic()])


end = time.monotonic() + a.dur
for _ in range(a.n):
    connect()
while time.monotonic() < end:
    for key, _ in sel.select(0.1):
        try:
            data = key.fileobj.recv(4096)
        except OSError:
            data = b""
        if not data:
            longest = max(longest, time.monotonic() - key.data[0])
            sel.unregister(key.fileobj)
            key.fileobj.close()
            again.append(time.monotonic() + 0.2)
    now = time.monotonic()
    for key in list(sel.get_map().values()):
        if now - key.data[1] >= a.every:
            key.data[1] = now
            try:
                key.fileobj.sendall(b"X-Drip: 1\r\n")
            except OSError:
                pass
    while again and again[0] <= now:
        again.pop(0)
        connect()
print(json.dumps({"opened": opened, "longest": round(longest, 2)}))
