#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""toectl's text form of a command against its -j form (the text is what
an operator reads; selftests/toed/test_toectl_text.sh).

  textjson.py CMD BEFORE.json TEXT AFTER.json

BEFORE and AFTER: `toectl -j CMD` run just before and just after the text
form, so a value that moves meanwhile (a counter, an age) must show in the
text between its two JSON values, and any other exactly.  Every value the
JSON form reports must be in the text form, where the command's table below
says, or be in that table's list of values the text form does not show; a
JSON field the table does not know fails too (a new field needs a place).
A view described in user/toed/fields.h (neigh, devices, flows, status) has
no table here: its columns or lines and the fields it does not show are its
description, as `toe-tables -j` (on PATH, or the dump $TOE_TABLES names)
gives it; stats is checked section by section as its JSON has it.
Prints one line a problem and a last line "N values checked, M not shown";
exit 1 on any problem.  CMD: status devices flows neigh stats policy.

  textjson.py monitor EVENTS.json TEXT NETNS_INO

`toectl -j monitor` and `toectl monitor` run side by side: text line i is
JSON event i; NETNS_INO, toed's own namespace (the text names another).
"""
import json
import os
import re
import subprocess
import sys


def age(s):
    """toe_age_str (user/toed/show_maps.c) of s seconds."""
    if s < 60:
        return "%.1fs" % s
    if s < 3600:
        return "%.0fm" % (s / 60)
    if s < 86400:
        return "%.1fh" % (s / 3600)
    return "%.1fd" % (s / 86400)


NUM = re.compile(r"^(-?\d+(?:\.\d+)?)(.*)$")


def between(got, a, b):
    """got (text) is the rendering of a, of b, or a number between them
    with the same unit."""
    if got in (a, b):
        return True
    ma, mb, mg = NUM.match(a), NUM.match(b), NUM.match(got)
    if not (ma and mb and mg) or not ma.group(2) == mb.group(2) == mg.group(2):
        return False
    lo, hi = sorted((float(ma.group(1)), float(mb.group(1))))
    return lo <= float(mg.group(1)) <= hi


def at(doc, path):
    for k in path.split("."):
        doc = doc[int(k)] if isinstance(doc, list) else doc[k]
    return doc


def leaves(doc, path=""):
    """The JSON's leaf paths, array indexes as "*"."""
    if isinstance(doc, dict):
        return {p for k, v in doc.items() for p in leaves(v, path + "." + k if path else k)}
    if isinstance(doc, list) and doc and all(isinstance(x, (dict, list)) for x in doc):
        return {p for v in doc for p in leaves(v, path + ".*" if path else "*")}
    return {path}


class Check:
    def __init__(self, cmd, j1, j2):
        self.cmd, self.j1, self.j2, self.probs, self.seen, self.n = cmd, j1, j2, [], set(), 0

    def value(self, what, path, got, fmt=str, star=None):
        """The text got shows the JSON value at path (its "*" replaced by
        star: the row's index), rendered by fmt."""
        real = path.replace("*", str(star)) if star is not None else path
        self.seen.add(path)
        self.compare(what, got, fmt(at(self.j1, real)), fmt(at(self.j2, real)))

    def compare(self, what, got, a, b):
        """The text got shows a, b (the JSON before and after) or between."""
        self.n += 1
        if got is None or not between(got, a, b):
            self.probs.append("%s: %s: the text shows %r, the JSON %r%s" % (
                self.cmd, what, got, a, "" if a == b else " then %r" % b))

    def problem(self, what):
        self.probs.append("%s: %s" % (self.cmd, what))

    def finish(self, not_shown):
        """Every JSON leaf checked or declared not shown."""
        every = leaves(self.j1) | leaves(self.j2)
        unknown = sorted(every - self.seen - set(not_shown))
        for p in unknown:
            self.problem("JSON field %s: not in the text form, and not declared as not shown" % p)
        return len(set(not_shown) & every)


def ep(fam, addr, port):
    return ("[%s]:%d" if fam == 6 else "%s:%d") % (addr, port)


