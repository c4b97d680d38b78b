#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The layout rules of the tree (docs/architecture.md), checked so that
# they hold after every change:
#  - no function in user/ or bench/ is longer than 80 lines, nor in the
#    Python of bench/, selftests/ and scripts/;
#  - every header has one include-guard style (__<NAME>_H, named after the
#    file, closed with a comment naming it) and compiles on its own, i.e.
#    includes what it needs;
#  - no pinned map's name is written outside include/toe_maps.h in C code,
#    nor in the shell files of selftests/, bench/ and scripts/ (they take
#    build/toe_names.sh's MAP_<ID>, generated from that table).
# Needs no root and no kernel feature: only the compilers `make` uses.
. "$(dirname "$0")/../lib.sh"
plan 6
need_cmd gcc clang python3
cd "$TOE_TOP" || exit 1

mapfile -t csrc < <(git ls-files 'user/*.c' 'user/**/*.c' 'bench/*.c' 2>/dev/null ||
		    find user bench -name '*.c')
mapfile -t pysrc < <(git ls-files 'bench/*.py' 'selftests/*.py' 'scripts/*.py' 2>/dev/null ||
		     find bench selftests scripts -name '*.py')
long=$(python3 scripts/funclen.py "${csrc[@]}" "${pysrc[@]}")
if [ -z "$long" ]; then
	ok "no function over 80 lines in user/ or bench/, nor in Python (${#csrc[@]} C, ${#pysrc[@]} Python files)"
else
	echo "$long"
	fail "functions over 80 lines in user/ or bench/, or in Python"
fi

# guard_ok FILE: #ifndef G / #define G first, #endif /* G */ last, and G is
# __<...><FILE STEM>_H (upper case).
# A kernel trace header (kmod/trace.h) is read again and again by
# <trace/define_trace.h>: #if !defined(G) || defined(TRACE_HEADER_MULTI_READ)
# / #define G, and it ends by including define_trace.h.
guard_ok() {
	local f=$1 stem g
	stem=$(basename "$f" .h | tr 'a-z.-' 'A-Z__')
	if grep -q '^#if .*defined(TRACE_HEADER_MULTI_READ)$' "$f"; then
		g=$(sed -n 's/^#if !defined(\(__[A-Z0-9_]*\)) || defined(TRACE_HEADER_MULTI_READ)$/\1/p' "$f")
		[[ $g =~ ^__[A-Z0-9_]*${stem}_H$ ]] && grep -qx "#define $g" "$f" &&
			[ "$(tail -n 1 "$f")" = "#include <trace/define_trace.h>" ] ||
			{ echo "$f: not a kernel trace header's guard"; return 1; }
		return 0
	fi
	g=$(grep -m1 '^#ifndef' "$f" | awk '{print $2}')
	[[ $g =~ ^__[A-Z0-9_]*${stem}_H$ ]] || { echo "$f: guard '$g'"; return 1; }
	grep -A1 -m1 '^#ifndef' "$f" | grep -qx "#define $g" || { echo "$f: no #define $g"; return 1; }
	[ "$(grep '^#endif' "$f" | tail -n 1)" = "#endif /* $g */" ] ||
		{ echo "$f: last #endif is not '#endif /* $g */'"; return 1; }
}

mapfile -t hdrs < <(git ls-files '*.h' | grep -v '^selftests/')
bad=0
for h in "${hdrs[@]}"; do guard_ok "$h" || bad=1; done
[ $bad -eq 0 ] && ok "one include-guard style in ${#hdrs[@]} headers" ||
	fail "include guards not in the tree's style"

# Each header alone: user space with gcc, bpf/ and bench/progs/ (the
# minimal forwarders) with clang -target bpf.
[ -e "$TOE_BUILD/vmlinux.h" ] && [ -e "$TOE_BUILD/opentoe.skel.h" ] ||
	{ fail "build/ has no vmlinux.h or skeleton (run make)"; finish; }
bad=0
for h in "${hdrs[@]}"; do
	case $h in
	kmod/*) continue ;;	# kernel module: built by Kbuild only
	bpf/* | bench/progs/*) cmd=(clang -target bpf -D__TARGET_ARCH_x86 -Iinclude -Ibpf -I"$TOE_BUILD") ;;
	*) cmd=(gcc -D_GNU_SOURCE -Iinclude -Iuser -I"$(dirname "$h")" -I"$TOE_BUILD") ;;
	esac
	if ! echo "#include \"$TOE_TOP/$h\"" |
	     "${cmd[@]}" -Wall -Werror -fsyntax-only -x c - 2>/tmp/style.$$; then
		echo "$h does not compile alone:"; head -n 3 /tmp/style.$$
		bad=1
	fi
done
rm -f /tmp/style.$$
[ $bad -eq 0 ] && ok "every header compiles on its own" ||
	fail "headers that need another included first"

# Map names: only include/toe_maps.h writes them (bpf/ declares the maps
# themselves; the loader checks the two agree at compile time).
names=$(sed -n 's/^\s*X([A-Z_]*,\s*\(toe_[a-z_]*\)).*/\1/p' include/toe_maps.h | paste -sd'|')
[ -n "$names" ] || { fail "no map table in include/toe_maps.h"; finish; }
hits=$(git grep -nE "\"($names)\"" -- '*.c' '*.h' ':!include/toe_maps.h')
if [ -z "$hits" ]; then
	ok "map names written only in include/toe_maps.h"
else
	echo "$hits"
	fail "map names written outside include/toe_maps.h"
fi

# Nor in shell: MAP_<ID> (lib.sh sources build/toe_names.sh, which
# scripts/gen-names.py makes from the same table).  Comments may name a map,
# and the test tool selftests/toe_events is named after its map.
mapfile -t shsrc < <(git ls-files 'selftests/*.sh' 'bench/*.sh' 'scripts/*.sh')
hits=$(for f in "${shsrc[@]}"; do
	sed -e 's/^[[:space:]]*#.*//' -e 's/[[:space:]]#[[:space:]].*//' -e 's|selftests/toe_events||g' "$f" |
		grep -nwE "$names" | sed "s|^|$f:|"
done)
if [ -z "$hits" ]; then
	ok "no map name written in the shell files of selftests/, bench/, scripts/ (${#shsrc[@]} files)"
else
	echo "$hits"
	fail "map names written in shell files: use \$MAP_<ID> (build/toe_names.sh)"
fi
# clang-format: every C file as the tree's .clang-format writes it (applied
# to the whole tree once; kmod/ is also held to checkpatch.pl by
# selftests/kmod/test_kmod.sh).  Fix with: clang-format -i FILE
if command -v clang-format >/dev/null; then
	mapfile -t cfiles < <(git ls-files '*.c' '*.h')
	unformatted=$(for f in "${cfiles[@]}"; do
		clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || echo "$f"
	done)
	if [ -z "$unformatted" ]; then
		ok "clang-format: all ${#cfiles[@]} C files as .clang-format writes them"
	else
		echo "$unformatted"
		fail "clang-format would change these files (clang-format -i FILE)"
	fi
else
	fail "clang-format not installed (scripts/install-deps.sh installs it)"
fi
finish
