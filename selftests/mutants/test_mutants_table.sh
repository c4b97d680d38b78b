#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The mutation gate's table stays usable (make mutants runs it, make check
# does not: it takes long): every mutant of mutants.txt still applies (its
# old text occurs exactly once in its file, so a mutant made stale by code
# that moved on is noticed on every make check) and names test files that
# exist.  One check for the table, one per mutant.
. "$(dirname "$0")/../lib.sh"
need_cmd python3
m=$TOE_TOP/selftests/mutants/mutants.py
n=$(python3 "$m" count) || cannot_run "mutants.py count failed"
plan $((n + 1))
python3 "$m" check --tap
finish_rc=$?
[ $finish_rc = 0 ] || _toe_failed=1
finish
