#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Canonical neighbour lists, to compare opentoe's toe_neigh map with the
kernel's table.  Reads JSON on stdin, prints sorted lines "DST LLADDR STATE".

  bpftool -j map dump pinned PIN/toe_neigh | neighmap.py map IFINDEX
  ip -j neigh show dev IFACE              | neighmap.py ip
  neighmap.py localkey ADDR       (a toe_local_addr key, as bpftool hex)

The map is decoded from bpftool's raw key/value bytes (struct toe_neigh_key
and struct toe_neigh in include/opentoe.h), not from toed's own output.
"""
import ipaddress
import json
import struct
import sys

NUD = {0x00: "NONE", 0x01: "INCOMPLETE", 0x02: "REACHABLE", 0x04: "STALE",
       0x08: "DELAY", 0x10: "PROBE", 0x20: "FAILED", 0x40: "NOARP",
       0x80: "PERMANENT"}


def raw(field):
    return bytes(int(b, 16) for b in field)


def from_map(entries, ifindex):
    out = []
    for e in entries:
        k, v = raw(e["key"]), raw(e["value"])
        idx, fam = struct.unpack_from("<IB", k, 0)
        if idx != ifindex:
            continue
        addr = k[8:12] if fam == 2 else k[8:24]
        dst = str(ipaddress.ip_address(addr))
        mac, state = v[0:6], struct.unpack_from("<H", v, 6)[0]
        has_mac = struct.unpack_from("<I", v, 20)[0]
        ll = ":".join("%02x" % b for b in mac) if has_mac else "-"
        out.append("%s %s %s" % (dst, ll, NUD.get(state, hex(state))))
    return out


def from_ip(entries):
    out = []
    for e in entries:
        dst = str(ipaddress.ip_address(e["dst"]))
        st = e.get("state", ["NONE"])
        out.append("%s %s %s" % (dst, e.get("lladdr", "-"), "|".join(st) or "NONE"))
    return out


def main():
    if sys.argv[1] == "localkey":   # struct toe_local_key as bpftool hex
        a = ipaddress.ip_address(sys.argv[2])
        k = struct.pack("B3x", 2 if a.version == 4 else 10) + a.packed.ljust(16, b"\0")
        print(" ".join("%02x" % b for b in k))
        return
    data = json.load(sys.stdin)
    if sys.argv[1] == "map":
        lines = from_map(data, int(sys.argv[2]))
    else:
        lines = from_ip(data)
    for line in sorted(lines):
        print(line)


if __name__ == "__main__":
    main()
