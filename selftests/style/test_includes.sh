#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Narrow includes (issue 47): a C file includes the concern headers of
# include/ it uses (include/opentoe_<concern>.h), not the umbrella
# include/opentoe.h, which includes them all.  The umbrella stays for the
# files on the allow-list below, each entry with its reason:
#  - every tracked .c and .h file including opentoe.h directly is on it;
#  - no entry is stale (names no file that still includes it), so the list
#    only shrinks;
#  - toe-loader, toed, toectl and user/lib (user/loader, user/toed,
#    user/toectl, user/lib) reach it through no header either (the preprocessor's own list of
#    each file's headers);
#  - the check finds a direct include it is shown, in a made-up tree.
# Needs no root and no kernel feature: gcc and the build's skeleton.
. "$(dirname "$0")/../lib.sh"
plan 4
need_cmd gcc git
cd "$TOE_TOP" || exit 1

# The allow-list: a path, or a folder ending in '/'.
allowed=(
	# bpf/ (the lead's): the datapath's programs share every layout
	# through bpf/common.h and the maps_<concern>.h headers.
	bpf/
	# Tools outside the three programs, not narrowed yet: the kernel
	# module's test, test tools (two of them) and a benchmark.
	selftests/kmod/toe_kmod_test.c
	selftests/tools/
	bench/neighlat.c
)

# umbrella_users DIR FILE...: the files (relative to DIR) that include
# opentoe.h themselves.
umbrella_users() {
	local dir=$1
	shift
	(cd "$dir" && grep -lE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]opentoe\.h[">]' "$@" 2>/dev/null)
}
# is_allowed FILE: on the allow-list.
is_allowed() {
	local a
	for a in "${allowed[@]}"; do
		case $a in
		*/) [[ $1 == "$a"* ]] && return 0 ;;
		*) [ "$1" = "$a" ] && return 0 ;;
		esac
	done
	return 1
}
# outside_list DIR FILE...: the users of the umbrella not on the list.
outside_list() {
	local f
	for f in $(umbrella_users "$@"); do
		is_allowed "$f" || echo "$f"
	done
}

mapfile -t srcs < <(git ls-files '*.c' '*.h' ':!include/opentoe.h')
out=$(outside_list . "${srcs[@]}")
mapfile -t users < <(umbrella_users . "${srcs[@]}")
if [ -z "$out" ]; then
	ok "opentoe.h included only by the allow-list's files (${#users[@]} of ${#srcs[@]} C files; the rest include the concern headers they use)"
else
	echo "$out" | sed 's/^/# includes the umbrella opentoe.h: /'
	fail "files outside the allow-list include opentoe.h: include the opentoe_<concern>.h headers they use"
fi

stale=()
for a in "${allowed[@]}"; do
	hit=0
	for f in "${users[@]}"; do
		case $a in
		*/) [[ $f == "$a"* ]] && hit=1 ;;
		*) [ "$f" = "$a" ] && hit=1 ;;
		esac
	done
	[ $hit = 1 ] || stale+=("$a")
done
if [ ${#stale[@]} = 0 ]; then
	ok "every allow-list entry (${#allowed[@]}) still includes opentoe.h"
else
	printf '# no longer includes opentoe.h: %s\n' "${stale[@]}"
	fail "allow-list entries to drop from selftests/style/test_includes.sh"
fi

# Through a header: gcc -MM lists every header a file reads.
[ -e "$TOE_BUILD/opentoe.skel.h" ] && [ -e "$TOE_BUILD/toe_version.h" ] ||
	{ fail "build/ has no skeleton or toe_version.h (run make)"; finish; }
mapfile -t narrow < <(git ls-files 'user/loader/*.c' 'user/toed/*.c' 'user/toectl/*.c' 'user/lib/*.c')
deep=$(for f in "${narrow[@]}"; do
	gcc -MM -D_GNU_SOURCE -Iinclude -Iuser -I"$TOE_BUILD" "$f" 2>&1 |
		tr ' \\' '\n\n' | grep -qx 'include/opentoe\.h' && echo "$f"
done)
if [ -z "$deep" ]; then
	ok "user/loader, user/toed, user/toectl, user/lib: none of ${#narrow[@]} files reads opentoe.h, directly or through a header"
else
	echo "$deep" | sed 's/^/# reads opentoe.h: /'
	fail "files of user/loader, user/toed, user/toectl or user/lib read opentoe.h"
fi

# The check itself, on a made-up tree: a direct include (quotes or angle
# brackets, spaces after '#') outside the list is found; one in an allowed
# folder, a concern header and a comment naming opentoe.h are not.
t=$(mktemp -d) && defer "rm -rf $t"
mkdir -p "$t/user/loader" "$t/selftests/tools" "$t/bpf"
printf '#include "opentoe.h"\n' >"$t/user/loader/a.c"
printf '# include <opentoe.h>\n' >"$t/user/loader/b.h"
printf '#include "opentoe.h"\n' >"$t/selftests/tools/c.c"
printf '#include "opentoe.h"\n' >"$t/bpf/d.h"
printf '#include "opentoe_common.h" /* not opentoe.h */\n' >"$t/user/loader/e.c"
found=$(outside_list "$t" user/loader/a.c user/loader/b.h selftests/tools/c.c bpf/d.h user/loader/e.c | paste -sd' ')
check "the check finds a.c and b.h of a made-up tree, not the allowed or narrow ones (found: $found)" \
	test "$found" = "user/loader/a.c user/loader/b.h"
finish
