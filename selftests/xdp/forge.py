#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Forged TCP handshakes, floods and counters for the forward path's
admission test (test_fwd_admission.sh).  Frames are sent from inside a test
namespace, on its interface, to the router's MAC.

handshake IFACE RMAC STEPS SRC SPORT DST DPORT [BYTES]
        send, in order, the steps of STEPS (letters): s = SYN from SRC to DST,
        a = SYN-ACK in DST's name (to SRC, acking the SYN), k = ACK from SRC,
        d = BYTES of data from SRC in 1000-byte segments (scapy)
synack IFACE RMAC SRC SPORT DST DPORT ISN
        one SYN-ACK from SRC to DST acking ISN (the other side's part of a
        forged handshake)
rst IFACE RMAC SRC SPORT DST DPORT SEQ
        an RST and an RST-ACK from SRC to DST, sequence number SEQ (a
        forgery in SRC's name: sent on the other side's interface)
flood IFACE RMAC N NET DST DPORT
        N SYNs to DST:DPORT from random addresses NET.100-NET.250 and ports,
        through a raw packet socket; prints how many were sent and how long
        it took
count IFACE PORT SECONDS [FLAG]
        payload bytes of TCP segments to PORT received on IFACE during
        SECONDS (a packet socket); prints the number.  With FLAG (a path):
        creates FLAG.ready once it listens, and counts until 0.5 s after
        FLAG exists (the test's forgeries are sent), SECONDS at most
csum IFACE PORT SECONDS
        TCP segments from or to PORT received on IFACE during SECONDS,
        whose checksum field is right: the whole checksum, or (a
        CHECKSUM_PARTIAL skb, TSO on a veth: the sender's stack leaves the
        rest to the device) the sum of their own pseudo-header; prints
        "GOOD BAD"
odd IFACE RMAC KIND N SRC SPORT DST DPORT MARK
        N data segments (payload MARK) of the flow SRC:SPORT -> DST:DPORT
        that the stack would not route, of KIND: otherhost (to a MAC that
        is not the router's, RMAC), vlan (to RMAC, 802.1Q-tagged with VLAN
        999), badcsum (to RMAC, the IPv4 header checksum wrong), rst (an RST
        to a MAC that is not the router's)
mark IFACE MARK SECONDS FLAG
        frames containing MARK received on IFACE during SECONDS (a packet
        socket, every ethertype): creates FLAG.ready once it listens, and
        counts until 0.5 s after FLAG exists; prints the number
rx IFACE INTERVAL SECONDS
        every INTERVAL seconds: "time rx_bytes" of IFACE from /proc/net/dev
        (this namespace's), time as time.time()
rxtap IFACE INTERVAL SECONDS
        the same from a packet socket: "time bytes" of the IPv4 datagrams
        received on IFACE so far (a bpf_redirect_peer into IFACE is not in
        its statistics before Linux 6.8), each counted at the time the
        kernel stamped it (SO_TIMESTAMPNS), not when this sampler, maybe
        kept off its CPU on a loaded machine, read it: a line for each
        INTERVAL of that clock (the wall clock, as time.time())
"""
import os
import random
import socket
import struct
import sys
import time

ISN = 1000


def csum(b):
    if len(b) % 2:
        b += b"\0"
    t = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while t >> 16:
        t = (t & 0xffff) + (t >> 16)
    return ~t & 0xffff


def mac(m):
    return bytes(int(x, 16) for x in m.split(":"))


def frame(smac, dmac, src, dst, sp, dp, flags, seq, ack, payload=b""):
    s, d = socket.inet_aton(src), socket.inet_aton(dst)
    tcp = struct.pack("!HHIIBBHHH", sp, dp, seq, ack, 5 << 4, flags, 65535, 0, 0) + payload
    c = csum(s + d + struct.pack("!BBH", 0, 6, len(tcp)) + tcp)
    tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0x4000, 64, 6, 0, s, d)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return dmac + smac + b"\x08\x00" + ip + tcp


def sock(iface):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    return s, s.getsockname()[4]


def handshake(iface, rmac, steps, src, sport, dst, dport, nbytes=0):
    # scapy builds and sends them (sendp), as an attacker's tool would
    from scapy.all import Ether, IP, TCP, Raw, sendp, conf, get_if_hwaddr
    conf.verb = 0
    e = Ether(src=get_if_hwaddr(iface), dst=rmac)
    sport, dport, nbytes = int(sport), int(dport), int(nbytes)
    seq = ISN + 1
    for st in steps:
        if st == "s":
            p = e / IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags="S", seq=ISN)
        elif st == "a":
            p = e / IP(src=dst, dst=src) / TCP(sport=dport, dport=sport, flags="SA", seq=5000, ack=ISN + 1)
        elif st == "k":
            p = e / IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags="A", seq=seq, ack=5001)
        elif st == "d":
            ps = []
            for off in range(0, nbytes, 1000):
                n = min(1000, nbytes - off)
                ps.append(e / IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags="PA",
                                                         seq=seq + off, ack=5001) / Raw(b"x" * n))
            p = ps
        else:
            raise SystemExit("unknown step " + st)
        sendp(p, iface=iface)
        time.sleep(0.05)


def synack(iface, rmac, src, sport, dst, dport, isn):
    s, smac = sock(iface)
    s.send(frame(smac, mac(rmac), src, dst, int(sport), int(dport), 0x12, 5000, int(isn) + 1))


def rst(iface, rmac, src, sport, dst, dport, seq):
    s, smac = sock(iface)
    for fl in (0x04, 0x14):
        s.send(frame(smac, mac(rmac), src, dst, int(sport), int(dport), fl, int(seq), 0))


def flood(iface, rmac, n, net, dst, dport):
    s, smac = sock(iface)
    dm, n, dport = mac(rmac), int(n), int(dport)
    rnd = random.Random(7)
    t0, sent = time.monotonic(), 0
    for _ in range(n):
        src = "%s.%d" % (net, rnd.randint(100, 250))
        f = frame(smac, dm, src, dst, rnd.randint(1024, 65000), dport, 0x02, rnd.getrandbits(32), 0)
        for _ in range(1000):
            try:
                s.send(f)
                sent += 1
                break
            except OSError:
                time.sleep(0.0005)  # the queue is full: a moment, then again
    print("%d %.2f" % (sent, time.monotonic() - t0))


def odd(iface, rmac, kind, n, src, sport, dst, dport, mark):
    s, smac = sock(iface)
    other = mac("02:00:00:00:00:77")
    for i in range(int(n)):
        seq = 1000000 + i * 100
        if kind == "rst":
            f = frame(smac, other, src, dst, int(sport), int(dport), 0x04, seq, 0)
        else:
            f = frame(smac, other if kind == "otherhost" else mac(rmac), src, dst,
                      int(sport), int(dport), 0x18, seq, 0, mark.encode())
        if kind == "vlan":
            f = f[:12] + b"\x81\x00" + struct.pack("!H", 999) + f[12:]
        elif kind == "badcsum":
            f = f[:24] + bytes([f[24] ^ 0x5a]) + f[25:]  # the IPv4 header checksum's first byte
        elif kind not in ("otherhost", "rst"):
            raise SystemExit("unknown kind " + kind)
        s.send(f)
        time.sleep(0.01)


def received(iface, proto, seconds, flag=None):
    """The frames received on iface (ethertype proto) during seconds; with
    flag (a path): FLAG.ready made once listening, and 0.5 s more once FLAG
    exists."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(proto))
    s.bind((iface, 0))
    s.settimeout(0.05)
    end = time.monotonic() + float(seconds)
    if flag:
        open(flag + ".ready", "w").close()
    while time.monotonic() < end:
        if flag and os.path.exists(flag):
            end, flag = min(end, time.monotonic() + 0.5), None
        try:
            b, addr = s.recvfrom(65535)
        except socket.timeout:
            continue
        if addr[2] != socket.PACKET_OUTGOING:
            yield b


def mark(iface, mk, seconds, flag):
    mk = mk.encode()
    print(sum(1 for b in received(iface, 0x0003, seconds, flag) if mk in b))


def count(iface, port, seconds, flag=None):
    port, total = int(port), 0
    for b in received(iface, 0x0800, seconds, flag):
        if len(b) < 34 or b[23] != 6:
            continue
        ihl = (b[14] & 15) * 4
        tot = struct.unpack("!H", b[16:18])[0]
        t = 14 + ihl
        if len(b) < t + 20 or struct.unpack("!H", b[t + 2:t + 4])[0] != port:
            continue
        total += tot - ihl - (b[t + 12] >> 4) * 4
    print(total)


def csum_ok(b, t, tcplen, six=False):
    """The segment at b[t:] (tcplen bytes) has a right checksum field
    (six: of an IPv6 frame, whose pseudo-header has its 16-byte addresses)."""
    if six:
        pseudo = b[22:54] + struct.pack("!IxxxB", tcplen, 6)
    else:
        pseudo = b[26:34] + struct.pack("!BBH", 0, 6, tcplen)
    if csum(pseudo + b[t:t + tcplen]) in (0, 0xffff):
        return True
    field = struct.unpack("!H", b[t + 16:t + 18])[0]
    return field == (~csum(pseudo)) & 0xffff


def csum_check(iface, port, seconds):
    """TCP segments to or from PORT on IFACE for SECONDS, IPv4 and IPv6
    (no extension headers): how many with a right checksum field, how
    many with a wrong one."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.bind((iface, 0))
    s.settimeout(0.1)
    port, end, good, bad = int(port), time.monotonic() + float(seconds), 0, 0
    while time.monotonic() < end:
        try:
            b, addr = s.recvfrom(70000)
        except socket.timeout:
            continue
        six = b[12:14] == b"\x86\xdd"
        if six:
            if len(b) < 74 or b[20] != 6:
                continue
            t, l4 = 54, struct.unpack("!H", b[18:20])[0]
            if len(b) < t + l4 or port not in struct.unpack("!HH", b[t:t + 4]):
                continue
        else:
            if b[12:14] != b"\x08\x00" or len(b) < 34 or b[23] != 6:
                continue
            ihl = (b[14] & 15) * 4
            t, tot = 14 + ihl, struct.unpack("!H", b[16:18])[0]
            l4 = tot - ihl
            if len(b) < 14 + tot or port not in struct.unpack("!HH", b[t:t + 4]):
                continue
        if csum_ok(b, t, l4, six):
            good += 1
        else:
            bad += 1
    print(good, bad)


def rx(iface, interval, seconds):
    end = time.time() + float(seconds)
    while time.time() < end:
        with open("/proc/net/dev") as f:
            for line in f:
                name, _, rest = line.partition(":")
                if name.strip() == iface:
                    print("%.4f %s" % (time.time(), rest.split()[0]), flush=True)
        time.sleep(float(interval))


SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def rxtap(iface, interval, seconds):
    """As rx, from a packet socket: bytes of IPv4 frames received on iface
    (a redirect_peer into it does not count in its statistics before 6.8),
    binned by the kernel's time stamp of each frame (the time it is read if
    it has none), so a sampler that reads late still puts each frame at the
    time it arrived."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.bind((iface, 0))
    step = float(interval)
    s.settimeout(step)
    end, total = time.time() + float(seconds), 0
    nxt = time.time()

    def upto(t):  # a line for every bin that ended by t
        nonlocal nxt
        while nxt <= t:
            print("%.4f %d" % (nxt, total), flush=True)
            nxt += step
    while time.time() < end:
        try:
            b, anc, _, addr = s.recvmsg(100, socket.CMSG_SPACE(16))
        except socket.timeout:
            upto(time.time())  # nothing queued: every frame until now is in
            continue
        ts = time.time()
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
                sec, nsec = struct.unpack("qq", data[:16])
                ts = sec + nsec / 1e9
        upto(ts)
        if addr[2] != socket.PACKET_OUTGOING and len(b) >= 18:
            total += struct.unpack("!H", b[16:18])[0]


if __name__ == "__main__":
    cmds = {"handshake": handshake, "synack": synack, "rst": rst, "flood": flood, "count": count, "csum": csum_check,
            "rx": rx, "rxtap": rxtap, "odd": odd, "mark": mark}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        raise SystemExit(__doc__)
    cmds[sys.argv[1]](*sys.argv[2:])
