#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Test TCP endpoints for the opentoe selftests (real sockets, real TCP).

server: listen on ports (dual-stack, so IPv4 arrives v4-mapped), for each
        connection wait --delay seconds, read to EOF, send --reply bytes,
        close.  Prints "ready".
client: open --count connections at once, send --send bytes on each, shut
        down the write side, read the reply to EOF, hold them --hold
        seconds, then close (--rst: with SO_LINGER 0, a reset).  Prints one
        JSON document: per connection its local port, bytes sent and received,
        and TCP_KEEPIDLE / SO_KEEPALIVE as the socket has them.
storm:  --count short connections, --parallel at a time, each sends 1 byte.
"""
import argparse
import json
import socket
import struct
import sys
import threading
import time


def pattern(n, seed):
    block = bytes((seed + i) & 0xFF for i in range(65536))
    out = bytearray()
    while len(out) < n:
        out += block[: n - len(out)]
    return bytes(out)


def serve(args):
    socks = []
    for port in args.port:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        s.bind(("::", port))
        s.listen(4096)
        socks.append(s)

    def handle(c):
        try:
            time.sleep(args.delay)  # a slow reader: the sender's data waits
            got = 0
            while True:
                b = c.recv(1 << 16)
                if not b:
                    break
                got += len(b)
            if args.reply:
                c.sendall(pattern(args.reply, 7))
            c.shutdown(socket.SHUT_WR)
            while c.recv(1 << 16):
                pass
        except OSError:
            pass
        finally:
            c.close()

    def accept_loop(s):
        while True:
            c, _ = s.accept()
            threading.Thread(target=handle, args=(c,), daemon=True).start()

    for s in socks:
        threading.Thread(target=accept_loop, args=(s,), daemon=True).start()
    print("ready", flush=True)
    while True:
        time.sleep(3600)


def client(args):
    fam = socket.AF_INET6 if ":" in args.addr else socket.AF_INET
    conns = []
    for _ in range(args.count):
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect((args.addr, args.port))
        conns.append(s)
    out = []
    for s in conns:
        data = pattern(args.send, 3)
        if data:
            s.sendall(data)
        rec = {
            "lport": s.getsockname()[1],
            "sent": len(data),
            "keepalive": s.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
            "keepidle": s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
            "keepintvl": s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL),
            "keepcnt": s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT),
        }
        out.append(rec)
    if args.hold:
        print(json.dumps({"held": [r["lport"] for r in out]}), flush=True)
        time.sleep(args.hold)
    for s, rec in zip(conns, out):
        if args.rst:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
            rec["received"] = 0
            continue
        s.shutdown(socket.SHUT_WR)
        got = 0
        while True:
            b = s.recv(1 << 16)
            if not b:
                break
            got += len(b)
        rec["received"] = got
        s.close()
    print(json.dumps({"conns": out}), flush=True)


def storm(args):
    fam = socket.AF_INET6 if ":" in args.addr else socket.AF_INET
    done = [0]
    errors = [0]
    lock = threading.Lock()

    def worker(n):
        for _ in range(n):
            try:
                s = socket.socket(fam, socket.SOCK_STREAM)
                s.settimeout(10)
                s.connect((args.addr, args.port))
                s.sendall(b"x")
                s.shutdown(socket.SHUT_WR)
                while s.recv(4096):
                    pass
                s.close()
                with lock:
                    done[0] += 1
            except OSError:
                with lock:
                    errors[0] += 1

    per = args.count // args.parallel
    ts = [threading.Thread(target=worker, args=(per,)) for _ in range(args.parallel)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(json.dumps({"done": done[0], "errors": errors[0]}), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("server")
    s.add_argument("--port", type=int, action="append", required=True)
    s.add_argument("--reply", type=int, default=0)
    s.add_argument("--delay", type=float, default=0,
                   help="seconds to wait after accept before reading")
    c = sub.add_parser("client")
    c.add_argument("--addr", required=True)
    c.add_argument("--port", type=int, required=True)
    c.add_argument("--count", type=int, default=1)
    c.add_argument("--send", type=int, default=0)
    c.add_argument("--hold", type=float, default=0)
    c.add_argument("--rst", action="store_true")
    st = sub.add_parser("storm")
    st.add_argument("--addr", required=True)
    st.add_argument("--port", type=int, required=True)
    st.add_argument("--count", type=int, default=1000)
    st.add_argument("--parallel", type=int, default=4)
    args = p.parse_args()
    {"server": serve, "client": client, "storm": storm}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
