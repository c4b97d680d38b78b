#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Which test files exercise a source file, derived from the tree, not
from a hand-kept list (gen.py's wider set: the tests a survivor of its
named tests must survive too before it counts as a survivor).

  reach.py FILE...        each FILE's programs and the test files that run
                          one of them, one a line
  reach.py --table        every test file and the programs it runs

A source file is built into objects: the build's dependency files
(build/**/*.d, make -MMD) say which.  An object belongs to a program (the
table PROGRAMS: the datapath object is loaded by toe-loader, user/lib is
linked into all three programs, a test tool is its own program); kmod/ is
opentoe.ko.  A test file runs a program when the program's name is a
command word in its code (comment lines left out), in the code of the
helper files it names (setup.sh, router.sh, a test it sources, the guest's
tests.txt: its "check" lines, the ones test_guest.sh runs) or in the body
of a shell function (lib.sh's dp_load, setup.sh's start_toed ...) that
code calls.  A test that only names a program in a message is counted
too: a few tests more, never one fewer.
"""
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
SELF = os.path.join(TOP, "selftests")

# object (a path under build/, a prefix) -> the programs that carry it
PROGRAMS = (
    ("opentoe.bpf.o", ("toe-loader",)),  # the datapath: toe-loader loads it
    ("opentoe_kctx.bpf.o", ("toe-loader",)),  # the same, on 6.3 and later
    ("loader/", ("toe-loader",)),
    ("toed-objs/", ("toed",)),
    ("toectl-objs/", ("toectl",)),
    ("lib/", ("toe-loader", "toed", "toectl")),
)
# a source folder -> programs, for a file no dependency file names (kmod/
# is built in the qemu test, not by make all)
BY_FOLDER = (("kmod/", ("opentoe.ko",)), ("user/loader/", ("toe-loader",)), ("user/toed/", ("toed",)),
             ("user/toectl/", ("toectl",)), ("user/lib/", ("toe-loader", "toed", "toectl")),
             ("bpf/", ("toe-loader",)))
FUNC_RE = re.compile(r"^([A-Za-z_][\w-]*)\(\)\s*\{(.*)$")
REF_RE = re.compile(r"((?:[\w.-]+/)*)([\w-]+\.(?:sh|txt))\b")


def depfiles(build):
    """{source file: {object}} from build/**/*.d (the first rule of each)."""
    users = {}
    for d in glob.glob(os.path.join(build, "**", "*.d"), recursive=True):
        text = open(d, errors="replace").read().replace("\\\n", " ")
        rule = text.split("\n", 1)[0]
        if ":" not in rule:
            continue
        target, deps = rule.split(":", 1)
        obj = os.path.relpath(os.path.join(TOP, target.strip()), build)
        for dep in deps.split():
            users.setdefault(os.path.normpath(dep), set()).add(obj)
    return users


def programs_of(path, users):
    """The programs (command names) that carry source file path."""
    out = set()
    for obj in users.get(path, ()):
        for prefix, progs in PROGRAMS:
            if obj.startswith(prefix):
                out.update(progs)
                break
        else:  # a program of its own: build/selftests/toe_events, ...
            out.add(os.path.basename(obj).split(".")[0])
    if not out:
        for prefix, progs in BY_FOLDER:
            if path.startswith(prefix):
                out.update(progs)
    return out


def code_of(text):
    """(top-level code, {function: body}) of a shell file, comments out."""
    lines = [x for x in text.split("\n") if not x.lstrip().startswith("#")]
    top, funcs, i = [], {}, 0
    while i < len(lines):
        m = FUNC_RE.match(lines[i])
        if not m:
            top.append(lines[i])
            i += 1
            continue
        body, depth = [m.group(2)], 1 + m.group(2).count("{") - m.group(2).count("}")
        while depth > 0 and i + 1 < len(lines):
            i += 1
            body.append(lines[i])
            depth += lines[i].count("{") - lines[i].count("}")
            if lines[i] == "}":
                depth = 0
        funcs[m.group(1)] = "\n".join(body)
        i += 1
    return "\n".join(top), funcs


def refs(path, text):
    """The selftests files a file names: helpers it sources or copies,
    tests it runs (a tests.txt's "check" lines)."""
    out, here = set(), os.path.dirname(path)
    text = "\n".join(x for x in text.split("\n") if not x.lstrip().startswith("#"))
    if path.endswith(".txt"):
        text = "\n".join(x for x in text.split("\n") if x.startswith("check "))
    for m in REF_RE.finditer(text):
        parts = [p for p in m.group(1).split("/") if p not in ("", ".", "..")]
        where = [os.path.join(SELF, parts[-1])] if parts else []
        for d in where + [here]:
            f = os.path.join(d, m.group(2))
            if os.path.isfile(f) and f != path and f.startswith(SELF):
                out.add(f)
                break
    return out


def runs(test, cache={}):
    """The programs a test file runs (see the module's text)."""
    if test in cache:
        return cache[test]
    files, todo = {os.path.join(SELF, "lib.sh")}, [test]
    while todo:
        f = todo.pop()
        if f not in files:
            files.add(f)
            todo.extend(refs(f, open(f, errors="replace").read()))
    code, funcs = [], {}
    for f in sorted(files):
        top, fn = code_of(open(f, errors="replace").read())
        funcs.update(fn)
        if not f.endswith("/lib.sh"):  # its top level runs no program
            code.append(top)
    text, seen = "\n".join(code), set()
    while True:
        called = {w for w in re.findall(r"[A-Za-z_][\w-]*", text) if w in funcs} - seen
        if not called:
            break
        seen |= called
        text += "\n" + "\n".join(funcs[w] for w in sorted(called))
    words = set(re.findall(r"(?<![\w.-])([A-Za-z_][\w-]*(?:\.ko)?)(?![\w/.-])", text))
    cache[test] = words
    return words


# test files that read the tree and run no program (a name in a message
# or a grep is no run)
READ_ONLY = ("style/", "docs/", "mutants/", "bench/")


def all_tests():
    return sorted(t for t in glob.glob(os.path.join(SELF, "*", "test_*.sh"))
                  if not os.path.relpath(t, SELF).startswith(READ_ONLY))


def tests_for(path, build=None, users=None):
    """(programs, [test files relative to the top]) that exercise path."""
    users = users if users is not None else depfiles(build or os.path.join(TOP, "build"))
    progs = programs_of(path, users)
    tests = [os.path.relpath(t, TOP) for t in all_tests() if progs & runs(t)]
    return sorted(progs), tests


def main():
    a = sys.argv[1:]
    if not a:
        print(__doc__)
        return 2
    if a[0] == "--table":
        for t in all_tests():
            progs = {p for _, ps in BY_FOLDER for p in ps} | {"toe_events", "bypass_check"}
            print("%s: %s" % (os.path.relpath(t, TOP), " ".join(sorted(progs & runs(t)))))
        return 0
    users = depfiles(os.path.join(TOP, "build"))
    for f in a:
        progs, tests = tests_for(f, users=users)
        print("%s: %s: %d tests\n  %s" % (f, " ".join(progs) or "no program", len(tests), "\n  ".join(tests)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
