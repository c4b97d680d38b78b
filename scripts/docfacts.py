#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""docfacts: the facts of the docs that a table of the code or a probe
determines, read from those tables (scripts/docscheck.py's kinds fact,
manpage and usage; see its help).  Each reader fails loudly (docscheck exits
2) when it no longer finds its table, rather than checking nothing; each
check reports a doc whose sentence it no longer finds, so that a rewording
moves the check with it.

Run alone, it prints what it read: docfacts.py [--root DIR]
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import toetables  # noqa: E402 (beside this file)


class Gone(Exception):
    """A table the checks read is no longer where it was."""


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
        return fh.read()


def need(what, found, rel):
    if not found:
        raise Gone("%s not found in %s" % (what, rel))
    return found


# ---------------------------------------------------------------- tables

def map_table(root):
    """The pinned maps, in include/toe_maps.h's TOE_MAP_TABLE order."""
    t = read(root, "include/toe_maps.h")
    body = need("#define TOE_MAP_TABLE(X)", re.search(
        r"^#define\s+TOE_MAP_TABLE\(X\)((?:.*\\\n)*.*)$", t, re.M), "include/toe_maps.h")
    return need("its X(ID, name) rows", re.findall(
        r"\bX\(\s*[A-Z0-9_]+\s*,\s*(toe_[a-z0-9_]+)\s*\)", body.group(1)), "include/toe_maps.h")


def map_types(root):
    """{map: BPF_MAP_TYPE_ suffix} of every map bpf/ declares: the last
    __uint(type, ...) before its "} name SEC(".maps")" (an inner map's
    template comes before its outer map's type)."""
    types = {}
    for f in sorted(os.listdir(os.path.join(root, "bpf"))):
        if not f.endswith((".h", ".c")):
            continue
        cur = None
        for line in read(root, "bpf/" + f).split("\n"):
            m = re.search(r"__uint\(\s*type\s*,\s*BPF_MAP_TYPE_(\w+)\s*\)", line)
            if m:
                cur = m.group(1)
            m = re.match(r"^\}\s*(toe_\w+)\s+SEC\(\"\.maps\"\)", line)
            if m and cur:
                types[m.group(1)] = cur
                cur = None
    return need("maps with a type", types, "bpf/")


# Map types the kernel creates no BTF for: map_check_no_btf (devmaps,
# cpumap, sockmaps, maps of maps, xskmap) answers ENOTSUPP, and a ring
# buffer has no key or value type to describe.
NO_BTF_TYPES = {"RINGBUF", "USER_RINGBUF", "ARRAY_OF_MAPS", "HASH_OF_MAPS",
                "DEVMAP", "DEVMAP_HASH", "CPUMAP", "SOCKMAP", "SOCKHASH",
                "XSKMAP"}


def no_btf_maps(root):
    """The maps of the table without BTF, by their type in bpf/."""
    types = map_types(root)
    return [m for m in map_table(root) if types.get(m) in NO_BTF_TYPES]


def test_no_btf(root):
    """selftests/loader/test_map_btf.sh's NO_BTF list, as map names."""
    rel = "selftests/loader/test_map_btf.sh"
    ids = dict(re.findall(r"\bX\(\s*([A-Z0-9_]+)\s*,\s*(toe_[a-z0-9_]+)\s*\)",
                          read(root, "include/toe_maps.h")))
    line = need("NO_BTF=", re.search(r'^NO_BTF="([^"]*)"', read(root, rel), re.M), rel)
    names = []
    for tok in line.group(1).split():
        m = re.match(r"\$MAP_([A-Z0-9_]+):\w+$", tok)
        names.append(ids.get(m.group(1), "?" + tok) if m else "?" + tok)
    return names


