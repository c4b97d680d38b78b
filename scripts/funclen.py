# SPDX-License-Identifier: GPL-2.0
"""scripts/funclen.py FILE...: every function over 80 lines, one line each
("FILE:LINE NAME LINES").  C: a crude finder (a top-level '{' at the start
of a line after a line that looks like a function header, to its matching
'}').  Python (*.py): ast's line spans, nested functions and methods too.
"""
import ast
import re
import sys

MAX = 80


def c_functions(fn):
    """(line, name, length) of every function of the C file fn."""
    lines = open(fn).read().split('\n')
    i = 0
    while i < len(lines):
        if lines[i].startswith('{') and i > 0:
            # header: go back to find the name
            j = i - 1
            while j > 0 and not re.search(r'\w+\s*\(', lines[j]):
                j -= 1
            m = re.search(r'(\w+)\s*\(', lines[j])
            depth, k = 0, i
            while k < len(lines):
                depth += lines[k].count('{') - lines[k].count('}')
                if depth == 0:
                    break
                k += 1
            yield j + 1, m.group(1) if m else '?', k - j + 1
            i = k
        i += 1


def py_functions(fn):
    """(line, name, length) of every function of the Python file fn."""
    tree = ast.parse(open(fn).read(), fn)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.lineno, node.name, node.end_lineno - node.lineno + 1


for fn in sys.argv[1:]:
    funcs = py_functions(fn) if fn.endswith('.py') else c_functions(fn)
    for line, name, n in funcs:
        if n > MAX:
            print(f"{fn}:{line} {name} {n}")
