#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The mutation gate (make mutants [MUTANTS=id,id]): each mutant of
# selftests/mutants/mutants.txt applied to a scratch copy of the tree,
# built, and its tests run; fails unless every mutant is caught.  See
# selftests/mutants/mutants.py.
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${MUTANTS:-}" ]; then
	exec python3 "$here/mutants.py" run --only "$MUTANTS"
fi
exec python3 "$here/mutants.py" run