def loader_features(root):
    """[(name, kind, since, prog type)] of features[] in
    user/loader/features.c, in order: kind prog, map, helper or other (an
    attach or link type, a kernel function, ext)."""
    rel = "user/loader/features.c"
    t = read(root, rel)
    body = need("features[]", re.search(
        r"static const struct feature features\[\]\s*=\s*\{(.*?)\n\};", t, re.S), rel).group(1)
    rows = []
    for m in re.finditer(
            r"\bPROG\(\s*(\w+)\s*,\s*\"([^\"]+)\""
            r"|\bMAP\(\s*(\w+)\s*,\s*\"([^\"]+)\""
            r"|\bHELPER\(\s*(\w+)\s*,\s*(\w+)\s*,\s*\"([^\"]+)\""
            r"|\{\s*\"(\w+)\"\s*,\s*\"([^\"]+)\""
            r"|\{\s*NULL\s*,\s*\"([^\"]+)\"[^}]*?BPF_PROG_TYPE_(\w+)", body):
        g = m.groups()
        if g[0]:
            rows.append((g[0].lower(), "prog", g[1], None))
        elif g[2]:
            rows.append((g[2].lower(), "map", g[3], None))
        elif g[4]:
            rows.append((g[5], "helper", g[6], g[4].lower()))
        elif g[7]:
            rows.append((g[7], "other", g[8], None))
        else:
            rows.append((g[10].lower(), "other", g[9], None))
    if len(rows) < 20:
        raise Gone("features[] of %s: %d rows read" % (rel, len(rows)))
    return rows


def probed_list(rows):
    """The names of the refused-without kinds as the docs list them: a
    helper two program types use named with its type ("fib_lookup (xdp)"),
    as scripts/features_table.py does."""
    base = [r for r in rows if r[1] in ("prog", "map", "helper")]
    names = [r[0] for r in base]
    return [r[0] + (" (%s)" % r[3] if r[3] and names.count(r[0]) > 1 else "") for r in base]


def config_statements(root):
    """The statements the parser takes (TOE_CFG_STATEMENTS of
    user/toed/config_stmts.h, as toe-tables dumps it)."""
    return [st["keyword"] for st in config_synopses(root)]


def config_synopses(root):
    """[{keyword, synopsis, ...}] of TOE_CFG_STATEMENTS."""
    return need("its statements", toetables.load(root).get("statements"), "toe-tables -j")


def fwd_reasons(root):
    """[(name, kind, hooks, counted, origin)] of TOE_FWD_REASON_TABLE (as
    build/toe-tables -j dumps it), the columns as the docs' table writes
    them ("xdp, tc", "flows, packets", "datapath" or "toed")."""
    rows = need("its fwd_reasons", toetables.load(root).get("fwd_reasons"), "toe-tables -j")
    return [(r["name"], r["kind"], r["hooks"].replace(",", ", "),
             "flows, packets" if r["packets"] else "flows", r["origin"]) for r in rows]


# ---------------------------------------------------------------- checks

def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def diff(want, got):
    """what is missing, what is extra: for a message."""
    miss = [x for x in want if x not in got]
    extra = [x for x in got if x not in want]
    return "; ".join(p for p in (
        "missing " + ", ".join(miss) if miss else "",
        "not so " + ", ".join(extra) if extra else "") if p)


def check_btf_count(f, text, root, out, pattern, where):
    maps, nob = map_table(root), no_btf_maps(root)
    m = re.search(pattern, text)
    if not m:
        out.append((1, "the BTF count (%s) is no longer there: state it, or move the check" % where))
        return
    want = (len(maps) - len(nob), len(maps))
    got = (int(m.group(1)), int(m.group(2)))
    if got != want:
        out.append((line_of(text, m.start()), "%d of %d maps carry BTF, not %d of %d "
                    "(include/toe_maps.h's table; without BTF: %s)" %
                    (want + got + (", ".join(nob),))))


def facts_readme(f, text, root, out):
    check_btf_count(f, text, root, out, r"allows\s+it\s+\((\d+)\s+of\s+(\d+)\)",
                    "'allows it (N of M)'")


