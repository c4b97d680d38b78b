#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The documentation names only what exists (issue 30): README.md,
# docs/*.md and man/*.8 through scripts/docscheck.py, which checks
#  - paths in the tree (user/..., bpf/..., selftests/..., docs/...);
#  - `make TARGET` against the Makefile's targets (make -npq);
#  - options of toe-loader, toed and toectl against their --help (the code);
#  - toe_* map names against include/toe_maps.h's X(...) table;
#  - relative markdown links, and their #anchors;
#  - facts a table of the code or a probe determines (issue 45,
#    scripts/docfacts.py): the BTF count and the maps without BTF
#    (include/toe_maps.h, bpf/'s map types, test_map_btf.sh's list), the
#    table of maps' types, the types and helpers toe-loader probes and the
#    features' "since" (user/loader/features.c), the configuration's
#    statements (a section each in configuration.md, its synopsis the
#    table's; toed.8's synopsis and list made from it), the reasons' table
#    (opentoe_reasons.h), a list of toectl stats' refused_* or
#    bypass_to_tcp_* counters;
#  - every option and command of each program's --help in its man page
#    (manpage), and each --help's usage line against its option list
#    (usage).
# Then it proves the checker can fail: a small doc with a bogus file,
# target, option, map and link must be reported for each, and its good
# references for none; copies of the docs with one wrong fact each (the
# facts issue 45 found wrong, put back) each reported, and nothing else;
# a man page lacking an option, a --help whose usage line lacks one.
# README.md stays a front page (<= 300 lines).
# Needs no root and no kernel feature: the built programs' --help only.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
plan 34
need_cmd python3 make
need_built toe-loader toed toectl
cd "$TOE_TOP" || exit 1

out=$(python3 scripts/docscheck.py 2>&1); rc=$?
[ $rc -le 1 ] || { echo "$out"; fail "docscheck runs (exit $rc)"; finish; }
for kind in path target option map link fact manpage usage; do
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
# The wrong facts, one a copy (the checks go by the doc's name): each
# reported, and nothing else of the facts of these docs.
F=$tmp/facts
mkdir -p "$F"
# (the true count, N of M, as README.md says it: checked above)
btf=$(sed -n 's/.*allows it (\([0-9]* of [0-9]*\)).*/\1/p' README.md)
sed 's/allows it ([0-9]* of [0-9]*)/allows it (27 of 33)/' README.md >"$F/README.md"
sed -e 's/[0-9]* of the [0-9]* carry/27 of the 33 carry/' \
	-e "s/\`$MAP_EVENTS\` and \`$MAP_CAP_RING\` (ring buffers/\`$MAP_EVENTS\` (ring buffer/" \
	-e "s/^| \\[\`$MAP_FLOWS\`\\](#$MAP_FLOWS) | LRU hash |/| [\`$MAP_FLOWS\`](#$MAP_FLOWS) | hash |/" docs/maps.md >"$F/maps.md"
sed -e 's/uses (30: /uses (26: /' -e 's/fib_lookup (xdp)/fib_lookup/' \
	-e 's/, redirect_peer, redirect_neigh, check_mtu, fib_lookup (sched_cls))/)/' \
	-e 's/^| tcx | 6.6 |/| tcx | 6.5 |/' docs/kernels.md >"$F/kernels.md"
# (quota's section retitled, track's synopsis without policy)
sed -e 's/^## quota: what one tenant may hold$/## Quotas: what one tenant may hold/' \
	-e 's/^    track all | policy$/    track all/' docs/configuration.md >"$F/configuration.md"
# (and stack_only said to happen on tc too: the table's hooks column)
sed -e 's/^| `lease` | returned |/| `lease` | ended |/' -e 's/ `_quota`,//' \
	-e 's/^| `stack_only` | returned | xdp |/| `stack_only` | returned | xdp, tc |/' docs/forwarding.md >"$F/forwarding.md"
