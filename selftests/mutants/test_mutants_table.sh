#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The mutation gate's table stays usable (make mutants runs it, make check
# does not: it takes long): every mutant of mutants.txt still applies (its
# old text occurs exactly once in its file, so a mutant made stale by code
# that moved on is noticed on every make check) and names test files that
# exist.  One check for the table, one per mutant; every file with code is
# named by a mutant (so gen.py's rule-made mutants reach it) or listed in
# unreached.txt with the reason (mutants.py reach); gen.py, which makes
# mutants by rule for make mutants, still finds sites for each rule; and the
# runner's own logic (mutants.py and gen.py selftest: test order, the stop
# at the first failing file, a timed failure re-run unmutated, the two
# lanes) on made-up test files; gen.py's rules on its fixture
# (selftests/mutants/fixture.c: the mutants fixture.expected lists, each
# compiling but those marked) and its sample stratified by rule.
. "$(dirname "$0")/../lib.sh"
need_cmd python3
m=$TOE_TOP/selftests/mutants/mutants.py
n=$(python3 "$m" count) || cannot_run "mutants.py count failed"
r=$(python3 "$m" selftest 2>&1); sr=$?
r+=$'\n'$(python3 "$TOE_TOP/selftests/mutants/gen.py" selftest 2>&1) || sr=1
plan $((n + 4 + $(grep -c '^ok\|^not ok' <<<"$r")))
python3 "$m" check --tap
finish_rc=$?
[ $finish_rc = 0 ] || _toe_failed=1
python3 "$m" reach --tap || _toe_failed=1
# the rule-made mutants (gen.py): every rule still finds sites in the gate's files
g=$(python3 "$TOE_TOP/selftests/mutants/gen.py" count 2>&1)
check "gen.py makes mutants by each rule: $g" \
	grep -Eq '^[0-9]+ mutants: cmp [1-9][0-9]*, del [1-9][0-9]*, errret [1-9][0-9]*, htons [1-9][0-9]*, idx [1-9][0-9]*, inc [1-9][0-9]*, netns [1-9][0-9]*, reset [1-9][0-9]*, swap [1-9][0-9]*$' <<<"$g"
grep '^ok\|^not ok' <<<"$r"
check "mutants.py and gen.py selftest exit 0 ($(tail -n 1 <<<"$r"))" test $sr = 0
finish
