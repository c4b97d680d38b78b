#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The kernel table of docs/kernels.md: feature x kernel x works / falls back /
limited / refused, from `toe-loader features -j` as run on each kernel
(the host's, and Debian 12's 6.1 in the guest: selftests/guest/test_guest.sh
leaves build/features-<kernel>.json).

usage: features_table.py KERNEL=FILE.json ...   (Markdown on stdout)
"""
import json
import sys


def verdict(f):
    if f["present"]:
        return "works"
    return {"falls_back": "falls back", "limited": "limited"}.get(
        f["without"], "refused")


def names(features):
    """{name: feature}, a helper two program types use (fib_lookup: XDP's
    and tc's) named with its type: "fib_lookup (xdp)"."""
    seen = [f["name"] for f in features]
    return {f["name"] + (" (%s)" % f["prog_type"] if seen.count(f["name"]) > 1
                         and f.get("prog_type") else ""): f for f in features}


def main():
    cols = []
    for arg in sys.argv[1:]:
        name, _, path = arg.partition("=")
        with open(path) as fh:
            cols.append((name, names(json.load(fh))))
    if not cols:
        sys.exit(__doc__)
    order = list(cols[0][1])
    print("| feature | since | used by | " +
          " | ".join(n for n, _ in cols) + " | without it |")
    print("|---|---|---|" + "---|" * len(cols) + "---|")
    for name in order:
        first = cols[0][1][name]
        # only the rows where a kernel lacks something, and the attach types
        cells = [verdict(c[name]) if name in c else "?" for _, c in cols]
        if all(c == "works" for c in cells) and first["kind"] in (
                "prog_type", "map_type", "helper"):
            continue
        without = first.get("fallback", "") or (
            "load refused, naming it" if first["without"] == "refused" else "")
        print(f"| {name} | {first['since']} | {first['used_by']} | " +
              " | ".join(cells) + f" | {without} |")
    hidden = [n for n in order if all(
        c[n]["present"] for _, c in cols if n in c) and
        cols[0][1][n]["kind"] in ("prog_type", "map_type", "helper")]
    print(f"\nEvery program type, map type and helper opentoe uses "
          f"({len(hidden)}: {', '.join(hidden)}) is present on every kernel "
          "above; without one, `toe-loader load` refuses before it changes "
          "anything, naming it and the kernel it came with.")


if __name__ == "__main__":
    main()
