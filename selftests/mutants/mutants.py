#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The mutation gate: do the tests fail when the code is wrong?

  mutants.py check [--tap]     every mutant of mutants.txt is well formed,
                               its old text occurs exactly once in its file
                               and its tests exist (--tap: one TAP line each)
  mutants.py count             how many mutants there are
  mutants.py run [--only ID,ID] [--keep]
                               for each mutant: a scratch copy of the tree
                               (working changes and build/ included, so the
                               build is incremental; .git left out), the
                               edit applied, `make all` there (its own
                               build/), then only its tests, with that
                               copy's selftests/run.sh.  Result: caught (a
                               check failed), survived (all passed or
                               skipped), build-failed, or stale (old text not
                               found exactly once).  Prints a table and the
                               score; exit 1 unless every mutant was caught.
                               Each run's log: build/mutants/ID.log.

Environment: TOE_MUTANTS_TMP (scratch parent, default /tmp),
TOE_TEST_TIMEOUT (per test file, default here 600 s).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
TABLE = os.path.join(HERE, "mutants.txt")
KEYS = ("id", "file", "old", "new", "tests", "what")


def unescape(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in "nt\\":
            out.append({"n": "\n", "t": "\t", "\\": "\\"}[s[i + 1]])
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def load(path=TABLE):
    """The mutants, and the problems of the table itself."""
    muts, probs, cur = [], [], {}

    def close(lineno):
        if not cur:
            return
        miss = [k for k in KEYS if k not in cur]
        if miss:
            probs.append("mutant ending at line %d: no %s" % (lineno, ", ".join(miss)))
        else:
            muts.append(dict(cur))
        cur.clear()

    with open(path) as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        if line.startswith("#"):
            continue
        if not line.strip():
            close(n)
            continue
        m = re.match(r"^(\w+): ?(.*)$", line)
        if not m or m.group(1) not in KEYS:
            probs.append("line %d: expected KEY: VALUE (keys %s): %r" % (n, ", ".join(KEYS), line))
            continue
        k, v = m.group(1), m.group(2)
        if k in cur:
            probs.append("line %d: %s given twice" % (n, k))
        cur[k] = unescape(v) if k in ("old", "new") else v.strip()
        if k == "id":
            cur["line"] = n
    close(len(lines))
    seen = set()
    for m in muts:
        if m["id"] in seen:
            probs.append("mutant %s: id used twice" % m["id"])
        seen.add(m["id"])
        m["tests"] = m["tests"].split()
    return muts, probs


def problems(m, top=TOP):
    """Why mutant m cannot be applied to the tree at top ([] if it can)."""
    p = []
    path = os.path.join(top, m["file"])
    if not os.path.isfile(path):
        p.append("file %s does not exist" % m["file"])
    else:
        n = open(path, encoding="utf-8", errors="surrogateescape").read().count(m["old"])
        if n != 1:
            p.append("stale: old text found %d times in %s (want exactly 1): %r" % (n, m["file"], m["old"]))
    if m["old"] == m["new"]:
        p.append("new text equals old text")
    if not m["tests"]:
        p.append("names no test file")
    for t in m["tests"]:
        if not re.match(r"^selftests/[\w-]+/test_[\w-]+\.sh$", t):
            p.append("test %s is not a selftests/*/test_*.sh file" % t)
        elif not os.path.isfile(os.path.join(top, t)):
            p.append("test file %s does not exist" % t)
    return p


def cmd_check(tap):
    muts, probs = load()
    bad = 0
    if tap:
        print("%s - mutants.txt parses (%d mutants)%s" % ("not ok" if probs else "ok", len(muts),
              ": " + "; ".join(probs) if probs else ""))
    else:
        for p in probs:
            print("mutants.txt: " + p)
    bad += bool(probs)
    for m in muts:
        p = problems(m)
        bad += bool(p)
        if tap:
            print("%s - %s: applies to %s (old text once), tests %s%s" %
                  ("not ok" if p else "ok", m["id"], m["file"], " ".join(m["tests"]),
                   ": " + "; ".join(p) if p else ""))
        elif p:
            print("%s: %s" % (m["id"], "; ".join(p)))
    return 1 if bad else 0


def copy_tree(dst):
    """The tree as it is (working changes, build/), without .git."""
    def ignore(d, names):
        return [n for n in names if d == TOP and n in (".git",)] + \
               [n for n in names if d == os.path.join(TOP, "build") and n == "mutants"]
    shutil.copytree(TOP, dst, symlinks=True, ignore=ignore)


def run_one(m, scratch_parent, logdir):
    t0 = time.monotonic()
    log = os.path.join(logdir, m["id"] + ".log")
    p = problems(m)
    if p:
        with open(log, "w") as f:
            f.write("\n".join(p) + "\n")
        return "stale", time.monotonic() - t0, "; ".join(p)
    scratch = tempfile.mkdtemp(prefix="opentoe-mutant-%s." % m["id"], dir=scratch_parent)
    tree = os.path.join(scratch, "tree")
    try:
        copy_tree(tree)
        path = os.path.join(tree, m["file"])
        src = open(path, encoding="utf-8", errors="surrogateescape").read()
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(src.replace(m["old"], m["new"], 1))
        # newer than every object built from it, whatever the copy's times
        now = time.time() + 2
        os.utime(path, (now, now))
        env = dict(os.environ)
        env.pop("TOE_BUILD", None)
        env.pop("TOE_TOP", None)
        env.pop("MAKEFLAGS", None)
        env.pop("MAKELEVEL", None)
        env.setdefault("TOE_TEST_TIMEOUT", "600")
        with open(log, "w") as f:
            f.write("mutant %s: %s\n%s: %r -> %r\n\n" % (m["id"], m["what"], m["file"], m["old"], m["new"]))
            f.flush()
            b = subprocess.run(["make", "-s", "-j2", "all"], cwd=tree, stdout=f, stderr=subprocess.STDOUT, env=env)
            if b.returncode != 0:
                return "build-failed", time.monotonic() - t0, "make all failed"
            env["TOE_NO_BUILD"] = "1"
            f.write("\n---- tests\n")
            f.flush()
            r = subprocess.run(["bash", "selftests/run.sh"] + m["tests"], cwd=tree,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                               universal_newlines=True, errors="replace")
            f.write(r.stdout)
        last = r.stdout.strip().split("\n")[-1] if r.stdout.strip() else ""
        mm = re.match(r"^(\d+) passed, (\d+) failed, (\d+) skipped$", last)
        failed = [l for l in r.stdout.split("\n") if l.startswith("not ok")]
        if r.returncode != 0 and mm and int(mm.group(2)) > 0:
            first = re.sub(r"^not ok \d+ - ", "", failed[0]) if failed else ""
            return "caught", time.monotonic() - t0, "%s failed: %s" % (mm.group(2), first[:90])
        if r.returncode != 0:
            return "caught", time.monotonic() - t0, "run.sh exit %d: %s" % (r.returncode, last[:90])
        return "survived", time.monotonic() - t0, last
    finally:
        # the tests clean up after themselves; the scratch tree goes too
        shutil.rmtree(scratch, ignore_errors=True)


def cmd_run(only, keep_going=True):
    muts, probs = load()
    if probs:
        for p in probs:
            print("mutants.txt: " + p)
        return 1
    if only:
        want = [i for i in only.split(",") if i]
        unknown = [i for i in want if i not in {m["id"] for m in muts}]
        if unknown:
            print("unknown mutant(s): %s" % ", ".join(unknown))
            return 1
        muts = [m for m in muts if m["id"] in want]
    if os.geteuid() != 0:
        print("the mutation gate runs the selftests: run it as root")
        return 1
    # the copies start from an up-to-date build of this tree
    if subprocess.run(["make", "-s", "-j2", "all"], cwd=TOP).returncode:
        print("make all fails in %s: fix the tree first" % TOP)
        return 1
    logdir = os.path.join(TOP, "build", "mutants")
    os.makedirs(logdir, exist_ok=True)
    scratch_parent = os.environ.get("TOE_MUTANTS_TMP", tempfile.gettempdir())
    rows, t_all = [], time.monotonic()
    print("%-20s %-13s %6s  %s" % ("MUTANT", "RESULT", "TIME", "(one at a time; logs in build/mutants/)"), flush=True)
    for m in muts:
        res, secs, note = run_one(m, scratch_parent, logdir)
        rows.append((m, res, secs, note))
        print("%-20s %-13s %5.0fs  %s" % (m["id"], res, secs, note), flush=True)
    total = time.monotonic() - t_all
    print()
    print("%-20s %-45s %-13s %7s" % ("MUTANT", "TESTS", "RESULT", "SECONDS"))
    for m, res, secs, note in rows:
        tests = " ".join(t.replace("selftests/", "") for t in m["tests"])
        print("%-20s %-45s %-13s %7.0f" % (m["id"], tests, res, secs))
    caught = sum(1 for r in rows if r[1] == "caught")
    print()
    print("score: %d of %d mutants caught (%.0f%%) in %.0f s" %
          (caught, len(rows), 100.0 * caught / max(len(rows), 1), total))
    for res in ("survived", "build-failed", "stale"):
        ids = [r[0]["id"] for r in rows if r[1] == res]
        if ids:
            print("%s: %s" % (res, ", ".join(ids)))
    return 0 if caught == len(rows) else 1


def main():
    a = sys.argv[1:]
    if not a:
        print(__doc__)
        return 2
    if a[0] == "check":
        return cmd_check("--tap" in a)
    if a[0] == "count":
        muts, _ = load()
        print(len(muts))
        return 0
    if a[0] == "run":
        only = None
        if "--only" in a:
            i = a.index("--only")
            only = a[i + 1] if i + 1 < len(a) else ""
        return cmd_run(only)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