MAP_TYPE_WORDS = {"HASH": "hash", "ARRAY": "array", "PERCPU_ARRAY": "per-CPU array",
                  "LRU_HASH": "LRU hash", "PROG_ARRAY": "program array",
                  "DEVMAP_HASH": "devmap hash", "CPUMAP": "cpumap", "SOCKHASH": "sockhash",
                  "SK_STORAGE": "socket storage", "RINGBUF": "ring buffer",
                  "QUEUE": "queue", "ARRAY_OF_MAPS": "array of maps"}


def facts_maps(f, text, root, out):
    check_btf_count(f, text, root, out, r"(\d+)\s+of\s+the\s+(\d+)\s+carry\s+BTF",
                    "'N of the M carry BTF'")
    nob, tested = no_btf_maps(root), test_no_btf(root)
    m = re.search(r"refuses\s+BTF\s+for\s+the\s+others(.*?)Creating\s+one", text, re.S)
    if not m:
        out.append((1, "the list of maps without BTF ('refuses BTF for the others ... "
                    "Creating one') is no longer there"))
    else:
        got = re.findall(r"`(toe_\w+)`", m.group(1))
        if sorted(got) != sorted(nob):
            out.append((line_of(text, m.start()), "the maps without BTF (their types in bpf/): %s"
                        % diff(nob, got)))
    if sorted(tested) != sorted(nob):
        out.append((1, "selftests/loader/test_map_btf.sh's NO_BTF is not the maps whose type "
                    "takes no BTF: %s" % diff(nob, tested)))
    # the table: | [`toe_a`](#..), [`toe_b`](#..) | type, type | what |
    types, seen = map_types(root), {}
    for n, line in enumerate(text.split("\n"), 1):
        cells = line.split("|")
        if len(cells) < 4 or not cells[1].strip().startswith("[`toe_"):
            continue
        names = re.findall(r"\[`(toe_\w+)`\]", cells[1])
        # "arrays, hash" for three maps: each map's type is one of the words
        words = [w.strip() for w in re.sub(r"\s*\([^)]*\)", "", cells[2]).split(",")]
        words += [w[:-1] for w in words if w.endswith("s") and len(names) > 1]
        for name in names:
            seen.setdefault(name, []).append(n)
            want = MAP_TYPE_WORDS.get(types.get(name), "?")
            if want not in words:
                out.append((n, "%s is a %s map (bpf/), the table says %s" %
                            (name, want, cells[2].strip())))
    for name in map_table(root):
        if name not in seen:
            out.append((1, "%s (include/toe_maps.h) has no row in the table of maps" % name))
        elif len(seen[name]) > 1:
            out.append((seen[name][1], "%s has %d rows in the table of maps" % (name, len(seen[name]))))
    for name in seen:
        if name not in map_table(root):
            out.append((seen[name][0], "%s is in the table of maps, not in include/toe_maps.h" % name))


def facts_kernels(f, text, root, out):
    rows = loader_features(root)
    want = probed_list(rows)
    m = re.search(r"helper opentoe uses \((\d+): (.*?)\) is present on every kernel", text, re.S)
    if not m:
        out.append((1, "the list of probed types and helpers ('helper opentoe uses (N: ...) is "
                    "present on every kernel') is no longer there"))
    else:
        got = [x.strip() for x in re.split(r",\s*", m.group(2))]
        n = line_of(text, m.start())
        if sorted(got) != sorted(want):
            out.append((n, "the types and helpers toe-loader probes (user/loader/features.c): %s"
                        % diff(want, got)))
        if int(m.group(1)) != len(want):
            out.append((n, "toe-loader probes %d program types, map types and helpers, not %s"
                        % (len(want), m.group(1))))
    table = {}
    for n, line in enumerate(text.split("\n"), 1):
        c = [x.strip() for x in line.split("|")]
        if len(c) > 3 and line.startswith("| ") and c[1] not in ("feature", "") and \
                not c[1].startswith("-"):
            table[c[1]] = (n, c[2])
    known = {r[0]: r[2] for r in rows} | {x: None for x in want}
    for name, since in ((r[0], r[2]) for r in rows if r[1] == "other"):
        if name not in table:
            out.append((1, "%s (probed by toe-loader, with a fallback or an attach type) has no "
                        "row in the table" % name))
        elif table[name][1] != since:
            out.append((table[name][0], "%s came with %s (user/loader/features.c), the table says %s"
                        % (name, since, table[name][1])))
    for name, (n, _) in table.items():
        if name not in known:
            out.append((n, "%s is no feature toe-loader probes" % name))


