#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The mutation gate: do the tests fail when the code is wrong?

  mutants.py check [--tap]     every mutant of mutants.txt is well formed,
                               its old text occurs exactly once in its file
                               and its tests exist (--tap: one TAP line each)
  mutants.py count             how many mutants there are
  mutants.py reach [--tap]     every file with code (each .c of bpf/,
                               user/ and kmod/, each header there or in
                               include/ with a function body) is named by a
                               mutant (gen.py makes its rule-made mutants
                               in those files only, with their tests), or
                               listed in unreached.txt with the reason;
                               and unreached.txt names no file that has a
                               mutant or no longer exists
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
TOE_TEST_TIMEOUT (per test file, default here 600 s; in a kill-rate run
4 times the file's longest passing run so far, at least 120 s).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
TABLE = os.path.join(HERE, "mutants.txt")
UNREACHED = os.path.join(HERE, "unreached.txt")
CODE_DIRS = ("bpf", "user", "kmod", "include")
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
    if not m["tests"] and not m.get("wide"):
        p.append("names no test file")
    for t in m["tests"] + m.get("wide", []):
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


def has_code(path):
    """A .c file, or a header with a function body (a line that is "{")."""
    if path.endswith(".c"):
        return True
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return any(line.rstrip("\n") == "{" for line in f)


def code_files(top=TOP):
    out = []
    for d in CODE_DIRS:
        for root, dirs, files in os.walk(os.path.join(top, d)):
            dirs.sort()
            for n in sorted(files):
                if n.endswith((".c", ".h")) and not n.endswith((".skel.h", ".mod.c")):
                    p = os.path.join(root, n)
                    if has_code(p):
                        out.append(os.path.relpath(p, top))
    return out


def load_unreached(path=UNREACHED):
    """{file: why} of unreached.txt ("FILE: WHY" a line), and its problems."""
    out, probs = {}, []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            m = re.match(r"^(\S+): (\S.*)$", line)
            if not m:
                probs.append("unreached.txt line %d: expected FILE: WHY: %r" % (n, line))
            elif m.group(1) in out:
                probs.append("unreached.txt line %d: %s listed twice" % (n, m.group(1)))
            else:
                out[m.group(1)] = m.group(2)
    return out, probs


def reach_problems(top=TOP, table=TABLE, unreached=UNREACHED):
    muts, _ = load(table)
    named = {m["file"] for m in muts}
    un, probs = load_unreached(unreached)
    files = code_files(top)
    for f in files:
        if f not in named and f not in un:
            probs.append("%s: no mutant names it and unreached.txt does not list it" % f)
    for f in sorted(un):
        if f in named:
            probs.append("%s: listed in unreached.txt but a mutant names it (take it off the list)" % f)
        elif f not in files:
            probs.append("%s: listed in unreached.txt but no longer a file with code" % f)
    return probs, len(files), len([f for f in files if f in named])


def cmd_reach(tap):
    probs, n, k = reach_problems()
    msg = "%d files with code: %d named by mutants, %d not" % (n, k, n - k)
    if tap:
        print("%s - every file with code is reached by the gate or listed why not (%s)%s" %
              ("not ok" if probs else "ok", msg, ": " + "; ".join(probs) if probs else ""))
    else:
        print(msg)
        for p in probs:
            print(p)
    return 1 if probs else 0


def copy_tree(dst):
    """The tree as it is (working changes, build/), without .git."""
    def ignore(d, names):
        return [n for n in names if d == TOP and n in (".git",)] + \
               [n for n in names if d == os.path.join(TOP, "build") and n == "mutants"]
    shutil.copytree(TOP, dst, symlinks=True, ignore=ignore)


VM_TESTS = ("selftests/guest/test_guest.sh", "selftests/kmod/test_kmod.sh")
# a failing check that measures time (or a test file that ran out of time)
# may be the shared machine's load, not the mutant: such a catch is re-run
# on the unmutated tree before it counts
TIMING_RE = re.compile(r"\b(p\d\d|latency|ms|usec|µs|seconds?|within|timed? ?out|stall\w*|"
                       r"rate|throughput|[GMK]bit|faster|slower|deadline|\d+ ?s)\b|\d ?%", re.I)


class Stats:
    """Per test file: runs, seconds, kills (build/mutants/test-stats.json),
    to run a mutant's cheapest, most often killing test first."""

    def __init__(self, path=None):
        self.path, self.d, self.lock = path, {}, threading.Lock()
        if path and os.path.isfile(path):
            try:
                self.d = json.load(open(path))
            except ValueError:
                self.d = {}

    def cost(self, t):
        """Expected seconds to a kill: mean time over the share that kills."""
        s = self.d.get(t, {})
        mean = s.get("secs", 0) / s["runs"] if s.get("runs") else 60.0
        return mean * (s.get("runs", 0) + 1) / (s.get("kills", 0) + 1)

    def order(self, tests):
        """Host tests before the qemu ones (minutes each), cheapest first."""
        return sorted(tests, key=lambda t: (t in VM_TESTS, self.cost(t)))  # stable: ties keep their order

    def timeout(self, t, default):
        """A file's time limit: 4 times its longest passing run (at least
        120 s), so a mutant that hangs it costs minutes, not the default."""
        s = self.d.get(t, {})
        return str(max(120, int(4 * s["pass_max"]))) if s.get("pass_max") else default

    def add(self, t, secs, killed):
        with self.lock:
            s = self.d.setdefault(t, {"runs": 0, "secs": 0.0, "kills": 0})
            s["runs"] += 1
            s["secs"] += secs
            s["kills"] += int(killed)
            if not killed:
                s["pass_max"] = max(s.get("pass_max", 0), secs)
            if self.path:
                with open(self.path + ".tmp", "w") as f:
                    json.dump(self.d, f, indent=1, sort_keys=True)
                os.replace(self.path + ".tmp", self.path)


def verdict(rc, out):
    """(failed?, why, timed?) of one selftests/run.sh run from its status
    and TAP: timed when the file ran out of time or every failing check
    measures time (one failing check that does not rules the machine out)."""
    lines = out.strip().split("\n") if out.strip() else [""]
    mm = re.match(r"^(\d+) passed, (\d+) failed, (\d+) skipped$", lines[-1])
    failed = [re.sub(r"^not ok \d+ - ", "", x) for x in lines if x.startswith("not ok")]
    late = " (timed out)" if re.search(r"\(exit 124\)|: timed out$", out, re.M) else ""
    timed = bool(late) or bool(failed) and all(TIMING_RE.search(x) for x in failed)
    if rc != 0 and failed:
        return True, "%d failed: %s%s" % (len(failed), " | ".join(failed), late), timed
    if rc != 0:
        return True, "run.sh exit %d: %s" % (rc, lines[-1]), timed
    return False, lines[-1] if mm else "run.sh exit 0, no summary", False


def check_keys(out):
    """The failing checks of a run, their numbers and (...) left out: what
    to compare with the same file's run on the unmutated tree."""
    return {re.sub(r"\(.*?\)|\d+", "", x[len("not ok"):]).strip()
            for x in out.split("\n") if x.startswith("not ok")}


def not_a_check(out):
    """Did the file fail with no check of its own failing (only run.sh's
    plan or exit line)?"""
    return not [k for k in check_keys(out) if not re.match(r"^- [^:]*: planned\s+checks, ran$", k)]


class Baseline:
    """Each test file's failing checks on the unmutated tree, found once
    (the first time a mutant fails that file): a check that fails there
    too says nothing about a mutant."""

    def __init__(self):
        self.d, self.lock, self.locks = {}, threading.Lock(), {}

    def get(self, t, runner, top, env, f):
        # one lock a file: the host lane does not wait for a guest's run
        with self.lock:
            lock = self.locks.setdefault(t, threading.Lock())
        with lock:
            if t not in self.d:
                rc0, out0, _ = runner(top, t, env)
                f.write("---- %s on the unmutated tree (once)\n%s\n" % (t, out0))
                self.d[t] = check_keys(out0) if rc0 else set()
            return self.d[t]


BASELINE = Baseline()


def run_test(tree, t, env):
    """(rc, output, seconds) of one test file run by the tree's run.sh."""
    t0 = time.monotonic()
    r = subprocess.run(["bash", "selftests/run.sh", t], cwd=tree, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, env=env, universal_newlines=True, errors="replace")
    return r.returncode, r.stdout, time.monotonic() - t0


def run_tests(tree, tests, env, f, first_fail=False, stats=None, runner=run_test, top=TOP,
              baseline=None, deadline=None, confirm=False):
    """Run tests in tree one file at a time (stats' order); with first_fail,
    stop at the first file that fails; past deadline (time.monotonic()),
    start no further file (the note says how many ran); with confirm, a
    failing file counts only if it fails again.  A failure whose checks look timed
    is run again on the unmutated tree at top: failing there too, it is the
    machine, not the mutant: that file says nothing (flaky) and the next
    one is tried.  So is a file whose failing checks all fail on the
    unmutated tree too (Baseline).  Returns (result, note)."""
    stats, caught, flaky, why = stats or Stats(), None, None, ""
    baseline = baseline or BASELINE
    order = stats.order(tests) if first_fail else tests
    for i, t in enumerate(order):
        if deadline is not None and time.monotonic() > deadline:
            why = "budget spent: %d of %d files run" % (i, len(order))
            break
        tenv = dict(env, TOE_TEST_TIMEOUT=stats.timeout(t, env.get("TOE_TEST_TIMEOUT", "600")))
        rc, out, secs = runner(tree, t, tenv)
        f.write("---- %s (%.0f s)\n%s\n" % (t, secs, out))
        f.flush()
        bad, why, timed = verdict(rc, out)
        if bad and timed:
            rc0, out0, _ = runner(top, t, tenv)  # the same time limit
            f.write("---- %s again on the unmutated tree (timed check)\n%s\n" % (t, out0))
            if verdict(rc0, out0)[0]:
                flaky = "%s fails unmutated too: %s" % (t, why)
                continue
            # and must fail again: one load spike is not the mutant's
            rc1, out1, _ = runner(tree, t, tenv)
            f.write("---- %s again on the mutant (timed check)\n%s\n" % (t, out1))
            if not verdict(rc1, out1)[0]:
                flaky = "%s: a timed check failed once, then passed: %s" % (t, why)
                continue
            why += " (passes unmutated, fails again)"
        elif bad and check_keys(out) and not check_keys(out) - baseline.get(t, runner, top, tenv, f):
            flaky = "%s: only checks that fail unmutated too: %s" % (t, why)
            continue
        elif bad and not_a_check(out):
            # no check of its own failed (its setup did: a name taken, ...):
            # a kill only if it does so again
            rc, out, _ = runner(tree, t, tenv)
            f.write("---- %s again (no check failed)\n%s\n" % (t, out))
            if not verdict(rc, out)[0]:
                flaky = "%s: failed once before any check, then passed: %s" % (t, why)
                continue
        elif bad and confirm:
            rc, out, _ = runner(tree, t, tenv)
            f.write("---- %s again on the mutant (a catch of the wider set)\n%s\n" % (t, out))
            if not verdict(rc, out)[0]:
                flaky = "%s: failed once, then passed: %s" % (t, why)
                continue
            why += " (failed twice)"
        stats.add(t, secs, bad)
        if bad and first_fail:
            return "caught", "%s: %s" % (t, why)
        if bad:
            caught = "%s: %s" % (t, why)
    if caught:
        return "caught", caught
    return ("flaky", flaky) if flaky else ("survived", why)


def named_then_wide(tree, m, env, f, first_fail, stats, runner=run_test, top=TOP, baseline=None):
    """(result, note) of a mutant's named tests, then, when they caught
    nothing, of its wider set (m["wide"], gen.py's: the other tests that
    run what it changed), m["wide_secs"] seconds at most (0: no limit).
    A kill by the wider set (it must fail twice) has a note starting
    "wide "."""
    res, note = run_tests(tree, m["tests"], env, f, first_fail, stats, runner, top, baseline)
    if res in ("survived", "flaky") and m.get("wide"):
        f.write("---- the wider set: %s\n" % " ".join(m["wide"]))
        limit = float(m.get("wide_secs") or 0)
        # a test not written for this code failing once under load is
        # weak: it must fail twice
        res2, note2 = run_tests(tree, m["wide"], env, f, first_fail, stats, runner, top, baseline,
                                deadline=time.monotonic() + limit if limit else None, confirm=True)
        if res2 != "survived" or res == "survived":
            res, note = res2, "wide " + note2
    return res, note


def mutant_env():
    env = dict(os.environ)
    for k in ("TOE_BUILD", "TOE_TOP", "MAKEFLAGS", "MAKELEVEL"):
        env.pop(k, None)
    env.setdefault("TOE_TEST_TIMEOUT", "600")
    return env


def run_one(m, scratch_parent, logdir, first_fail=False, stats=None):
    """One mutant: (result, seconds, note).  The scratch copy carries the
    tree's build/ with its times (copy_tree), and the mutated file is made
    newer than everything, so make rebuilds only what the mutant changed."""
    t0 = time.monotonic()
    log = os.path.join(logdir, m["id"] + ".log")
    p = problems(m)
    if p:
        with open(log, "w") as f:
            f.write("\n".join(p) + "\n")
        return "stale", time.monotonic() - t0, "; ".join(p)
    scratch = tempfile.mkdtemp(prefix="opentoe-mutant-%s." % m["id"].replace("/", "_"), dir=scratch_parent)
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
        env = mutant_env()
        # a later part of the same mutant (gen.py's qemu part) adds to its log
        with open(log, "a" if m.get("log_append") else "w") as f:
            f.write("mutant %s: %s\n%s: %r -> %r\n\n" % (m["id"], m["what"], m["file"], m["old"], m["new"]))
            f.flush()
            b = subprocess.run(["make", "-s", "-j2", "all"], cwd=tree, stdout=f, stderr=subprocess.STDOUT, env=env)
            if b.returncode != 0:
                return "build-failed", time.monotonic() - t0, "make all failed"
            env["TOE_NO_BUILD"] = "1"
            res, note = named_then_wide(tree, m, env, f, first_fail, stats)
        return res, time.monotonic() - t0, note
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
        note = note[:90]
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


def selftest_baseline():
    """(what, good): one file's unmutated run does not hold up another's
    (the host lane's, while the qemu lane's guest boots)."""
    import io
    b, go, order = Baseline(), threading.Event(), []

    def runner(tree, t, env):
        if t == "slow":
            go.wait(10)
        order.append(t)
        return 0, "", 0.0

    th = threading.Thread(target=b.get, args=("slow", runner, "top", {}, io.StringIO()))
    th.start()
    time.sleep(0.1)
    b.get("quick", runner, "top", {}, io.StringIO())
    go.set()
    th.join()
    return "the unmutated run of one file does not wait for another's: %s" % order, order == ["quick", "slow"]


def selftest_timed(ok, timed):
    """[(what, good)]: a timed failure must repeat on the mutant."""
    import io
    seen = []

    def spike(tr, t, e):  # fails once on the mutant only
        seen.append(tr)
        return timed + (1.0,) if seen == ["mut"] else (0, ok, 1.0)

    res = run_tests("mut", ["c"], {}, io.StringIO(), True, Stats(), spike, "top")
    return [("  unless it passes on the mutant again: %s after %s" % (res[0], seen),
             res[0] == "flaky" and seen == ["mut", "top", "mut"]),
            ("a share of packets (N of M, over 90 %) is a timed check",
             verdict(1, "not ok 2 - x: forwards by the cached route: 51469 of 57287 packets (over 90 %)\n"
                        "0 passed, 1 failed")[2])]


def selftest_wide(ok):
    """[(what, good)]: the wider set after the named tests."""
    import io
    bad = (1, "not ok 1 - w: flows admitted\n0 passed, 1 failed, 0 skipped")
    ran = []

    def runner(tree, t, env):
        ran.append(t)
        return (bad if t == "w2" and tree == "mut" else (0, ok)) + (1.0,)

    m = {"tests": ["n"], "wide": ["w1", "w2"], "wide_secs": 0}
    res = named_then_wide("mut", m, {}, io.StringIO(), True, Stats(), runner, "top", Baseline())
    out = [("named tests passing, the wider set runs and catches: %s after %s" % (res, ran),
            res[0] == "caught" and res[1].startswith("wide w2:") and ran == ["n", "w1", "w2", "w2", "w2"])]
    runs = []

    def once(tree, t, env):  # w2 fails once on the mutant, then passes
        runs.append((tree, t))
        return (bad if runs.count(("mut", "w2")) == 1 and (tree, t) == ("mut", "w2") else (0, ok)) + (1.0,)

    res = named_then_wide("mut", m, {}, io.StringIO(), True, Stats(), once, "top", Baseline())
    out.append(("  a file of the wider set failing once, then passing, is no kill: %s" % (res,), res[0] == "flaky"))
    del ran[:]
    res = named_then_wide("mut", dict(m, tests=["w2"], wide=["w1"]), {}, io.StringIO(), True, Stats(), runner,
                          "top", Baseline())
    out.append(("a named test catching: no wider set run (%s)" % ran, res[0] == "caught" and "w1" not in ran))
    del ran[:]
    res = named_then_wide("mut", dict(m, wide_secs=1e-9), {}, io.StringIO(), True, Stats(), runner, "top")
    out.append(("past the wider set's budget no further file starts: %s (%s)" % (res, ran),
                res[0] == "survived" and "budget spent: 0 of 2" in res[1] and ran == ["n"]))
    return out


def selftest_reach():
    """mutants.py reach on a made-up tree: a .c file and a header with a
    body need a mutant or a line in unreached.txt; a header of
    declarations does not; a listed file that has a mutant, or is gone,
    is a problem."""
    with tempfile.TemporaryDirectory() as d:
        def put(rel, text):
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w") as f:
                f.write(text)
        put("user/a.c", "int a;\n")
        put("user/b.c", "int b;\n")
        put("bpf/h.h", "static inline int h(void)\n{\n\treturn 0;\n}\n")
        put("include/decl.h", "int decl(void);\n")
        put("t.txt", "id: m\nfile: user/a.c\nold: a\nnew: b\ntests: selftests/x/test_x.sh\nwhat: w\n")
        put("u.txt", "user/b.c: why\n")
        tab, un = os.path.join(d, "t.txt"), os.path.join(d, "u.txt")
        p1 = reach_problems(d, tab, un)[0]
        put("u.txt", "user/b.c: why\nbpf/h.h: why\nuser/a.c: why\nuser/gone.c: why\n")
        p2 = reach_problems(d, tab, un)[0]
    return [("reach: a header with a body and no mutant is unreached, one of declarations is not: %s" % p1,
             p1 == ["bpf/h.h: no mutant names it and unreached.txt does not list it"]),
            ("reach: unreached.txt naming a file with a mutant or no file is a problem: %s" % p2,
             len(p2) == 2 and p2[0].startswith("user/a.c: listed") and p2[1].startswith("user/gone.c: listed"))]


def cmd_selftest():
    """The runner's own logic on made-up test files (no tree copied, no
    test run): order, the stop at the first failure, a timed check that
    fails unmutated too.  TAP, one line a check."""
    import io
    ok = "1 passed, 0 failed, 0 skipped"
    outs = {"a": (0, ok), "b": (1, "not ok 1 - b: flows admitted\n0 passed, 1 failed, 0 skipped"),
            "c": (1, "not ok 1 - c: p99 latency 9 ms over 5 ms\n0 passed, 1 failed, 0 skipped"),
            VM_TESTS[1]: (0, ok)}
    ran = []

    def runner(tree, t, env):
        ran.append((tree, t))
        if tree == "top":  # the unmutated tree fails c too, passes the rest
            return outs["c"] + (1.0,) if t == "c" else (0, ok, 1.0)
        return outs[t] + (1.0,)

    st = Stats()
    st.d = {"a": {"runs": 2, "secs": 100.0, "kills": 0}, "b": {"runs": 2, "secs": 10.0, "kills": 1}}
    checks = [("host tests first, the cheapest per kill first",
               st.order([VM_TESTS[1], "a", "b"]) == ["b", "a", VM_TESTS[1]])]
    res = run_tests("mut", [VM_TESTS[1], "a", "b"], {}, io.StringIO(), True, st, runner, "top")
    checks.append(("first failing file ends the mutant (checked once unmutated): %s after %s" % (res[0], ran),
                   res[0] == "caught" and ran == [("mut", "b"), ("top", "b")]))
    del ran[:]
    res = run_tests("mut", ["a", VM_TESTS[1]], {}, io.StringIO(), True, Stats(), runner, "top")
    checks.append(("all passing: survived after both", res[0] == "survived" and len(ran) == 2))
    res = run_tests("mut", ["c"], {}, io.StringIO(), True, Stats(), runner, "top")
    checks.append(("a timed check failing unmutated too is flaky, not caught", res[0] == "flaky"))
    del ran[:]
    st2 = Stats()
    st2.d = {"b": {"runs": 1, "secs": 1000.0, "kills": 0}}  # c first
    res = run_tests("mut", ["c", "b"], {}, io.StringIO(), True, st2, runner, "top")
    checks.append(("  and the next file is tried: %s after %s" % (res[0], [t for _, t in ran]),
                   res[0] == "caught" and [t for _, t in ran] == ["c", "c", "b"]))
    outs["c"] = (1, "not ok 1 - c: p99 latency 9 ms over 5 ms\n0 passed, 1 failed, 0 skipped")
    res = run_tests("mut", ["c"], {}, io.StringIO(), True, Stats(),
                    lambda tr, t, e: (0, ok, 1.0) if tr == "top" else outs[t] + (1.0,), "top")
    checks.append(("a timed check passing unmutated is caught", res[0] == "caught"))
    checks += selftest_timed(ok, outs["c"])
    outs["e"] = (1, "not ok 1 - e: the running flow (0 slow)\n0 passed, 1 failed, 0 skipped")
    outs["f"] = (1, "not ok 1 - f: the running flow (3 slow)\nnot ok 2 - f: admitted\n0 passed, 2 failed")
    bl = Baseline()
    res = run_tests("mut", ["e"], {}, io.StringIO(), True, Stats(), lambda tr, t, e: outs[t] + (1.0,), "top", bl)
    checks.append(("a check failing unmutated too is not a kill: %s" % res[0], res[0] == "flaky"))
    res = run_tests("mut", ["f"], {}, io.StringIO(), True, Stats(),
                    lambda tr, t, e: outs["e"] + (1.0,) if tr == "top" else outs[t] + (1.0,), "top", bl)
    checks.append(("  one more failing check than unmutated is: %s" % res[0], res[0] == "caught"))
    outs["g"] = (1, "not ok 1 - g: planned 5 checks, ran 0 (exit 1)\n0 passed, 1 failed, 0 skipped")
    runs = []

    def once(tr, t, e):  # fails the first time in the mutated tree only
        runs.append(tr)
        return outs[t] + (1.0,) if runs.count("mut") == 1 and tr == "mut" else (0, ok, 1.0)

    res = run_tests("mut", ["g"], {}, io.StringIO(), True, Stats(), once, "top", Baseline())
    checks.append(("a file failing before any check, then passing, is no kill: %s" % res[0], res[0] == "flaky"))
    checks.append(("a run.sh failure with no check is caught",
                   verdict(124, "# x: timed out\n0 passed, 1 failed, 0 skipped")[0]))
    st.add("d", 100.0, False)
    st.add("d", 20.0, True)
    checks.append(("a file's time limit is 4 times its longest passing run, at least 120 s: %s, %s"
                   % (st.timeout("d", "600"), st.timeout("a", "600")),
                   st.timeout("d", "600") == "400" and st.timeout("a", "600") == "600"))
    checks.append(("a file that ran out of time is a timed failure",
                   verdict(1, "not ok 3 - x: planned 4 checks, ran 3 (exit 124)\n2 passed, 1 failed, 0 skipped")[2]))
    checks.append(("a timed check failing beside an untimed one is not re-run",
                   not verdict(1, "not ok 1 - x: p99 9 ms\nnot ok 2 - x: flows admitted\n0 passed, 2 failed")[2]))
    checks.append(selftest_baseline())
    checks += selftest_wide(ok)
    checks += selftest_reach()
    print("1..%d" % len(checks))
    for i, (what, good) in enumerate(checks, 1):
        print("%s %d - runner: %s" % ("ok" if good else "not ok", i, what))
    return 0 if all(g for _, g in checks) else 1


def main():
    a = sys.argv[1:]
    if not a:
        print(__doc__)
        return 2
    if a[0] == "check":
        return cmd_check("--tap" in a)
    if a[0] == "selftest":
        return cmd_selftest()
    if a[0] == "reach":
        return cmd_reach("--tap" in a)
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
