#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""toetables: the vocabulary tables as build/toe-tables -j dumps them
(user/tables/toe-tables.c), for scripts/counters.py and scripts/docfacts.py,
which read them instead of parsing C.

load(root): the tables of the build folder $TOE_BUILD, else ROOT/build;
$TOE_TABLES names a JSON file to read instead (a dump kept elsewhere).  No
build: it says so and exits 2 (make builds toe-tables with the programs).
"""
import json
import os
import subprocess
import sys

_cache = {}


def load(root):
    path = os.environ.get("TOE_TABLES")
    if path:
        key = ("file", path)
        if key not in _cache:
            with open(path) as f:
                _cache[key] = json.load(f)
        return _cache[key]
    build = os.environ.get("TOE_BUILD") or os.path.join(root, "build")
    exe = os.path.join(build, "toe-tables")
    if exe not in _cache:
        if not os.access(exe, os.X_OK):
            sys.stderr.write("toetables: %s not built (make)\n" % exe)
            sys.exit(2)
        _cache[exe] = json.loads(subprocess.run([exe, "-j"], check=True, stdout=subprocess.PIPE,
                                                universal_newlines=True).stdout)
    return _cache[exe]


if __name__ == "__main__":
    print(json.dumps(load(sys.argv[1] if len(sys.argv) > 1 else "."), indent=1))
