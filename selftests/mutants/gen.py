#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Mutants chosen by a rule, not by hand (issue 36).

  gen.py list [--rule R]    every mutant the rules make, one a line:
                            FILE:LINE RULE: OLD -> NEW
  gen.py count              how many, in all and by rule
  gen.py run                a random sample of them through the gate's
                            machinery (mutants.py run_one: a scratch copy
                            carrying build/, make all rebuilding what the
                            mutant changed, then its tests one file at a
                            time, cheapest per kill first, up to the first
                            that fails), the kill rate, and the survivors
                            with FILE:LINE.  Two lanes: host tests, and
                            beside them the qemu tests (at idle priority)
                            of the mutants that survived their host tests
                            or have only qemu tests.  A timed failure is
                            re-run unmutated (failing there too: flaky, not
                            counted).  Logs and each test file's times:
                            build/mutants/.
  gen.py selftest           the lanes on made-up mutants (TAP)

The files: the C files (.c, .h) that the gate's table (mutants.txt) names;
a mutant of FILE runs the tests the table names for FILE (all of its
records').  The rules, on code only (comments, preprocessor lines and
string literals left out):
  cmp      each comparison operator flipped: == and !=, < and >=, > and <=
  inc      each "+= 1" made "+= 0", each statement "X++;" dropped
  htons    each bpf_htons / bpf_ntohs / toe_htons / htons / ntohs (X) made (X)
  netns    each assignment to a netns field (.netns, ->netns_ino, ...) made 0

Environment: MUTANT_SEED (replay a sample: the seed run prints), MUTANT_SAMPLE
(how many, default 50), MUTANT_ONLY (FILE:LINE,... of the sample: only those), MUTANT_RULES (a comma-separated subset of the rules),
and mutants.py's (TOE_MUTANTS_TMP, TOE_TEST_TIMEOUT).  Exit 1 if the kill
rate is under MUTANT_GOAL percent (default 90).
"""
import os
import queue
import random
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutants  # noqa: E402  (the gate: load, run_one, TOP)

CMP = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
CMP_RE = re.compile(r"(?<![<>=!\-+*/%&|^])(==|!=|<=|>=|<|>)(?![<>=])")
INC_RE = re.compile(r"\+= 1\b(?!\d)")
INCPP_RE = re.compile(r"^(\s*)([A-Za-z_][\w.\->\[\]]*)\+\+;")
HTONS_RE = re.compile(r"\b(bpf_htons|bpf_ntohs|toe_htons|htons|ntohs)\(")
NETNS_RE = re.compile(r"((?:\.|->)netns\w*\s*=\s*)([^;=,][^;,]*?)(\s*[;,])")


def code_only(line):
    """The line with string and char literals and // comments blanked."""
    out = re.sub(r'"(?:[^"\\]|\\.)*"', lambda m: '"' + " " * (len(m.group(0)) - 2) + '"', line)
    out = re.sub(r"'(?:[^'\\]|\\.)*'", lambda m: " " * len(m.group(0)), out)
    out = re.sub(r"/\*.*?\*/", lambda m: " " * len(m.group(0)), out)
    for mark in ("//", "/*"):  # a line comment, a block comment left open
        i = out.find(mark)
        if i >= 0:
            out = out[:i] + " " * (len(out) - i)
    return out


def paren_end(s, i):
    """The index of the ')' that closes the '(' at s[i], or -1."""
    depth = 0
    for j in range(i, len(s)):
        depth += {"(": 1, ")": -1}.get(s[j], 0)
        if depth == 0:
            return j
    return -1


def line_mutants(line):
    """[(rule, new line)] of one line of code."""
    code, out = code_only(line), []
    for m in CMP_RE.finditer(code):
        # not a template, an include or a shift: a comparison has spaces
        if code[m.start() - 1:m.start()] == " " and code[m.end():m.end() + 1] == " ":
            out.append(("cmp", line[:m.start()] + CMP[m.group(1)] + line[m.end():]))
    for m in INC_RE.finditer(code):
        out.append(("inc", line[:m.start()] + "+= 0" + line[m.end():]))
    m = INCPP_RE.match(code)
    if m:
        out.append(("inc", m.group(1) + ";" + line[m.end():]))
    for m in HTONS_RE.finditer(code):
        end = paren_end(code, m.end() - 1)
        if end > 0:
            out.append(("htons", line[:m.start()] + line[m.end() - 1:end + 1] + line[end + 1:]))
    for m in NETNS_RE.finditer(code):
        if m.group(2).strip() != "0":
            out.append(("netns", line[:m.start(2)] + "0" + line[m.end(2):]))
    return out


