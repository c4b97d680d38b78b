#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The documentation names only what exists (issue 30): README.md,
# docs/*.md and man/*.8 through scripts/docscheck.py, which checks
#  - paths in the tree (user/..., bpf/..., selftests/..., docs/...);
#  - `make TARGET` against the Makefile's targets (make -npq);
#  - options of toe-loader, toed and toectl against their --help (the code);
#  - toe_* map names against include/toe_maps.h's X(...) table;
#  - relative markdown links, and their #anchors.
# Then it proves the checker can fail: a small doc with a bogus file,
# target, option, map and link must be reported for each, and its good
# references for none.  README.md stays a front page (<= 300 lines).
# Needs no root and no kernel feature: the built programs' --help only.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
plan 12
need_cmd python3 make
need_built toe-loader toed toectl
cd "$TOE_TOP" || exit 1

out=$(python3 scripts/docscheck.py 2>&1); rc=$?
[ $rc -le 1 ] || { echo "$out"; fail "docscheck runs (exit $rc)"; finish; }
for kind in path target option map link; do
	bad=$(grep -E "^[^:]+:[0-9]+: $kind: " <<<"$out")
	if [ -z "$bad" ]; then
		ok "docs name no missing $kind"
	else
		echo "$bad"
		fail "docs name a missing $kind ($(wc -l <<<"$bad"))"
	fi
done

tmp=$(mktemp -d)
defer "rm -rf $tmp"
# (@MAP@: the real map's name from build/toe_names.sh, like every shell file)
cat >"$tmp/bogus.md" <<'DOC'
# Bogus

Read `user/no/such/file.c`, run `make no-such-target`, then
`toectl --no-such-option status` and look at `toe_no_such_map`.
See [nothing](no-such-page.md).

Fine: `user/loader/main.c`, `make check`, `make bench-xdp`,
`toe-loader load --dev eth0 --hook tc`, `toed --check FILE`,
`toectl -j flows`, `@MAP@`, `toe_xdp`, [self](#bogus).
DOC
sed -i "s/@MAP@/$MAP_FLOWS/" "$tmp/bogus.md"
out=$(python3 scripts/docscheck.py "$tmp/bogus.md" 2>&1); rc=$?
# shellcheck disable=SC2317 # (called through check)
reports() { grep -qE "bogus\.md:[0-9]+: $1: .*$2" <<<"$out"; }
check "a missing file is reported" reports path "user/no/such/file.c"
check "an unknown make target is reported" reports target "no-such-target"
check "an unknown option is reported" reports option "toectl has no option --no-such-option"
check "an unknown map is reported" reports map "toe_no_such_map"
check "a broken link is reported" reports link "no-such-page.md"
n=$(grep -cE 'bogus\.md:[0-9]+: ' <<<"$out")
if [ $rc = 1 ] && [ "$n" = 5 ]; then
	ok "exit 1, and nothing reported of the good references"
else
	echo "$out"
	fail "want exit 1 and 5 problems, got exit $rc and $n"
fi
lines=$(wc -l <README.md)
check "README.md is at most 300 lines ($lines)" test "$lines" -le 300
finish
