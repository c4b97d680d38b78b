#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Test packets and flow-map entries for the XDP tests and benchmarks.

  pkt.py key FAM LADDR RADDR LPORT RPORT [NETNS]
                          a toe_flow_key as bpftool hex bytes; NETNS the
                          namespace cookie, default this process's (XDP's
                          test run keys a packet with its caller's)
  pkt.py flow DECISION                      a toe_flow value as bpftool hex bytes
  pkt.py filter FAM LADDR RADDR LPORT RPORT [NETNS] "key hex .. value hex ..": the flow's
                          toe_flow_filter slot with loaded = 1, for bpftool map
                          update (a toe_flows record written by hand with
                          decision offload needs it, or XDP skips the lookup)
  pkt.py NAME FILE                          write packet NAME (see the table below)

Forward path (XDP steering):
  pkt.py tcp FILE FAM SRC DST SPORT DPORT FLAGS SEQ ACK TTL LEN [DMAC SMAC]
                          a TCP packet; FLAGS letters of SAFRP (or "-");
                          LEN payload bytes; IPv4 header checksum computed
  pkt.py tcpext FILE FAM ...       the same with IPv4 options (3 words of NOP,
                          IHL 8, checksum computed) or an IPv6 hop-by-hop
                          header (8 bytes, PadN) before TCP
  pkt.py ctx FILE IFINDEX LEN      an xdp_md for bpftool prog run ctx_in
  pkt.py skbctx FILE IN OUT        a __sk_buff for bpftool prog run ctx_in of a
                                   tc program: ingress_ifindex IN, ifindex OUT
                                   (as if the stack forwarded it from IN out of OUT)
  pkt.py gen GEN LEASE_NS [RT_GEN RT_NETNS]  a toe_fwd_gen value as bpftool hex bytes
  pkt.py nkey IFINDEX FAM ADDR      a toe_neigh_key as bpftool hex bytes
  pkt.py nval MAC [STATE [HAS_MAC]] a toe_neigh value (STATE default 0x02,
                                    NUD_REACHABLE; HAS_MAC default 1)
  pkt.py nbatch MAP LINKS           `ip -j neigh show` (stdin) as bpftool batch
                                    lines: a `map update pinned MAP` of nkey
                                    and nval for each entry with a MAC (LINKS:
                                    `ip -j link show`, for the ifindexes; the
                                    NUD state's bits as the kernel's)
  pkt.py ckey FAM A AP B BP [PROTO] toe_fwd's canonical key of a flow (netns 0;
                                    PROTO 17: a UDP flow's)
  pkt.py udp FILE FAM SRC DST SP DP TTL N [VARIANT]
                                    a UDP frame (VARIANT good, badlen, short,
                                    zerocsum, frag)
  pkt.py show FILE                  JSON: MACs, TTL, IPv4 checksum ok, flags
