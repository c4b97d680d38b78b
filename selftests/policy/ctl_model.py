#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The control plane against a model (issue 50): selftests/policy/test_ctl_model.sh.

  ctl_model.py --seed N --steps M --pin PIN --run RUN --conf FILE --cg CG
               --ns NAME,NAME,NAME --names TOE_NAMES_SH --load 'LOADER ARGS'
               --log TOED_LOG --toed-pid PID

Runs in the test cgroup (CG, where opentoe's sock_ops is), in the root
network namespace; toed runs in the first namespace of --ns (its own: the
"host"), the others are tenants.  Every socket is made here (setns into
its namespace, then the socket), so one process knows every end's tuple.

M steps, each chosen at random (seed N) from: apply a random policy (a
small grammar: every statement kind, rules with 1-3 namespaces in their
list and the matching one at a random place, ranges with the port at
either end or inside, every spelling; by toectl reload, SIGHUP or toed
--apply), open connections and listeners, close some, fill and go one
past (in turn: a device's nconn, a tenant's slots, its toe_flows records,
a device the module does not have, toe_listeners, a tenant's share of
the event ring with toed stopped), then free one and try again (the share
back), an apply that must be refused (a bad statement: the policy in
force stays), a datapath reload (failing at a change, TOE_LOADER_FAIL_AT,
with toectl asking toed meanwhile; or succeeding).  A model computes
after each step what the maps must hold: the policy generation's header,
rules, tuples, cells and port classes (as user/toed/classify.c compiles
them), toe_devs (placed as user/toed/devices.c does), each socket's
record (decision, reason, device, rule, serial; sock_ops' order of
untracked, record quota, slot quota, capacity, bypass pairing),
toe_listeners, toe_dev_live, toe_tenants (held and refused: each device,
toe_flows, the event ring), the counters' deltas (toe_stats, toe_reasons,
toed's applies); the driver reads the real ones (bpf syscalls, bpftool
-j, toectl -j) and compares.  Five checks a step, in a fixed order,
whatever the step: the plan is 1 + 5 * M + 1, and a driver that stops
early reports the rest as not run.
"""
import argparse
import ctypes
import ipaddress
import json
import os
import platform
import random
import socket
import struct
import subprocess
import sys
import time

# ---------------------------------------------------------------- kernel
libc = ctypes.CDLL(None, use_errno=True)
NR_BPF = {"x86_64": 321, "aarch64": 280}[platform.machine()]
CLONE_NEWNET = 0x40000000
SO_NETNS_COOKIE = 71
NCPU = 0
for part in open("/sys/devices/system/cpu/possible").read().strip().split(","):
    a, _, b = part.partition("-")
    NCPU += int(b or a) - int(a) + 1


ORIG_NS = os.open("/proc/self/ns/net", os.O_RDONLY)  # where we came from


def setns(path):
    """Into the namespace at path (None: back to ours)."""
    fd = ORIG_NS if path is None else os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET):
            e = ctypes.get_errno()
            raise OSError(e, "setns %s: %s" % (path, os.strerror(e)))
    finally:
        if path is not None:
            os.close(fd)


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    r = libc.syscall(NR_BPF, cmd, buf, 128)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, "bpf(%d): %s" % (cmd, os.strerror(e)))
    return r, buf


class Map:
    """A pinned map, read by index with the bpf syscall (arrays)."""

    def __init__(self, path):
        self.path = path
        self._p = ctypes.create_string_buffer(path.encode())
        self.fd, _ = bpf(7, struct.pack("<QII", ctypes.addressof(self._p), 0, 0))
        info = ctypes.create_string_buffer(256)
        _, _ = bpf(15, struct.pack("<IIQ", self.fd, 256, ctypes.addressof(info)))
        _, _, self.ksize, self.vsize, self.max = struct.unpack_from("<IIIII", info.raw)
        self.percpu = struct.unpack_from("<I", info.raw)[0] in (6, 10)

    def get(self, key):
        k = ctypes.create_string_buffer(struct.pack("<I", key), self.ksize)
        n = ((self.vsize + 7) & ~7) * NCPU if self.percpu else self.vsize
        v = ctypes.create_string_buffer(n)
        bpf(1, struct.pack("<IIQQQ", self.fd, 0, ctypes.addressof(k), ctypes.addressof(v), 0))
        return v.raw

    def put(self, key, value):
        k = ctypes.create_string_buffer(key, self.ksize)
        v = ctypes.create_string_buffer(value, self.vsize)
        bpf(2, struct.pack("<IIQQQ", self.fd, 0, ctypes.addressof(k), ctypes.addressof(v), 0))

    def delete(self, key):
        k = ctypes.create_string_buffer(key, self.ksize)
        bpf(3, struct.pack("<IIQQQ", self.fd, 0, ctypes.addressof(k), 0, 0))

    def u64sum(self, key):
        raw = self.get(key)
        return sum(struct.unpack_from("<Q", raw, i * 8)[0] for i in range(NCPU))


def dump(path):
    out = subprocess.run(["bpftool", "-j", "map", "dump", "pinned", path],
                         capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError("bpftool dump %s: %s" % (path, out.stderr.strip()))
    return [e["formatted"] for e in json.loads(out.stdout)]


def cookie_of(nspath):
    setns(nspath)
    try:
        s = socket.socket()
        c = struct.unpack("<Q", s.getsockopt(socket.SOL_SOCKET, SO_NETNS_COOKIE, 8))[0]
        s.close()
        return c
    finally:
        setns(None)


# ------------------------------------------------------------- constants
NONE = 0xFFFFFFFF
HOST, OFFLOAD, BYPASS = 0, 1, 2
R_RULE, R_DEFAULT, R_CAPACITY, R_NODEV, R_NOT_LOCAL = 0, 1, 2, 3, 4
R_QUOTA, R_LISTENERS_FULL = 9, 11
REASONS = ["rule", "default", "capacity", "nodev", "not_local", "unsupported", "no_tid", "route",
           "module", "quota", "no_stid", "listeners_full"]
COUNTED = {R_CAPACITY: "CAPACITY", R_NODEV: "NODEV", R_QUOTA: "QUOTA",
           R_LISTENERS_FULL: "LISTENERS_FULL"}
TYPES = {"software": 0, "chelsio-t1": 1, "chelsio-t1c": 2, "chelsio-t3": 3}
STEERS = {"account": 0, "cpu": 1, "forward": 2}
AF4, AF6 = 2, 10
TQ_FLOWS, TQ_EV, TQ_EV_READ = 64, 65, 66
MAX_RULES, MAX_TUPLES, PORTS = 131072, 64, 65536
# the namespaces' addresses (on lo in each): v4 and v6 ends
ADDR = {AF4: ["127.0.0.1", "10.77.0.1", "10.77.0.2"], AF6: ["::1", "fd77::1", "fd77::2"]}
PREFIXES = {AF4: ["10.77.0.0/24", "10.77.0.1/32", "10.77.0.2/32", "127.0.0.0/8",
                  "10.0.0.0/8", "0.0.0.0/0", "10.77.0.0/31"],
            AF6: ["fd77::/64", "fd77::1/128", "fd77::2/128", "::1/128",
                  "fd77:0:0:0::/16", "::/0", "fd77::/127"]}
SPORTS = [5501, 5502, 5503, 5504, 5510, 5520]
# TOE_MODEL_SABOTAGE=WHAT: the model expects something wrong of WHAT (hdr,
# rules, tuples, cells, classes, devs, flows, keepalive, listeners, live,
# tenants, stats, reasons, daemon, toectl_flows, toectl_policy, bad,
# reload), so that its check is seen to fail (TOE_MODEL_POLL=1 makes that quick)
SAB = os.environ.get("TOE_MODEL_SABOTAGE", "")
FAKE_NETNS = 0xFFFFFFFFFFFF0000  # the namespace cookie of the toe_listeners fillers: none has it


def addr_bytes(fam, a):
    return ipaddress.ip_address(a).packed.ljust(16, b"\0")


def words(b):
    """16 address bytes as the four little-endian u32 words bpftool prints."""
    return list(struct.unpack("<4I", b))


def mask_bytes(fam, plen):
    n = 32 if fam == AF4 else 128
    m = ((1 << n) - 1) ^ ((1 << (n - plen)) - 1)
    return m.to_bytes(n // 8, "big").ljust(16, b"\0")


def band(a, b):
    return bytes(x & y for x, y in zip(a, b))


# ------------------------------------------------------------- the policy
class Gen:
    """Random policies from a small grammar, each with its text."""

    def __init__(self, rnd, env):
        self.r = rnd
        self.env = env

    def pick_port_range(self, port=None):
        """A port or range containing port (at lo, hi or inside), spelled
        'P', 'P-P' or 'LO-HI'."""
        r = self.r
        if port is None:
            port = r.choice(SPORTS + [40000 + r.randrange(2000), 0, 65535])
        where = r.randrange(4)
        if where == 0:
            lo = hi = port
        elif where == 1:
            lo, hi = port, min(65535, port + r.randrange(1, 40))
        elif where == 2:
            lo, hi = max(0, port - r.randrange(1, 40)), port
        else:
            lo, hi = max(0, port - r.randrange(1, 600)), min(65535, port + r.randrange(1, 600))
        if lo == hi:
            text = str(lo) if r.random() < 0.7 else "%d-%d" % (lo, hi)
        else:
            text = "%d-%d" % (lo, hi)
        return (lo, hi), text

    def netns_list(self):
        """None (no clause: toed's), 'any', or 1-3 names with the one a
        connection will be made in at a random place."""
        r = self.r
        u = r.random()
        if u < 0.2:
            return None, None
        if u < 0.35:
            return "any", "any"
        names = list(self.env.nsnames)
        r.shuffle(names)
        k = r.randint(1, 3)
        pick = names[:k]
        spelled = []
        for n in pick:
            if n == self.env.nsnames[0] and r.random() < 0.5:
                spelled.append("host")
            else:
                spelled.append(self.env.nsfull[n])
        if r.random() < 0.15:
            spelled.append(spelled[0])  # a name twice: the same cells
        return [self.env.cookie_by_text(s) for s in spelled], ",".join(spelled)

    def policy(self):
        r = self.r
        p = {"devices": [], "rules": [], "text": []}
        ndev = r.randint(1, 3)
        for i in range(ndev):
            d, line = self.device(i)
            p["devices"].append(d)
            p["text"].append(line)
        devnames = [d["name"] for d in p["devices"]]
        u = r.random()
        if u < 0.2:
            p["default"] = (HOST, None)
        elif u < 0.45:
            p["default"] = (OFFLOAD, r.choice(devnames))
            p["text"].append("default offload dev %s" % p["default"][1])
        elif u < 0.6:
            p["default"] = (BYPASS, None)
            p["text"].append("default bypass")
        else:
            p["default"] = (HOST, None)
            p["text"].append("default host")
        for _ in range(r.randint(1, 6)):
            rule, text = self.rule(devnames)
            p["rules"].append(rule)
            p["text"].append(text)
        if r.random() < 0.4:  # a twin before or after its rule
            i = r.randrange(len(p["rules"]))
            twin, text = self.shadow(p["rules"][i])
            j = r.choice([i, i + 1])
            p["rules"].insert(j, twin)
            p["text"].insert(p["text"].index(next(t for t in p["text"] if t.startswith("rule "))) + j
                             if j < len(p["rules"]) - 1 else len(p["text"]), text)
        if r.random() < 0.5:
            p["track"] = r.choice(["all", "policy"])
            p["text"].append("track " + p["track"])
        else:
            p["track"] = "all"
        q = {}
        if r.random() < 0.7:
            words_ = []
            if r.random() < 0.7:
                q["slots"] = r.choice([1, 25, 34, 50, 60, 100])
                words_.append("slots %d%%" % q["slots"])
            if r.random() < 0.5:
                q["flows"] = r.choice([1, 2, 25])
                words_.append("flows %d%%" % q["flows"])
            if r.random() < 0.4:
                q["events"] = r.choice([20, 50, 100])
                words_.append("events %d%%" % q["events"])
            if words_:
                r.shuffle(words_)
                p["text"].append("quota " + " ".join(words_))
        p["quota"] = q
        p["log"] = "info"
        if r.random() < 0.3:
            p["log"] = r.choice(["error", "warning", "info", "debug"])
            p["text"].append("log " + p["log"])
        # statements in any order (the rules' own order kept), but a
        # device before whatever names it: devices first, in any order
        devs, rest = p["text"][:ndev], p["text"][ndev:]
        r.shuffle(devs)
        # (toed places new devices in the file's order)
        p["devices"].sort(key=lambda d: [t.split()[1] for t in devs].index(d["name"]))
        rules = [t for t in rest if t.startswith("rule ")]
        for t in rest:
            if not t.startswith("rule "):
                rules.insert(r.randrange(len(rules) + 1), t)
        out = devs + rules
        p["text"] = out
        return p

    def device(self, i):
        """A device statement: kmod, or a type, nconn, dev and steer."""
        r = self.r
        name = r.choice(["t3", "sw0", "d1", "c.2", "nic-x", "t1c"]) + str(i)
        d = {"name": name, "kmod": False}
        if r.random() < 0.15:
            d["kmod"] = True
            line = "device %s kmod" % name
        else:
            d["type"] = r.choice(list(TYPES))
            d["nconn"] = r.randint(1, 6)
            line = "device %s type %s nconn %d" % (name, d["type"], d["nconn"])
            if r.random() < 0.25:
                d["dev"] = "va"
                line += " dev va"
        u = r.random()
        d["steer"], d["cpu"] = "account", 0
        if u < 0.2:
            d["steer"], d["cpu"] = "cpu", r.randrange(NCPU)
            line += " steer cpu %d" % d["cpu"]
        elif u < 0.35:
            d["steer"] = "forward"
            line += " steer forward"
        elif u < 0.5:
            line += " steer account"
        return d, line

    def rule(self, devnames):
        r = self.r
        a = r.random()
        rule = {"action": OFFLOAD if a < 0.6 else (HOST if a < 0.8 else BYPASS)}
        words_ = ["rule", {OFFLOAD: "offload", HOST: "host", BYPASS: "bypass"}[rule["action"]]]
        opts = []
        if rule["action"] == OFFLOAD:
            rule["dev"] = r.choice(devnames)
            opts.append("dev %s" % rule["dev"])
        fam = None
        if r.random() < 0.5:
            fam = r.choice([AF4, AF6])
        if r.random() < 0.3:
            fam = fam or r.choice([AF4, AF6])
            pre = r.choice(PREFIXES[fam])
            rule["local"] = ipaddress.ip_network(pre)
            opts.append("local " + pre)
        if r.random() < 0.3:
            fam = fam or r.choice([AF4, AF6])
            pre = r.choice(PREFIXES[fam])
            rule["remote"] = ipaddress.ip_network(pre)
            opts.append("remote " + pre)
        if fam and ("local" not in rule and "remote" not in rule or r.random() < 0.3):
            spell = {AF4: ["inet", "ipv4"], AF6: ["inet6", "ipv6"]}[fam]
            opts.append("family " + r.choice(spell))
        rule["family"] = fam
        if r.random() < 0.45:
            rule["lport"], t = self.pick_port_range(r.choice(SPORTS) if r.random() < 0.7 else None)
            opts.append("lport " + t)
        if r.random() < 0.55:
            rule["rport"], t = self.pick_port_range(r.choice(SPORTS) if r.random() < 0.7 else None)
            opts.append("rport " + t)
        if r.random() < 0.15:
            which = r.choice(["cg", "decoy"])
            rule["cgroup"] = self.env.cgid[which]
            opts.append("cgroup " + (self.env.cgpath[which] if r.random() < 0.6 else str(self.env.cgid[which])))
        proto = None
        if r.random() < 0.25:
            proto = r.choice(["tcp", "any", "udp"] if rule["action"] == OFFLOAD or rule["action"] == BYPASS else ["tcp", "any"])
            opts.append("proto " + proto)
        rule["proto"] = proto or "tcp"
        if rule["action"] == OFFLOAD and proto != "udp" and r.random() < 0.2:
            rule["ka"] = (r.randint(1, 32767), r.randint(1, 32767), r.randint(1, 127))
            opts.append("keepalive %d %d %d" % rule["ka"])
        ns, t = self.netns_list()
        rule["netns"] = ns
        rule["netns_text"] = t
        if t:
            opts.append("netns " + t)
        r.shuffle(opts)
        rule["match"] = [o for o in opts if not o.startswith(("dev ", "keepalive "))]
        return rule, " ".join(words_ + opts)

    def shadow(self, rule):
        """A rule of the same shape and match as rule, another action: one
        of the two owns every cell they share (the first: first match)."""
        act = self.r.choice([a for a in (HOST, BYPASS) if a != rule["action"]])
        twin = {k: v for k, v in rule.items() if k not in ("dev", "ka")}
        twin["action"] = act
        return twin, " ".join(["rule", "host" if act == HOST else "bypass"] + rule["match"])

    BAD = [
        ("rule offload dev nosuch rport 1", "unknown device 'nosuch'"),
        ("rule host rport 90-80", "port range 90-80 is reversed"),
        ("rule host lport 65536", "a port 65536 is out of range"),
        ("rule host netns nosuch-ns-x", "no such network namespace"),
        ("rule host netns any,host", "'any' goes alone"),
        ("rule host keepalive 1 1 1", "'keepalive' goes only with 'offload'"),
        ("rule host remote 10.77.0.1/24", "has host bits set"),
        ("rule host local 10.0.0.0/8 remote fd77::/64", "is IPv6, but the rule is IPv4"),
        ("rule host local 10.0.0.0/8 family inet6", "contradicts the rule's prefixes"),
        ("rule host family ipv6 local 10.0.0.0/8", "is IPv4, but the rule is IPv6"),
        ("quota slots 0%", "out of range (1 to 100)"),
        ("quota flows 50", "expected a share N%"),
        ("track maybe", "expected 'all' or 'policy'"),
        ("log verbose", "expected 'error', 'warning', 'info' or 'debug'"),
        ("device zz type chelsio-t4 nconn 1", "expected a type"),
        ("device zz type software nconn 0", "nconn 0 is out of range"),
        ("default drop", "expected an action"),
        ("rules host", "expected device, default, rule, track, quota or log"),
        ("device zz type software nconn 1 steer cpu 99", "steer cpu 99"),
        ("rule host netns " + ",".join(["host"] * 9), "at most 8 namespaces"),
    ]


# ------------------------------------------------------------- the model
class Model:
    def __init__(self, env):
        self.env = env
        self.devs = [None] * 64  # {name, present, kmod, type, nconn, tmax, steer, cpu, ifindex}
        self.live = [[0, 0, 0, 0] for _ in range(64)]  # live, offloaded, refused, released
        self.tenants = {}  # (cookie, what) -> [held, refused]
        self.stats = {k: 0 for k in ("ESTABLISHED", "UNTRACKED", "QUOTA", "LISTEN",
                                     "LISTENERS_FULL", "CLOSED", "FLOW_EVICTED", "EVENT_QUOTA")}
        self.ev_refused = {}  # tenant cookie -> its events dropped at its share
        self.rsn = {k: 0 for k in COUNTED.values()}
        self.serial = 0
        self.gen = 0
        self.applied = self.failed = 0
        self.own = True
        self.pol = None
        self.devidx = {}

    # ---- apply
    def reloaded(self):
        """toed followed a datapath reload: its own policy applied again
        (only when it was the one in force: another's is kept)."""
        self.serial += 1
        self.gen ^= 1
        self.applied += 1
        self.compile()

    def apply(self, p, own=True):
        used = set()
        idx = {}
        for d in p["devices"]:
            for i in range(64):
                if i not in used and self.devs[i] and self.devs[i]["name"] == d["name"]:
                    idx[d["name"]] = i
                    used.add(i)
                    break
        for d in p["devices"]:
            if d["name"] in idx:
                continue
            for j in range(64):
                if j in used:
                    continue
                if self.devs[j] and self.devs[j]["present"]:
                    continue
                if self.live[j][0]:
                    continue
                break
            idx[d["name"]] = j
            used.add(j)
        slots = p["quota"].get("slots", 50)
        for d in p["devices"]:
            i = idx[d["name"]]
            if d["kmod"]:
                self.devs[i] = {"name": d["name"], "present": False, "kmod": True}
                continue
            self.devs[i] = {"name": d["name"], "present": True, "kmod": False,
                            "type": TYPES[d["type"]], "nconn": d["nconn"],
                            "tmax": max(1, d["nconn"] * slots // 100),
                            "steer": STEERS[d["steer"]], "cpu": d["cpu"],
                            "ifindex": self.env.va_ifindex if d.get("dev") else 0}
        for i in range(64):
            if i not in used and self.devs[i] and self.devs[i]["present"]:
                self.devs[i]["present"] = False
        self.devidx = idx
        self.pol = p
        self.serial += 1
        self.gen ^= 1
        self.applied += own
        self.own = own
        self.compile()

    def compile(self):
        """Port classes, tuples, cells of the policy in force (classify.c)."""
        p = self.pol
        rules = p["rules"]

        def classes(which):
            cut = set()
            for r in rules:
                lh = r.get(which)
                if lh is None or lh == (0, 65535):
                    continue
                cut.add(lh[0])
                cut.add(lh[1] + 1)
            return sorted(c for c in cut if 0 < c < PORTS)
        self.lcuts, self.rcuts = classes("lport"), classes("rport")
        tuples, cells = [], {}
        for ri, r in enumerate(rules):
            ul = r.get("lport") not in (None, (0, 65535))
            ur = r.get("rport") not in (None, (0, 65535))
            cl = (self.cls(self.lcuts, r["lport"][0]), self.cls(self.lcuts, r["lport"][1])) if ul else (0, 0)
            cr = (self.cls(self.rcuts, r["rport"][0]), self.cls(self.rcuts, r["rport"][1])) if ur else (0, 0)
            fams = [r["family"]] if r["family"] else [AF4, AF6]
            protos = {"tcp": [0], "udp": [17], "any": [0, 17]}[r["proto"]]
            for proto in protos:
                for fam in fams:
                    lp = r["local"].prefixlen if "local" in r else 0
                    rp = r["remote"].prefixlen if "remote" in r else 0
                    lm, rm = mask_bytes(fam, lp), mask_bytes(fam, rp)
                    shape = (fam, proto, r.get("cgroup", 0) != 0, ul, ur, r["netns"] != "any", lm, rm)
                    if shape not in [t[0] for t in tuples]:
                        tuples.append((shape, ri))
                    ti = [t[0] for t in tuples].index(shape)
                    la = band(r["local"].network_address.packed.ljust(16, b"\0"), lm) if "local" in r else bytes(16)
                    ra = band(r["remote"].network_address.packed.ljust(16, b"\0"), rm) if "remote" in r else bytes(16)
                    nss = [0] if r["netns"] == "any" else (r["netns"] or [self.env.host_cookie])
                    for ns in nss:
                        for a in range(cl[0], cl[1] + 1):
                            for b in range(cr[0], cr[1] + 1):
                                k = (tuple(words(la)), tuple(words(ra)), r.get("cgroup", 0), a, b, ti, self.gen, ns)
                                cells.setdefault(k, ri)
        self.tuples, self.cells = tuples, cells

    @staticmethod
    def cls(cuts, port):
        n = 0
        for c in cuts:
            if port >= c:
                n += 1
        return n

    # ---- decisions
    def decide(self, ns_cookie, fam, la, lport, ra, rport, cgid):
        p = self.pol
        for i, r in enumerate(p["rules"]):
            if r["proto"] == "udp":
                continue
            if r["family"] and r["family"] != fam:
                continue
            if "local" in r and ipaddress.ip_address(la) not in r["local"]:
                continue
            if "remote" in r and ipaddress.ip_address(ra) not in r["remote"]:
                continue
            if "lport" in r and not r["lport"][0] <= lport <= r["lport"][1]:
                continue
            if "rport" in r and not r["rport"][0] <= rport <= r["rport"][1]:
                continue
            if r.get("cgroup") and r["cgroup"] != cgid:
                continue
            if r["netns"] != "any" and ns_cookie not in (r["netns"] or [self.env.host_cookie]):
                continue
            dev = self.devidx[r["dev"]] if r["action"] == OFFLOAD else NONE
            return {"action": r["action"], "reason": R_RULE, "dev": dev, "rule": i, "ka": r.get("ka")}
        act, dn = p["default"]
        return {"action": act, "reason": R_DEFAULT, "dev": self.devidx[dn] if dn else NONE,
                "rule": NONE, "ka": None}

    def tenant_take(self, tenant, what, mx):
        if not tenant or not mx:
            return True
        t = self.tenants.setdefault((tenant, what), [0, 0])
        if t[0] >= mx:
            t[1] += 1
            return False
        t[0] += 1
        return True

    def tenant_flows(self):
        pct = self.pol["quota"].get("flows", 25)
        return max(1, self.env.flows_size * pct // 100)

    def established(self, s, listener=None, peer=None):
        """sock_ops on_established for socket s (a dict); fills its fate."""
        d = self.decide(s["ns"], s["fam"], s["la"], s["lport"], s["ra"], s["rport"], self.env.cgid["cg"])
        tenant = s["ns"] if s["ns"] != self.env.host_cookie else 0
        s.update(record=False, slot=None, tslot=None, ftenant=None, ka=None, bypassed=False)
        self.stats["ESTABLISHED"] += 1
        if self.pol["track"] == "policy" and d["reason"] == R_DEFAULT and d["action"] == HOST:
            self.stats["UNTRACKED"] += 1
            s["fate"] = "untracked"
            return
        if tenant:
            if not self.tenant_take(tenant, TQ_FLOWS, self.tenant_flows()):
                self.stats["QUOTA"] += 1
                s["fate"] = "flows_quota"
                return
            s["ftenant"] = tenant
        if d["action"] == OFFLOAD:
            if s["dir"] == 1 and listener and listener.get("full"):
                d.update(action=HOST, reason=R_LISTENERS_FULL, dev=NONE)
            else:
                self.take_slot(d, tenant, s)
        if d["action"] == BYPASS:
            if s["dir"] == 1 and not (peer and peer.get("bypassed")):
                d.update(action=HOST, reason=R_NOT_LOCAL)
            else:
                s["bypassed"] = True
        if d["action"] == OFFLOAD:
            s["ka"] = d["ka"]
        if d["reason"] in COUNTED:
            self.rsn[COUNTED[d["reason"]]] += 1
        s["record"] = True
        s["fate"] = "record"
        s["want"] = {"decision": d["action"], "reason": d["reason"], "dev": d["dev"],
                     "rule": d["rule"], "direction": s["dir"], "policy": self.serial}

    def take_slot(self, d, tenant, s):
        i = d["dev"]
        dv = self.devs[i]
        if not dv or not dv["present"]:
            d.update(action=HOST, reason=R_NODEV, dev=NONE)
            return
        if not self.tenant_take(tenant, i, dv["tmax"]):
            self.live[i][2] += 1
            self.stats["QUOTA"] += 1
            d.update(action=HOST, reason=R_QUOTA)
            return
        if self.live[i][0] >= dv["nconn"]:
            self.live[i][2] += 1
            if tenant:
                self.tenants[(tenant, i)][0] -= 1
            d.update(action=HOST, reason=R_CAPACITY)
            return
        self.live[i][0] += 1
        self.live[i][1] += 1
        s["slot"] = i
        if tenant:
            s["tslot"] = (tenant, i)

    def closed(self, s):
        if s["fate"] in ("untracked", "flows_quota"):
            return
        if s["tslot"]:
            self.tenants[s["tslot"]][0] -= 1
        if s["ftenant"]:
            self.tenants[(s["ftenant"], TQ_FLOWS)][0] -= 1
        if s["slot"] is not None:
            self.live[s["slot"]][0] -= 1
            self.live[s["slot"]][3] += 1
        self.stats["CLOSED"] += 1

    def listen(self, l):
        self.stats["LISTEN"] += 1
        d = self.decide(l["ns"], l["fam"], l["la"], l["lport"], "::" if l["fam"] == AF6 else "0.0.0.0", 0,
                        self.env.cgid["cg"])
        l["in_map"] = False
        l["full"] = False
        if d["action"] == OFFLOAD:
            dv = self.devs[d["dev"]]
            if not dv or not dv["present"]:
                d.update(action=HOST, reason=R_NODEV, dev=NONE)
            elif self.env.listeners_room() <= 0:
                d.update(action=HOST, reason=R_LISTENERS_FULL, dev=NONE)
                self.stats["LISTENERS_FULL"] += 1
                l["full"] = True
            else:
                l["in_map"] = True
        l["want"] = {"dev": d["dev"], "rule": d["rule"], "policy": self.serial}


# ------------------------------------------------------------- the driver
class Env:
    pass


class Driver:
    def __init__(self, a):
        self.a = a
        self.rnd = random.Random(a.seed)
        env = self.env = Env()
        env.nsnames = a.ns.split(",")
        env.nsfull = {n: n for n in env.nsnames}
        env.nspath = {n: "/run/netns/" + n for n in env.nsnames}
        env.cookie = {n: cookie_of(env.nspath[n]) for n in env.nsnames}
        env.host_cookie = env.cookie[env.nsnames[0]]
        env.cgpath = {"cg": a.cg, "decoy": a.cg + "/decoy"}
        env.cgid = {k: os.stat(v).st_ino for k, v in env.cgpath.items()}
        env.cookie_by_text = lambda t: env.host_cookie if t == "host" else env.cookie[t]
        setns(env.nspath[env.nsnames[0]])
        env.va_ifindex = socket.if_nametoindex("va")
        setns(None)
        self.names = {}
        for line in open(a.names):
            line = line.strip()
            if "=" in line and not line.startswith("#"):
                k, _, v = line.partition("=")
                self.names[k] = v
        P = lambda m: os.path.join(a.pin, self.names["MAP_" + m])
        self.mp = {m: P(m) for m in ("POL_GEN", "POL_HDR", "POL_RULES", "POL_TUPLES", "POL_CELLS",
                                     "POL_LCLASS", "POL_RCLASS", "DEVS", "DEV_LIVE", "TENANTS",
                                     "FLOWS", "LISTENERS", "STATS", "REASONS", "EVENTS")}
        self.maps = {}
        env.flows_size = self.map("FLOWS").max
        env.listeners_max = self.map("LISTENERS").max
        env.listeners_room = lambda: env.listeners_max - self.fill_listeners - sum(
            1 for l in self.listeners.values() if l["in_map"])
        self.fill_listeners = 0
        self.model = Model(env)
        self.gen = Gen(self.rnd, env)
        self.socks = {}  # id -> socket dict (with "sock": the socket)
        self.conns = []  # [(client id, server id)]
        self.listeners = {}  # (ns, fam, la, port) -> listener dict
        self.nextport = 40000 + self.rnd.randrange(100) * 100
        self.nid = 0
        self.failed = 0
        self.nchecks = 0
        self.base = None
        self.fill_turn = self.rnd.randrange(4)
        self.ev_bytes = None

    def map(self, m):
        if m not in self.maps:
            self.maps[m] = Map(self.mp[m])
        return self.maps[m]

    # ---- TAP
    def report(self, okay, desc, diffs=()):
        self.nchecks += 1
        if okay:
            print("ok - " + desc, flush=True)
            return
        self.failed += 1
        for d in list(diffs)[:12]:
            print("# " + str(d))
        print("# replay: TOE_MODEL_SEED=%d TOE_MODEL_STEPS=%d bash selftests/run.sh "
              "selftests/policy/test_ctl_model.sh" % (self.a.seed, self.a.steps))
        print("not ok - " + desc, flush=True)

    def poll(self, fn, secs=float(os.environ.get("TOE_MODEL_POLL", 10))):
        """fn() -> list of differences; again until none or the deadline."""
        end = time.monotonic() + secs
        while True:
            try:
                diffs = fn()
            except Exception as e:  # a map that could not be read is a failure too
                diffs = ["error: %r" % e]
            if not diffs or time.monotonic() > end:
                return diffs
            time.sleep(0.1)

    # ---- toed and the configuration
    def write_conf(self, text):
        tmp = self.a.conf + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o600)
        os.rename(tmp, self.a.conf)

    def reload(self):
        """The file applied one of three ways: toectl reload, SIGHUP (its
        answer in toed's counters and log) or toed --apply from another
        process (in toed's namespace).  The way in self.how."""
        self.how = self.rnd.choice(["toectl reload", "toectl reload", "SIGHUP", "toed --apply"])
        if self.how == "toectl reload":
            r = subprocess.run(["toectl", "--run-dir", self.a.run, "reload"], capture_output=True, text=True)
            return r.returncode, (r.stdout + r.stderr).strip()
        if self.how == "toed --apply":
            r = subprocess.run(["nsenter", "--net=" + self.env.nspath[self.env.nsnames[0]], "toed", "--apply",
                                self.a.conf, "--pin-dir", self.a.pin], capture_output=True, text=True)
            return r.returncode, (r.stdout + r.stderr).strip()
        dm0 = self.toectl("stats")["daemon"]
        log0 = os.path.getsize(self.a.log)
        os.kill(self.a.toed_pid, 1)
        end = time.monotonic() + 10
        while time.monotonic() < end:
            dm = self.toectl("stats")["daemon"]
            rc = 0 if dm["policy_applied"] > dm0["policy_applied"] else \
                1 if dm["policy_failed"] > dm0["policy_failed"] else None
            if rc is not None:
                with open(self.a.log) as f:
                    f.seek(log0)
                    return rc, f.read().strip()
            time.sleep(0.05)
        return 124, "toed took no SIGHUP in 10 s"

    # ---- sockets
    def in_ns(self, ns, fn):
        setns(self.env.nspath[ns])
        try:
            return fn()
        finally:
            setns(None)

    def listener(self, ns, fam, la, port):
        key = (ns, fam, la, port)
        if key in self.listeners:
            return self.listeners[key]

        def mk():
            s = socket.socket(socket.AF_INET6 if fam == AF6 else socket.AF_INET)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if fam == AF6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            s.bind((la, port))
            s.listen(64)
            s.settimeout(10)
            return s
        l = {"ns": self.env.cookie[ns], "nsname": ns, "fam": fam, "la": la, "lport": port, "key": key}
        self.model.listen(l)
        l["sock"] = self.in_ns(ns, mk)
        self.listeners[key] = l
        return l

    def connect(self, ns, fam, ca, sa, sport):
        l = self.listener(ns, fam, sa, sport)
        cport = self.nextport
        self.nextport += 1
        if self.nextport > 49999:
            self.nextport = 40000
        ck = self.env.cookie[ns]
        c = {"id": self.nid, "ns": ck, "nsname": ns, "fam": fam, "la": ca, "lport": cport, "ra": sa,
             "rport": sport, "dir": 0}
        s = {"id": self.nid + 1, "ns": ck, "nsname": ns, "fam": fam, "la": sa, "lport": sport, "ra": ca,
             "rport": cport, "dir": 1}
        self.nid += 2

        def mk():
            cs = socket.socket(socket.AF_INET6 if fam == AF6 else socket.AF_INET)
            cs.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            cs.bind((ca, cport))
            cs.settimeout(10)
            cs.connect((sa, sport))
            ss, _ = l["sock"].accept()
            return cs, ss
        self.model.established(c)
        self.model.established(s, listener=l, peer=c)
        c["sock"], s["sock"] = self.in_ns(ns, mk)
        self.socks[c["id"]] = c
        self.socks[s["id"]] = s
        self.conns.append((c["id"], s["id"]))
        return c, s

    def close_conn(self, cid, sid):
        c, s = self.socks.pop(cid), self.socks.pop(sid)
        if self.rnd.random() < 0.5:  # a reset, or FIN both ways
            c["sock"].setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c["sock"].close()
        s["sock"].close()
        self.model.closed(c)
        self.model.closed(s)
        self.conns.remove((cid, sid))

    def close_listener(self, key):
        l = self.listeners.pop(key)
        l["sock"].close()

    def random_spec(self, ns=None):
        r = self.rnd
        fam = r.choice([AF4, AF4, AF6])
        ns = ns or r.choice(self.env.nsnames)
        ca = r.choice(ADDR[fam])
        sa = r.choice(ADDR[fam])
        return ns, fam, ca, sa, r.choice(SPORTS)

    # ---- reading the real state
    def rd_hdr(self, gen):
        raw = self.map("POL_HDR").get(gen)
        f = struct.unpack_from("<IIIIQQIIQII", raw)
        return dict(zip(["ntuples", "nrules", "default_action", "default_dev", "applied_ns", "serial",
                         "track", "pad", "host_netns", "tenant_flows", "tenant_events"], f))

    def check_policy(self):
        m, diffs = self.model, []
        gen = struct.unpack("<I", self.map("POL_GEN").get(0)[:4])[0] & 1
        if gen != m.gen:
            diffs.append("toe_pol_gen %d, model %d" % (gen, m.gen))
        h = self.rd_hdr(m.gen)
        p = m.pol
        act, dn = p["default"]
        want = {"ntuples": len(m.tuples), "nrules": len(p["rules"]), "default_action": act,
                "default_dev": m.devidx[dn] if dn else NONE, "serial": m.serial,
                "track": 1 if p["track"] == "policy" else 0, "host_netns": self.env.host_cookie,
                "tenant_flows": m.tenant_flows()}
        want["serial"] += SAB == "hdr"
        for k, v in want.items():
            if h[k] != v:
                diffs.append("toe_pol_hdr[%d].%s = %s, model %s" % (m.gen, k, h[k], v))
        ring = self.map("EVENTS").max
        pct = p["quota"].get("events", 50)
        if self.ev_bytes is None:  # the event's size on the ring, from the first header
            for b in range(64, 1024, 8):
                if max(1, ring * pct // 100 // b) == h["tenant_events"]:
                    self.ev_bytes = b
                    break
        if self.ev_bytes and h["tenant_events"] != max(1, ring * pct // 100 // self.ev_bytes):
            diffs.append("tenant_events %d, model %d" % (h["tenant_events"], ring * pct // 100 // self.ev_bytes))
        for i, r in enumerate(p["rules"]):
            raw = self.map("POL_RULES").get(m.gen * MAX_RULES + i)
            got = struct.unpack_from("<6I", raw)[:5]
            ka = r.get("ka") or (0, 0, 0)
            w = (r["action"], m.devidx[r["dev"]] if r["action"] == OFFLOAD else NONE) + tuple(ka)
            w = w[:2] + ((w[2] + 1,) if SAB == "rules" else w[2:3]) + w[3:]
            if got != w:
                diffs.append("toe_pol_rules[%d] %s, model %s" % (i, got, w))
        for ti, (shape, minr) in enumerate(m.tuples):
            raw = self.map("POL_TUPLES").get(m.gen * MAX_TUPLES + ti)
            f = struct.unpack_from("<4I4IBBBBIBB", raw)
            fam, proto, ucg, ul, ur, uns, lm, rm = shape
            got = (tuple(f[0:4]), tuple(f[4:8]), f[8], f[9], f[10], f[11], f[12], f[13], f[14])
            w = (tuple(words(lm)), tuple(words(rm)), fam, int(ucg), int(ul), int(ur), minr + (SAB == "tuples"),
                 int(uns), proto)
            if got != w:
                diffs.append("toe_pol_tuples[%d] %s, model %s" % (ti, got, w))
        return diffs + self.check_cells() + self.check_devs_table()

    def check_cells(self):
        """toe_pol_cells of the generation in force and its port classes."""
        m, diffs = self.model, []
        cells = {}
        for e in dump(self.mp["POL_CELLS"]):
            k = e["key"]
            if k["gen"] != m.gen:
                continue
            cells[(tuple(k["laddr"]), tuple(k["raddr"]), k["cgroup"], k["lclass"], k["rclass"], k["tuple"],
                   k["gen"], k["netns"])] = e["value"]
        if SAB == "cells" and cells:
            cells.popitem()
        if cells != m.cells:
            extra = [(k, v) for k, v in cells.items() if m.cells.get(k) != v]
            miss = [(k, v) for k, v in m.cells.items() if cells.get(k) != v]
            diffs.append("toe_pol_cells: %d cells, model %d; not in the model %s; missing %s" % (
                len(cells), len(m.cells), extra[:2], miss[:2]))
        for which, cuts in (("LCLASS", m.lcuts), ("RCLASS", m.rcuts)):
            ports = {0, 65535} | set(SPORTS) | {s["lport"] for s in self.socks.values()} | \
                {s["rport"] for s in self.socks.values()}
            for c in cuts:
                ports |= {c - 1, c}
            mp = self.map("POL_" + which)
            for port in sorted(ports):
                got = struct.unpack("<I", mp.get(m.gen * PORTS + port)[:4])[0]
                if got != m.cls(cuts, port) + (SAB == "classes" and port == 65535):
                    diffs.append("toe_pol_%s[port %d] %d, model %d" % (which.lower(), port, got,
                                                                     m.cls(cuts, port)))
                    break
        return diffs

    def check_devs_table(self):
        """toe_devs: every index as the model placed the devices."""
        m, diffs = self.model, []
        for i in range(64):
            raw = self.map("DEVS").get(i)
            f = struct.unpack_from("<16s7I", raw)
            name = f[0].split(b"\0")[0].decode()
            d = m.devs[i]
            if not d:
                if name:
                    diffs.append("toe_devs[%d] is %s, model: none" % (i, name))
                continue
            flags = (1 if d["present"] else 0) | (2 if d["kmod"] else 0)
            got = {"name": name, "flags": f[4] & 3}
            w = {"name": d["name"], "flags": flags}
            if not d["kmod"]:
                got.update(type=f[1], ifindex=f[2], nconn=f[3], steer=f[5], cpu=f[6], tmax=f[7])
                w.update(type=d["type"], ifindex=d["ifindex"], nconn=d["nconn"] + (SAB == "devs"), steer=d["steer"],
                         cpu=d["cpu"] if d["steer"] == 1 else 0, tmax=d["tmax"])
            if got != w:
                diffs.append("toe_devs[%d] %s, model %s" % (i, got, w))
        return diffs

    def check_flows(self):
        diffs = []
        got = {}
        for e in dump(self.mp["FLOWS"]):
            k, v = e["key"], e["value"]
            got[(k["netns"], k["family"], tuple(k["laddr"]), k["lport"], tuple(k["raddr"]), k["rport"])] = {
                f: v[f] for f in ("decision", "reason", "dev", "rule", "direction", "policy")}
        want = {}
        for s in self.socks.values():
            if s["record"]:
                want[(s["ns"], s["fam"], tuple(words(addr_bytes(s["fam"], s["la"]))), s["lport"],
                      tuple(words(addr_bytes(s["fam"], s["ra"]))), s["rport"])] = s["want"]
        if SAB == "flows" and want:
            want.popitem()
        for k in sorted(set(got) | set(want), key=str):
            if got.get(k) != want.get(k):
                diffs.append("toe_flows %s: %s, model %s" % (self.keytext(k), got.get(k), want.get(k)))
        # the keepalive a rule set on an offloaded socket
        for s in self.socks.values():
            if s.get("ka"):
                idle = s["sock"].getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE)
                if idle != s["ka"][0] + (SAB == "keepalive"):
                    diffs.append("socket %s: TCP_KEEPIDLE %d, model %d" % (s["lport"], idle, s["ka"][0]))
        lg = {}
        for e in dump(self.mp["LISTENERS"]):
            k, v = e["key"], e["value"]
            lg[(k["netns"], k["family"], tuple(k["laddr"]), k["lport"])] = {f: v[f] for f in ("dev", "rule", "policy")}
        lw = {}
        for l in self.listeners.values():
            if l["in_map"]:
                lw[(l["ns"], l["fam"], tuple(words(addr_bytes(l["fam"], l["la"]))), l["lport"])] = l["want"]
        lg = {k: v for k, v in lg.items() if k[0] != FAKE_NETNS}  # the fillers (step_fill)
        if SAB == "listeners" and lg:
            lg.popitem()
        for k in sorted(set(lg) | set(lw), key=str):
            if lg.get(k) != lw.get(k):
                diffs.append("toe_listeners %s: %s, model %s" % (k, lg.get(k), lw.get(k)))
        return diffs

    def keytext(self, k):
        ns = [n for n, c in self.env.cookie.items() if c == k[0]]
        fam = k[1]
        la = ipaddress.ip_address(struct.pack("<4I", *k[2])[: 4 if fam == AF4 else 16])
        ra = ipaddress.ip_address(struct.pack("<4I", *k[4])[: 4 if fam == AF4 else 16])
        return "%s %s:%d-%s:%d" % (ns[0] if ns else k[0], la, k[3], ra, k[5])

    def check_devs(self):
        m, diffs = self.model, []
        for i in range(64):
            if not m.devs[i] and not any(m.live[i]):
                continue
            raw = self.map("DEV_LIVE").get(i)
            f = list(struct.unpack_from("<4Q", raw))
            w = [a - b for a, b in zip(m.live[i], self.base["live"][i])]
            w[1] += SAB == "live"
            f = [a - b for a, b in zip(f, self.base["live_real"][i])]
            if f != w:
                diffs.append("toe_dev_live[%d] (live, offloaded, refused, released) %s, model %s" % (i, f, w))
        got = {}
        for e in dump(self.mp["TENANTS"]):
            k, v = e["key"], e["value"]
            got[(k["netns"], k["what"])] = [v["held"], v["refused"]]
        cookies = set(self.env.cookie.values())
        for k in sorted(set(got) | set(m.tenants)):
            if k[0] not in cookies or k[1] >= TQ_EV:
                continue
            if SAB == "tenants" and k in got:
                got[k] = [got[k][0] + 1, got[k][1]]
            if got.get(k) != m.tenants.get(k):
                diffs.append("toe_tenants (%s, what %d): %s, model %s" % (
                    [n for n, c in self.env.cookie.items() if c == k[0]][0], k[1], got.get(k), m.tenants.get(k)))
        for c in cookies:
            ev, rd = got.get((c, TQ_EV)), got.get((c, TQ_EV_READ))
            if (ev[1] if ev else 0) != m.ev_refused.get(c, 0):
                diffs.append("toe_tenants events of %d: %s refused, model %d" % (
                    c, ev and ev[1], m.ev_refused.get(c, 0)))
            if ev and (not rd or rd[0] != ev[0]):
                diffs.append("toe_tenants events of %d: %s on the ring, toed read %s" % (c, ev, rd))
        return diffs

    def counters(self):
        st = {k: self.map("STATS").u64sum(int(self.names["STAT_" + k])) for k in self.model.stats}
        rs = {k: self.map("REASONS").u64sum(int(self.names["RSN_REFUSED_" + k])) for k in self.model.rsn}
        return st, rs

    def check_counters(self):
        m = self.model
        st, rs = self.counters()
        diffs = []
        for k, v in m.stats.items():
            if st[k] - self.base["stats"][k] != v + (SAB == "stats" and k == "ESTABLISHED"):
                diffs.append("toe_stats %s +%d, model +%d" % (k, st[k] - self.base["stats"][k], v))
        for k, v in m.rsn.items():
            if rs[k] - self.base["rsn"][k] != v + (SAB == "reasons"):
                diffs.append("toe_reasons refused_%s +%d, model +%d" % (k.lower(), rs[k] - self.base["rsn"][k], v))
        if not diffs:  # and toectl says the same
            r = subprocess.run(["toectl", "-j", "--run-dir", self.a.run, "stats"], capture_output=True, text=True)
            js = json.loads(r.stdout)
            flat = {}

            def walk(o):
                if isinstance(o, dict):
                    for k, v in o.items():
                        if isinstance(v, (dict, list)):
                            walk(v)
                        else:
                            flat.setdefault(k, v)
                elif isinstance(o, list):
                    for v in o:
                        walk(v)
            walk(js)
            dm = js.get("daemon", {})
            for k, w in (("policy_applied", self.model.applied), ("policy_failed", self.model.failed)):
                if dm.get(k, 0) - self.base["daemon"].get(k, 0) != w + (SAB == "daemon"):
                    diffs.append("toectl stats %s +%d, model +%d" % (k, dm.get(k, 0) - self.base["daemon"].get(k, 0), w))
            for name, real in (("quota_refused", st["QUOTA"]), ("refused_capacity", rs["CAPACITY"]),
                               ("refused_quota", rs["QUOTA"]), ("refused_nodev", rs["NODEV"])):
                if name in flat and flat[name] != real:
                    diffs.append("toectl stats %s %s, the map %d" % (name, flat[name], real))
        return diffs

    def toectl(self, *args):
        r = subprocess.run(["toectl", "-j", "--run-dir", self.a.run] + list(args), capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError("toectl %s: %s" % (" ".join(args), r.stderr.strip()))
        return json.loads(r.stdout)

    def check_toectl_flows(self):
        """toed's view of the same records: toectl -j flows, by names."""
        m = self.model
        got = {}
        for f in self.toectl("flows"):
            got[(f["netns_cookie"], f["lport"], f["rport"], f["direction"])] = (
                f["decision"], f["reason"], f["device"], f["rule"], f["policy"])
        want = {}
        for s in self.socks.values():
            if not s["record"]:
                continue
            w = s["want"]
            dev = m.devs[w["dev"]]["name"] if w["dev"] != NONE else None
            want[(s["ns"], s["lport"], s["rport"], ["active", "passive"][s["dir"]])] = (
                ["host", "offload", "bypass"][w["decision"]], REASONS[w["reason"]], dev,
                None if w["rule"] == NONE else w["rule"], w["policy"] + (SAB == "toectl_flows"))
        return ["toectl flows %s: %s, model %s" % (k, got.get(k), want.get(k))
                for k in sorted(set(got) | set(want), key=str) if got.get(k) != want.get(k)]

    def check_toectl_policy(self):
        """toectl -j policy: the policy in force is the model's, statement by statement."""
        m, p = self.model, self.model.pol
        j = self.toectl("policy")
        diffs = []
        act, dn = p["default"]
        q = {"slots": 50, "flows": 25, "events": 50}
        q.update(p["quota"])
        want = {"serial": m.serial + (SAB == "toectl_policy"), "default": ["host", "offload", "bypass"][act],
                "track": p["track"], "quota": q, "log": p["log"], "devices": [d["name"] for d in p["devices"]],
                "rules": [(["host", "offload", "bypass"][r["action"]], r.get("dev"),
                           "any" if r["netns"] == "any" else r.get("netns_text") or "host") for r in p["rules"]]}
        got = {"serial": j["serial"], "default": j["default"], "track": j["track"], "quota": j["quota"],
               "log": j.get("log"),
               "devices": [d["name"] for d in j["devices"]],
               "rules": [(r["action"], r.get("dev"), r.get("netns", "host")) for r in j["rules"]]}
        if act == OFFLOAD and j.get("default_dev") != dn:
            diffs.append("toectl policy default_dev %s, model %s" % (j.get("default_dev"), dn))
        for k in want:
            if got[k] != want[k]:
                diffs.append("toectl policy %s: %s, model %s" % (k, got[k], want[k]))
        return diffs

    def snapshot_base(self):
        st, rs = self.counters()
        live = [list(struct.unpack_from("<4Q", self.map("DEV_LIVE").get(i))) for i in range(64)]
        self.base = {"stats": st, "rsn": rs, "live_real": live, "live": [[0] * 4 for _ in range(64)],
                     "daemon": self.toectl("stats").get("daemon", {})}
        # the policy toed started with: the model's serial and generation from it
        self.model.gen = struct.unpack("<I", self.map("POL_GEN").get(0)[:4])[0] & 1
        self.model.serial = self.rd_hdr(self.model.gen)["serial"]

    # ---- steps
    def step_apply(self):
        p = self.gen.policy()
        self.write_conf("\n".join(p["text"]) + "\n")
        rc, out = self.reload()
        if rc == 0:
            self.model.apply(p, own=self.how != "toed --apply")
            d = self.poll(self.check_toectl_policy)
            return not d, self.how + ": apply a policy of %d devices, %d rules (%s)" % (
                len(p["devices"]), len(p["rules"]), "; ".join(p["text"])[:300]), d
        return False, "apply a valid policy", ["toectl reload: %d %s" % (rc, out)] + p["text"]

    def step_bad(self):
        p = self.gen.policy()
        bad, want = self.rnd.choice(Gen.BAD)
        text = list(p["text"])
        text.insert(self.rnd.randrange(len(text) + 1), bad)
        self.write_conf("\n".join(text) + "\n")
        rc, out = self.reload()
        # the good policy back in the file (what toed reads at its next reload)
        self.model.failed += self.how != "toed --apply"
        want += "x" * (SAB == "bad")
        d = [] if rc == 1 and want in out else ["toectl reload: rc %d, %s (want %r)" % (rc, out, want)]
        d += self.poll(self.check_toectl_policy)
        return not d, "a bad statement (%s) refused (%s), toectl policy the same" % (bad, self.how), d

    def step_open(self):
        n = self.rnd.randint(1, 4)
        opened = []
        for _ in range(n):
            if len(self.conns) >= 36:
                break
            ns, fam, ca, sa, sp = self.random_spec()
            if self.rnd.random() < 0.2:
                self.listener(ns, fam, sa, sp)
                opened.append("listener %s [%s]:%d" % (ns, sa, sp))
                continue
            self.connect(ns, fam, ca, sa, sp)
            opened.append("%s [%s]->[%s]:%d" % (ns, ca, sa, sp))
        d = self.poll(self.check_toectl_flows)
        return not d, "open %s; toectl flows as the model says" % (", ".join(opened) or "nothing (36 open)"), d

    def step_close(self):
        r = self.rnd
        k = r.randint(1, max(1, len(self.conns)))
        picked = r.sample(self.conns, min(k, len(self.conns)))
        for cid, sid in picked:
            self.close_conn(cid, sid)
        lk = [k for k in self.listeners if r.random() < 0.3]
        for k in lk:
            self.close_listener(k)
        d = self.poll(self.check_toectl_flows)
        return not d, "close %d connections, %d listeners; toectl flows as the model says" % (
            len(picked), len(lk)), d

    def find_spec(self, pred, tenant_only=False, host_only=False):
        """A connection spec whose model decision (of either end) pred takes."""
        m = self.model
        for _ in range(400):
            ns, fam, ca, sa, sp = self.random_spec()
            if tenant_only and ns == self.env.nsnames[0]:
                continue
            if host_only and ns != self.env.nsnames[0]:
                continue
            ck = self.env.cookie[ns]
            for la, lp, ra, rp in ((ca, 50000, sa, sp), (sa, sp, ca, 50000)):
                d = m.decide(ck, fam, la, lp, ra, rp, self.env.cgid["cg"])
                if pred(d, ck):
                    return ns, fam, ca, sa, sp
        return None

    def step_fill(self):
        """Fill what the turn says and go one past: a device (capacity), a
        tenant's share of one (quota), a tenant's records (quota), a device
        the module does not have (nodev)."""
        m = self.model
        kinds = ["capacity", "quota", "flows", "nodev", "listeners", "events"]
        kind = kinds[self.fill_turn % len(kinds)]
        self.fill_turn += 1
        if kind == "listeners":
            return self.fill_listeners_step()
        if kind == "events":
            return self.fill_events_step()
        track_ok = lambda d: not (m.pol["track"] == "policy" and d["reason"] == R_DEFAULT and d["action"] == HOST)
        if kind == "capacity":
            pred = lambda d, ck: d["action"] == OFFLOAD and m.devs[d["dev"]]["present"]
        elif kind == "quota":
            pred = lambda d, ck: d["action"] == OFFLOAD and m.devs[d["dev"]]["present"] and ck != self.env.host_cookie
        elif kind == "flows":
            pred = lambda d, ck: ck != self.env.host_cookie and track_ok(d)
        else:
            pred = lambda d, ck: d["action"] == OFFLOAD and not m.devs[d["dev"]]["present"]
        spec = self.find_spec(pred, tenant_only=kind in ("quota", "flows"), host_only=kind == "capacity")
        if not spec and self.apply_for(kind):
            spec = self.find_spec(pred, tenant_only=kind in ("quota", "flows"), host_only=kind == "capacity")
        if not spec:
            d = self.poll(self.check_toectl_flows)
            return not d, "fill (%s): no connection of this policy can (opened none)" % kind, d
        want = {"capacity": R_CAPACITY, "quota": R_QUOTA, "nodev": R_NODEV}.get(kind)
        q0 = m.stats["QUOTA"]
        n = 0
        while n < 16 and len(self.conns) < 40:
            c, s = self.connect(*spec)
            n += 1
            ends = [c, s]
            if kind == "flows" and m.stats["QUOTA"] > q0 and any(e["fate"] == "flows_quota" for e in ends):
                break
            if want is not None and any(e.get("want", {}).get("reason") == want for e in ends if e["record"]):
                break
        # then one that holds what was refused closes, and the same
        # connection again gets what the model says (its share back)
        ck = self.env.cookie[spec[0]]
        holds = {"capacity": lambda e: e["slot"] is not None,
                 "quota": lambda e: e["tslot"] is not None and e["tslot"][0] == ck,
                 "flows": lambda e: e["ftenant"] == ck, "nodev": lambda e: False}[kind]
        back = ""
        for cid, sid in list(self.conns)[::-1]:
            if any(e["record"] and holds(e) for e in (self.socks[cid], self.socks[sid])):
                self.close_conn(cid, sid)
                c, s = self.connect(*spec)
                back = "; one closed, the next: %s" % ", ".join(
                    "%s/%s" % (["host", "offload", "bypass"][e["want"]["decision"]], REASONS[e["want"]["reason"]])
                    if e["record"] else e["fate"] for e in (c, s))
                break
        d = self.poll(self.check_toectl_flows)
        return not d, "fill (%s) with %d connections %s [%s]->[%s]:%d%s" % (
            kind, n, spec[0], spec[2], spec[3], spec[4], back), d

    @staticmethod
    def set_quota(p, key, val):
        """p's quota with key set to val (None: its default), its line rewritten."""
        p["quota"] = dict(p["quota"])
        if val is None:
            p["quota"].pop(key, None)
        else:
            p["quota"][key] = val
        p["text"] = [t for t in p["text"] if not t.startswith("quota ")] + \
            (["quota " + " ".join("%s %d%%" % kv for kv in sorted(p["quota"].items()))] if p["quota"] else [])

    def apply_for(self, kind):
        """A random policy with a first rule made for the fill of kind (the
        random ones often name no connection it needs), applied."""
        p = self.gen.policy()
        sp = self.rnd.choice(SPORTS)
        devs = [d for d in p["devices"] if not d["kmod"]]
        if kind == "nodev" or not devs:
            d = {"name": "k9" if kind == "nodev" else "sw9", "kmod": kind == "nodev", "steer": "account", "cpu": 0}
            if not d["kmod"]:
                d.update(type="software", nconn=3)
            p["devices"].insert(0, d)  # (in the file's order: toed places them so)
            p["text"].insert(0, "device k9 kmod" if d["kmod"] else "device sw9 type software nconn 3")
            devs = [d]
        dev = self.rnd.choice(devs)["name"]
        rule = {"action": OFFLOAD, "dev": dev, "family": None, "proto": "tcp", "rport": (sp, sp),
                "netns": None if kind == "capacity" else "any", "netns_text": None if kind == "capacity" else "any"}
        text = "rule offload dev %s rport %d" % (dev, sp) + ("" if kind == "capacity" else " netns any")
        if kind == "flows":
            rule.update(action=HOST, dev=None)
            text = "rule host rport %d netns any" % sp
            self.set_quota(p, "flows", self.rnd.choice([1, 2]))
        if kind == "listeners":
            del rule["rport"]
            rule["lport"] = (sp, sp)
            text = text.replace("rport", "lport")
        if kind == "quota" and p["quota"].get("slots", 50) == 100:
            self.set_quota(p, "slots", 50)
        p["rules"].insert(0, rule)
        first = min([i for i, t in enumerate(p["text"]) if t.startswith("rule ")] + [len(p["text"])])
        p["text"].insert(max(first, sum(1 for t in p["text"] if t.startswith("device "))), text)
        self.write_conf("\n".join(p["text"]) + "\n")
        if subprocess.run(["toectl", "--run-dir", self.a.run, "reload"], capture_output=True).returncode:
            return False
        self.model.apply(p)
        return True

    def events_read(self):
        """Has toed read every tenant's events (toe_tenants 65 = 66)?"""
        got = {(e["key"]["netns"], e["key"]["what"]): e["value"]["held"] for e in dump(self.mp["TENANTS"])}
        return all(v == got.get((k[0], TQ_EV_READ), 0) for k, v in got.items() if k[1] == TQ_EV)

    def fill_events_step(self):
        """A tenant's share of the event ring (quota events 1%) filled and
        gone past: a policy with it applied, toed stopped (SIGSTOP: it
        reads nothing), listeners opened and closed in the tenant (a
        listen_start and a listen_stop each, always), the events past its
        share dropped and counted; toed going on reads the rest; then the
        policy without the 1% again (a slow toed must not drop the others'
        events later)."""
        p = self.gen.policy()
        self.set_quota(p, "events", 1)
        self.write_conf("\n".join(p["text"]) + "\n")
        rc, out = subprocess.run(["toectl", "--run-dir", self.a.run, "reload"], capture_output=True,
                                 text=True).returncode, ""
        if rc:
            return False, "fill (events): the policy with quota events 1% applies", ["rc %d" % rc]
        self.model.apply(p)
        budget = self.rd_hdr(self.model.gen)["tenant_events"]
        ns = self.rnd.choice(self.env.nsnames[1:])
        ck = self.env.cookie[ns]
        if self.poll(lambda: [] if self.events_read() else ["toed has not read every event"]):
            return False, "fill (events): toed reads every event before the fill", []
        n = budget + self.rnd.randint(1, 3)
        keys = []
        os.kill(self.a.toed_pid, 19)  # SIGSTOP
        try:
            for i in range(n):
                keys.append(self.listener(ns, AF4, "127.0.0.1", 30000 + i)["key"])
            for k in keys:
                self.close_listener(k)
        finally:
            os.kill(self.a.toed_pid, 18)  # SIGCONT
        # n listen_start: budget on the ring, the rest dropped; n listen_stop: all dropped
        drop = n - budget + n
        self.model.ev_refused[ck] = self.model.ev_refused.get(ck, 0) + drop
        self.model.stats["EVENT_QUOTA"] += drop
        p2 = dict(p)
        self.set_quota(p2, "events", None)
        self.write_conf("\n".join(p2["text"]) + "\n")
        rc2 = subprocess.run(["toectl", "--run-dir", self.a.run, "reload"], capture_output=True).returncode
        if rc2 == 0:
            self.model.apply(p2)
        d = [] if rc2 == 0 else ["the policy without quota events 1%%: rc %d" % rc2]
        d += self.poll(self.check_toectl_policy)
        return not d, "fill (events): %d listeners opened and closed in %s with toed stopped, a share of %d " \
            "events: %d dropped; then events 50%% again" % (n, ns, budget, drop), d

    def fake_key(self, i):
        return struct.pack("<4I4IHHBB2xQ", 0x0900007F, 0, 0, 0, 0, 0, 0, 0, 1 + i % 65535, 0, AF4, 0,
                           FAKE_NETNS - i // 65535)

    def listener_spec(self, avoid=()):
        """A listener the policy offloads on a present device, not open yet."""
        m = self.model
        for _ in range(400):
            ns, fam, ca, sa, sp = self.random_spec()
            if (ns, fam, sa, sp) in self.listeners or (ns, fam, sa, sp) in avoid:
                continue
            d = m.decide(self.env.cookie[ns], fam, sa, sp, "::" if fam == AF6 else "0.0.0.0", 0, self.env.cgid["cg"])
            if d["action"] == OFFLOAD and m.devs[d["dev"]]["present"]:
                return ns, fam, ca, sa, sp
        return None

    def fill_listeners_step(self):
        """toe_listeners filled to its last entry (by hand: entries of a
        namespace none has), a listener policy offloads then stays on the
        host (listeners_full) and so does a connection it accepts; one
        filler gone, the next listener is offloaded again."""
        s1 = self.listener_spec()
        s2 = s1 and self.listener_spec(avoid=[(s1[0], s1[1], s1[3], s1[4])])
        if not s2 and self.apply_for("listeners"):
            s1 = self.listener_spec()
            s2 = s1 and self.listener_spec(avoid=[(s1[0], s1[1], s1[3], s1[4])])
        if not s2:
            d = self.poll(self.check_toectl_flows)
            return not d, "fill (listeners): no listener of this policy is offloaded (opened none)", d
        mp = self.map("LISTENERS")
        val = struct.pack("<4IQQ", NONE, NONE, 0, NONE, 0, 0)
        n = self.env.listeners_room()
        for i in range(n):
            mp.put(self.fake_key(i), val)
        self.fill_listeners = n
        out = []
        try:
            l1 = self.listener(s1[0], s1[1], s1[3], s1[4])
            c, s = self.connect(*s1)
            out.append("listener %s [%s]:%d %s, its connection %s" % (
                s1[0], s1[3], s1[4], "full" if l1["full"] else "in the map",
                "%s/%s" % (["host", "offload", "bypass"][s["want"]["decision"]], REASONS[s["want"]["reason"]])
                if s["record"] else s["fate"]))
            mp.delete(self.fake_key(n - 1))
            self.fill_listeners -= 1
            l2 = self.listener(s2[0], s2[1], s2[3], s2[4])
            self.connect(*s2)
            out.append("one filler gone: listener %s [%s]:%d %s" % (
                s2[0], s2[3], s2[4], "full" if l2["full"] else "in the map"))
        finally:
            for i in range(self.fill_listeners):
                mp.delete(self.fake_key(i))
            self.fill_listeners = 0
        d = self.poll(self.check_toectl_flows)
        return not d, "fill (listeners) with %d fillers: %s" % (n, "; ".join(out)), d

    def step_reload(self):
        """toe-loader load over the running datapath: one that fails at a
        change (TOE_LOADER_FAIL_AT) changes nothing; one that succeeds
        keeps the maps, and toed follows it, applying its own policy
        again (a new serial, the same policy) when the policy in force is
        its own; after toed --apply from another program the maps keep
        that one, and toed leaves it (the same serial, the same policy)."""
        n = self.rnd.randint(1, 5)
        if self.rnd.random() < 0.4:
            n = 0
        env = dict(os.environ, TOE_LOADER_FAIL_AT=str(n)) if n else dict(os.environ)
        # toectl asks toed meanwhile (it looks at the datapath before each
        # request): toed sees the reload half-way, as a busy one would
        r = subprocess.Popen(["nsenter", "--net=" + self.env.nspath[self.env.nsnames[0]], "toe-loader", "load",
                              "--cgroup", self.a.cg, "--pin-dir", self.a.pin, "--wait", "5"] + self.a.load.split(),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        while r.poll() is None:
            subprocess.run(["toectl", "--run-dir", self.a.run, "status"], capture_output=True)
        out = r.stdout.read().strip()
        if not n:
            okay = r.returncode == 0 and SAB != "reload"
            if okay and self.model.own:
                self.model.reloaded()
            return okay, "a datapath reload that succeeds: the maps kept, toed follows it", \
                ["toe-loader load: rc %d: %s" % (r.returncode, out[-300:])]
        okay = r.returncode != 0 and ("change %d fails" % (n + (SAB == "reload"))) in out
        return okay, "a datapath reload failing at its change %d (TOE_LOADER_FAIL_AT), state kept" % n, \
            ["toe-loader load: rc %d: %s" % (r.returncode, out[-300:])]

    def run(self):
        print("# seed %d, %d steps" % (self.a.seed, self.a.steps), flush=True)
        self.snapshot_base()
        ok_, desc, diffs = self.step_apply()
        self.report(ok_, "start: " + desc, diffs)
        if not ok_:
            return
        steps = ["apply"] * 5 + ["open"] * 5 + ["close"] * 3 + ["fill"] * 5 + ["bad"] * 2 + ["reload"] * 2
        for i in range(1, self.a.steps + 1):
            kind = self.rnd.choice(steps)
            t0 = time.monotonic()
            fn = {"apply": self.step_apply, "open": self.step_open, "close": self.step_close,
                  "fill": self.step_fill, "bad": self.step_bad, "reload": self.step_reload}[kind]
            try:
                ok_, desc, diffs = fn()
            except Exception as e:
                ok_, desc, diffs = False, kind, ["error: %r" % e]
            pre = "step %d/%d (%s): " % (i, self.a.steps, kind)
            self.report(ok_, pre + desc, diffs)
            self.report(not (d := self.poll(self.check_policy)), pre + "the policy maps (header, rules, tuples, "
                        "cells, port classes, devices) equal the model's", d)
            self.report(not (d := self.poll(self.check_flows)), pre + "every socket's record and "
                        "toe_listeners equal the model's (%d sockets)" % len(self.socks), d)
            self.report(not (d := self.poll(self.check_devs)), pre + "toe_dev_live and toe_tenants "
                        "(held, refused) equal the model's", d)
            self.report(not (d := self.poll(self.check_counters)), pre + "the counters' deltas (%s) equal "
                        "the model's" % ", ".join("%s %d" % (k.lower(), v) for k, v in
                                                  list(self.model.stats.items()) + list(self.model.rsn.items()) if v),
                        d)
            print("# step %d took %.2f s" % (i, time.monotonic() - t0), flush=True)
        # everything closed: every slot, share and record back
        for cid, sid in list(self.conns):
            self.close_conn(cid, sid)
        for k in list(self.listeners):
            self.close_listener(k)

        def zero():
            d = self.check_devs() + self.check_flows() + self.check_counters()
            d += ["toe_dev_live[%d] live %d" % (i, x[0]) for i, x in enumerate(self.model.live) if x[0]]
            d += ["toe_tenants %s held %d" % (k, v[0]) for k, v in self.model.tenants.items() if v[0]]
            return d
        self.report(not (d := self.poll(zero)), "all closed: every slot, tenant share, record and "
                    "listener given back, as the model says", d)


def main():
    ap = argparse.ArgumentParser()
    for o in ("pin", "run", "conf", "cg", "ns", "names", "load", "log"):
        ap.add_argument("--" + o, required=True)
    ap.add_argument("--toed-pid", type=int, required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--steps", type=int, required=True)
    a = ap.parse_args()
    d = Driver(a)
    try:
        d.run()
    except Exception as e:  # the rest reported as not run: the plan holds
        print("# the driver stopped: %r" % e)
    while d.nchecks < 2 + 5 * a.steps:
        d.report(False, "not run: the driver stopped early (above)")
    sys.exit(1 if d.failed else 0)


if __name__ == "__main__":
    main()
