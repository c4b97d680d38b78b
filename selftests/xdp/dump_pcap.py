#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""toectl dump's tests: a known transfer, and what a pcap file holds.

send --addr A --port P --bytes N [--prelude N] [--seed S]
        connect, send a prelude (the packets the stack forwards while the
        flow is admitted), wait, send N bytes made from the seed, wait
        for them to be acknowledged (the FIN goes to the stack), close;
        print {"lport": N, "bytes": N, "sha256": "..."} (of the N bytes)
check PCAP --port P --bytes N --sha256 H
        the TCP payload sent to port P, reassembled by sequence number
        from the frames of the pcap file (plain struct parsing: pcap with
        micro- or nanosecond timestamps, Ethernet, IPv4 or IPv6): print
        {"frames": N, "frames_port": N, "stream": N, "holes": N,
         "sha_ok": bool}: sha_ok if the stream ends with N bytes of hash H
count PCAP [--port P] [--equal FILE]
        frames of the file (to or from port P; byte for byte FILE's
        content, whole: caplen = len); {"frames": N}
"""
import argparse
import fcntl
import hashlib
import json
import random
import socket
import struct
import sys
import termios
import time


def send(args):
    data = random.Random(args.seed).randbytes(args.bytes)
    s = socket.create_connection((args.addr, args.port), timeout=5)
    s.settimeout(30)
    lport = s.getsockname()[1]
    s.sendall(b"p" * args.prelude)
    time.sleep(0.3)  # the flow admitted: what follows is the fast path's
    s.sendall(data)
    # every byte acknowledged before the FIN: a segment with FIN set goes
    # to the stack (it ends the fast path), so no data may ride on it
    for _ in range(500):
        if not struct.unpack("i", fcntl.ioctl(s, termios.TIOCOUTQ, b"\0" * 4))[0]:
            break
        time.sleep(0.01)
    s.shutdown(socket.SHUT_WR)
    while s.recv(65536):
        pass
    s.close()
    print(json.dumps({"lport": lport, "bytes": len(data),
                      "sha256": hashlib.sha256(data).hexdigest()}))
    return 0


def frames(path):
    """(caplen, origlen, bytes) of each record of the pcap file."""
    with open(path, "rb") as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            raise ValueError("no pcap header")
        magic = struct.unpack("<I", hdr[:4])[0]
        if magic not in (0xa1b2c3d4, 0xa1b23c4d):
            raise ValueError("bad pcap magic %#x" % magic)
        if struct.unpack("<I", hdr[20:24])[0] != 1:
            raise ValueError("link type is not Ethernet")
        while True:
            rh = f.read(16)
            if len(rh) < 16:
                return
            _, _, incl, orig = struct.unpack("<IIII", rh)
            yield incl, orig, f.read(incl)


def tcp_of(fr):
    """(sport, dport, seq, payload) of an Ethernet frame, or None."""
    off, et = 14, struct.unpack("!H", fr[12:14])[0]
    while et in (0x8100, 0x88a8):
        et, off = struct.unpack("!H", fr[off + 2:off + 4])[0], off + 4
    if et == 0x0800:
        ihl = (fr[off] & 15) * 4
        tot, proto = struct.unpack("!H", fr[off + 2:off + 4])[0], fr[off + 9]
        end, l4 = off + tot, off + ihl
    elif et == 0x86dd:
        plen, proto = struct.unpack("!H", fr[off + 4:off + 6])[0], fr[off + 6]
        end, l4 = off + 40 + plen, off + 40
    else:
        return None
    if proto != 6:
        return None
    sport, dport, seq = struct.unpack("!HHI", fr[l4:l4 + 8])
    doff = (fr[l4 + 12] >> 4) * 4
    return sport, dport, seq, fr[l4 + doff:end]


def reassemble(segs):
    """The stream from the lowest sequence number, and its holes."""
    if not segs:
        return b"", 0
    base = min(s for s, _ in segs)
    buf, holes, have = bytearray(), 0, 0
    for seq, pl in sorted(segs):
        rel = (seq - base) & 0xffffffff
        if rel > have:
            holes += 1
            buf.extend(b"\0" * (rel - have))
            have = rel
        if rel + len(pl) > have:
            buf.extend(pl[have - rel:])
            have = rel + len(pl)
    return bytes(buf), holes


def check(args):
    n = nport = 0
    segs = []
    for incl, orig, fr in frames(args.pcap):
        n += 1
        t = tcp_of(fr) if incl == orig else None
        if t and t[1] == args.port:
            nport += 1
            if t[3]:
                segs.append((t[2], t[3]))
    stream, holes = reassemble(segs)
    tail = stream[-args.bytes:] if args.bytes else b""
    ok = len(stream) >= args.bytes and hashlib.sha256(tail).hexdigest() == args.sha256
    print(json.dumps({"frames": n, "frames_port": nport, "stream": len(stream),
                      "holes": holes, "sha_ok": ok}))
    return 0


def count(args):
    n = 0
    want = open(args.equal, "rb").read() if args.equal else None
    for incl, orig, fr in frames(args.pcap):
        t = tcp_of(fr)
        if want is not None and (fr != want or incl != orig):
            continue
        if args.port is None or (t and args.port in (t[0], t[1])):
            n += 1
    print(json.dumps({"frames": n}))
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("send")
    p.add_argument("--addr", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--bytes", type=int, required=True)
    p.add_argument("--prelude", type=int, default=1000)
    p.add_argument("--seed", type=int, default=35)
    p = sub.add_parser("check")
    p.add_argument("pcap")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--bytes", type=int, required=True)
    p.add_argument("--sha256", required=True)
    p = sub.add_parser("count")
    p.add_argument("pcap")
    p.add_argument("--port", type=int)
    p.add_argument("--equal")
    args = ap.parse_args()
    return {"send": send, "check": check, "count": count}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
