#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""docscheck: what README.md, docs/*.md and man/*.8 name must exist.

Usage: docscheck.py [--root DIR] [--build DIR] [FILE...]
(default files: README.md, docs/*.md, man/*.8 under --root).

Each problem is printed as FILE:LINE: KIND: what, and the exit status is 1
if there is any (2 if the checker itself cannot run).  KIND is one of
  path    a path in the tree (user/..., bpf/..., selftests/..., scripts/...,
          dist/..., include/..., kmod/..., bench/..., man/..., docs/...)
          that does not exist; a glob must match something, and a path
          whose PATH.c exists is a program the build makes of it;
  target  `make TARGET` that the Makefile has no target for (from
          `make -npq`, so bench-% and every other rule count);
  option  an option of toe-loader, toed or toectl that the program's
          --help (from the build folder) does not list: the code is the
          source of truth, not the man pages;
  map     a toe_* name that is not a map of include/toe_maps.h's X(...)
          table, nor an eBPF program of bpf/, nor a struct or enum type,
          nor a file name;
  link    a relative markdown link whose file (or #anchor) is missing;
  fact    a number or a list a table of the code or a probe determines,
          which the doc states otherwise (by the file's name, so that a
          copy of the doc can be tried):
            README.md, maps.md  how many maps carry BTF, of how many
                        (include/toe_maps.h's table), and maps.md which do
                        not: the maps of bpf/ whose type the kernel takes
                        no BTF for, which must also be
                        selftests/loader/test_map_btf.sh's NO_BTF list;
                        maps.md's table: every map once, its type as bpf/
                        declares it;
            kernels.md  the program types, map types and helpers
                        toe-loader probes (features[] of
                        user/loader/features.c), their count, and a row of
                        the table, with its "since", for each other feature;
            toectl.8    its COMMANDS, TOE_CTL_TABLE's (user/lib/ctl_cmds.h)
                        in its order; the monitor's lists of fwd_returned's
                        and fwd_ended's reasons made from the tables (the
                        lines toe-tables --man expands);
            configuration.md  a section a statement (TOE_CFG_STATEMENTS
                        of user/toed/config_stmts.h), '## KEYWORD', its
                        first code block the table's synopsis of it;
            toed.8      its CONFIGURATION synopsis and list of statements
                        made from that table (the lines toe-tables --man
                        expands);
            forwarding.md  the reasons' table (TOE_FWD_REASON_TABLE of
                        include/opentoe_reasons.h): every reason, its kind,
                        and its columns: hooks, counted (flows, packets),
                        where (toed, or a program);
            any doc     a list of toectl stats' refused_* or
                        bypass_to_tcp_* counters ("`refused_capacity`,
                        `_nodev`, ..."): all of them (scripts/counters.py);
  manpage an option a program's --help lists (each command's of
          toe-loader, toectl dump's) that its man page (man/PROG.8) never
          names (the other way is kind option), or a command of its
          "Commands:" without a .TP entry in the page's COMMANDS;
  usage   an option of a --help's option list missing from its usage
          synopsis, or one the synopsis names that the list does not
          (toe-loader's commands, toectl, toectl dump); reported against
          the program ("toe-loader load --help:1").
Markdown is checked in code spans and code blocks for targets and options
(prose says "make" too); paths, maps and links everywhere.  A map that
toe-loader retires (its retired_maps[] table, somewhere under user/) may be
named: the docs tell its history.  toe_pol_* names a family of maps.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docfacts  # noqa: E402 (beside this file)

TREE_DIRS = "user|bpf|selftests|scripts|dist|include|kmod|bench|man|docs"
PATH_RE = re.compile(r"(?<![\w./$~-])((?:%s)/[\w./*?{}<>-]*)" % TREE_DIRS)
# make as a command: first in a code span or line (after a # or $ prompt),
# or after && ; | ( -- not "make" in an error message or a comment.
MAKE_RE = re.compile(r"(?:^\s*(?:[#$]\s+)?|[;&|(]\s*)make((?:\s+(?:-[-\w]+|[A-Z_]+=\S*))*)"
                     r"\s+([a-z][\w%-]*)(?![\w%<{*-])")
PROG_RE = re.compile(r"(?<![\w/.-])(toe-loader|toectl|toed)(?![\w.-])")
MAP_RE = re.compile(r"(?<![\w./-])(toe_[a-z0-9_]+)(?![\w-])(\.(?:c|h|bt|sh|py|o|conf)\b|\*)?")
LINK_RE = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
OPT_RE = re.compile(r"(?<![\w-])(--?[a-zA-Z][\w-]*)")
STOP_RE = re.compile(r"\s(?:\||;|&&|\|\||#|>|<)\s|`|\$\(|\)|\"|'")
LOADER_CMDS = ("load", "status", "unload", "features")


def problem(out, f, n, kind, msg):
    out.append("%s:%d: %s: %s" % (f, n, kind, msg))


def help_options(text):
    """Every -x and --long option a --help text names."""
    opts = set()
    for m in re.finditer(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", text):
        opts.add(m.group(1))
    return opts


def program_options(build):
    """{program: {subcommand or '': options}} from the programs' --help."""
    def run(args):
        exe = os.path.join(build, args[0])
        if not os.access(exe, os.X_OK):
            sys.exit("docscheck: %s not built (make)" % exe)
        r = subprocess.run([exe] + args[1:] + ["--help"], capture_output=True,
                           text=True, check=False)
        return r.stdout + r.stderr

    helps = {"toed": run(["toed"]), "toectl": run(["toectl"]),
             "toectl dump": run(["toectl", "dump"]),
             "toe-loader": run(["toe-loader"])}
    for c in LOADER_CMDS:
        helps["toe-loader " + c] = run(["toe-loader", c])
    progs = {"toed": {"": help_options(helps["toed"])},
             # toectl dump has options of its own (toectl dump --help)
             "toectl": {"": help_options(helps["toectl"]) |
                        help_options(helps["toectl dump"])}}
    top = help_options(helps["toe-loader"])
    loader = {"": set(top)}
    for c in LOADER_CMDS:
        loader[c] = help_options(helps["toe-loader " + c]) | {"-h", "--help"}
        loader[""] |= loader[c]
    progs["toe-loader"] = loader
    return progs, helps


def make_targets(root):
    """Every target of the Makefile: the data base of make -npq."""
    r = subprocess.run(["make", "-npq", "-C", root, ".DEFAULT"],
                       capture_output=True, text=True, check=False)
    targets, not_target = set(), False
    for line in r.stdout.splitlines():
        if line.startswith("# Not a target"):
            not_target = True
            continue
        m = re.match(r"^([^\s#:=][^:=]*?):(?!=)", line)
        if m and not not_target:
            targets.update(m.group(1).split())
        not_target = False
    return targets


def known_names(root):
    """toe_* names that are not maps: the C functions (eBPF programs
    included), struct, enum and union types of bpf/, include/, user/, kmod/."""
    names = set()
    for d in ("bpf", "include", "user", "kmod"):
        for s in glob.glob(os.path.join(root, d, "**", "*.[ch]"), recursive=True):
            with open(s, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            names.update(re.findall(r"\b(toe_\w+)\s*\(", text))
            names.update(re.findall(r"\b(?:struct|enum|union)\s+(toe_\w+)", text))
    return names


def map_names(root):
    with open(os.path.join(root, "include", "toe_maps.h"), encoding="utf-8") as fh:
        return set(re.findall(r"^\tX\(\w+,\s*(toe_\w+)\)", fh.read(), re.M))


def retired_maps(root):
    """The maps toe-loader's unload removes for older opentoes."""
    names = set()
    for s in glob.glob(os.path.join(root, "user", "**", "*.c"), recursive=True):
        with open(s, encoding="utf-8", errors="replace") as fh:
            m = re.search(r"retired_maps\[\]\s*=\s*\{(.*?)\};", fh.read(), re.S)
        if m:
            names.update(re.findall(r"\"(toe_\w+)\"", m.group(1)))
    return names


def unroff(line):
    """A man page line as plain text."""
    line = re.sub(r"\\f[BIRP]|\\f\(..|\\&|\\c", "", line)
    line = line.replace("\\-", "-").replace("\\(em", "--").replace("\\e", "\\")
    if line.startswith("."):
        line = re.sub(r"^\.\w+\s?", "", line).replace('"', "")
    return line


def code_parts(path, lines):
    """(line number, text) of what is code: markdown code spans and blocks;
    a man page is all code."""
    parts, fence = [], False
    if not path.endswith(".md"):
        return [(n, unroff(t)) for n, t in enumerate(lines, 1)]
    for n, t in enumerate(lines, 1):
        if t.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence or t.startswith("    ") or t.startswith("\t"):
            parts.append((n, t))
            continue
        for m in re.finditer(r"`([^`]+)`", t):
            parts.append((n, m.group(1)))
    return parts


def path_exists(root, p):
    p = p.rstrip(".,:;)")
    if not p or "..." in p or "<" in p or "{" in p:
        return True
    full = os.path.join(root, p)
    if os.path.exists(full) or os.path.exists(full + ".c"):
        return True
    # a placeholder (bench/bench_NAME.sh) is a glob that must match
    full = re.sub(r"[A-Z][A-Z0-9_]+", "*", full)
    return any(c in full for c in "*?") and bool(glob.glob(full))


def check_paths(f, lines, root, out):
    for n, t in enumerate(lines, 1):
        if f.endswith(".8"):
            t = unroff(t)
        for m in PATH_RE.finditer(t):
            if not path_exists(root, m.group(1)):
                problem(out, f, n, "path", "%s does not exist" % m.group(1).rstrip(".,:;)"))


def check_targets(f, parts, targets, out):
    for n, t in parts:
        for m in MAKE_RE.finditer(t):
            if re.search(r"(^|\s)-[Cf]", m.group(1)):
                continue
            t = m.group(2)
            # a placeholder (make bench-NAME) must match some target
            pat = re.compile(re.sub(r"[A-Z][A-Z0-9_]+", "[a-z0-9_-]+", re.escape(t)) + "$")
            if t not in targets and not any(pat.match(x) for x in targets):
                problem(out, f, n, "target", "make %s: no such target in the Makefile" % t)


def options_after(text):
    """(program, subcommand, [options]) for each program named in text."""
    found = []
    for m in PROG_RE.finditer(text):
        rest = text[m.end():]
        if rest[:1] not in ("", " ", "\t"):
            continue
        stop = STOP_RE.search(rest)
        rest = rest[:stop.start()] if stop else rest
        words = rest.split()
        sub = words[0] if words and words[0] in LOADER_CMDS else ""
        opts = [o.group(1) for o in OPT_RE.finditer(rest)]
        found.append((m.group(1), sub, opts))
    return found


def check_options(f, parts, progs, out):
    own = os.path.basename(f)[:-2] if f.endswith(".8") else None
    for n, t in parts:
        found = options_after(t)
        if own in progs and not PROG_RE.search(t):
            found = [(own, "", [o.group(1) for o in OPT_RE.finditer(t)
                                if o.group(1).startswith("--")])]
        for prog, sub, opts in found:
            valid = progs[prog].get(sub if prog == "toe-loader" else "")
            for o in opts:
                if o not in valid:
                    what = prog + (" " + sub if sub else "")
                    problem(out, f, n, "option", "%s has no option %s (%s --help)" % (what, o, what))


def check_maps(f, lines, maps, known, out):
    for n, t in enumerate(lines, 1):
        if f.endswith(".8"):
            t = unroff(t)
        for m in MAP_RE.finditer(t):
            name, tail = m.group(1), m.group(2)
            if tail == "*" and any(x.startswith(name) for x in maps):
                continue
            if (tail and tail != "*") or name in maps or name in known:
                continue
            problem(out, f, n, "map", "%s is not a map of include/toe_maps.h" % name)


def slug(heading):
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return s.replace(" ", "-")


def anchors(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        heads = re.findall(r"^#+\s+(.*?)\s*#*$", fh.read(), re.M)
    return {slug(h) for h in heads}


def check_links(f, lines, root, out):
    if not f.endswith(".md"):
        return
    base = os.path.dirname(os.path.join(root, f))
    for n, t in enumerate(lines, 1):
        for m in LINK_RE.finditer(t):
            target = m.group(1)
            if re.match(r"^[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(base, file)) if file else \
                os.path.join(root, f)
            if not os.path.exists(dest):
                problem(out, f, n, "link", "%s: no such file" % target)
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                problem(out, f, n, "link", "%s: no heading #%s in %s" %
                        (target, anchor, os.path.relpath(dest, root)))


def check_file(f, root, ctx, out):
    try:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().split("\n")
    except OSError as e:
        problem(out, f, 0, "path", "cannot read it: %s" % e.strerror)
        return
    parts = code_parts(f, lines)
    check_paths(f, lines, root, out)
    check_targets(f, parts, ctx["targets"], out)
    check_options(f, parts, ctx["progs"], out)
    check_maps(f, lines, ctx["maps"], ctx["known"], out)
    check_links(f, lines, root, out)
    text = "\n".join(lines)
    for n, msg in docfacts.check_facts(f, text, root):
        problem(out, f, n, "fact", msg)
    if f.endswith(".8"):
        for n, msg in docfacts.check_manpage(f, text, ctx["helps"]):
            problem(out, f, n, "manpage", msg)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--build", default=os.environ.get("TOE_BUILD"))
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    build = a.build or os.path.join(root, "build")
    files = [os.path.abspath(f) for f in a.files] or \
        [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md"))) + \
        sorted(glob.glob(os.path.join(root, "man", "*.8")))
    progs, helps = program_options(build)
    ctx = {"targets": make_targets(root), "progs": progs, "helps": helps,
           "maps": map_names(root), "known": known_names(root) | retired_maps(root)}
    if not ctx["targets"] or not ctx["maps"]:
        sys.exit("docscheck: no Makefile targets or no maps found under %s" % root)
    out = []
    try:
        for f in files:
            rel = os.path.relpath(f, root)
            check_file(f if rel.startswith("..") else rel, root, ctx, out)
    except docfacts.Gone as e:
        sys.exit("docscheck: %s: a table the fact checks read moved (scripts/docfacts.py)" % e)
    # the programs' own --help: its usage line against its option list
    for cmd, h in sorted(ctx["helps"].items()):
        for msg in docfacts.check_usage(cmd, h):
            problem(out, cmd + " --help", 1, "usage", msg)
    print("\n".join(out) if out else "docscheck: %d files, no problem" % len(files))
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
