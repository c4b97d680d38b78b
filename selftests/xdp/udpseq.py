#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Paced UDP streams with sequence numbers, checked at the far end
(the routed UDP tests, issue 48).

  udpseq.py server --port P [--port P ...]
      Answers on every port (IPv4 and IPv6): each datagram is checked (its
      payload is a function of its sequence number) and echoed back as a
      16-byte ack (its header: magic, flow id, sequence number), so conntrack sees the flow's reply and the stack
      forwards it both ways.  Prints "ready" once bound.
  udpseq.py client --addr A --port P [--rate PPS] [--size N]
                   [--seconds S | --stop FILE | --count N] [--lport-file F]
      Sends datagrams 0, 1, 2, ... of N bytes at PPS a second until S
      seconds passed, FILE exists or N were sent, then asks the server for what it got
      from this client and prints one JSON line: lport, sent, acked (echoes
      received), and the server's count of datagrams received, duplicates,
      bad payloads, out-of-order arrivals and the highest sequence number.
"""
import argparse
import json
import os
import random
import select
import socket
import struct
import sys
import time

MAGIC = 0x55445053  # "UDPS"
END = 0xFFFFFFFFFFFFFFFF
HDR = struct.Struct("!IIQ")  # magic, flow id, sequence number
PATTERN = bytes(range(256)) * 64


def payload(fid, seq, size):
    """Datagram seq of flow fid, size bytes: the header, then the pattern
    from seq."""
    n = max(size - HDR.size, 0)
    o = seq % 256
    return HDR.pack(MAGIC, fid, seq) + PATTERN[o:o + n]


def serve(ports):
    socks = []
    for p in ports:
        s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        # 16 MiB, past net.core.rmem_max (SO_RCVBUF is capped there, at
        # 208 KiB by default: a server slowed by a loaded machine dropped
        # a port's datagrams at its own socket); as root, SO_RCVBUFFORCE
        try:
            s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), 16 << 20)
        except OSError:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
        s.bind(("::", p))
        socks.append(s)
    peers = {}
    print("ready", flush=True)
    while True:
        r, _, _ = select.select(socks, [], [])
        for s in r:
            d, a = s.recvfrom(65535)
            # a flow by its id too: a later flow may get the same port
            fid = HDR.unpack_from(d)[1] if len(d) >= HDR.size else None
            st = peers.setdefault((a[0], a[1], fid), {"received": 0, "dup": 0, "bad": 0,
                                                      "reordered": 0, "max": -1, "seen": set()})
            if len(d) < HDR.size:
                st["bad"] += 1
                continue
            magic, fid, seq = HDR.unpack_from(d)
            if magic != MAGIC:
                st["bad"] += 1
                continue
            if seq == END:
                rep = {k: v for k, v in st.items() if k != "seen"}
                s.sendto(json.dumps(rep).encode(), a)
                continue
            if seq in st["seen"]:
                st["dup"] += 1
            else:
                st["seen"].add(seq)
                st["received"] += 1
            if d != payload(fid, seq, len(d)):
                st["bad"] += 1
            if seq < st["max"]:
                st["reordered"] += 1
            st["max"] = max(st["max"], seq)
            s.sendto(HDR.pack(MAGIC, fid, seq), a)


def drain(s):
    """The echoes waiting on s (non-blocking): how many."""
    n = 0
    try:
        while True:
            s.recv(65535)
            n += 1
    except (BlockingIOError, ConnectionRefusedError):
        return n


CATCHUP = 4  # the most datagrams a client sends back to back


def client(a):
    fam = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.connect((a.addr, a.port))
    s.setblocking(False)
    lport = s.getsockname()[1]
    if a.lport_file:
        with open(a.lport_file + ".tmp", "w") as f:
            f.write("%d\n" % lport)
        os.rename(a.lport_file + ".tmp", a.lport_file)
    sent = acked = 0
    fid = random.getrandbits(32)
    gap = 1.0 / a.rate
    t0 = time.monotonic()
    nxt = t0
    while True:
        now = time.monotonic()
        if ((a.seconds and now - t0 >= a.seconds) or (a.stop and os.path.exists(a.stop))
                or (a.count and sent >= a.count)):
            break
        if now >= nxt:
            try:
                s.send(payload(fid, sent, a.size))
                sent += 1
            except (BlockingIOError, ConnectionRefusedError):
                pass  # sent again as the next number: a gap the server sees
            nxt += gap
            # Behind by more than a few datagrams (the process was not
            # scheduled): the rest of the gap is skipped, not sent as a
            # burst.  A stall of 150 ms sent 150 datagrams at once from
            # each of seven clients, and veth's XDP ring (256 frames)
            # dropped them before the router saw them (c0's tx_dropped):
            # a loss the test would blame on the path under test.
            if nxt < now - CATCHUP * gap:
                nxt = now
        acked += drain(s)
        time.sleep(max(0.0, min(nxt - time.monotonic(), 0.005)))
    time.sleep(0.3)  # the last echoes
    acked += drain(s)
    s.setblocking(True)
    s.settimeout(0.5)
    rep = None
    for _ in range(10):  # the report: asked again if lost
        s.send(HDR.pack(MAGIC, fid, END))
        try:
            while rep is None:
                d = s.recv(65535)
                if d[:1] == b"{":
                    rep = json.loads(d)
                else:
                    acked += 1  # an echo later than the 0.3 s (a loaded machine)
        except (socket.timeout, ConnectionRefusedError):
            continue
        break
    out = {"lport": lport, "sent": sent, "acked": acked, "server": rep}
    print(json.dumps(out), flush=True)
    return 0 if rep is not None else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sv = sub.add_parser("server")
    sv.add_argument("--port", type=int, action="append", required=True)
    cl = sub.add_parser("client")
    cl.add_argument("--addr", required=True)
    cl.add_argument("--port", type=int, required=True)
    cl.add_argument("--rate", type=float, default=1000)
    cl.add_argument("--size", type=int, default=1200)
    cl.add_argument("--seconds", type=float, default=0)
    cl.add_argument("--stop")
    cl.add_argument("--count", type=int, default=0)
    cl.add_argument("--lport-file")
    a = ap.parse_args()
    if a.cmd == "server":
        serve(a.port)
        return 0
    if a.size < HDR.size:
        ap.error("--size: at least %d bytes" % HDR.size)
    return client(a)


if __name__ == "__main__":
    sys.exit(main())
