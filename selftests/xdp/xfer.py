#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Bulk TCP transfers whose content both ends hash (XDP steering tests).

server --port P [--port Q ...]
        listen (dual-stack) until killed; print "ready"; for every
        connection, read to EOF and print one JSON line:
        {"port": P, "peer_port": N, "bytes": N, "sha256": "..."}
client --addr A --port P (--bytes N | --seconds S) [--connect-timeout T]
       [--lport-file F] [--timeout T]
        send N random bytes (or as many as fit in S seconds), close, print
        {"lport": N, "bytes": N, "sha256": "..."}; exit 1 with {"error": ...}
        if the connection cannot be made or breaks.  SIGUSR1 ends the
        sending at once (then as at the end of S seconds): a test gives a
        flow a generous S and stops it when it has seen what it looks for.
        --lport-file F: once connected, F holds the local port (written
        whole, by a rename), so a test follows its own flow by its 4-tuple
        while an earlier flow's entry of the same server port is still in
        a map.  --timeout T: how long a send or receive may wait (30 s).
"""
import hashlib
import json
import os
import signal
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from tcpserve import command_line, listener, read_to_eof, serve_forever  # noqa: E402 (shared with tools/tcpx.py)


def serve(args):
    lock = threading.Lock()

    def handle(c, port):
        h, n = hashlib.sha256(), 0

        def feed(b):
            nonlocal n
            h.update(b)
            n += len(b)
        try:
            read_to_eof(c, feed)
        except OSError:
            pass
        peer = c.getpeername()[1]
        c.close()
        with lock:
            print(json.dumps({"port": port, "peer_port": peer, "bytes": n,
                              "sha256": h.hexdigest()}), flush=True)

    serve_forever([listener(port, 64) for port in args.port], args.port, handle)


def wait_file(path, secs):
    """Whether path exists within secs (looked for every 10 ms)."""
    end = time.monotonic() + secs
    while not os.path.exists(path):
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def client(args):
    stop = []
    signal.signal(signal.SIGUSR1, lambda *_: stop.append(1))
    fam = socket.AF_INET6 if ":" in args.addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(args.connect_timeout)
    try:
        s.connect((args.addr, args.port))
    except OSError as e:
        print(json.dumps({"error": "connect: %s" % e}))
        return 1
    s.settimeout(args.timeout)
    if args.lport_file:
        with open(args.lport_file + ".tmp", "w") as f:
            f.write("%d\n" % s.getsockname()[1])
        os.rename(args.lport_file + ".tmp", args.lport_file)
    if args.go_file and not wait_file(args.go_file, args.timeout):
        print(json.dumps({"error": "no %s in %g s" % (args.go_file, args.timeout)}))
        return 1
    h, n = hashlib.sha256(), 0
    block = os.urandom(1 << 16)
    end = time.monotonic() + args.seconds if args.seconds else None
    try:
        while not stop and ((end is None and n < args.bytes) or (end is not None and time.monotonic() < end)):
            # A new block each time: a reordered or repeated segment changes the hash.
            block = hashlib.sha256(block[:64]).digest() + block[32:]
            chunk = block if end is not None else block[: min(len(block), args.bytes - n)]
            s.sendall(chunk)
            h.update(chunk)
            n += len(chunk)
        lport = s.getsockname()[1]
        s.shutdown(socket.SHUT_WR)
        while s.recv(1 << 16):
            pass
    except OSError as e:
        print(json.dumps({"error": "transfer: %s" % e, "bytes": n}))
        return 1
    s.close()
    print(json.dumps({"lport": lport, "bytes": n, "sha256": h.hexdigest()}))
    return 0


def main():
    ap, _, peers = command_line(("client",))
    a = peers["client"]
    a.add_argument("--bytes", type=int, default=0)
    a.add_argument("--seconds", type=float, default=0)
    a.add_argument("--connect-timeout", type=float, default=5)
    a.add_argument("--lport-file")
    # connected (and the port written): send only once this file exists
    a.add_argument("--go-file")
    a.add_argument("--timeout", type=float, default=30)
    args = ap.parse_args()
    return serve(args) if args.cmd == "server" else client(args)


if __name__ == "__main__":
    sys.exit(main())