def dash(v):
    return "-" if v is None else str(v)


def rows(text, header):
    """The lines of a table from its header line (a regex) to a blank line."""
    lines, out, on = text.split("\n"), [], False
    for x in lines:
        if on and not x.strip():
            break
        if on:
            out.append(x)
        on = on or bool(re.match(header, x))
    return out


# ---- the table views (toectl neigh, devices, flows): their fields as
# build/toe-tables -j describes them (user/toed/fields.h): a column a field
# the text shows, in its form; the fields it does not show, the rest
TEXT_RX = {"str": r"(\S+)", "words": r"(\S+(?: \S+)*?)", "num": r"(\d+|-)", "age": r"(\S+)",
           "ago": r"(\S+) ago", "ratio": r"(\S+)", "endpoint": r"(\S+)", "sum": r"(\d+|-)",
           "either": r"(\S+)", "dash": r"(-)"}


def tables():
    """build/toe-tables -j: toe-tables on PATH, or the dump $TOE_TABLES names."""
    path = os.environ.get("TOE_TABLES")
    return json.load(open(path)) if path else json.loads(subprocess.run(
        ["toe-tables", "-j"], check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout)


def view_fields(view):
    """The fields of a table view."""
    fields = [f for f in tables()["views"] if f["view"] == view]
    if not fields:
        sys.exit("textjson: toe-tables describes no view %s" % view)
    return fields


def member(r, key):
    """r's value at key (KEY.MEMBER: a member of object KEY); None if none."""
    for k in key.split("."):
        r = r.get(k) if isinstance(r, dict) else None
    return r


def text_of(f, r):
    """Field f of JSON row r as the text writes it (null or absent: -); a
    text-only one made of the fields its from names, as its form says."""
    t, v = f["text"], [member(r, k) for k in (f["from"] or f["key"] or "").split()]
    if t == "dash":
        return "-"
    if t == "ratio":
        return "-" if None in v else "%d/%d" % tuple(v)
    if t == "endpoint":
        return ep(r["family"], v[0], v[1])
    if t == "sum":
        return str(sum(x or 0 for x in v))
    if t == "either":
        return next((str(x) for x in v if x), "-")
    if v[0] is None:
        return "-"
    return age(v[0]) if t in ("age", "ago") else str(v[0])


def check_view(c, text, views, key_cols=1, kind=lambda r: 0):
    """Each row of the text (keyed by its first key_cols columns) against
    its JSON objects before and after, column by column as its view's
    description says (views: one, or one a kind of row, kind(r) its
    index); lines under a row (indented) aside.  The fields no view shows
    (nor makes a column of): not shown."""
    descs = [view_fields(v) for v in views]
    cols = [[f for f in d if f["head"]] for d in descs]
    if any([f["head"] for f in cs] != [f["head"] for f in cols[0]] for cs in cols):
        c.problem("the views %s have different columns" % ", ".join(views))
    rxs = [re.compile("^" + " +".join(TEXT_RX[f["text"]] for f in cs) + "$") for cs in cols]
    got = {}
    for x in rows(text, "^" + " +".join(re.escape(f["head"]) for f in cols[0]) + "$"):
        m = next((rx.match(x) for rx in rxs if rx.match(x)), None)
        if m:
            got[m.groups()[:key_cols]] = m.groups()
        elif not x.startswith("  "):
            c.problem("a %s row not in the table's form: %r" % (views[0], x))
    if len(got) != len(c.j1):
        c.problem("%d rows in the text, %d in the JSON" % (len(got), len(c.j1)))

    def key(r):
        return tuple(text_of(f, r) for f in cols[kind(r)][:key_cols])
    after = {key(r): r for r in c.j2}
    for r in c.j1:
        k, cs = key(r), cols[kind(r)]
        if k not in got or k not in after:
            c.problem("%s: %s" % (" ".join(k), "no text row" if k not in got else "gone from the JSON after"))
            continue
        for i, f in enumerate(cs):
            c.compare("%s %s" % (" ".join(k), f["head"].lower()), got[k][i], text_of(f, r), text_of(f, after[k]))
    parts = {p for cs in cols for f in cs for p in (f["from"] or f["key"] or "").split()}
    c.seen.update("*." + p for p in parts)
    return sorted({"*." + f["key"] for d in descs for f in d if f["key"] and f["key"] not in parts})


def check_neigh(c, text):
    return check_view(c, text, ["neigh"])


# toectl flows: toe_flows' rows and toe_fwd's (routed), a view each
def check_flows(c, text):
    return check_view(c, text, ["flows", "flows_routed"], key_cols=2,
                      kind=lambda r: 1 if r["direction"] == "routed" else 0)


# ---- toectl devices: the described view, then the hooks' table under it
# (lib/hooks.c's: a device's "hooks" field in JSON)
def check_devices(c, text):
    not_shown = check_view(c, text, ["devices"])
    hooks, into = {}, {}
    for x in rows(text, r"^INTERFACE +HOOK +WHY"):
        f = x.split()
        if len(f) >= 3:
            hooks[f[0]] = f
            into[f[0]] = x.partition(" into it: ")[2]
    for i, d in enumerate(c.j1):
        for h, hk in enumerate(d["hooks"]):
            g = hooks.get(hk["iface"], (None,) * 3)
            p = "*.hooks.%d." % h
            for k, col in enumerate(("iface", "hook", "why")):
                c.value("%s hook of %s: %s" % (d["device"], hk["iface"], col), p + col, g[k], star=i)
                c.seen.add("*.hooks.*." + col)
            # "into it:" (lib/hooks.c's into()): redirect_peer for tc,
            # xdp_redirect_into for XDP, each as the text says it
            t = into.get(hk["iface"])
            if hk["hook"] == "tc":
                said, key = t is not None and t.startswith("redirect_peer"), "redirect_peer"
            else:
                said, key = t == "XDP redirect", "xdp_redirect_into"
            c.n += 1
            c.seen.add("*.hooks.*." + key)
            if t is None or said != hk[key]:
                c.problem("%s hook of %s: %s %s, the text says into it: %r" % (
                    d["device"], hk["iface"], key, json.dumps(hk[key]), t))
    return [p for p in not_shown if p != "*.hooks"] + [
        "*.hooks.*.ifindex", "*.hooks.*.why_text"] + [
        k for k in ("*.hooks.*.redirect_peer", "*.hooks.*.xdp_redirect_into") if k not in c.seen]


# ---- toectl stats
def check_stats(c, text):
    sect, got = None, {}
    for x in text.split("\n"):
        m = re.match(r"^(\w+):$", x)
        if m:
            sect = m.group(1)
            continue
        m = re.match(r"^  (\w+) +(\S+)$", x)
        if m and sect:
            got[sect + "." + m.group(1)] = m.group(2)
    for p in sorted(leaves(c.j1)):
        c.value(p, p, got.get(p))
    extra = sorted(set(got) - leaves(c.j1))
    if extra:
        c.problem("in the text, not in the JSON: %s" % ", ".join(extra))
    return ()


def iface(i):
    """An interface of status's line: NAME (HOOK MODE[, dispatcher][, egress
    MODE][, neighbours mirrored]), or (not attached, ...)."""
    parts = ["%s %s" % (i["hook"], i["mode"])] if i["hook"] else [] if i["egress"] else ["not attached"]
    parts += ["dispatcher"] if i["dispatcher"] else []
    parts += ["egress " + i["egress"]] if i["egress"] else []
    parts += ["neighbours mirrored"] if i["neighbours_mirrored"] else []
    return "%s (%s)" % (i["name"], ", ".join(parts))


# ---- toectl status, a line view: its lines as build/toe-tables -j gives
# them (view_lines, from user/toed/fields.h): a label, the first form whose
# when holds, a template of the fields' values, {KEY} or {KEY:FORM}; the
# regex of a value by FORM (else by the field's type), and its text
FORM_RX = {"age": r"\S+", "s": "s?", "by": "this toed|another program", "unknown": ".*?",
           "f1": r"-?\d+\.\d", "ifaces": ".*", "u64": r"\d+", "bool": "true|false", "str": ".*?"}
FORMS = {"age": age, "s": lambda v: "" if v == 1 else "s",
         "by": lambda v: "this toed" if v == "toed" else "another program",
         "unknown": lambda v: "(unknown)" if v is None else v, "f1": lambda v: "%.1f" % v,
         "ifaces": lambda v: ",".join(" " + iface(i) for i in v) or " none",
         "bool": lambda v: "true" if v else "false", "str": lambda v: "" if v is None else v}


def json_text(v):
    return "true" if v is True else "false" if v is False else "null" if v is None else str(v)


def holds(when, doc):
    if not when:
        return True
    k, neg, v = re.match(r"^([^!=]+)(!?)=(.*)$", when).groups()
    return (json_text(member(doc, k)) == v) != bool(neg)


def check_status(c, text):
    t = tables()
    lines = [x for x in t["view_lines"] if x["view"] == "status"]
    types = {f["key"]: f["type"] for f in t["views"] if f["view"] == "status"}
    labels = list(dict.fromkeys(x["label"] for x in lines))
    textlines = [x for x in text.split("\n") if x]
    if len(textlines) != len(labels):
        c.problem("%d lines in the text, %d in the description (%s)" % (len(textlines), len(labels), " ".join(labels)))
    shown = set()
    for label in labels:
        forms = [x for x in lines if x["label"] == label]
        for x in forms:
            shown.update(m.split(":")[0] for m in re.findall(r"\{([^}]*)\}", x["template"]))
            shown.update([re.split("!?=", x["when"])[0]] if x["when"] else [])
        form = next((x for x in forms if holds(x["when"], c.j1)), None)
        if not form:
            c.problem("%s no form's when holds" % label)
            continue
        parts = re.split(r"\{([^}]*)\}", form["template"])
        fields = [(p.split(":")[0], p.split(":")[1] if ":" in p else types[p]) for p in parts[1::2]]
        rx = "^" + re.escape(label.ljust(11)) + "".join(
            re.escape(p) if k % 2 == 0 else "(%s)" % FORM_RX[fields[k // 2][1]] for k, p in enumerate(parts)) + "$"
        m = next((re.match(rx, x) for x in textlines if re.match(rx, x)), None)
        if not m:
            c.problem("no line /%s/ in the text" % rx)
            continue
        for k, (key, form_name) in enumerate(fields):
            fmt = FORMS.get(form_name, str)
            c.compare(key, m.group(k + 1), fmt(member(c.j1, key)), fmt(member(c.j2, key)))
    if "interfaces" in shown:
        shown.update("interfaces.*." + k for k in
                     ("name", "hook", "mode", "dispatcher", "egress", "neighbours_mirrored"))
    c.seen.update(shown)
    if c.j1.get("pin_dir") != c.j1["datapath"]["pin_dir"]:
        c.problem("pin_dir %r is not the datapath's %r" % (c.j1.get("pin_dir"), c.j1["datapath"]["pin_dir"]))
    return [k for k in types if k not in shown] + ["interfaces.*.ifindex"]


# ---- toectl policy: the configuration in its own syntax
def check_policy(c, text):
    """The statements as the file writes them (user/toed/config.c's shows):
    devices, default, rules, quota by their own forms, and every other
    top-level string (a setting of the table, as "track": "all") the line
    "KEY VALUE"."""
    lines = [x for x in text.split("\n") if x.strip()]
    m = re.match(r"^# policy (\d+) \(generation (\d+)\) from (.*)$", lines[0] if lines else "")
    for k, p in enumerate(("serial", "generation", "config")):
        c.value(p, p, m.group(k + 1) if m else None)
    devs = [x for x in lines if x.startswith("device ")]
    for i, d in enumerate(c.j1["devices"]):
        want = "device %s kmod" % d["name"] if d["kmod"] else \
            "device %s type %s nconn %d" % (d["name"], d["type"], d["nconn"])
        want += " dev %s" % d["dev"] if d.get("dev") else ""
        want += {"account": "", "forward": " steer forward"}.get(d["steer"], " steer cpu %s" % d.get("steer_cpu"))
        got = devs[i] if i < len(devs) else None
        c.value("device %s" % d["name"], "devices.*", got, lambda v: want, star=i)
    c.seen.update("devices.*." + k for k in ("name", "kmod", "type", "nconn", "dev", "steer", "steer_cpu"))
    want = "default %s" % c.j1["default"] + (" dev %s" % c.j1["default_dev"] if "default_dev" in c.j1 else "")
    c.value("default", "default", next((x for x in lines if x.startswith("default ")), None), lambda v: want)
    c.seen.add("default_dev")
    for k, v in c.j1.items():
        if isinstance(v, str) and k not in ("config", "default", "default_dev"):
            c.value(k, k, next((x.split(None, 1)[1] for x in lines if x.split()[0] == k), None))
    q = next((x for x in lines if x.startswith("quota ")), "")
    for k in ("slots", "flows", "events"):
        m = re.search(r"\b%s (\d+)%%" % k, q)
        c.value("quota %s" % k, "quota." + k, m.group(1) if m else None, str)
    rules = [x for x in lines if x.startswith("rule ")]
    for i, r in enumerate(c.j1["rules"]):
        want = "rule %s" % r["action"]
        for k in ("dev", "family", "local", "remote", "lport", "rport", "cgroup", "keepalive", "netns"):
            if k in r and not (k == "family" and ("local" in r or "remote" in r)):
                v = r[k]
                want += " %s %s" % (k, " ".join(map(str, v)) if isinstance(v, list) else v)
            c.seen.add("rules.*." + k)
        want += "    # line %d" % r["line"]
        c.value("rule %d" % i, "rules.*", rules[i] if i < len(rules) else None, lambda v: want, star=i)
        c.seen.update(("rules.*.action", "rules.*.line"))
    if len(rules) != len(c.j1["rules"]):
        c.problem("%d rules in the text, %d in the JSON" % (len(rules), len(c.j1["rules"])))
    return ("rules.*.index",)


# ---- toectl monitor: line i of the text monitor is event i of the JSON one
# (toed sends each event's two forms together: events.c, mon_send); per
# event type, the text's fields (a regex's groups) and what it leaves out
FLOW_RX = (r"^\[(flow_offloaded|flow_refused)\] (\S+) (<-|->) (\S+) (\S+) dev (\S+) reason (\S+) rule (-?\d+)"
           r" policy (\d+)( tid \d+)?( netns \d+)?$")
FLOW_F = ("event", "local", "direction", "remote", "decision", "device", "reason", "rule", "policy", "tid", "netns")
MON = {
    "flow_offloaded": (FLOW_RX, FLOW_F, ("bytes_acked", "bytes_received", "total_retrans", "netns_cookie")),
    "flow_refused": (FLOW_RX, FLOW_F, ("bytes_acked", "bytes_received", "total_retrans", "netns_cookie")),
    "flow_closed": (r"^\[(flow_closed)\] (\S+) (<-|->) (\S+) dev (\S+) out (\d+) in (\d+) retrans (\d+)( tid \d+)?"
                    r"( netns \d+)?$",
                    ("event", "local", "direction", "remote", "device", "bytes_acked", "bytes_received",
                     "total_retrans", "tid", "netns"), ("decision", "reason", "rule", "policy", "netns_cookie")),
    "listen_start": (r"^\[(listen_start)\] (\S+)$", ("event", "local"), "listen"),
    "listen_stop": (r"^\[(listen_stop)\] (\S+)$", ("event", "local"), "listen"),
    "neigh": (r"^\[(neigh)\] (set|delete) (\S+) dev (\S+)(?: lladdr (\S+) (\S+))?$",
              ("event", "op", "dst", "dev", "lladdr", "state"), ("ifindex",)),
    "policy": (r"^\[(policy)\] applied (\d+): (\d+) rules from \S+$", ("event", "serial", "rules"), ()),
}
LISTEN_NOT_SHOWN = ("raddr", "rport", "direction", "decision", "reason", "device", "rule", "policy", "bytes_acked",
                    "bytes_received", "total_retrans", "tid", "netns", "netns_cookie")


def mon_want(e, field, own_ns):
    """The text form of JSON event e's field."""
    if field == "local":
        return ep(6 if ":" in e["laddr"] else 4, e["laddr"], e["lport"])
    if field == "remote":
        return ep(6 if ":" in e["raddr"] else 4, e["raddr"], e["rport"])
    if field == "direction":
        return "<-" if e["direction"] == "passive" else "->"
    if field == "tid":
        return None if e["tid"] is None else " tid %d" % e["tid"]
    if field == "netns":  # shown when it is not toed's own
        return None if not e["netns"] or e["netns"] == own_ns else " netns %d" % e["netns"]
    if field in ("device", "lladdr"):
        return None if field == "lladdr" and e["op"] == "delete" else dash(e[field])
    if field == "state" and e["op"] == "delete":
        return None
    return str(e[field])


def check_monitor(c, text, own_ns):
    lines = [x for x in text.split("\n") if x]
    if len(lines) != len(c.j1):
        c.problem("%d text lines, %d JSON events" % (len(lines), len(c.j1)))
    for i, (e, x) in enumerate(zip(c.j1, lines)):
        if e["event"] not in MON:
            c.problem("event %d: %s has no text form this check knows: %r" % (i, e["event"], x))
            continue
        rx, fields, hidden = MON[e["event"]]
        m = re.match(rx, x)
        if not m:
            c.problem("event %d (%s): the text %r is not its form" % (i, e["event"], x))
            continue
        for k, f in enumerate(fields):
            want, got = mon_want(e, f, own_ns), m.group(k + 1)
            c.n += 1
            if want != got:
                c.problem("event %d (%s) %s: the text shows %r, the JSON %r (%r)" % (i, e["event"], f, got, want, x))
        shown = {"local": ("laddr", "lport"), "remote": ("raddr", "rport")}
        keys = {k for f in fields for k in shown.get(f, (f,))}
        rest = set(e) - keys - set(LISTEN_NOT_SHOWN if hidden == "listen" else hidden)
        if rest:
            c.problem("event %d (%s): JSON %s not in the text, and not declared as not shown" %
                      (i, e["event"], ", ".join(sorted(rest))))
    return ()


CHECKS = {"status": check_status, "devices": check_devices, "flows": check_flows, "neigh": check_neigh,
          "stats": check_stats, "policy": check_policy}


def main_monitor(a):
    """monitor EVENTS.json TEXT NETNS_INO: JSON lines, the text lines."""
    evs = [json.loads(x) for x in open(a[0]) if x.strip()]
    c = Check("monitor", evs, evs)
    check_monitor(c, open(a[1]).read(), int(a[2]))
    for p in c.probs:
        print(p)
    print("%d values checked in %d events (%s)" % (c.n, len(evs), ", ".join(
        "%s %d" % (t, sum(1 for e in evs if e["event"] == t)) for t in sorted({e["event"] for e in evs}))))
    return 1 if c.probs or not evs else 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "monitor":
        return main_monitor(sys.argv[2:])
    if len(sys.argv) != 5 or sys.argv[1] not in CHECKS:
        print(__doc__)
        return 2
    cmd = sys.argv[1]
    j1, j2 = (json.load(open(f)) for f in (sys.argv[2], sys.argv[4]))
    c = Check(cmd, j1, j2)
    not_shown = CHECKS[cmd](c, open(sys.argv[3]).read())
    hidden = c.finish(not_shown)
    for p in c.probs:
        print(p)
    print("%d values checked, %d not shown" % (c.n, hidden))
    return 1 if c.probs else 0


if __name__ == "__main__":
    sys.exit(main())