# toectl's man page without --snaplen (toectl dump's), without its
# entry for reload, and with fwd_ended's reasons no longer made from the
# tables; toed's synopsis of the configuration no longer made from them
grep -v -e 'snaplen' -e '^\.B reload$' -e '@fwd_reasons ended@' man/toectl.8 >"$F/toectl.8"
grep -v '@statements@' man/toed.8 >"$F/toed.8"
for f in README.md maps.md kernels.md configuration.md forwarding.md toectl.8 toed.8; do
	cmp -s "$F/$f" "$(ls {.,docs,man}/"$f" 2>/dev/null | head -n 1)" && fail "the wrong fact put into $f"
done
out=$(python3 scripts/docscheck.py "$F"/* 2>&1)
facts=$(grep -E ': (fact|manpage): ' <<<"$out")
# shellcheck disable=SC2317 # (called through check)
said() { grep -qE "/$1:[0-9]+: (fact|manpage): .*$2" <<<"$facts"; }
check "README.md: 27 of 33 maps with BTF is reported ($btf)" said README.md "$btf maps carry BTF, not 27 of 33"
check "maps.md: the wrong count is reported" said maps.md "$btf maps carry BTF, not 27 of 33"
check "maps.md: the list without $MAP_CAP_RING is reported" said maps.md "without BTF .*missing $MAP_CAP_RING"
check "maps.md: a map's wrong type in the table is reported" said maps.md "$MAP_FLOWS is a LRU hash map"
check "kernels.md: the list without tc's helpers is reported" \
	said kernels.md "missing fib_lookup \(xdp\), redirect_peer, redirect_neigh, check_mtu, fib_lookup \(sched_cls\); not so fib_lookup$"
check "kernels.md: their count, 26, is reported" said kernels.md "probes 30 program types, map types and helpers, not 26"
check "kernels.md: a feature's wrong 'since' is reported" said kernels.md "tcx came with 6.6"
check "configuration.md: quota without its section is reported" said configuration.md "the statement quota has no section"
check "configuration.md: track's synopsis without policy is reported" said configuration.md "synopsis of track is not TOE_CFG_STATEMENTS'"
check "forwarding.md: a reason's wrong kind is reported" said forwarding.md "missing lease returned; not so lease ended"
check "forwarding.md: stack_only on tc too is reported" said forwarding.md "reason stack_only: hooks is xdp .*the table says xdp, tc"
check "forwarding.md: the refusals' counters without quota are reported" said forwarding.md "refused_\\* counters .*missing quota"
check "toectl.8: the command reload without its entry is reported" said toectl.8 "the command reload"
check "toectl.8: its COMMANDS without reload are not TOE_CTL_TABLE's" said toectl.8 "COMMANDS \(TOE_CTL_TABLE.*missing reload"
check "toectl.8: fwd_ended's reasons not made from the tables are reported" said toectl.8 "fwd_ended's reasons are no longer a list made from the tables"
check "toed.8: the configuration's synopsis no longer made from the table is reported" said toed.8 "CONFIGURATION synopsis is no longer made from the table"
check "toectl.8: toectl dump's --snaplen missing is reported" said toectl.8 "toectl dump --help lists --snaplen"
n=$(grep -c . <<<"$facts")
# (toectl.8: -s and --snaplen)
if [ "$n" = 18 ]; then
	ok "those, and no other fact of the seven docs"
else
	echo "$facts"
	fail "want 18 fact and manpage problems, got $n"
fi
# A --help whose usage line lacks an option of its list: toe-loader load's
# before issue 45 (--capture-ring), through a wrapper in a build folder.
B=$tmp/build
mkdir -p "$B"
ln -s "$TOE_BUILD/toed" "$TOE_BUILD/toectl" "$B/"
printf '#!/bin/sh\n"%s/toe-loader" "$@" | sed "s/\\[--capture-ring BYTES\\] //"\n' "$TOE_BUILD" >"$B/toe-loader"
chmod +x "$B/toe-loader"
out=$(python3 scripts/docscheck.py --build "$B" README.md 2>&1)
check "toe-loader load's usage line without --capture-ring is reported" \
	grep -q '^toe-loader load --help:1: usage: --capture-ring is in its options, not in its usage line$' <<<"$out"
lines=$(wc -l <README.md)
check "README.md is at most 300 lines ($lines)" test "$lines" -le 300
finish
