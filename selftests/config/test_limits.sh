#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boundaries from the grammar: every numeric and length limit of the
# configuration language (user/toed/config_limits.h, the table the parser
# itself uses) tried at the limit, one below and one above, with
# toed --check: build/selftests/cfg_limits writes one file a case from the
# same table (port, prefix lengths, cgroup id, share, CPU, nconn,
# keepalive, device, interface and namespace name lengths, line length,
# words a statement, devices, rules).  No kernel feature.  A namespace name
# is tried without making a namespace: toed --check runs in a mount
# namespace of its own (root) whose /run/netns is a fresh tmpfs holding the
# case's name, bound to this network namespace; the name one above the
# limit is there too, so it is refused for its length, not for being absent.
. "$(dirname "$0")/../lib.sh"
need_built toed selftests/cfg_limits
D=$(mktemp -d) && defer "rm -rf $D"

# toed --check FILE, /run/netns/NAME (the file's netns word) this namespace
check_in_netns() {
	local name
	name=$(sed -n 's/^rule .* netns \([^ ]*\)$/\1/p' "$1")
	unshare -m --propagation private sh -c 'mkdir -p /run/netns &&
		mount -t tmpfs opentoe-limits /run/netns && touch "/run/netns/$1" &&
		mount --bind /proc/self/ns/net "/run/netns/$1" && exec toed --check "$2"' \
		sh "$name" "$1"
}
mapfile -t cases < <("$TOE_BUILD/selftests/cfg_limits" "$D")
plan $((${#cases[@]} + 1))
check "the table gives cases (${#cases[@]})" test "${#cases[@]}" -ge 60
for c in "${cases[@]}"; do
	chmod 600 "$D/$c"
	if [[ $c == NETNS_NAME.* ]]; then
		if [ "$(id -u)" != 0 ]; then
			ok "$c # SKIP a mount namespace of its own needs root"
			continue
		fi
		out=$(check_in_netns "$D/$c" 2>&1); rc=$?
	else
		out=$(toed --check "$D/$c" 2>&1); rc=$?
	fi
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
