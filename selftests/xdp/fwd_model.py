#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The traffic of the forward path's model-based test (test_fwd_model.sh).

A stream whose every byte the receiver can check: the 8-byte word at
offset 8k is k (big-endian), so a byte lost, repeated or out of place
shows at once, at the offset where it happened.

server --port P --state FILE --ctl DIR
        listen (dual-stack) until killed.  Every 20 ms FILE is rewritten
        (whole, by a rename) as {"PEER_PORT": {"bytes": N, "bad": OFFSET
        or null, "end": "open" | "eof" | "reset" | "fin" | "rst"}}: the
        bytes read of each connection, the first offset whose byte was
        not the pattern's, how it ended (eof: the client's FIN; reset: an
        RST from the client's side; fin / rst: the server ended it, at
        DIR/PEER_PORT.fin (shutdown: a FIN, reading on to the client's)
        or DIR/PEER_PORT.rst (SO_LINGER 0: an RST)).  "ready" on stdout.
client --addr A --port P --state FILE --ctl PREFIX [--rate BYTES_PER_S]
        connect, write {"lport": N} to FILE, then send the pattern at
        RATE (2 MB/s) and rewrite FILE every 20 ms as {"lport", "sent",
        "end", "opts"}.  PREFIX.fin: shut the sending down (FIN), read to
        the server's EOF, end "fin".  PREFIX.rst: close with an RST, end
        "rst".  While PREFIX.opts exists, the client's packets carry IPv4
        options (four NOPs, IP_OPTIONS) or an IPv6 hop-by-hop header
        (IPV6_HOPOPTS): the fast path leaves them to the stack (reason
        slow) while the server's keep it: one direction returned.  The server's FIN: end "peer_fin" (then the client's
        FIN); its RST: "reset".  Exits once ended.
"""
import argparse
import array
import errno
import json
import os
import select
import socket
import struct
import sys
import time

BIG = sys.byteorder == "big"
# what makes the client's packets the stack's at the router: IPv4
# options (four NOPs), or an IPv6 hop-by-hop header (a PadN of 4 bytes)
OPTS = {socket.AF_INET: (socket.IPPROTO_IP, socket.IP_OPTIONS, b"\x01\x01\x01\x01"),
        socket.AF_INET6: (socket.IPPROTO_IPV6, socket.IPV6_HOPOPTS, b"\x00\x00\x01\x04\x00\x00\x00\x00")}


def pattern(off, n):
    """The stream's bytes [off, off + n)."""
    k0, k1 = off // 8, (off + n + 7) // 8
    a = array.array("Q", range(k0, k1))
    if not BIG:
        a.byteswap()
    s = off - 8 * k0
    return a.tobytes()[s:s + n]


def put(path, obj):
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f)
    os.rename(path + ".tmp", path)


def server(args):
    ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    ls.bind(("::", args.port))
    ls.listen(16)
    ls.setblocking(False)
    conns = {}  # fd -> [sock, peer_port]
    st = {}  # peer_port -> state
    print("ready", flush=True)
    last = 0
    while True:
        r, _, _ = select.select([ls] + [c[0] for c in conns.values()], [], [], 0.02)
        for s in r:
            if s is ls:
                try:
                    c, peer = ls.accept()
                except OSError:
                    continue
                c.setblocking(False)
                conns[c.fileno()] = [c, peer[1]]
                st[str(peer[1])] = {"bytes": 0, "bad": None, "end": "open"}
                continue
            c, pp = conns[s.fileno()]
            e = st[str(pp)]
            try:
                b = c.recv(1 << 16)
            except BlockingIOError:
                continue
            except OSError as ex:
                if e["end"] == "open":
                    e["end"] = "reset" if ex.errno == errno.ECONNRESET else "error"
                del conns[s.fileno()]
                c.close()
                continue
            if not b:
                if e["end"] == "open":
                    e["end"] = "eof"
                del conns[s.fileno()]
                c.close()
                continue
            if e["bad"] is None and b != pattern(e["bytes"], len(b)):
                want = pattern(e["bytes"], len(b))
                i = next(i for i in range(len(b)) if b[i] != want[i])
                e["bad"] = e["bytes"] + i
            e["bytes"] += len(b)
        for fd, (c, pp) in list(conns.items()):
            e = st[str(pp)]
            base = os.path.join(args.ctl, str(pp))
            if e["end"] == "open" and os.path.exists(base + ".rst"):
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                c.close()
                del conns[fd]
                e["end"] = "rst"
            elif e["end"] == "open" and os.path.exists(base + ".fin"):
                try:
                    c.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                e["end"] = "fin"  # reading on to the client's FIN
        now = time.monotonic()
        if now - last >= 0.02:
            put(args.state, st)
            last = now


def client(args):
    fam = socket.AF_INET6 if ":" in args.addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(10)
    try:
        s.connect((args.addr, args.port))
    except OSError as ex:
        put(args.state, {"error": "connect: %s" % ex, "end": "error"})
        return 1
    s.setblocking(False)
    lport = s.getsockname()[1]
    st = {"lport": lport, "sent": 0, "end": "open", "opts": False}
    put(args.state, st)
    t0 = time.monotonic()
    last = 0
    closing = False
    while True:
        now = time.monotonic()
        opts = os.path.exists(args.ctl + ".opts")
        if opts != st["opts"] and st["end"] == "open":
            try:
                s.setsockopt(OPTS[fam][0], OPTS[fam][1], OPTS[fam][2] if opts else b"")
                st["opts"] = opts
            except OSError as ex:
                st["opts_error"] = str(ex)
        if st["end"] == "open" and os.path.exists(args.ctl + ".rst"):
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
            st["end"] = "rst"
            put(args.state, st)
            return 0
        if st["end"] == "open" and os.path.exists(args.ctl + ".fin"):
            st["end"] = "fin"
        if st["end"] in ("fin", "peer_fin") and not closing:
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            closing = True
        if args.rate * (now - t0) - st["sent"] > 262144:  # no burst after a stall
            t0 = now - (st["sent"] + 262144) / args.rate
        want = st["end"] == "open" and args.rate * (now - t0) > st["sent"]
        r, w, _ = select.select([s], [s] if want else [], [], 0.005)
        if r:
            try:
                b = s.recv(1 << 16)
            except BlockingIOError:
                b = None
            except OSError as ex:
                st["end"] = "reset" if ex.errno == errno.ECONNRESET else "error: %s" % ex
                put(args.state, st)
                return 0 if st["end"] == "reset" else 1
            if b == b"":
                if closing:
                    s.close()
                    put(args.state, st)
                    return 0
                st["end"] = "peer_fin"
        if w and want:
            n = min(16384, int(args.rate * (now - t0)) - st["sent"])
            try:
                st["sent"] += s.send(pattern(st["sent"], max(n, 1)))
            except BlockingIOError:
                pass
            except OSError as ex:
                st["end"] = "reset" if ex.errno in (errno.ECONNRESET, errno.EPIPE) else "error: %s" % ex
                put(args.state, st)
                return 0 if st["end"] == "reset" else 1
        if now - last >= 0.02:
            put(args.state, st)
            last = now


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("server")
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--state", required=True)
    a.add_argument("--ctl", required=True)
    a = sub.add_parser("client")
    a.add_argument("--addr", required=True)
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--state", required=True)
    a.add_argument("--ctl", required=True)
    a.add_argument("--rate", type=float, default=2e6)
    args = ap.parse_args()
    return server(args) if args.cmd == "server" else client(args)


if __name__ == "__main__":
    sys.exit(main())
