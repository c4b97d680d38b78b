#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Test packets and flow-map entries for the XDP tests and benchmarks.

  pkt.py key FAM LADDR RADDR LPORT RPORT   a toe_flow_key as bpftool hex bytes
  pkt.py flow DECISION                      a toe_flow value as bpftool hex bytes
  pkt.py NAME FILE                          write packet NAME (see the table below)
"""
import socket, struct, sys
def hexs(b): return " ".join("%02x" % x for x in b)
def key(fam, l, r, lp, rp):
    af = socket.AF_INET if fam == 4 else socket.AF_INET6
    la = socket.inet_pton(af, l).ljust(16, b"\0")
    ra = socket.inet_pton(af, r).ljust(16, b"\0")
    return la + ra + struct.pack("<HHB3x", lp, rp, 2 if fam == 4 else 10)
def flow(decision):
    # start, cookie, acked, received, segs_in, segs_out, retrans, srtt, dev, rule,
    # decision, reason, direction, state, policy
    return struct.pack("<QQQQIIIIIIBBBBI", 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, decision, 0, 0, 1, 1)
def tcp(sp, dp, payload, doff=5):
    return struct.pack("!HHIIBBHHH", sp, dp, 1, 1, doff << 4, 0x10, 65535, 0, 0) + b"\0" * (4 * (doff - 5)) + payload
def v4(src, dst, l4, ihl=5, proto=6):
    tot = 4 * ihl + len(l4)
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, tot, 1, 0x4000, 64, proto, 0,
                    socket.inet_pton(socket.AF_INET, src), socket.inet_pton(socket.AF_INET, dst))
    return h + b"\x01" * (4 * ihl - 20) + l4 if ihl >= 5 else h + l4
def v6(src, dst, l4):
    return struct.pack("!IHBB16s16s", 6 << 28, len(l4), 6, 64,
                       socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)) + l4
def eth(proto, l3): return b"\x02" * 6 + b"\x04" * 6 + struct.pack("!H", proto) + l3
cmd = sys.argv[1]
if cmd == "key":  print(hexs(key(int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))))
elif cmd == "flow": print(hexs(flow(int(sys.argv[2]))))
else:
    out = open(sys.argv[2], "wb")
    pl = b"p" * 100
    pk = {
        "v4off": eth(0x0800, v4("10.0.0.2", "10.0.0.1", tcp(12345, 80, pl))),
        "v4host": eth(0x0800, v4("10.0.0.2", "10.0.0.1", tcp(12346, 80, pl))),
        "v4hostflow": eth(0x0800, v4("10.0.0.2", "10.0.0.1", tcp(12347, 80, pl))),
        "v4opts": eth(0x0800, v4("10.0.0.2", "10.0.0.1", tcp(12345, 80, pl), ihl=8)),
        "v6off": eth(0x86dd, v6("fd00::2", "fd00::1", tcp(4444, 443, pl, doff=8))),
        "badihl": eth(0x0800, v4("10.0.0.2", "10.0.0.1", tcp(12345, 80, pl), ihl=4)),
        "baddoff": eth(0x0800, v4("10.0.0.2", "10.0.0.1", tcp(12345, 80, pl, doff=3))),
        "trunc": eth(0x0800, v4("10.0.0.2", "10.0.0.1", tcp(12345, 80, pl)))[:40],
    }[cmd]
    out.write(pk)
