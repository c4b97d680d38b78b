#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count the TCP frames an interface receives, by destination MAC, for S
seconds (AF_PACKET; what tcpdump would show, without tcpdump).

  ethcount.py IFACE SECONDS [TCP_PORT [times]]
Prints one JSON object: {"aa:bb:..": frames, ...}, then exits; with
"times", {"aa:bb:..": [frames, first, last], ...}, first and last the
kernel's receive times of that MAC's first and last frame (SO_TIMESTAMPNS,
seconds since the epoch, as `date +%s.%N`), and "garp": {"aa:bb:..": t},
the kernel's time (the same clock) of the first gratuitous ARP the
interface sent with that sender MAC (sender address = target address; the
tap sees it leave, PACKET_OUTGOING).  Prints "ready" on stderr once the
socket is bound.  With ETHCOUNT_AFTER_USR1=1 in the environment the S
seconds count from SIGUSR1 (300 s at most without it): for a capture
around a change whose moment a starved machine (the guest, at idle
priority beside the host's tests) cannot promise.
"""
import json
import os
import signal
import socket
import struct
import sys
import time

ifname, secs = sys.argv[1], float(sys.argv[2])
port = int(sys.argv[3]) if len(sys.argv) > 3 else None
times = len(sys.argv) > 4 and sys.argv[4] == "times"
after_usr1 = os.environ.get("ETHCOUNT_AFTER_USR1") == "1"
usr1_end = None  # SIGUSR1's time + secs


def usr1(_sig, _frame):
    global usr1_end
    usr1_end = time.time() + secs


if after_usr1:  # (before "ready": the signal may come at once)
    signal.signal(signal.SIGUSR1, usr1)
SO_TIMESTAMPNS = 35  # <asm-generic/socket.h>; SCM_TIMESTAMPNS the same
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
try:  # root: past rmem_max, so a slow reader drops nothing
    s.setsockopt(socket.SOL_SOCKET, 33, 1 << 25)  # SO_RCVBUFFORCE
except OSError:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind((ifname, 0))
s.settimeout(0.1)
print("ready", file=sys.stderr, flush=True)
counts = {}
garps = {}


def garp(frame, ts):
    """An outgoing gratuitous ARP (Ethernet/IPv4, sender = target address):
    its sender MAC's first time."""
    if len(frame) < 42 or struct.unpack("!H", frame[12:14])[0] != 0x0806:
        return
    if frame[14:20] != b"\x00\x01\x08\x00\x06\x04" or frame[28:32] != frame[38:42]:
        return
    garps.setdefault(":".join("%02x" % b for b in frame[22:28]), ts)


end = time.time() + (300 if after_usr1 else secs)
while time.time() < (usr1_end or end):
    try:
        frame, anc, _, addr = s.recvmsg(65535, socket.CMSG_SPACE(16))
    except socket.timeout:
        continue
    ts = time.time()
    for lvl, typ, data in anc:
        if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS:
            sec, nsec = struct.unpack("qq", data[:16])
            if abs(sec + nsec / 1e9 - ts) < 5:  # not a delivery time
                ts = sec + nsec / 1e9
    if times and addr[2] == socket.PACKET_OUTGOING:
        garp(frame, ts)
    if addr[2] == socket.PACKET_OUTGOING or len(frame) < 34:
        continue
    if struct.unpack("!H", frame[12:14])[0] != 0x0800 or frame[23] != 6:
        continue
    ihl = (frame[14] & 15) * 4
    if port is not None and len(frame) >= 14 + ihl + 4:
        sp, dp = struct.unpack("!HH", frame[14 + ihl:14 + ihl + 4])
        if port not in (sp, dp):
            continue
    mac = ":".join("%02x" % b for b in frame[0:6])
    if times:
        c = counts.setdefault(mac, [0, ts, ts])
        c[0] += 1
        c[1], c[2] = min(c[1], ts), max(c[2], ts)
    else:
        counts[mac] = counts.get(mac, 0) + 1
if times:
    counts["garp"] = garps
    # frames the socket dropped (PACKET_STATISTICS: packets, drops)
    counts["drops"] = struct.unpack("II", s.getsockopt(263, 6, 8))[1]
print(json.dumps(counts))
