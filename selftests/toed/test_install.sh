#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make install honours PREFIX and DESTDIR; the systemd units it installs
# name the installed programs and pass systemd-analyze verify.
. "$(dirname "$0")/../lib.sh"
plan 16
need_cmd make groff
T=$(mktemp -d /tmp/opentoe-install.XXXXXX)
defer "rm -rf $T"
make -s -C "$TOE_TOP" install PREFIX="$T/prefix" >/dev/null || { fail "make install PREFIX=$T/prefix"; finish; }
for p in toe-loader toed toectl; do
	check "PREFIX: $p installed and runs (--help)" "$T/prefix/sbin/$p" --help
done
u=$T/prefix/lib/systemd/system
check "toed.service runs the installed toed" grep -qx "ExecStart=$T/prefix/sbin/toed --config /etc/opentoe/opentoe.conf" "$u/toed.service"
check "opentoe-loader.service unloads on stop" grep -qx "ExecStop=$T/prefix/sbin/toe-loader unload" "$u/opentoe-loader.service"
check "the bpftrace scripts are installed" test -x "$T/prefix/share/opentoe/trace/toed.bt"
# opts_in_man PROG PAGE: each --option PROG --help names is in PAGE
# (written \-\-option in roff).
opts_in_man() {
	local o
	for o in $("$1" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		grep -qF -- "$(sed 's/-/\\-/g' <<<"$o")" "$2" || { echo "missing $o"; return 1; }
	done
}
for p in toe-loader toed toectl; do
	m=$T/prefix/share/man/man8/$p.8
	check "man page $p(8) installed, renders without a groff warning" \
		test -f "$m" -a -z "$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$m" 2>&1)"
	check "man $p: every --option of --help is in the page" opts_in_man "$T/prefix/sbin/$p" "$m"
done
if command -v systemd-analyze >/dev/null; then
	check "systemd-analyze verify accepts both units" \
		systemd-analyze verify --man=no "$u/toed.service" "$u/opentoe-loader.service"
fi
make -s -C "$TOE_TOP" install DESTDIR="$T/dest" PREFIX=/usr >/dev/null || fail "make install DESTDIR"
check "DESTDIR: programs under DESTDIR/usr/sbin" test -x "$T/dest/usr/sbin/toed" -a -x "$T/dest/usr/sbin/toectl"
check "DESTDIR: units name /usr/sbin, not DESTDIR" grep -qx "ExecStart=/usr/sbin/toed --config /etc/opentoe/opentoe.conf" "$T/dest/usr/lib/systemd/system/toed.service"
check "nothing installed outside DESTDIR" test ! -e /usr/sbin/toectl -o /usr/sbin/toectl -ot "$T"
finish
