#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The call graph between the files of toed and of toe-loader (issue 47),
# read from the build's objects by scripts/callgraph.py (file X calls file
# Y when X's object references a function Y's object defines):
#  - the tool itself: two files that call each other are one circle of 2,
#    a third that only calls them is outside it;
#  - no circle of more than 4 files in user/toed, nor in user/loader;
#  - toed's parts are handed their state: `D->` (the global it replaced)
#    appears in no file of user/toed but main.c, and no object of toed
#    has a mutable file-scope static (data or bss, local) but these:
#    state.c's one instance, main.c's pointer to it, log.c's level and
#    rate-limited sites (the log is the process's), nft.c's N (the
#    firewall warden's thread and the loop share it).
# Needs no root and no kernel feature: the objects `make` built.
. "$(dirname "$0")/../lib.sh"
plan 6
need_cmd python3 nm gcc objdump
cd "$TOE_TOP" || exit 1
MAX=4

d=$(mktemp -d) && defer "rm -rf $d"
mkdir -p "$d/src/x" "$d/build/x"
printf 'int b(int);\nint a(int n) { return n ? b(n - 1) : 0; }\n' >"$d/src/x/a.c"
printf 'int a(int);\nint b(int n) { return n ? a(n - 1) : 1; }\n' >"$d/src/x/b.c"
printf 'int a(int);\nint b(int);\nint c(void) { return a(3) + b(2); }\n' >"$d/src/x/c.c"
for f in a b c; do gcc -c "$d/src/x/$f.c" -o "$d/build/x/$f.o"; done
got=$(python3 scripts/callgraph.py -O "$d/build" -j "$d/src/x" |
	python3 -c 'import json, sys; g = json.load(sys.stdin); print(len(g["arrows"]), [c["files"] for c in g["cycles"]])')
check "callgraph.py: a.c and b.c calling each other are one circle, c.c only calls in (4 arrows: $got)" \
	test "$got" = "4 [['a.c', 'b.c']]"

# cycles DIR: "SIZE FILES..." of each circle, biggest first
cycles() {
	python3 scripts/callgraph.py -O "$TOE_BUILD" -j "$1" |
		python3 -c 'import json, sys
for c in json.load(sys.stdin)["cycles"]:
	print(c["size"], " ".join(c["files"]))'
}
toed=$(cycles user/toed) || { fail "callgraph.py user/toed (build first)"; finish; }
big=$(awk -v m=$MAX '$1 > m' <<<"$toed")
check "user/toed: no circle of more than $MAX files (circles: $(tr '\n' ';' <<<"${toed:-none}"))" test -z "$big"

loader=$(cycles user/loader) || { fail "callgraph.py user/loader (build first)"; finish; }
big=$(awk -v m=$MAX '$1 > m' <<<"$loader")
check "user/loader: no circle of more than $MAX files (circles: $(tr '\n' ';' <<<"${loader:-none}"))" test -z "$big"

uses=$(grep -n 'D->' user/toed/*.[ch] | grep -v '^user/toed/main\.c:')
check "D-> appears in user/toed/main.c only${uses:+: $(head -n 3 <<<"$uses" | tr '\n' ' ')}" test -z "$uses"
check "  and toed has no global state pointer D (state.h declares none)" \
	eval '! grep -q "extern struct toed \*D" user/toed/state.h'

STATICS_KNOWN="log.c:log_level log.c:rl_nsites log.c:rl_sites log.c:rl_total main.c:D nft.c:N state.c:state"
statics=$(for o in "$TOE_BUILD"/toed-objs/*.o; do
	objdump -t "$o" | awk -v f="$(basename "$o" .o).c" \
		'$2 == "l" && $3 == "O" && $4 ~ /^\.(bss|data)/ && $4 !~ /rel\.ro/ && $NF !~ /\./ { print f ":" $NF }'
done | sort)
extra=$(comm -23 <(echo "$statics") <(tr ' ' '\n' <<<"$STATICS_KNOWN" | sort))
check "toed's mutable file-scope statics are the known ones ($(wc -w <<<"$statics"))${extra:+; new: $(tr '\n' ' ' <<<"$extra")}" \
	test -n "$statics" -a -z "$extra"
finish