def statement_list(root, text, m, what, names, out):
    """The statements a doc lists are user/toed/config_stmts.h's: names(m)
    reads the list (the statements, where they start) from m, the match of
    it; what names the list for when m is None.  False: no list."""
    if not m:
        out.append((1, "%s is no longer there" % what))
        return False
    want = config_statements(root)
    got, pos = names(m)
    if sorted(got) != sorted(want):
        out.append((line_of(text, pos), "the statements (user/toed/config_stmts.h's table): %s"
                    % diff(want, got)))
    return True


def facts_configuration(f, text, root, out):
    m = re.search(r"Statements\s+are\s+(.*?),\s+in\s+any\s+order", text, re.S)
    statement_list(root, text, m, "the list of statements ('Statements are ..., in any order')",
                   lambda m: (re.findall(r"`(\w+)`", m.group(1)), m.start()), out)


def facts_forwarding(f, text, root, out):
    want = fwd_reasons(root)
    got, lines, first = [], [], None
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^\|\s*`(\w+)`\s*\|\s*(returned|ended)\s*\|([^|]*)\|([^|]*)\|([^|]*)\|",
                     line)
        if m:
            where = m.group(5).strip()
            origin = ("toed, datapath" if where.startswith("toed") and "bpf/" in where
                      else "toed" if where.startswith("toed") else "datapath")
            got.append((m.group(1), m.group(2), m.group(3).strip(), m.group(4).strip(), origin))
            lines.append(n)
            first = first or n
    if not got:
        out.append((1, "the table of reasons ('| `reason` | returned | hooks | counted | where |') "
                    "is no longer there"))
    elif [x[:2] for x in got] != [x[:2] for x in want]:
        out.append((first, "the reasons and their kinds (TOE_FWD_REASON_TABLE, in its order): %s"
                    % diff(["%s %s" % x[:2] for x in want], ["%s %s" % x[:2] for x in got])))
    cols = {w[0]: w for w in want}
    for g, n in zip(got, lines):
        w = cols.get(g[0])
        for col, a, b in zip(("hooks", "counted", "where"), w[2:] if w else (), g[2:]):
            if a != b:
                out.append((n, "reason %s: %s is %s (TOE_FWD_REASON_TABLE's columns), "
                            "the table says %s" % (w[0], col, a, b)))


def reason_lists(f, text, root, out):
    """A list of toectl stats' reason counters written as a prefix's first
    name then suffixes ("`refused_capacity`, `_nodev`, ...") names every
    one of that prefix (scripts/counters.py reads them from the code), in
    any doc."""
    import counters  # beside this file
    names = counters.reason_rows(root)
    for m in re.finditer(r"`(bypass_to_tcp|refused)_(\w+)`((?:,\s*(?:and\s+|or\s+)?`_\w+`)+)", text):
        prefix = m.group(1)
        got = [m.group(2)] + re.findall(r"`_(\w+)`", m.group(3))
        want = [n[len(prefix) + 1:] for n in names if n.startswith(prefix + "_")]
        if sorted(got) != sorted(want):
            out.append((line_of(text, m.start()), "toectl stats' %s_* counters (the code's "
                        "reasons): %s" % (prefix, diff(want, got))))


