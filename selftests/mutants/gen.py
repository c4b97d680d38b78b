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
  gen.py builds             MUTANT_SAMPLE (default 20) of each rule: how
                            many build (each file's objects compiled by
                            make's own command, the mutant applied), and
                            the compiler's error of each that does not
  gen.py selftest           the lanes on made-up mutants, the rules on
                            selftests/mutants/fixture.c (TAP)

The files: the C files (.c, .h) that the gate's table (mutants.txt) names;
a mutant of FILE runs the tests the table names for FILE (all of its
records'), and when they all pass, its wider set: the other test files
that run a program FILE is built into (reach.py), within MUTANT_WIDE_SECS
(default 900, 0: no limit); a row names the file that killed the mutant
("wide ..." when the table did not name it).  The rules, on code only (comments, preprocessor lines and
string literals left out):
  cmp      each comparison operator flipped: == and !=, < and >=, > and <=
  inc      each "+= 1" made "+= 0", each statement "X++;" dropped
  htons    each bpf_htons / bpf_ntohs / toe_htons / htons / ntohs (X) made (X)
  netns    each assignment to a netns field (.netns, ->netns_ino, ...) made 0
and by statement, inside function bodies (rules.py, issue 50):
  del      each assignment or call statement deleted
  idx      each index x[i] made x[0]
  swap     the two of a pair (saddr/daddr, sport/dport, src/dst, orig/reply,
           client/server, laddr/raddr, lport/rport, ...) swapped
  reset    a state reset (X = 0;, memset) removed
  errret   an early return or goto on an error path removed
A run's sample is stratified by rule (MUTANT_STRATIFY=0: a plain random
sample, as the seeds of before the statement rules ran), and a sampled
mutant that does not build (Builds) stands down for the next of its rule.

Environment: MUTANT_SEED (replay a sample: the seed run prints), MUTANT_SAMPLE
(how many, default 50), MUTANT_ONLY (ids FILE:LINE or FILE:LINE.N, the
Nth of a line, as list prints them: only those of the sample, or without
MUTANT_SEED of all the mutants), MUTANT_TABLE (a git revision: its
mutants.txt for the files and their named tests, to replay an old sample
as it ran), MUTANT_RESUME (comma-separated files: earlier runs' output of
the same sample, or its record in selftests/mutants/runs/; a mutant with a
row there is not run again and its row counts, marked "(earlier)", so a
sample judged over two sessions or machines is judged once a mutant),
MUTANT_SOURCE (a git revision: the sample drawn from the tree as it was
there, its table too unless MUTANT_TABLE says, each mutant applied to the
work tree by its text, one that no longer applies replaced by the next of
its rule as one that does not build is; a sample judged over sessions
whose code changed meanwhile is the sample its seed drew),
MUTANT_LANES (host lanes, default 1), MUTANT_RULES (a
comma-separated subset of the rules), MUTANT_STRATIFY (0: not by rule),
and mutants.py's (TOE_MUTANTS_TMP, TOE_TEST_TIMEOUT).  Exit 1 if the kill
rate is under MUTANT_GOAL percent (default 90).
"""
import os
import queue
import random
import re
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutants  # noqa: E402  (the gate: load, run_one, TOP)
import reach  # noqa: E402  (which tests run what a file is built into)
import rules  # noqa: E402  (the statement rules: del, idx, swap, reset, errret)

CMP = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
CMP_RE = re.compile(r"(?<![<>=!\-+*/%&|^])(==|!=|<=|>=|<|>)(?![<>=])")
INC_RE = re.compile(r"\+= 1\b(?!\d)")
INCPP_RE = re.compile(r"^(\s*)([A-Za-z_][\w.\->\[\]]*)\+\+;")
HTONS_RE = re.compile(r"\b(bpf_htons|bpf_ntohs|toe_htons|htons|ntohs)\(")
LINE_RULES = ("cmp", "inc", "htons", "netns")
RULES = LINE_RULES + ("del", "idx", "swap", "reset", "errret")
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


def source(path):
    """path's text: in the work tree, or as it was at MUTANT_SOURCE."""
    rev = os.environ.get("MUTANT_SOURCE")
    if rev:
        return subprocess.run(["git", "show", "%s:%s" % (rev, path)], cwd=mutants.TOP, check=True,
                              stdout=subprocess.PIPE).stdout.decode("utf-8", "surrogateescape")
    with open(os.path.join(mutants.TOP, path), encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


def file_mutants(path):
    """[(line number, rule, old line, new line)] of one file."""
    out, in_comment = [], False
    text = source(path)
    lines = text.split("\n")
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
    # the statement rules after the line rules: a line's first mutants keep
    # their ids (FILE:LINE.N) of before (issue 36's samples replay)
    return _merge(out, rules.stmt_mutants(path, text)), lines


def _merge(line_rules, stmt_rules):
    """The mutants of both kinds by line, a line's line-rule ones first."""
    return sorted(line_rules + stmt_rules, key=lambda m: (m[0], m[1] not in LINE_RULES))


def unique_old(lines, n, old, new):
    """old and new widened by the lines before line n until old occurs once."""
    text = "\n".join(lines)
    k = n - 1
    while text.count(old) != 1 and k > 0:
        k -= 1
        old, new = lines[k] + "\n" + old, lines[k] + "\n" + new
    return old, new


def gate_files(table=None):
    """{file: [its tests]} of the C files the gate's table names (table: a
    copy of mutants.txt, MUTANT_TABLE's)."""
    muts, _ = mutants.load(table) if table else mutants.load()
    files = {}
    for m in muts:
        if m["file"].endswith((".c", ".h")):
            files.setdefault(m["file"], set()).update(m["tests"])
    return {f: sorted(t) for f, t in sorted(files.items())}


def all_mutants(rules=None, table=None):
    """Every rule-made mutant; id FILE:LINE (FILE:LINE.2 ... for the
    second and further mutants of one line)."""
    out = []
    for path, tests in gate_files(table).items():
        found, lines = file_mutants(path)
        on_line = {}
        for n, rule, old, new in found:
            k = on_line[n] = on_line.get(n, 0) + 1
            if rules and rule not in rules:
                continue
            o, w = unique_old(lines, n, old, new)
            out.append({"id": "%s:%d%s" % (path, n, ".%d" % k if k > 1 else ""), "file": path, "line": n,
                        "rule": rule, "old": o, "new": w, "tests": tests,
                        "what": "%s: %s -> %s" % (rule, " ".join(old.split()), " ".join(new.split()))})
    return out


def add_wide(sample, table=None):
    """Each mutant's wider set: the test files, beyond the ones the table
    names, that run a program its file is built into (reach.py); first
    (a tie in the runner's order, which goes by the files' past times and
    kills) the ones the table names most for files of the same folder,
    then for any file."""
    users, seen = reach.depfiles(os.path.join(mutants.TOP, "build")), {}
    recs = (mutants.load(table) if table else mutants.load())[0]
    for m in sample:
        if m["file"] not in seen:
            d = os.path.dirname(m["file"])
            near = [t for r in recs if os.path.dirname(r["file"]) == d for t in r["tests"]]
            every = [t for r in recs for t in r["tests"]]
            seen[m["file"]] = sorted(reach.tests_for(m["file"], users=users)[1],
                                     key=lambda t: (-near.count(t), -every.count(t), t))
        m["wide"] = [t for t in seen[m["file"]] if t not in m["tests"]]


def stages(m):
    """(host part, qemu part) of a mutant: each its named tests, then its
    wider set; None for a part with no test."""
    host = [t for t in m["tests"] if t not in mutants.VM_TESTS]
    hw = [t for t in m.get("wide", []) if t not in mutants.VM_TESTS]
    vm = [t for t in m["tests"] if t in mutants.VM_TESTS]
    vw = [t for t in m.get("wide", []) if t in mutants.VM_TESTS]
    return (dict(m, tests=host, wide=hw) if host or hw else None,
            dict(m, tests=vm, wide=vw, log_append=bool(host or hw)) if vm or vw else None)


def run_lanes(sample, scratch, logdir, stats, show, nhost=1):
    """The host lane (nhost threads, one mutant at a time in each) beside
    the qemu lane (one thread: a guest boots at the lowest CPU priority,
    minutes of mostly waiting).  A mutant runs its host tests (named, then
    if they pass the wider set) in a host lane; surviving them, or having
    none, its qemu tests in the qemu lane, so a guest never holds up the
    host lane."""
    rows, lock, later, todo = [], threading.Lock(), queue.Queue(), queue.Queue()

    def done(m, res, secs, note):
        with lock:
            rows.append((m, res, note))
            show(m, res, secs, note)

    for m in sample:
        h, v = stages(m)
        if h:
            todo.put((m, h, v))
        else:
            later.put((v or m, 0.0))

    def host_lane():
        while True:
            try:
                m, h, v = todo.get_nowait()
            except queue.Empty:
                return
            res, secs, note = mutants.run_one(h, scratch, logdir, first_fail=True, stats=stats)
            if res in ("survived", "flaky") and v:
                later.put((dict(v, host_note=(res, note)), secs))
            else:
                done(m, res, secs, note)

    def vm_lane():
        while True:
            item = later.get()
            if item is None:
                return
            res, secs, note = mutants.run_one(item[0], scratch, logdir, first_fail=True, stats=stats)
            if res == "survived" and item[0].get("host_note", ("",))[0] == "flaky":
                res, note = item[0]["host_note"]
            done(item[0], res, secs + item[1], note)

    hosts = [threading.Thread(target=host_lane) for _ in range(max(1, nhost))]
    vmt = threading.Thread(target=vm_lane)
    for t in hosts + [vmt]:
        t.start()
    for t in hosts:
        t.join()
    later.put(None)
    vmt.join()
    return rows


def pick(muts):
    """The sample: MUTANT_SAMPLE at random (MUTANT_SEED), stratified by
    rule (each rule an equal share, a rule with fewer mutants all of them,
    the rest shared among the others), or MUTANT_ONLY's ids (FILE:LINE:
    every mutant of that line) of it, or without a seed of all the
    mutants.  MUTANT_STRATIFY=0: a plain random sample of all (as before
    the statement rules: an old seed's sample, with MUTANT_RULES=
    cmp,inc,htons,netns).  Returns (seed, n, sample, spares): spares, by
    rule, the rest of each rule's mutants in the seed's order, to stand in
    for a sampled one that does not build."""
    only = [i for i in os.environ.get("MUTANT_ONLY", "").split(",") if i]
    seed = os.environ.get("MUTANT_SEED")
    if only and not seed:
        return None, len(muts), [m for m in muts if m["id"] in only or re.sub(r"\.\d+$", "", m["id"]) in only], {}
    seed = int(seed or random.SystemRandom().randrange(1 << 31))
    n = min(int(os.environ.get("MUTANT_SAMPLE", "50")), len(muts))
    rnd, spares = random.Random(seed), {}
    if os.environ.get("MUTANT_STRATIFY", "1") == "0":
        sample = rnd.sample(muts, n)
    else:
        pools = {r: [m for m in muts if m["rule"] == r] for r in RULES}
        pools = {r: rnd.sample(p, len(p)) for r, p in pools.items() if p}
        quota, left, order = dict.fromkeys(pools, 0), n, sorted(pools)
        rnd.shuffle(order)  # who gets the remainder
        while left:
            for r in order:
                if left and quota[r] < len(pools[r]):
                    quota[r] += 1
                    left -= 1
        sample = [m for r in sorted(pools) for m in pools[r][:quota[r]]]
        spares = {r: pools[r][quota[r]:] for r in pools}
    if only:
        sample = [m for m in sample if m["id"] in only or re.sub(r"\.\d+$", "", m["id"]) in only]
    return seed, n, sample, spares


class Builds:
    """Does a mutant build?  Its file's objects (the build's .d files; the
    datapath's and one program's for a header of both) compiled with
    make's own command (make -n -W FILE OBJ) in a scratch copy of
    include/, bpf/ and user/ (build/ linked: vmlinux.h and the generated
    headers), the mutant applied there and taken back after.  Seconds a
    mutant, not a make all in a copy of the tree.  kmod/ (kbuild, in the
    qemu test): not checked (None)."""

    def __init__(self):
        self.users = reach.depfiles(os.path.join(mutants.TOP, "build"))
        self.dir, self.cmds = None, {}

    def __enter__(self):
        import tempfile
        self.dir = tempfile.mkdtemp(prefix="opentoe-builds.")
        for d in ("include", "bpf", "user"):
            shutil.copytree(os.path.join(mutants.TOP, d), os.path.join(self.dir, d))
        os.symlink(os.path.join(mutants.TOP, "build"), os.path.join(self.dir, "build"))
        return self

    def __exit__(self, *a):
        shutil.rmtree(self.dir, ignore_errors=True)

    def commands(self, path):
        """make's commands that compile path's objects (at most two), with
        their output in the scratch folder."""
        if path not in self.cmds:
            objs = sorted(self.users.get(path, ()), key=lambda o: (o != "opentoe.bpf.o", o))
            pick2 = objs[:1] + [o for o in objs[1:] if not o.startswith("selftests/")][:1]
            cmds = []
            for i, o in enumerate(pick2):
                r = subprocess.run(["make", "-s", "-n", "-W", path, os.path.join("build", o)], cwd=mutants.TOP,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True)
                for line in r.stdout.split("\n"):
                    if " -c " in line and " -o build/%s" % o in line:
                        cmds.append(line.replace(" -o build/%s" % o, " -o %d.o" % i))
            self.cmds[path] = cmds
        return self.cmds[path]

    def check(self, m):
        """(True, '') builds, (False, the compiler's first error), or
        (None, why) not checked."""
        if m["file"].startswith("kmod/") or not m["file"].startswith(("bpf/", "include/", "user/")):
            return None, "not checked (kbuild)"
        cmds = self.commands(m["file"])
        if not cmds:
            return None, "no object of the build names it"
        path = os.path.join(self.dir, m["file"])
        src = open(path, encoding="utf-8", errors="surrogateescape").read()
        if src.count(m["old"]) != 1:
            return False, "old text not found once"
        try:
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(src.replace(m["old"], m["new"], 1))
            for c in cmds:
                r = subprocess.run(c, shell=True, cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   universal_newlines=True, errors="replace")
                if r.returncode:
                    err = [x for x in r.stdout.split("\n") if "error" in x]
                    return False, (err[0] if err else r.stdout.strip()[-200:])
            return True, ""
        finally:
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(src)


def applies(m):
    """(True, "") if m's old text is in its file in the work tree once
    (drawn from MUTANT_SOURCE's tree, the code it changes may be gone or
    changed since), else (False, why)."""
    with open(os.path.join(mutants.TOP, m["file"]), encoding="utf-8", errors="surrogateescape") as f:
        n = f.read().count(m["old"])
    return (True, "") if n == 1 else (False, "its code is %s in this tree" % ("not" if not n else "%d times" % n))


def fill(sample, spares, builds, say=print):
    """The sample with each mutant that does not build (or, drawn from
    MUTANT_SOURCE's tree, does not apply to this one) replaced by the next
    of its rule's spares that does (or dropped when none is left)."""
    out = []
    for m in sample:
        while m is not None:
            ok, why = applies(m) if os.environ.get("MUTANT_SOURCE") else (True, "")
            if ok:
                ok, why = builds.check(m)
            if ok is not False:
                out.append(m)
                break
            say("%s %s: does not %s, replaced by the next of its rule (%s)" % (
                m["id"], m["rule"], "apply" if why.startswith("its code") else "build", why[:100]))
            m = spares.get(m["rule"]) and spares[m["rule"]].pop(0)
    return out


def table_at(rev):
    """mutants.txt as it was at git revision rev, in build/mutants/."""
    out = os.path.join(mutants.TOP, "build", "mutants", "mutants-%s.txt" % rev)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        subprocess.run(["git", "show", "%s:selftests/mutants/mutants.txt" % rev], cwd=mutants.TOP,
                       stdout=f, check=True)
    return out


RESULTS = ("caught", "survived", "flaky", "stale", "build-failed")
ROW_RE = re.compile(r"^(gen-\S+)\s+(\w+)\s+(%s)\s+(\d+)s  (.*)$" % "|".join(RESULTS))


def earlier_rows(paths):
    """{gen id: (result, secs, note)} of the rows in earlier runs' output
    (show_row's lines; the last row of an id wins).  A caught row's note
    is 'FILE: why' again, as run_one gave it."""
    rows = {}
    for path in paths:
        for line in open(path, encoding="utf-8", errors="replace"):
            x = ROW_RE.match(line.rstrip("\n"))
            if not x:
                continue
            gid, _, res, secs, rest = x.groups()
            rest = rest.replace(" (earlier)", "", 1) if rest.endswith(" (earlier)") else rest
            if res == "caught":
                # (KILLED BY: "FILE" or "wide FILE", padded to 40 or longer)
                by, why = re.match(r"^((?:wide )?\S+)\s+(.*)$", rest).groups()
                by = "wide selftests/" + by[5:] if by.startswith("wide ") else "selftests/" + by
                note = "%s: %s" % (by, why)
            else:
                note = rest.strip(" -")
            rows[gid] = (res, float(secs), note)
    return rows


def show_row(m, res, secs, note):
    by = note.split(": ", 1)[0] if res == "caught" else "-"
    print("%-34s %-6s %-9s %5.0fs  %-40s %s" % (m["id"], m["rule"], res, secs,
                                                 by.replace("selftests/", ""), note[len(by) + 2:][:90]
                                                 if res == "caught" else note[:110]), flush=True)


def cmd_run(rules):
    if os.geteuid() != 0:
        print("the mutants run the selftests: run as root")
        return 1
    # the copies start from an up-to-date build of this tree (and a timed
    # check that fails is run again here, unmutated); the build's dependency
    # files give each mutant its wider set
    if subprocess.run(["make", "-s", "-j2", "all"], cwd=mutants.TOP).returncode:
        print("make all fails in %s: fix the tree first" % mutants.TOP)
        return 1
    rev = os.environ.get("MUTANT_TABLE") or os.environ.get("MUTANT_SOURCE")
    table = table_at(rev) if rev else None
    muts = all_mutants(rules, table)
    seed, n, sample, spares = pick(muts)
    if spares:  # a stratified sample: each stratum of mutants that build
        with Builds() as b:
            sample = fill(sample, spares, b, lambda x: print("gen.py: " + x, flush=True))
    goal = float(os.environ.get("MUTANT_GOAL", "90"))
    wide_secs = os.environ.get("MUTANT_WIDE_SECS", "900")
    if seed is None:  # MUTANT_ONLY's ids of all the mutants: no sample to replay
        how = "MUTANT_ONLY's ids (replay: MUTANT_ONLY=%s)" % ",".join(
            i for i in os.environ.get("MUTANT_ONLY", "").split(",") if i)
    else:
        how = "MUTANT_SEED=%s (replay: MUTANT_SEED=%s MUTANT_SAMPLE=%d%s)" % (
            seed, seed, n, " MUTANT_ONLY=..." if os.environ.get("MUTANT_ONLY") else "")
    print("gen.py: %d of %d rule-made mutants, %s%s"
          % (len(sample), len(muts), how, ", table of " + rev if table else "")
          + (", drawn from the tree at " + os.environ["MUTANT_SOURCE"] if os.environ.get("MUTANT_SOURCE") else ""),
          flush=True)
    add_wide(sample, table)
    logdir = os.path.join(mutants.TOP, "build", "mutants")
    os.makedirs(logdir, exist_ok=True)
    stats = mutants.Stats(os.path.join(logdir, "test-stats.json"))
    for m in sample:
        m["id"], m["wide_secs"] = "gen-%s" % re.sub(r"[/:]", "-", m["id"]), wide_secs
    t0 = time.monotonic()
    print("%-34s %-6s %-9s %6s  %-40s %s" % ("MUTANT", "RULE", "RESULT", "TIME", "KILLED BY (wide: not named)", "WHY"),
          flush=True)
    before = earlier_rows([x for x in os.environ.get("MUTANT_RESUME", "").split(",") if x])
    rows = []
    for m in [m for m in sample if m["id"] in before]:
        res, secs, note = before[m["id"]]
        rows.append((m, res, note))
        show_row(m, res, secs, note + " (earlier)")
    rows += run_lanes([m for m in sample if m["id"] not in before], os.environ.get("TOE_MUTANTS_TMP", "/tmp"),
                      logdir, stats, show_row, int(os.environ.get("MUTANT_LANES", "1")))
    caught = sum(1 for _, r, _ in rows if r == "caught")
    wide = sum(1 for _, r, note in rows if r == "caught" and note.startswith("wide "))
    counted = sum(1 for _, r, _ in rows if r in ("caught", "survived"))
    rate = 100.0 * caught / max(counted, 1)
    print("\nkill rate: %d of %d (%.0f%%; %d by the wider set; build-failed, stale and flaky not counted) "
          "in %.0f s, MUTANT_SEED=%s" % (caught, counted, rate, wide, time.monotonic() - t0, seed))
    for m, r, note in rows:
        if r != "caught":
            print("%s: %s:%d %s (%s)" % (r, m["file"], m["line"], m["what"], note[:110]))
    return 0 if rate >= goal else 1


def selftest_lanes():
    """[(what, good)]: the lanes on made-up mutants (no test run)."""
    calls = []

    def fake(m, scratch, logdir, first_fail, stats):
        calls.append((m["id"], [os.path.basename(t) for t in m["tests"] + m.get("wide", [])]))
        return ("caught" if m["id"] == "d" else "survived"), 1.0, ""

    real, mutants.run_one = mutants.run_one, fake
    g, k, w = "selftests/guest/test_guest.sh", "selftests/kmod/test_kmod.sh", "selftests/x/test_w.sh"
    sample = [{"id": "a", "tests": ["selftests/x/test_a.sh", g], "wide": [w, k]}, {"id": "b", "tests": [k]},
              {"id": "c", "tests": ["selftests/x/test_c.sh"]}, {"id": "d", "tests": ["selftests/x/test_d.sh", k]},
              {"id": "e", "tests": [k], "wide": [w]}]
    rows = run_lanes(sample, "", "", None, lambda *a: None, nhost=2)
    mutants.run_one = real
    res = {m["id"]: r for m, r, _ in rows}
    want = [("a", ["test_a.sh", "test_w.sh"]), ("a", ["test_guest.sh", "test_kmod.sh"]), ("b", ["test_kmod.sh"]),
            ("c", ["test_c.sh"]), ("d", ["test_d.sh"]), ("e", ["test_kmod.sh"]), ("e", ["test_w.sh"])]
    return [("host tests (named, then the wider set) in the host lanes, a survivor's qemu tests in the qemu "
             "lane, a caught one's not run: %s" % sorted(calls), sorted(calls) == want),
            ("one row a mutant: %s" % res, len(rows) == 5 and res["d"] == "caught")]


def selftest_wide():
    """[(what, good)]: the last sample's (MUTANT_SEED=1032553152) false
    survivors: each one's wider set holds the test that catches it."""
    users = reach.depfiles(os.path.join(mutants.TOP, "build"))
    out = []
    for f, t in (("user/loader/attach.c", "xdp/test_fwd_netns_tc.sh"),
                 ("user/toed/metrics.c", "xdp/test_fwd_reasons_tc.sh"),
                 ("user/loader/unload.c", "xdp/test_tc_hook.sh"), ("user/toed/events.c", "kmod/test_kmod.sh"),
                 ("kmod/toedev.c", "kmod/test_kmod.sh"), ("bpf/forward.h", "guest/test_guest.sh")):
        progs, tests = reach.tests_for(f, users=users)
        out.append(("%s (%s): its wider set (%d files) has %s" % (f, " ".join(progs), len(tests), t),
                    "selftests/" + t in tests))
    m = {"file": "user/toed/kmod.c", "old": "kmod_toe_index(", "new": "x(", "tests": ["selftests/kmod/test_kmod.sh"],
         "wide": ["selftests/toed/test_toed.sh"]}
    m["old"] = open(os.path.join(mutants.TOP, m["file"])).read().split("\n")[0]
    p = mutants.problems(stages(m)[0])
    out.append(("a mutant named only qemu tests runs its wider set's host tests first (no 'names no test file'): "
                "%s" % p, not p and stages(m)[0]["wide"] == m["wide"]))
    ro = reach.tests_for("user/toed/show_maps.c", users=users)[1]
    out.append(("a test file that only reads the tree is in no wider set",
                "selftests/style/test_style.sh" not in ro and len(ro) > 10))
    return out


FIXTURE = "selftests/mutants/fixture.c"


def fixture_rows(path=FIXTURE):
    """The mutants the rules make of the fixture: LINE RULE: OLD -> NEW."""
    found, _ = file_mutants(path)
    return ["%d %s: %s -> %s" % (n, r, " ".join(o.split()), " ".join(w.split())) for n, r, o, w in found]


def selftest_fixture():
    """[(what, good)]: the rules on selftests/mutants/fixture.c make the
    mutants fixture.expected lists, every rule some, each one compiles;
    read as a file of bpf/, its pointer check's return is left alone."""
    import tempfile
    got = fixture_rows()
    listed = [x for x in open(os.path.join(mutants.TOP, "selftests/mutants/fixture.expected")).read().split("\n")
              if x and not x.startswith("#")]
    mark = "  [does not build]"
    want = [x.replace(mark, "") for x in listed]
    nobuild = sorted(" ".join(x.split()[:2]).rstrip(":") for x in listed if x.endswith(mark))
    miss, extra = [x for x in want if x not in got], [x for x in got if x not in want]
    out = [("the rules make of fixture.c the %d mutants fixture.expected lists (missing: %s; not listed: %s)"
            % (len(want), miss[:3], extra[:3]), not miss and not extra)]
    rules_seen = {x.split()[1].rstrip(":") for x in got}
    out.append(("every rule makes mutants of fixture.c (none: %s)" % sorted(set(RULES) - rules_seen),
                rules_seen == set(RULES)))
    text = open(os.path.join(mutants.TOP, FIXTURE)).read()
    found, lines, bad = file_mutants(FIXTURE)[0], text.split("\n"), []
    with tempfile.TemporaryDirectory() as d:
        for n, r, o, w in found:
            o2, w2 = unique_old(lines, n, o, w)
            with open(os.path.join(d, "m.c"), "w") as f:
                f.write(text.replace(o2, w2, 1))
            if subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-c", "m.c", "-o", "m.o"], cwd=d,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
                bad.append("%d %s" % (n, r))
    out.append(("the fixture's %d mutants compile (cc -O2 -Wall -Wextra -Werror) but those marked "
                "'[does not build]' (the rules read no types: Builds stands them down): %s, marked %s"
                % (len(found), bad, nobuild), sorted(bad) == nobuild and len(found) > len(bad)))
    as_bpf = [m for m in rules.stmt_mutants("bpf/fixture.c", text) if m[1] == "errret"]
    as_user = [m for m in rules.stmt_mutants(FIXTURE, text) if m[1] == "errret"]
    out.append(("read as bpf/, the return after 'if (!k)' is not removed (the verifier's kill): %d errret "
                "mutants, %d as user code" % (len(as_bpf), len(as_user)),
                len(as_user) - len(as_bpf) == 1 and "!k" in lines[as_user[0][0] - 2]))
    return out


def selftest_pick():
    """[(what, good)]: the sample stratified by rule; a mutant that does
    not build stands down for the next of its rule."""
    muts = [{"id": "%s%d" % (r, i), "rule": r} for r, k in (("cmp", 100), ("del", 60), ("swap", 2)) for i in range(k)]
    env = dict(os.environ)
    os.environ.update(MUTANT_SEED="7", MUTANT_SAMPLE="20")
    os.environ.pop("MUTANT_ONLY", None)
    os.environ.pop("MUTANT_STRATIFY", None)
    _, n, sample, spares = pick(muts)
    by = {r: sum(1 for m in sample if m["rule"] == r) for r in ("cmp", "del", "swap")}
    again = [m["id"] for m in pick(muts)[2]]
    os.environ["MUTANT_STRATIFY"] = "0"
    plain = pick(muts)[2]
    os.environ.clear()
    os.environ.update(env)
    out = [("a sample of 20 of cmp 100, del 60, swap 2: by rule %s (swap all, the rest shared); the seed "
            "replays it" % by, by == {"cmp": 9, "del": 9, "swap": 2} and again == [m["id"] for m in sample]),
           ("MUTANT_STRATIFY=0: random.sample of all, as before (%d of them cmp)"
            % sum(1 for m in plain if m["rule"] == "cmp"),
            [m["id"] for m in plain] == [m["id"] for m in random.Random(7).sample(muts, 20)])]

    fails = ("del0", spares["del"][0]["id"])

    class Fake:
        def check(self, m):
            return (m["id"] not in fails, "error: x")

    sample = [dict(m) for m in sample]
    sample[0] = {"id": "del0", "rule": "del"}
    want = spares["del"][1]["id"]
    got = fill(sample, spares, Fake(), lambda x: None)
    out.append(("a mutant that does not build is replaced by the next of its rule that does (%s)" % got[0]["id"],
                got[0]["id"] == want and len(got) == 20))
    return out


def selftest_resume():
    """[(what, good)]: rows show_row printed read back by earlier_rows."""
    import contextlib
    import io
    import tempfile
    made = [({"id": "gen-user-toed-a.c-10", "rule": "del"}, "caught",
             "selftests/toed/test_a.sh: check 3 failed: x: y"),
            ({"id": "gen-bpf-egress.h-462", "rule": "reset"}, "caught", "wide selftests/xdp/test_b.sh: 2 failed"),
            ({"id": "gen-user-toed-c.c-7.2", "rule": "idx"}, "survived", "all 4 test files pass"),
            ({"id": "gen-kmod-d.c-1", "rule": "cmp"}, "build-failed", "make all failed")]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print("gen.py: a header line")
        for m, r, n in made:
            show_row(m, r, 12.0, n)
        show_row(made[2][0], "caught", 30.0, "selftests/toed/test_c.sh: 1 failed")
    with tempfile.NamedTemporaryFile("w", suffix=".log") as f:
        f.write(buf.getvalue())
        f.flush()
        got = earlier_rows([f.name])
    want = {made[0][0]["id"]: ("caught", 12.0, made[0][2]), made[1][0]["id"]: ("caught", 12.0, made[1][2]),
            made[2][0]["id"]: ("caught", 30.0, "selftests/toed/test_c.sh: 1 failed"),
            made[3][0]["id"]: ("build-failed", 12.0, "make all failed")}
    return [("MUTANT_RESUME: an earlier run's rows read back, each result and its killer, the last row of an id "
             "winning (%s)" % (got if got != want else len(got)), got == want)]


def selftest_source():
    """[(what, good)]: MUTANT_SOURCE's text is git's at that revision, and
    a mutant drawn there applies here only if its old text is here once."""
    f = "selftests/mutants/fixture.c"
    env = os.environ.get("MUTANT_SOURCE")
    os.environ["MUTANT_SOURCE"] = "HEAD"
    try:
        got = source(f)
    finally:
        os.environ.pop("MUTANT_SOURCE")
        if env is not None:
            os.environ["MUTANT_SOURCE"] = env
    want = subprocess.run(["git", "show", "HEAD:" + f], cwd=mutants.TOP, stdout=subprocess.PIPE).stdout.decode()
    text = open(os.path.join(mutants.TOP, f)).read()
    once = next(x for x in text.split("\n") if x.strip() and text.count(x) == 1)
    res = [applies({"file": f, "old": o})[0] for o in (once, "no such code, not here", "\n")]
    return [("MUTANT_SOURCE=HEAD: a file's text as git has it there (%d characters)" % len(got), got == want),
            ("a mutant drawn from another tree applies where its code is once, not where it is gone or twice (%s)"
             % res, res == [True, False, False])]


def cmd_selftest():
    """The lanes on made-up mutants, the wider set of real files: TAP."""
    checks = (selftest_lanes() + selftest_wide() + selftest_fixture() + selftest_pick() + selftest_resume()
              + selftest_source())
    env = dict(os.environ)
    os.environ.pop("MUTANT_SEED", None)
    os.environ["MUTANT_ONLY"] = "f.c:3,g.c:1.2"
    muts = [{"id": i} for i in ("f.c:3", "f.c:3.2", "f.c:4", "g.c:1", "g.c:1.2")]
    got = [m["id"] for m in pick(muts)[2]]
    os.environ.clear()
    os.environ.update(env)
    checks.append(("MUTANT_ONLY with no seed: those of all the mutants (FILE:LINE: each of the line): %s" % got,
                   got == ["f.c:3", "f.c:3.2", "g.c:1.2"]))
    print("1..%d" % len(checks))
    for i, (what, good) in enumerate(checks, 1):
        print("%s %d - gen: %s" % ("ok" if good else "not ok", i, what))
    return 0 if all(g for _, g in checks) else 1


def cmd_builds(rules):
    """MUTANT_SAMPLE (default 20) mutants of each rule at random
    (MUTANT_SEED): how many build (Builds), and why the others do not."""
    seed = int(os.environ.get("MUTANT_SEED") or random.SystemRandom().randrange(1 << 31))
    k, rnd, bad = int(os.environ.get("MUTANT_SAMPLE", "20")), random.Random(seed), 0
    muts = [m for m in all_mutants(rules) if not m["file"].startswith("kmod/")]
    print("gen.py builds: MUTANT_SEED=%d, %d a rule (kmod/ left out: kbuild)" % (seed, k))
    with Builds() as b:
        for r in sorted({m["rule"] for m in muts}):
            pool = [m for m in muts if m["rule"] == r]
            res = [(m, b.check(m)) for m in rnd.sample(pool, min(k, len(pool)))]
            good = sum(1 for _, (ok, _) in res if ok)
            print("%-7s %d of %d build" % (r, good, len(res)), flush=True)
            for m, (ok, why) in res:
                if not ok:
                    bad += 1
                    print("  %s %s: %s" % (m["id"], m["what"][:100], why[:120]), flush=True)
    return 0


def main():
    a = sys.argv[1:]
    rules = [r for r in os.environ.get("MUTANT_RULES", "").split(",") if r] or None
    if "--rule" in a:
        rules = [a[a.index("--rule") + 1]]
    if a and a[0] == "selftest":
        return cmd_selftest()
    if a and a[0] == "builds":
        return cmd_builds(rules)
    if not a or a[0] not in ("list", "count", "run"):
        print(__doc__)
        return 2
    if a[0] == "run":
        return cmd_run(rules)
    rev = os.environ.get("MUTANT_TABLE") or os.environ.get("MUTANT_SOURCE")
    muts = all_mutants(rules, table_at(rev) if rev else None)
    if a[0] == "list":
        for m in muts:
            print("%s %s: %s" % (m["id"], m["rule"], m["what"].split(": ", 1)[1]))
    else:
        by = {}
        for m in muts:
            by[m["rule"]] = by.get(m["rule"], 0) + 1
        print("%d mutants: %s" % (len(muts), ", ".join("%s %d" % kv for kv in sorted(by.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
