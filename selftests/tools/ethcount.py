#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count the TCP frames an interface receives, by destination MAC, for S
seconds (AF_PACKET; what tcpdump would show, without tcpdump).

  ethcount.py IFACE SECONDS [TCP_PORT]
Prints one JSON object: {"aa:bb:..": frames, ...}, then exits.  Prints
"ready" on stderr once the socket is bound.
"""
import json
import socket
import struct
import sys
import time

ifname, secs = sys.argv[1], float(sys.argv[2])
port = int(sys.argv[3]) if len(sys.argv) > 3 else None
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
s.bind((ifname, 0))
s.settimeout(0.1)
print("ready", file=sys.stderr, flush=True)
counts = {}
end = time.time() + secs
while time.time() < end:
    try:
        frame, addr = s.recvfrom(65535)
    except socket.timeout:
        continue
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
    counts[mac] = counts.get(mac, 0) + 1
print(json.dumps(counts))