def facts_toed_man(f, text, root, out):
    """toed.8's CONFIGURATION synopsis: a line per statement (.nf ... .fi,
    continuation lines indented)."""
    m = re.search(r"^\.SH CONFIGURATION\n(?:.*\n)*?\.nf\n((?:.*\n)*?)\.fi", text, re.M)
    # a statement of several forms has a line for each
    if not statement_list(root, text, m, "the CONFIGURATION synopsis (.SH CONFIGURATION ... .nf ... .fi)",
                          lambda m: (sorted(set(x.split()[0] for x in m.group(1).split("\n")
                                                if x.strip() and not x[0].isspace())), m.start(1)), out):
        return
    # each statement's lines (a form, its continuations) are its synopsis
    lines = m.group(1).replace("\\-", "-").rstrip("\n").split("\n")
    for st in config_synopses(root):
        mine = []
        for x in lines:
            if x.strip() and not x[0].isspace():
                on = x.split()[0] == st["keyword"]
            if x.strip() and on:
                mine.append(x.rstrip())
        if mine and mine != st["synopsis"].split("\n"):
            out.append((line_of(text, m.start(1)), "the synopsis of %s is not TOE_CFG_STATEMENTS' "
                        "(user/toed/config_stmts.h): %s" % (st["keyword"], " / ".join(
                            st["synopsis"].split("\n")))))


def facts_toectl_man(f, text, root, out):
    """toectl.8: its COMMANDS are TOE_CTL_TABLE's (user/lib/ctl_cmds.h, as
    toe-tables dumps it), in its order; the monitor's lists of the reasons
    fwd_returned and fwd_ended give are made from TOE_FWD_REASON_TABLE
    (a line '.\\" toe-tables: ... @fwd_reasons KIND@' after the event's
    name, which toe-tables --man expands when make builds the page)."""
    t = toetables.load(root)
    want = [c["name"] for c in need("its commands", t.get("commands"), "toe-tables -j")]
    got = [w for w in man_commands(text) if not w.startswith("-")]
    if got != want:
        out.append((1, "the COMMANDS (TOE_CTL_TABLE of user/lib/ctl_cmds.h, in its order): %s%s"
                    % (diff(want, got) or "another order: ", "" if diff(want, got) else " ".join(got))))
    for kind, event in (("returned", "fwd_returned"), ("ended", "fwd_ended")):
        if not re.search(r"^\.B %s\n(?:.*\n){0,3}?\.\\\" toe-tables: .*@fwd_reasons %s@" % (event, kind),
                         text, re.M):
            out.append((1, "%s's reasons are no longer a list made from the tables ('.B %s', "
                        "then within 3 lines '.\\\" toe-tables: ... @fwd_reasons %s@')"
                        % (event, event, kind)))


FACTS = {"README.md": facts_readme, "toed.8": facts_toed_man, "toectl.8": facts_toectl_man, "maps.md": facts_maps, "kernels.md": facts_kernels,
         "configuration.md": facts_configuration, "forwarding.md": facts_forwarding}


def check_facts(f, text, root):
    """[(line, message)] of the doc f (by its name) against the tables."""
    out = []
    fn = FACTS.get(os.path.basename(f))
    if fn:
        fn(f, text, root, out)
    reason_lists(f, text, root, out)
    return out


# ------------------------------------------------------- --help and man

OPT = r"(?<![\w-])(--?[a-zA-Z][\w-]*)"


def option_entries(helptext):
    """[(short, long)] of a --help's option list: its lines that start with
    blanks and an option ("  -s, --snaplen N", "      --rcvbuf BYTES")."""
    rows = []
    for line in helptext.split("\n"):
        # (deeper: a description's continuation, which may start with one)
        m = re.match(r"^ {2,6}(-[a-zA-Z])?(?:,\s*)?(--[a-zA-Z][\w-]*)?(?=\s|$)", line)
        if m and (m.group(1) or m.group(2)):
            rows.append((m.group(1), m.group(2)))
    return rows


