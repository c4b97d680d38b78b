#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The call graph between the .c files of a folder, read from their objects.

    scripts/callgraph.py [-O BUILD] [-j] [-v] DIR...

DIR is a source folder (user/toed, user/loader); its objects are the
build's (BUILD, default build/, as the Makefile puts them: user/toed's in
BUILD/toed-objs, user/X's in BUILD/X).  File X has an arrow to file Y when
X's object references (nm: undefined) a function Y's object defines (nm:
T): what the linker joins, not a guess from parsing C.  Printed: the
files, the arrows, and the strongly connected components of more than one
file (the circles: every file of one reaches every other) with their
sizes, biggest first.  -j: the same as JSON, one object per DIR.  -v: each
arrow with the functions it is made of.  Exit status 2 when an object is
missing (build first).
"""
import argparse
import json
import os
import subprocess
import sys


def objdir(build, src):
    """The Makefile's object folder of a source folder."""
    name = os.path.basename(os.path.normpath(src))
    if name == "toed":
        return os.path.join(build, "toed-objs")
    if name == "toectl":
        return os.path.join(build, "toectl-objs")
    return os.path.join(build, name)


def symbols(obj):
    """(functions defined, symbols referenced) of one object, by nm."""
    out = subprocess.run(["nm", obj], check=True, capture_output=True,
                         text=True).stdout
    defined, undef = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            undef.add(f[1])
        elif len(f) == 3 and f[1] == "T":
            defined.add(f[2])
    return defined, undef


def sccs(nodes, edges):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp))
    return out


def graph(src, build):
    od = objdir(build, src)
    files = sorted(f for f in os.listdir(src) if f.endswith(".c"))
    if not files:
        raise SystemExit(f"callgraph: no .c file in {src}")
    defs, refs = {}, {}
    for f in files:
        obj = os.path.join(od, f[:-2] + ".o")
        if not os.path.exists(obj):
            print(f"callgraph: {obj} missing (make first)", file=sys.stderr)
            sys.exit(2)
        defs[f], refs[f] = symbols(obj)
    owner = {}
    for f in files:
        for s in defs[f]:
            owner[s] = f
    arrows = {}
    for f in files:
        for s in refs[f]:
            g = owner.get(s)
            if g and g != f:
                arrows.setdefault((f, g), []).append(s)
    edges = {}
    for (a, b) in arrows:
        edges.setdefault(a, set()).add(b)
    comps = [c for c in sccs(files, edges) if len(c) > 1]
    comps.sort(key=lambda c: (-len(c), c))
    return {
        "dir": os.path.normpath(src),
        "files": files,
        "arrows": [{"from": a, "to": b, "functions": sorted(s)}
                   for (a, b), s in sorted(arrows.items())],
        "cycles": [{"size": len(c), "files": c,
                    "arrows": sum(1 for (a, b) in arrows
                                  if a in c and b in c)}
                   for c in comps],
        "biggest": len(comps[0]) if comps else 1,
    }


def show(g, verbose):
    print(f"{g['dir']}: {len(g['files'])} files, {len(g['arrows'])} arrows, "
          f"biggest cycle {g['biggest']} files")
    print("files: " + " ".join(g["files"]))
    print("arrows:")
    for a in g["arrows"]:
        extra = ": " + " ".join(a["functions"]) if verbose else ""
        print(f"  {a['from']} -> {a['to']} ({len(a['functions'])}){extra}")
    print("cycles:" if g["cycles"] else "cycles: none")
    for c in g["cycles"]:
        print(f"  {c['size']} files, {c['arrows']} arrows: "
              + " ".join(c["files"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", metavar="DIR")
    ap.add_argument("-O", dest="build", default="build",
                    help="the build folder (default build)")
    ap.add_argument("-j", dest="json", action="store_true", help="JSON")
    ap.add_argument("-v", dest="verbose", action="store_true",
                    help="each arrow's functions")
    a = ap.parse_args()
    gs = [graph(d, a.build) for d in a.dirs]
    if a.json:
        json.dump(gs if len(gs) > 1 else gs[0], sys.stdout, indent=1)
        print()
        return
    for i, g in enumerate(gs):
        if i:
            print()
        show(g, a.verbose)


if __name__ == "__main__":
    main()