def file_mutants(path):
    """[(line number, rule, old line, new line)] of one file."""
    out, in_comment = [], False
    with open(os.path.join(mutants.TOP, path), encoding="utf-8", errors="surrogateescape") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        s = line.strip()
        if in_comment:
            in_comment = "*/" not in s
            continue
        if s.startswith("/*"):
            in_comment = "*/" not in s
            continue
        if s.startswith(("*", "//", "#")):
            continue
        for rule, new in line_mutants(line):
            out.append((n, rule, line, new))
        tail = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
        if tail.rfind("/*") > tail.rfind("*/"):
            in_comment = True  # opened after the code, closed on a later line
    return out, lines


def unique_old(lines, n, old, new):
    """old and new widened by the lines before line n until old occurs once."""
    text = "\n".join(lines)
    k = n - 1
    while text.count(old) != 1 and k > 0:
        k -= 1
        old, new = lines[k] + "\n" + old, lines[k] + "\n" + new
    return old, new


def gate_files():
    """{file: [its tests]} of the C files the gate's table names."""
    muts, _ = mutants.load()
    files = {}
    for m in muts:
        if m["file"].endswith((".c", ".h")):
            files.setdefault(m["file"], set()).update(m["tests"])
    return {f: sorted(t) for f, t in sorted(files.items())}


def all_mutants(rules=None):
    out = []
    for path, tests in gate_files().items():
        found, lines = file_mutants(path)
        for n, rule, old, new in found:
            if rules and rule not in rules:
                continue
            o, w = unique_old(lines, n, old, new)
            out.append({"id": "%s:%d" % (path, n), "file": path, "line": n, "rule": rule,
                        "old": o, "new": w, "tests": tests,
                        "what": "%s: %s -> %s" % (rule, old.strip(), new.strip())})
    return out


def lanes(sample):
    """Two lanes: the mutants only a qemu test can catch (a guest boots at
    the lowest CPU priority, minutes of mostly waiting) beside the rest."""
    vm = [m for m in sample if all(t in mutants.VM_TESTS for t in m["tests"])]
    return [m for m in sample if m not in vm], vm