def synopsis(helptext):
    """The usage lines: "Usage: ..." and the lines after it up to a blank."""
    lines, on = [], False
    for line in helptext.split("\n"):
        if line.startswith("Usage:"):
            on = True
        elif on and not line.strip():
            break
        if on:
            lines.append(line)
    return "\n".join(lines)


def check_usage(prog, helptext):
    """Problems of one --help: an option listed but not in the synopsis, or
    in the synopsis but not listed (help and version need not be there; a
    synopsis saying [options] names no option)."""
    syn, entries, out = synopsis(helptext), option_entries(helptext), []
    if not syn or not entries:
        return out
    named = set(re.findall(OPT, syn))
    listed = {o for e in entries for o in e if o}
    if "[options]" not in syn:
        for short, lng in entries:
            if lng in ("--help", "--version"):
                continue
            if not ({short, lng} & named):
                out.append("%s is in its options, not in its usage line" % (lng or short))
    for o in sorted(named - listed):
        out.append("its usage line names %s, which its options do not list" % o)
    return out


def man_options(text):
    """Every -x and --long a man page names (roff unescaped)."""
    text = re.sub(r"\\f[BIRP]|\\f\(..|\\&|\\c", "", text).replace("\\-", "-")
    return set(re.findall(OPT, text))


def help_commands(helptext):
    """The commands of a --help's "Commands:" section (first words)."""
    m = re.search(r"^Commands:\n((?:(?:  \S.*|\s{5,}.*)?\n)*?)(?:\S|\n\S|\Z)", helptext, re.M)
    return re.findall(r"^  ([a-z][\w-]*)", m.group(1), re.M) if m else []


def man_commands(text):
    """The commands a man page's COMMANDS section has a .TP entry for: the
    first word of the line after .TP, roff unescaped."""
    sec = re.search(r"^\.SH COMMANDS\n(.*?)^\.SH ", text, re.M | re.S)
    words = []
    for m in re.finditer(r"^\.TP\n(.*)$", sec.group(1) if sec else "", re.M):
        line = re.sub(r"\\f[BIRP]|\\f\(..|\\&", "", m.group(1)).replace("\\-", "-")
        line = re.sub(r"^\.[A-Z]+\s+", "", line).replace('"', " ")
        if line.split():
            words.append(line.split()[0])
    return words


def check_manpage(f, text, helps):
    """[(line, message)]: the options of the --help texts of the program the
    man page f (PROG.8) is of, which the page never names."""
    prog = os.path.basename(f)[:-2]
    named, out = man_options(text), []
    for cmd, h in sorted(helps.items()):
        if cmd.split()[0] != prog:
            continue
        for short, lng in option_entries(h):
            for o in (short, lng):
                if o and o not in named:
                    out.append((1, "%s --help lists %s, the man page never names it" % (cmd, o)))
    if prog in helps:
        have = man_commands(text)
        for c in help_commands(helps[prog]):
            if c not in have:
                out.append((1, "%s --help has the command %s, the man page's COMMANDS no entry "
                            "for it" % (prog, c)))
    return out


def main():
    root = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--root"
                           else os.path.join(os.path.dirname(__file__), ".."))
    print("maps: %d, without BTF: %s" % (len(map_table(root)), ", ".join(no_btf_maps(root))))
    print("test_map_btf.sh NO_BTF: %s" % ", ".join(test_no_btf(root)))
    print("probed (%d): %s" % (len(probed_list(loader_features(root))),
                               ", ".join(probed_list(loader_features(root)))))
    print("other features: %s" % ", ".join("%s %s" % (r[0], r[2]) for r in loader_features(root)
                                            if r[1] == "other"))
    print("statements: %s" % ", ".join(config_statements(root)))
    print("reasons: %s" % ", ".join("%s %s" % r[:2] for r in fwd_reasons(root)))


if __name__ == "__main__":
    main()
