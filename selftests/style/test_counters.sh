#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every counter is read by a test by name: the datapath's (TOE_STAT_TABLE,
# the parse results), toectl stats' daemon and control sections, and the
# metrics families (scripts/counters.py walks the tables and the tests).
# A counter no test reads fails, unless selftests/style/counters-untested.txt
# gives the reason; an entry there that a test now reads, or that names no
# counter, fails too (the list only shrinks).  Needs no root and no kernel.
. "$(dirname "$0")/../lib.sh"
plan 3
need_cmd python3
cd "$TOE_TOP" || exit 1
ALLOW=selftests/style/counters-untested.txt

all=$(python3 scripts/counters.py --all .) || { fail "scripts/counters.py"; finish; }
listed=$(grep -v '^#' "$ALLOW" | grep . | sed 's/:.*//' | sort)
unread=$(awk '$3 == "unread" { print $1, $2 }' <<<"$all" | sort)
missing=$(comm -23 <(echo "$unread") <(echo "$listed") | grep .)
check "every counter is read by a test, or listed with its reason ($(wc -l <<<"$all") counters, $(wc -l <<<"$unread") unread, each listed)${missing:+; unread: $(tr '\n' ',' <<<"$missing")}" \
	test -z "$missing"
stale=$(comm -13 <(echo "$unread") <(echo "$listed") | grep .)
check "no stale entry in $ALLOW${stale:+ (read by a test now, or no such counter: $(tr '\n' ',' <<<"$stale"))}" \
	test -z "$stale"
noreason=$(grep -v '^#' "$ALLOW" | grep . | grep -v '^[a-z]* [a-z0-9_]*: ..')
check "every entry gives its reason${noreason:+: $noreason}" test -z "$noreason"
finish