def run_lanes(sample, scratch, logdir, stats, show):
    """Each lane in its own thread, one mutant at a time in each.  A mutant
    of the host lane runs its host tests there; surviving them, it goes to
    the qemu lane for its qemu tests, so a guest never holds up the host
    lane."""
    rows, lock, later = [], threading.Lock(), queue.Queue()
    host, vm = lanes(sample)

    def done(m, res, secs, note):
        with lock:
            rows.append((m, res, note))
            show(m, res, secs, note)

    def host_lane():
        for m in host:
            vmt = [t for t in m["tests"] if t in mutants.VM_TESTS]
            mh = dict(m, tests=[t for t in m["tests"] if t not in vmt])
            res, secs, note = mutants.run_one(mh, scratch, logdir, first_fail=True, stats=stats)
            if res == "survived" and vmt:
                later.put((dict(m, tests=vmt), secs))
            else:
                done(m, res, secs, note)
        later.put(None)

    def vm_lane():
        todo = [(m, 0.0) for m in vm]
        while True:
            item = todo.pop(0) if todo else later.get()
            if item is None:
                return
            res, secs, note = mutants.run_one(item[0], scratch, logdir, first_fail=True, stats=stats)
            done(item[0], res, secs + item[1], note)

    threads = [threading.Thread(target=f) for f in (host_lane, vm_lane)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return rows


def cmd_run(muts):
    seed = int(os.environ.get("MUTANT_SEED") or random.SystemRandom().randrange(1 << 31))
    n = min(int(os.environ.get("MUTANT_SAMPLE", "50")), len(muts))
    goal = float(os.environ.get("MUTANT_GOAL", "90"))
    sample = random.Random(seed).sample(muts, n)
    print("gen.py: %d of %d rule-made mutants, MUTANT_SEED=%d (replay: MUTANT_SEED=%d MUTANT_SAMPLE=%d)"
          % (n, len(muts), seed, seed, n), flush=True)
    if os.getenv("MUTANT_ONLY"):  # some of the sample again: FILE:LINE,FILE:LINE
        sample = [m for m in sample if "%s:%d" % (m["file"], m["line"]) in os.environ["MUTANT_ONLY"].split(",")]
    if os.geteuid() != 0:
        print("the mutants run the selftests: run as root")
        return 1
    # the copies start from an up-to-date build of this tree (and a timed
    # check that fails is run again here, unmutated)
    if subprocess.run(["make", "-s", "-j2", "all"], cwd=mutants.TOP).returncode:
        print("make all fails in %s: fix the tree first" % mutants.TOP)
        return 1
    logdir = os.path.join(mutants.TOP, "build", "mutants")
    os.makedirs(logdir, exist_ok=True)
    stats = mutants.Stats(os.path.join(logdir, "test-stats.json"))
    for m in sample:
        m["id"] = "gen-%s-%d" % (os.path.basename(m["file"]), m["line"])
    t0 = time.monotonic()

    def show(m, res, secs, note):
        print("%-32s %-6s %-9s %5.0fs  %s" % ("%s:%d" % (m["file"], m["line"]), m["rule"], res, secs,
                                             note[:110]), flush=True)

    rows = run_lanes(sample, os.environ.get("TOE_MUTANTS_TMP", "/tmp"), logdir, stats, show)
    caught = sum(1 for _, r, _ in rows if r == "caught")
    counted = sum(1 for _, r, _ in rows if r in ("caught", "survived"))
    rate = 100.0 * caught / max(counted, 1)
    print("\nkill rate: %d of %d (%.0f%%; build-failed, stale and flaky not counted) in %.0f s, MUTANT_SEED=%d"
          % (caught, counted, rate, time.monotonic() - t0, seed))
    for m, r, note in rows:
        if r != "caught":
            print("%s: %s:%d %s (%s)" % (r, m["file"], m["line"], m["what"], note[:110]))
    return 0 if rate >= goal else 1


def cmd_selftest():
    """The lanes on made-up mutants (no test run): TAP."""
    calls = []

    def fake(m, scratch, logdir, first_fail, stats):
        calls.append((m["id"], [os.path.basename(t) for t in m["tests"]]))
        return ("caught" if m["id"] == "d" else "survived"), 1.0, ""

    real, mutants.run_one = mutants.run_one, fake
    g, k = "selftests/guest/test_guest.sh", "selftests/kmod/test_kmod.sh"
    sample = [{"id": "a", "tests": ["selftests/x/test_a.sh", g]}, {"id": "b", "tests": [k]},
              {"id": "c", "tests": ["selftests/x/test_c.sh"]}, {"id": "d", "tests": ["selftests/x/test_d.sh", k]}]
    rows = run_lanes(sample, "", "", None, lambda *a: None)
    mutants.run_one = real
    res = {m["id"]: r for m, r, _ in rows}
    want = [("a", ["test_a.sh"]), ("a", ["test_guest.sh"]), ("b", ["test_kmod.sh"]),
            ("c", ["test_c.sh"]), ("d", ["test_d.sh"])]
    print("1..2")
    print("%s 1 - gen lanes: host tests in the host lane, a survivor's qemu tests in the qemu lane, "
          "a caught one's not run: %s" % ("ok" if sorted(calls) == want else "not ok", sorted(calls)))
    print("%s 2 - gen lanes: one row a mutant: %s" % ("ok" if len(rows) == 4 and res["d"] == "caught" else "not ok", res))
    return 0 if sorted(calls) == want and len(rows) == 4 else 1


def main():
    a = sys.argv[1:]
    rules = [r for r in os.environ.get("MUTANT_RULES", "").split(",") if r] or None
    if "--rule" in a:
        rules = [a[a.index("--rule") + 1]]
    if a and a[0] == "selftest":
        return cmd_selftest()
    if not a or a[0] not in ("list", "count", "run"):
        print(__doc__)
        return 2
    muts = all_mutants(rules)
    if a[0] == "list":
        for m in muts:
            print("%s %s: %s" % (m["id"], m["rule"], m["what"].split(": ", 1)[1]))
    elif a[0] == "count":
        by = {}
        for m in muts:
            by[m["rule"]] = by.get(m["rule"], 0) + 1
        print("%d mutants: %s" % (len(muts), ", ".join("%s %d" % kv for kv in sorted(by.items()))))
    else:
        return cmd_run(muts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
