#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build/toe-tables (user/tables/toe-tables.c) dumps every vocabulary table
# the scripts read instead of parsing C (scripts/gen-names.py, counters.py,
# docfacts.py): its JSON is one document with every table, each row with
# its columns; its text has the same rows; names are unique in a table;
# each of toectl stats' counters is exported in a metrics family (or its
# twin of the other section is);
# the forward reasons' hooks are hooks; and build/toe_names.sh is what
# gen-names.py makes of it; the man pages make installs have their lists
# from it (toectl.8's reasons, toed.8's statements).  Needs no root and no kernel.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
plan 8
need_cmd python3
need_built toe-tables toe_names.sh man/toectl.8
cd "$TOE_TOP" || exit 1
tmp=$(mktemp -d)
defer "rm -rf $tmp"

check "toe-tables -j is one JSON document" \
	sh -c "toe-tables -j >'$tmp/t.json' && python3 -m json.tool '$tmp/t.json' >/dev/null"
toe-tables >"$tmp/t.txt"
out=$(python3 - "$tmp/t.json" "$tmp/t.txt" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
want = {"maps": ("id", "name"), "stats": ("index", "id", "name", "help"),
        "parse": ("index", "id", "name"),
        "fwd_reasons": ("value", "id", "name", "kind", "hooks", "packets", "origin", "help"),
        "fwd_hooks": ("value", "name"), "bypass_whys": ("value", "id", "name", "help"),
        "reasons": ("value", "id", "name", "counted", "help"), "rsn": ("name", "index"),
        "events": ("type", "id", "name", "fields", "help"),
        "statements": ("keyword", "synopsis", "bounds", "help"),
        "config_limits": ("id", "lo", "hi", "what"), "commands": ("name", "args", "help", "toed", "stream", "needs_dp"),
        "metric_families": ("id", "name", "type", "help"), "counters": ("section", "name", "family", "labels"),
        "views": ("view", "key", "type", "unit", "head", "width", "left", "text", "from",
                  "family", "labels"),
        "view_lines": ("view", "label", "when", "template")}
rows, sect = {}, None
for line in open(sys.argv[2]):
    line = line.rstrip("\n")
    if line.startswith("# "):
        sect = line[2:].split(":")[0]
        rows[sect] = 0
    elif line:
        rows[sect] += 1
for name, cols in want.items():
    tab = t.get(name)
    if not tab:
        print("columns: no table %s" % name)
        continue
    for r in tab:
        if any(c not in r for c in cols):
            print("columns: %s row %s lacks %s" % (name, r, [c for c in cols if c not in r]))
    if rows.get(name) != len(tab):
        print("text: %s has %s rows, the JSON %d" % (name, rows.get(name), len(tab)))
    # a counter's name is unique in its section of toectl stats
    # a view's key is unique in its view
    names = [(r.get("section"), r["name"]) for r in tab if r.get("name") is not None] + \
        [(r["view"], r["label"], r["when"]) for r in tab if "template" in r] + \
        [(r["view"], r["key"] or r["head"]) for r in tab if "key" in r]
    if len(names) != len(set(names)):
        print("unique: %s names one twice" % name)
hooks = {h["name"] for h in t["fwd_hooks"]}
for r in t["fwd_reasons"]:
    if not r["hooks"] or set(r["hooks"].split(",")) - hooks:
        print("hooks: %s on %r" % (r["name"], r["hooks"]))
# each event's fields are members of struct toe_event
import re
body = re.search(r"struct toe_event \{(.*?)\n\};", open("include/opentoe_events.h").read(), re.S).group(1)
members = set(re.findall(r"\b(\w+)(?:\[\d+\])?;", body))
for e in t["events"]:
    for fld in e["fields"].split():
        if fld not in members:
            print("hooks: event %s names %s, no field of struct toe_event" % (e["name"], fld))
# each statement's bounds are limits of config_limits.h, its synopsis its own
lims = {c["id"] for c in t["config_limits"]}
for st in t["statements"]:
    for b in st["bounds"].split():
        if b not in lims:
            print("hooks: statement %s bound by %s, no limit of config_limits.h" % (st["keyword"], b))
    for line in st["synopsis"].split("\n"):
        if not line.startswith(" ") and line.split()[0] != st["keyword"]:
            print("hooks: statement %s has the form %r" % (st["keyword"], line))
# each counter exported in a family of the metrics, or (null) by its
# twin of the other section; the families' types Prometheus' own
fams = {f["name"] for f in t["metric_families"]}
for f in t["metric_families"]:
    if f["type"] not in ("counter", "gauge", "histogram"):
        print("hooks: family %s of type %s" % (f["name"], f["type"]))
for c in t["counters"]:
    twin = [o for o in t["counters"] if o["name"] == c["name"] and o["section"] != c["section"] and o["family"]]
    if (c["family"] and c["family"] not in fams) or (not c["family"] and not twin):
        print("hooks: counter %s.%s exported in %s" % (c["section"], c["name"], c["family"]))
# a view's column has a form, a field it does not show none; a text-only
# field, and a column made of others, names fields of its view (from); an
# exported field a number of a family
for v in t["views"]:
    keys = {w["key"] for w in t["views"] if w["view"] == v["view"]}
    parts = {k.split(".")[0] for k in (v["from"] or "").split()}
    if (v["head"] is None) != (v["text"] is None) or not parts <= keys or \
            (v["text"] in ("ratio", "endpoint", "sum", "either") and not parts) or \
            (v["type"] == "text" and v["text"] is None) or \
            (v["family"] and (v["family"] not in fams or v["type"] != "u64")):
        print("hooks: view %s field %s: head %s, text %s, from %s, family %s" % (
            v["view"], v["key"], v["head"], v["text"], v["from"], v["family"]))
# toectl status' events.NAME are event types' names (TOE_EVENT_TABLE)
evnames = {e["name"] for e in t["events"]}
for v in t["views"]:
    if v["view"] == "status" and v["key"].startswith("events.") and v["key"][7:] not in evnames:
        print("hooks: status field %s: no event type %s" % (v["key"], v["key"][7:]))
# a line view's templates name its fields, its whens too
for ln in t["view_lines"]:
    keys = {w["key"] for w in t["views"] if w["view"] == ln["view"]}
    used = [m.split(":")[0] for m in re.findall(r"\{([^}]*)\}", ln["template"])]
    used += [re.split("!?=", ln["when"])[0]] if ln["when"] else []
    if set(used) - keys:
        print("hooks: %s line %s names %s, no field of the view" % (ln["view"], ln["label"], sorted(set(used) - keys)))
extra = set(t) - set(want)
if extra:
    print("columns: tables this test does not know: %s" % sorted(extra))
PY
) || out="columns: the check itself failed: $out"
for k in columns text unique; do
	bad=$(grep "^$k: " <<<"$out")
	[ -z "$bad" ] || echo "$bad"
	case $k in
	columns) check "every table there, every row with its columns" test -z "$bad" ;;
	text) check "the text dump has the JSON's rows, table by table" test -z "$bad" ;;
	unique) check "no name twice in a table" test -z "$bad" ;;
	esac