"""
import socket, struct, sys
def hexs(b): return " ".join("%02x" % x for x in b)
SO_NETNS_COOKIE = 71
def own_netns():
    with socket.socket() as s:
        return struct.unpack("=Q", s.getsockopt(socket.SOL_SOCKET, SO_NETNS_COOKIE, 8))[0]
def key(fam, l, r, lp, rp, ns):
    af = socket.AF_INET if fam == 4 else socket.AF_INET6
    la = socket.inet_pton(af, l).ljust(16, b"\0")
    ra = socket.inet_pton(af, r).ljust(16, b"\0")
    return la + ra + struct.pack("<HHB3xQ", lp, rp, 2 if fam == 4 else 10, ns)
def filter_slot(fam, l, r, lp, rp, ns):
    # include/opentoe.h toe_filter_slot(): the key's address words (native
    # order, as the datapath loads them) and ports, folded, Fibonacci
    # hashing (not the namespace)
    k = key(fam, l, r, lp, rp, ns)
    h = 0
    for w in struct.unpack("=8I", k[:32]):
        h ^= w
    h ^= (lp << 16) | rp
    return ((h * 0x9e3779b1) & 0xffffffff) >> 16
def flow(decision):
    # start, cookie, acked, received, segs_in, segs_out, retrans, srtt, dev, rule,
    # decision, reason, direction, state, policy, xdp_packets, xdp_bytes, netns_ino
    return struct.pack("<QQQQIIIIIIBBBBIQQQ", 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, decision, 0, 0, 1, 1, 0, 0, 0)
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
def v4tot(h, tot): return h[:2] + struct.pack("!H", tot) + h[4:]
def v4frag(h): return h[:6] + struct.pack("!H", 0x2000) + h[8:]  # MF set
def v6ext(src, dst, nhs, l4):
    # extension headers of 8 bytes each, next header nhs[0] first (60:
    # destination options, 0: hop-by-hop), the last one's next header TCP
    ext = b"".join(bytes([nh, 0, 1, 4, 0, 0, 0, 0]) for nh in nhs[1:] + [6])
    return struct.pack("!IHBB16s16s", 6 << 28, len(ext) + len(l4), nhs[0], 64,
                       socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)) + ext + l4
def eth(proto, l3): return b"\x02" * 6 + b"\x04" * 6 + struct.pack("!H", proto) + l3
def csum(b):
    if len(b) % 2: b += b"\0"
    t = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while t >> 16: t = (t & 0xffff) + (t >> 16)
    return ~t & 0xffff
def mac(m): return bytes(int(x, 16) for x in m.split(":"))
def tcpf(fam, src, dst, sp, dp, flags, seq, ack, ttl, n, dmac="02:00:00:00:00:01", smac="02:00:00:00:00:02",
         ext=False):
    fl = sum({"F": 1, "S": 2, "R": 4, "P": 8, "A": 16}[c] for c in flags if c != "-")
    l4 = struct.pack("!HHIIBBHHH", sp, dp, seq, ack, 5 << 4, fl, 65535, 0, 0) + b"d" * n
    if fam == 4:
        opts = b"\x01" * 12 if ext else b""  # NOPs
        h = bytearray(struct.pack("!BBHHHBBH4s4s", 0x40 | (5 + len(opts) // 4), 0, 20 + len(opts) + len(l4),
                                  1, 0x4000, ttl, 6, 0,
                                  socket.inet_pton(socket.AF_INET, src), socket.inet_pton(socket.AF_INET, dst)) + opts)
        h[10:12] = struct.pack("!H", csum(bytes(h)))
        l3, proto = bytes(h) + l4, 0x0800
    else:
        # hop-by-hop: next header TCP, length 0 (8 bytes), PadN of 4
        hbh = bytes([6, 0, 1, 4, 0, 0, 0, 0]) if ext else b""
        l3 = struct.pack("!IHBB16s16s", 6 << 28, len(hbh) + len(l4), 0 if ext else 6, ttl,
                         socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)) + hbh + l4
        proto = 0x86dd
    return mac(dmac) + mac(smac) + struct.pack("!H", proto) + l3
def ep(fam, a):
    return socket.inet_pton(socket.AF_INET if fam == 4 else socket.AF_INET6, a)
cmd = sys.argv[1]
def keyargs():
    a = sys.argv[2:]
    ns = int(a[5], 0) if len(a) > 5 else own_netns()
    return int(a[0]), a[1], a[2], int(a[3]), int(a[4]), ns
if cmd == "key":  print(hexs(key(*keyargs())))
elif cmd == "flow": print(hexs(flow(int(sys.argv[2]))))
elif cmd == "filter":
    slot = filter_slot(*keyargs())
    print("key hex", hexs(struct.pack("=I", slot)), "value hex", hexs(struct.pack("=II", 0, 1)))
elif cmd in ("tcp", "tcpext"):
    a = sys.argv[3:]
    open(sys.argv[2], "wb").write(tcpf(int(a[0]), a[1], a[2], int(a[3]), int(a[4]), a[5], int(a[6]), int(a[7]),
                                       int(a[8]), int(a[9]), *a[10:12], ext=cmd == "tcpext"))
elif cmd == "ctx":
    open(sys.argv[2], "wb").write(struct.pack("<6I", 0, int(sys.argv[4]), 0, int(sys.argv[3]), 0, 0))
elif cmd == "skbctx":
    # len, pkt_type, mark, queue_mapping, protocol, vlan_*, priority: 0; then
    # ingress_ifindex, ifindex (struct __sk_buff)
    open(sys.argv[2], "wb").write(struct.pack("<9III", *([0] * 9), int(sys.argv[3]), int(sys.argv[4])))
elif cmd == "gen":
    # lease_ns, gen, rt_gen, rt_netns (rt_gen 0 unless given: no route
    # cached, for tests that write toe_neigh with no toed to bump it)
    rt = [int(a) for a in sys.argv[4:6]] + [0, 0]
    print(hexs(struct.pack("<QIIQ", int(sys.argv[3]), int(sys.argv[2]), rt[0], rt[1])))
elif cmd == "netns":
    # the cookie of the namespace this runs in (toe_fwd_gen.rt_netns, toe_ifaces)
    print(own_netns())
elif cmd == "nkey":
    fam = int(sys.argv[3])
    print(hexs(struct.pack("<IB3x", int(sys.argv[2]), 2 if fam == 4 else 10) + ep(fam, sys.argv[4]).ljust(16, b"\0")))
elif cmd == "nval":
    st = int(sys.argv[3], 0) if len(sys.argv) > 3 else 0x02
    has = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    print(hexs(mac(sys.argv[2]) + struct.pack("<HQII", st, 1, 0, has)))
elif cmd == "nbatch":
    import json
    idx = {l["ifname"]: l["ifindex"] for l in json.loads(sys.argv[3])}
    bits = {"REACHABLE": 0x02, "STALE": 0x04, "DELAY": 0x08, "PROBE": 0x10, "PERMANENT": 0x80}
    for n in json.load(sys.stdin):
        if not n.get("lladdr"):
            continue
        fam = 6 if ":" in n["dst"] else 4
        k = struct.pack("<IB3x", idx[n["dev"]], 2 if fam == 4 else 10) + ep(fam, n["dst"]).ljust(16, b"\0")
        st = sum(bits.get(x, 0) for x in n.get("state", []))
        v = mac(n["lladdr"]) + struct.pack("<HQII", st, 1, 0, 1)
        print("map update pinned %s key hex %s value hex %s" % (sys.argv[2], hexs(k), hexs(v)))
elif cmd == "ckey":
    fam = int(sys.argv[2])
    a, ap, b, bp = ep(fam, sys.argv[3]), int(sys.argv[4]), ep(fam, sys.argv[5]), int(sys.argv[6])
    if (b, bp) < (a, ap): a, ap, b, bp = b, bp, a, ap
    # routed flows: netns 0 (include/opentoe.h); proto 17 for UDP's
    pr = int(sys.argv[7]) if len(sys.argv) > 7 else 0
    print(hexs(a.ljust(16, b"\0") + b.ljust(16, b"\0") + struct.pack("<HHBB2xQ", ap, bp, 2 if fam == 4 else 10, pr, 0)))
elif cmd == "udp":
    # udp FILE FAM SRC DST SP DP TTL N [good|badlen|short|zerocsum|frag]:
    # a UDP datagram of N payload bytes, its checksum right (zerocsum: 0);
    # badlen: its length field 4 more than the datagram's; short: the
    # frame cut inside the UDP header; frag: IPv4, MF set
    fam, src, dst, sp, dp, ttl, n = (int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6]),
                                     int(sys.argv[7]), int(sys.argv[8]), int(sys.argv[9]))
    var = sys.argv[10] if len(sys.argv) > 10 else "good"
    pl = bytes((i * 7) & 0xff for i in range(n))
    ulen = 8 + n + (4 if var == "badlen" else 0)
    pseudo = (ep(fam, src) + ep(fam, dst) + (struct.pack("!BBH", 0, 17, 8 + n) if fam == 4
                                             else struct.pack("!IxxxB", 8 + n, 17)))
    c = 0 if var == "zerocsum" else (csum(pseudo + struct.pack("!HHHH", sp, dp, 8 + n, 0) + pl) or 0xffff)
    l4 = struct.pack("!HHHH", sp, dp, ulen, c) + pl
    if fam == 4:
        h = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, 0x2000 if var == "frag" else 0x4000,
                                  ttl, 17, 0, ep(4, src), ep(4, dst)))
        h[10:12] = struct.pack("!H", csum(bytes(h)))
        f = eth(0x0800, bytes(h) + l4)
    else:
        f = eth(0x86dd, struct.pack("!IHBB16s16s", 6 << 28, len(l4), 17, ttl, ep(6, src), ep(6, dst)) + l4)
    if var == "short":
        f = f[:len(f) - len(l4) + 4]
    open(sys.argv[2], "wb").write(f)
elif cmd == "show":
    import json
    d = open(sys.argv[2], "rb").read()
    o = {"dmac": ":".join("%02x" % x for x in d[0:6]), "smac": ":".join("%02x" % x for x in d[6:12]), "len": len(d)}
    if d[12:14] == b"\x08\x00":
        o["ttl"] = d[22]; o["csum_ok"] = csum(d[14:34]) == 0; o["flags"] = d[14 + 20 + 13]
    else:
        o["ttl"] = d[21]; o["flags"] = d[14 + 40 + 13]
    print(json.dumps(o))
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
        # one of each other parse result (include/toe_parse.h)
        "notcp": eth(0x0806, b"\0" * 28),
        "truncl2": eth(0x8100, b"\0\x01"),
        "truncl3": eth(0x0800, v4("10.0.0.2", "10.0.0.1", tcp(12345, 80, pl))[:12]),
        "truncip": eth(0x0800, v4("10.0.0.2", "10.0.0.1", tcp(12345, 80, pl)))[:-10],
        "badversion": eth(0x0800, v6("fd00::2", "fd00::1", tcp(4444, 443, pl))),
        "badiplen": eth(0x0800, v4tot(v4("10.0.0.2", "10.0.0.1", tcp(12345, 80, pl)), 10)),
        "badext": eth(0x86dd, v6ext("fd00::2", "fd00::1", [60, 0], tcp(4444, 443, pl))),
        "frag": eth(0x0800, v4frag(v4("10.0.0.2", "10.0.0.1", tcp(12345, 80, pl)))),
        "unknownethertype": eth(0x1234, b"\0" * 46),
        "vlan3": b"\x02" * 6 + b"\x04" * 6 + struct.pack("!HHHHHH", 0x8100, 1, 0x8100, 2, 0x8100, 3)
                 + struct.pack("!H", 0x0800) + v4("10.0.0.2", "10.0.0.1", tcp(12345, 80, pl)),
        "ext9": eth(0x86dd, v6ext("fd00::2", "fd00::1", [60] * 9, tcp(4444, 443, pl))),
        # UDP to port 9 (discard): what selftests/progs/xdp_count.bpf.c drops
        "udp9": eth(0x0800, v4("10.0.0.2", "10.0.0.1", struct.pack("!HHHH", 40000, 9, 8 + len(pl), 0) + pl,
                               proto=17)),
    }[cmd]
    out.write(pk)
