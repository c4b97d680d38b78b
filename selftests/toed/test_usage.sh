#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every program's and every local subcommand's command line, as a script
# calling it sees it (the man pages' EXIT STATUS): an option it does not
# take exits 1 (toe-tables, a build tool: 2, as grep does), naming the
# option, the usage on stderr and nothing on stdout; --help exits 0 with
# the usage on stdout and nothing on stderr; -V / --version exits 0 and
# prints "PROGRAM VERSION" on stdout.  Nothing here needs a datapath: each
# runs before anything is opened.
. "$(dirname "$0")/../lib.sh"
need_built toed toectl toe-loader toe-tables
# (each command: an unknown option, --help; the programs: -V too)
cmds=("toed" "toectl" "toectl dump" "toe-loader" "toe-loader load" "toe-loader status"
	"toe-loader features" "toe-loader unload" "toe-tables")
plan $((${#cmds[@]} * 2 + 4))

T=$(mktemp -d) && defer "rm -rf $T"
# run CMD... : status in rc, stdout in $T/out, stderr in $T/err
run() { timeout 10 "$@" >"$T/out" 2>"$T/err"; rc=$?; }
for c in "${cmds[@]}"; do
	read -ra argv <<<"$c"
	want=1
	[ "$c" = toe-tables ] && want=2
	run "${argv[@]}" --no-such-option
	# (toe-loader with no command: the one line naming the commands)
	check "$c --no-such-option: exit $want (rc $rc), the option named and the usage on stderr, stdout empty" \
		eval 'test "$rc" = $want -a ! -s "$T/out" && grep -q -- "--no-such-option" "$T/err" &&
			grep -q "^Usage: \|(load, status, features, unload; --help)" "$T/err"'
	run "${argv[@]}" --help
	check "$c --help: exit 0 (rc $rc), the usage on stdout, stderr empty" \
		eval 'test "$rc" = 0 -a ! -s "$T/err" && grep -q "^Usage: ${argv[0]}" "$T/out"'
done
for p in toed toectl toe-loader; do
	run "$p" -V
	check "$p -V: exit 0 (rc $rc), '$p VERSION' on stdout only" \
		eval 'test "$rc" = 0 -a ! -s "$T/err" && grep -qx "$p [0-9][0-9.]*[^ ]*" "$T/out"'
done
run toectl --version
check "toectl --version: the same (rc $rc)" eval 'test "$rc" = 0 && grep -qx "toectl [0-9][0-9.]*[^ ]*" "$T/out"'
finish
