#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boundaries from the grammar: every numeric and length limit of the
# configuration language (user/toed/config_limits.h, the table the parser
# itself uses) tried at the limit, one below and one above, with
# toed --check: build/selftests/cfg_limits writes one file a case from the
# same table (port, prefix lengths, cgroup id, share, CPU, nconn,
# keepalive, device and interface name lengths, line length, words a
# statement, devices, rules).  No root, no kernel feature.
. "$(dirname "$0")/../lib.sh"
need_built toed selftests/cfg_limits
D=$(mktemp -d) && defer "rm -rf $D"
mapfile -t cases < <("$TOE_BUILD/selftests/cfg_limits" "$D")
plan $((${#cases[@]} + 1))
check "the table gives cases (${#cases[@]})" test "${#cases[@]}" -ge 60
for c in "${cases[@]}"; do
	chmod 600 "$D/$c"
	out=$(toed --check "$D/$c" 2>&1); rc=$?
	want=${c##*.}
	case $want in
	ok) check "$c: accepted${out:+ ($(head -c 160 <<<"$out"))}" test "$rc" = 0 ;;
	bad) check "$c: refused, at its line ($(head -c 160 <<<"$out"))" \
		test "$rc" = 1 -a -n "$(grep -E "^toed: $D/$c:[0-9]+:[0-9]+: " <<<"$out")" ;;
	words) check "$c: not refused for its number of words" \
		test -z "$(grep -F 'too many words' <<<"$out")" ;;
	toomany) check "$c: refused for too many words ($(head -c 120 <<<"$out"))" \
		test "$rc" = 1 -a -n "$(grep -F 'too many words' <<<"$out")" ;;
	esac
done
finish