done
hb=$(grep "^hooks: " <<<"$out")
check "the forward reasons' hooks are hooks, the events' fields fields of struct toe_event, the statements' bounds limits, each counter in a family, each view's columns and lines well formed${hb:+ ($hb)}" test -z "$hb"
python3 scripts/gen-names.py "$tmp/t.json" >"$tmp/names.sh"
check "build/toe_names.sh is gen-names.py of the dump" cmp -s "$tmp/names.sh" "$TOE_BUILD/toe_names.sh"
# the man pages as installed (build/man/, toe-tables --man): toectl.8's
# lists of fwd_returned's and fwd_ended's reasons are the reasons of each
# kind, and no marker is left
lists=$(python3 - "$tmp/t.json" "$TOE_BUILD/man/toectl.8" <<'PY'
import json, re, sys
t = json.load(open(sys.argv[1]))
page = open(sys.argv[2]).read()
for kind, event in (("returned", "fwd_returned"), ("ended", "fwd_ended")):
    m = re.search(r"^\.B %s\n(?:.*\n){0,3}?\.RB \( (.*) \)[,:]$" % event, page, re.M)
    got = m.group(1).split(' ", " ') if m else None
    want = [r["name"] for r in t["fwd_reasons"] if r["kind"] == kind]
    if got != want:
        print("%s: %s, not %s" % (event, got, want))
if "toe-tables: " in page or "@fwd_reasons" in page:
    print("a marker left")
PY
)
check "build/man/toectl.8 lists each kind's reasons, made from the tables${lists:+: $lists}" test -z "$lists"
# toed.8's CONFIGURATION: the synopsis (.nf ... .fi) is every statement's,
# in the table's order, then a .TP entry a statement with its help
stmts=$(python3 - "$tmp/t.json" "$TOE_BUILD/man/toed.8" <<'PY'
import json, re, sys
t = json.load(open(sys.argv[1]))
page = open(sys.argv[2]).read()
m = re.search(r"^\.SH CONFIGURATION\n(?:.*\n)*?\.nf\n((?:.*\n)*?)\.fi\n((?:\.TP\n\.B .*\n.*\n)*)", page, re.M)
if not m:
    print("no synopsis and list")
    sys.exit()
want = "".join(st["synopsis"].replace("-", "\\-") + "\n" for st in t["statements"])
if m.group(1) != want:
    print("synopsis %r, not %r" % (m.group(1), want))
got = re.findall(r"^\.TP\n\.B (\S+)\n(.*)$", m.group(2), re.M)
want = [(st["keyword"], st["help"].replace("-", "\\-")) for st in t["statements"]]
if got != want:
    print("list %r, not %r" % (got, want))
if "toe-tables: " in page or "@statement" in page:
    print("a marker left")
PY
)
check "build/man/toed.8's synopsis and list of statements are the table's${stmts:+: $stmts}" test -z "$stmts"
finish
