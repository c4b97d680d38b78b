#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Routed TCP flows for the forward path's event tests (test_fwd_reasons.sh).

server --port P [--trickle]
        listen (dual-stack) until killed; print "ready".  Each connection
        sends a 16-byte header (N, M: big-endian u64): the server reads N
        bytes (N = 0: to EOF), sends M back, reads to EOF, and prints
        {"peer_port": N, "got": N}.  --trickle: from the header on, it
        also sends 1000 bytes every 5 ms (TCP_NODELAY) until the client
        closes, so that its way carries data of its own whatever the
        client's way does; the line then has "sent" too.
client --addr A --port P --send N --reply M [--lport-file F] [--go-file G]
        send the header and N bytes, read M, close (FIN); print
        {"lport": N, "sent": N + 16, "got": M}.  Connected, the local port
        into F, and the sending only once G exists (fwd_go, router.sh).
trickle --addr A --port P --stop FILE [--ttl FILE] [--rst]
        send 1000 bytes every 5 ms (TCP_NODELAY: a segment each) until FILE
        exists; while the --ttl FILE exists the packets leave with TTL 1;
        --rst: close with an RST (SO_LINGER 0).  It reads what the server
        sends (server --trickle) as it goes.  Prints {"lport": N} at once
        and {"sent": N, "got": N} at the end.
"""
import json
import os
import select
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from tcpserve import command_line, listener, serve_forever  # noqa: E402


def read_n(c, n):
    got = 0
    while n == 0 or got < n:
        b = c.recv(65536 if n == 0 else min(65536, n - got))
        if not b:
            break
        got += len(b)
    return got


def serve(args):
    lock = threading.Lock()

    def drip(c, done, sent):
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = b"s" * 1000
        while not done.is_set():
            try:
                sent[0] += c.send(buf, socket.MSG_DONTWAIT)
            except BlockingIOError:
                pass  # (the window full: the client's way blocked, or slow)
            except OSError:
                return
            time.sleep(0.005)

    def handle(c, port):
        got = 0
        done, sent, t = threading.Event(), [0], None
        try:
            hdr = c.recv(16, socket.MSG_WAITALL)
            n, m = struct.unpack("!QQ", hdr)
            if args.trickle:
                t = threading.Thread(target=drip, args=(c, done, sent), daemon=True)
                t.start()
            got = read_n(c, n)
            if m:
                c.sendall(b"r" * m)
            read_n(c, 0)
        except (OSError, struct.error):
            pass
        done.set()
        if t:
            t.join()
        try:
            peer = c.getpeername()[1]
        except OSError:
            peer = 0
        c.close()
        line = {"port": port, "peer_port": peer, "got": got}
        if args.trickle:
            line["sent"] = sent[0]
        with lock:
            print(json.dumps(line), flush=True)

    serve_forever([listener(port, 64) for port in args.port], args.port, handle)


def connect(args):
    fam = socket.AF_INET6 if ":" in args.addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect((args.addr, args.port))
    s.settimeout(30)
    return s


def client(args):
    s = connect(args)
    if args.lport_file:
        with open(args.lport_file + ".tmp", "w") as f:
            f.write("%d\n" % s.getsockname()[1])
        os.rename(args.lport_file + ".tmp", args.lport_file)
    end = time.monotonic() + 30
    while args.go_file and not os.path.exists(args.go_file):
        if time.monotonic() > end:
            print(json.dumps({"error": "no " + args.go_file}), flush=True)
            return 1
        time.sleep(0.01)
    # one write: the first skb already holds data (GSO from the start)
    s.sendall(struct.pack("!QQ", args.send, args.reply) + os.urandom(args.send))
    got = 0
    while got < args.reply:
        b = s.recv(65536)
        if not b:
            break
        got += len(b)
    lport = s.getsockname()[1]
    s.close()
    print(json.dumps({"lport": lport, "sent": args.send + 16, "got": got}), flush=True)
    return 0 if got == args.reply else 1


def trickle(args):
    s = connect(args)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    print(json.dumps({"lport": s.getsockname()[1]}), flush=True)
    s.sendall(struct.pack("!QQ", 0, 0))
    buf, sent, got, eof, ttl = b"t" * 1000, 0, 0, False, 64
    s.settimeout(0.2)
    while not os.path.exists(args.stop):
        want = 1 if args.ttl and os.path.exists(args.ttl) else 64
        if want != ttl:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, want)
            ttl = want
        try:
            sent += s.send(buf)
        except socket.timeout:
            pass
        while not eof and select.select([s], [], [], 0)[0]:
            try:
                b = s.recv(65536)
            except OSError:
                b = b""
            got += len(b)
            eof = not b
        time.sleep(0.005)
    if args.rst:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    print(json.dumps({"sent": sent, "got": got}), flush=True)
    return 0


def main():
    ap, server, peers = command_line(("client", "trickle"))
    server.add_argument("--trickle", action="store_true")
    for name, p in peers.items():
        if name == "client":
            p.add_argument("--send", type=int, required=True)
            p.add_argument("--reply", type=int, default=0)
            # connected: the port into this file, and send only once
            # --go-file exists
            p.add_argument("--lport-file")
            p.add_argument("--go-file")
        else:
            p.add_argument("--stop", required=True)
            p.add_argument("--ttl")
            p.add_argument("--rst", action="store_true")
    args = ap.parse_args()
    return {"server": lambda a: serve(a) or 0, "client": client, "trickle": trickle}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
