#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Test TCP endpoints for the opentoe selftests (real sockets, real TCP).

server: listen on ports (dual-stack, so IPv4 arrives v4-mapped), for each
        connection wait --delay seconds, read to EOF, send --reply bytes,
        close.  Prints "ready", then a JSON line per connection:
        {"port", "peer_port", "bytes", "ok"}.  Every byte read is checked
        against the client's pattern (byte i of a stream is (3 + i) & 0xff, but
        for a number of its 256-byte cell at the start of each cell):
        a wrong, lost or reordered byte prints "MISMATCH ..." (and "ok":
        false) and resets the connection, so the client fails too.
client: open --count connections at once, send --send bytes on each (in
        writes of --chunk bytes), shut
        down the write side, read the reply to EOF (checking every byte of
        it against the server's pattern, seed 7), hold them --hold
        seconds (its line {"held": [ports], "pid": N} says so; SIGUSR1 to N
        ends the hold at once: a test holds them long and ends the hold once
        it has read what it looks for, lib.sh's unhold), then close
        (--rst: with SO_LINGER 0, a reset).  Prints one
        JSON document: per connection its local port, bytes sent and received,
        and TCP_KEEPIDLE / SO_KEEPALIVE as the socket has them.  A reply
        with a wrong byte, a reset or an error: a message on stderr, no JSON,
        exit 1.
storm:  --count short connections, --parallel at a time, each sends 1 byte.

Every socket operation has a time-out (--timeout, 30 s): a transfer that
stalls fails instead of hanging the test.
"""
import argparse
import json
import os
import signal
import socket
import struct
import sys
import threading
import time

from tcpserve import command_line, listener, read_to_eof, serve_forever  # shared with xdp/xfer.py


CELL = 256
BLOCK = 65536
_BASE = {}  # seed -> the block before its cells are numbered


def block(k, seed):
    """Block k (bytes k*64 KiB on) of pattern(seed): byte i is (seed + i)
    & 0xff, except that every 256-byte cell starts with its own number in
    the stream (a 32-bit hash of it), so a piece of the stream read at the
    wrong offset never matches, even when it moved by whole cells or
    blocks (as a reordered 64 KiB write would)."""
    if seed not in _BASE:
        _BASE[seed] = bytes((seed + i) & 0xFF for i in range(BLOCK))
    b = bytearray(_BASE[seed])
    for c in range(BLOCK // CELL):
        cell = k * (BLOCK // CELL) + c
        b[c * CELL:c * CELL + 4] = struct.pack(
            "<I", (cell * 2654435761 + seed) & 0xFFFFFFFF)
    return bytes(b)


def pattern(n, seed):
    out = bytearray()
    k = 0
    while len(out) < n:
        out += block(k, seed)[: n - len(out)]
        k += 1
    return bytes(out)


class Mismatch(Exception):
    pass


class Checker:
    """Checks a stream against pattern(seed) byte by byte, in order."""

    def __init__(self, seed):
        self.seed = seed
        self.off = 0
        self.k = 0
        self.block = block(0, seed)

    def feed(self, b):
        i = 0
        while i < len(b):
            o = self.off % BLOCK
            if self.off // BLOCK != self.k:
                self.k = self.off // BLOCK
                self.block = block(self.k, self.seed)
            n = min(len(b) - i, BLOCK - o)
            if b[i:i + n] != self.block[o:o + n]:
                for j in range(n):
                    if b[i + j] != self.block[o + j]:
                        raise Mismatch("byte %d is 0x%02x, want 0x%02x" %
                                       (self.off + j, b[i + j], self.block[o + j]))
            self.off += n
            i += n


def serve(args):
    socks = [listener(port, 4096, args.rcvbuf) for port in args.port]

    out_lock = threading.Lock()

    def say(line):
        with out_lock:
            print(line, flush=True)

    def handle(c, port):
        peer = c.getpeername()[1]
        chk = Checker(3)
        try:
            c.settimeout(args.timeout)
            time.sleep(args.delay)  # a slow reader: the sender's data waits
            read_to_eof(c, chk.feed)
            say(json.dumps({"port": port, "peer_port": peer, "bytes": chk.off, "ok": True}))
            if args.reply:
                c.sendall(pattern(args.reply, 7))
            c.shutdown(socket.SHUT_WR)
            while c.recv(1 << 16):
                pass
        except Mismatch as e:
            say("MISMATCH port %d peer %d: %s" % (port, peer, e))
            say(json.dumps({"port": port, "peer_port": peer, "bytes": chk.off, "ok": False}))
            # a reset: the client's read fails, it does not report success
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError as e:
            say(json.dumps({"port": port, "peer_port": peer, "bytes": chk.off,
                            "ok": False, "error": str(e)}))
        finally:
            c.close()

    serve_forever(socks, args.port, handle)


def client(args):
    fam = socket.AF_INET6 if ":" in args.addr else socket.AF_INET
    conns = []
    for _ in range(args.count):
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect((args.addr, args.port))
        s.settimeout(args.timeout)
        conns.append(s)
    out = []
    for s in conns:
        data = pattern(args.send, 3)
        step = args.chunk or len(data) or 1
        for i in range(0, len(data), step):
            s.sendall(data[i:i + step])
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
        stop, end = [], time.monotonic() + args.hold
        signal.signal(signal.SIGUSR1, lambda *_: stop.append(1))
        print(json.dumps({"held": [r["lport"] for r in out], "pid": os.getpid()}), flush=True)
        while not stop and time.monotonic() < end:
            time.sleep(0.02)
    for s, rec in zip(conns, out):
        if args.rst:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
            rec["received"] = 0
            continue
        s.shutdown(socket.SHUT_WR)
        chk = Checker(7)
        try:
            read_to_eof(s, chk.feed)
        except (OSError, Mismatch) as e:
            sys.exit("tcpx client: connection from port %d, after %d bytes of the reply: %s"
                     % (rec["lport"], chk.off, e))
        rec["received"] = chk.off
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
                s.sendall(pattern(1, 3))
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
    p, s, peers = command_line(("client", "storm"), description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--reply", type=int, default=0)
    s.add_argument("--delay", type=float, default=0,
                   help="seconds to wait after accept before reading")
    s.add_argument("--timeout", type=float, default=30)
    s.add_argument("--rcvbuf", type=int, default=0,
                   help="SO_RCVBUFFORCE on the listener (the kernel doubles it)")
    c = peers["client"]
    c.add_argument("--count", type=int, default=1)
    c.add_argument("--send", type=int, default=0)
    c.add_argument("--hold", type=float, default=0)
    c.add_argument("--rst", action="store_true")
    c.add_argument("--chunk", type=int, default=0,
                   help="send in writes of this many bytes (default: one)")
    c.add_argument("--timeout", type=float, default=30)
    st = peers["storm"]
    st.add_argument("--count", type=int, default=1000)
    st.add_argument("--parallel", type=int, default=4)
    args = p.parse_args()
    {"server": serve, "client": client, "storm": storm}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
