#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make deb: dpkg-buildpackage builds opentoe_VERSION_ARCH.deb into build/deb/
# (nothing in or beside the tree), lintian finds no error, the package has
# what it should, and it installs, runs and purges cleanly.  It is installed
# with dpkg --root into a throwaway root (maintainer scripts run chrootless
# with DPKG_ROOT set), never on this machine: the installed programs run
# from there against the host's libraries.
. "$(dirname "$0")/../lib.sh"
plan 20
need_root
need_cmd make dpkg dpkg-deb dpkg-buildpackage dh lintian git
T=$(mktemp -d /tmp/opentoe-deb.XXXXXX)
defer "rm -rf $T"
touch "$T/stamp"
V=$(cat "$TOE_TOP/VERSION")
# the host's own systemd helper state, to show the install did not touch it
dsh=/var/lib/systemd/deb-systemd-helper-enabled
host_state() { find "$dsh" /etc/systemd/system -name '*toed*' -o -name '*opentoe*' 2>/dev/null | sort; }
host_state >"$T/host.before"

out=$TOE_BUILD/deb
if ! make -s -C "$TOE_TOP" deb O="$TOE_BUILD" >"$T/make.log" 2>&1; then
	cat "$T/make.log"
	fail "make deb"
	finish
fi
deb=$(ls "$out"/opentoe_"$V"_*.deb 2>/dev/null)
check "make deb: build/deb/opentoe_${V}_ARCH.deb, with dpkg-buildpackage's .changes and .buildinfo" \
	test -f "$deb" -a -f "${deb%.deb}.changes" -a -f "${deb%.deb}.buildinfo"
# litter: dpkg-buildpackage writes to the parent of the folder it runs in
litter() { find "$TOE_TOP" "$(dirname "$TOE_TOP")" -maxdepth 1 -name 'opentoe_*' -newer "$T/stamp" | grep .; }
check_not "nothing written to the tree's root or its parent" litter
check "the package's version is VERSION ($V)" test "$(dpkg-deb -f "$deb" Version)" = "$V"

lintian --fail-on error "$deb" >"$T/lintian" 2>&1
lrc=$?
grep -E '^[EW]:' "$T/lintian"
check "lintian: no error" test $lrc -eq 0 -a -z "$(grep '^E:' "$T/lintian")"

dpkg-deb -c "$deb" | awk '{ print $NF }' | sed 's|^\./|/|' >"$T/list"
# has FILE...: every FILE in the package's listing (the missing ones named)
has() {
	local f r=0
	for f; do grep -qx "$f" "$T/list" || { echo "missing $f"; r=1; }; done
	return $r
}
check "the package has toe-loader, toed, toectl in /usr/sbin" \
	has /usr/sbin/toe-loader /usr/sbin/toed /usr/sbin/toectl
check "the package has both units in /lib/systemd/system" \
	has /lib/systemd/system/opentoe-loader.service /lib/systemd/system/toed.service
check "the package has a man page for every program" \
	has /usr/share/man/man8/toe-loader.8.gz /usr/share/man/man8/toed.8.gz /usr/share/man/man8/toectl.8.gz
bt=()
for f in "$TOE_TOP"/scripts/trace/*.bt; do bt+=("/usr/share/opentoe/trace/${f##*/}"); done
check "the package has the bpftrace scripts (${#bt[@]}) in /usr/share/opentoe/trace" has "${bt[@]}"
prom=(/etc/opentoe/opentoe.conf /usr/share/doc/opentoe/copyright)
[ -e "$TOE_TOP/dist/prometheus/opentoe-rules.yml" ] &&
	prom+=(/usr/share/opentoe/prometheus/opentoe-rules.yml)
check "the package has the example configuration, copyright (and the Prometheus rules if the tree has them)" \
	has "${prom[@]}"
# no test knob in a shipped program (user/lib/knob.h: debian/rules builds
# with TEST_KNOBS=0): none of the names the sources read through
# toe_knob() or knob_on() is in the packaged binaries, all of them are in
# the test build's (so the list is the real one)
knobs=$(grep -rhoE '(toe_knob|knob_on)\("[A-Z_]+"\)' "$TOE_TOP/user" | sed -E 's/.*\("([A-Z_]+)"\)/\1/' | sort -u)
dpkg-deb -x "$deb" "$T/x"
inpkg="" intest=0
for k in $knobs; do
	for b in toe-loader toed toectl; do
		strings "$T/x/usr/sbin/$b" | grep -qF "$k" && inpkg="$inpkg $b:$k"
	done
	strings "$TOE_BUILD/toe-loader" "$TOE_BUILD/toed" | grep -qF "$k" && intest=$((intest + 1))
done
check "no test knob in the packaged programs ($(wc -w <<<"$knobs") names, all $intest in the test build's)${inpkg:+; found:$inpkg}" \
	test -z "$inpkg" -a "$intest" = "$(wc -w <<<"$knobs")" -a "$intest" -gt 5
dpkg-deb -e "$deb" "$T/control"
check "/etc/opentoe/opentoe.conf is a conffile" grep -qx /etc/opentoe/opentoe.conf "$T/control/conffiles"
# starts: a maintainer script starts a unit (try-restart of a running toed
# on upgrade is allowed).  Enabling is checked on the installed root below.
starts() {
	cat "$T"/control/p* | grep -E 'deb-systemd-invoke +(start|restart)|systemctl [^|]*(start|enable)'
}
check_not "the maintainer scripts start no unit" starts

# A throwaway root with what a real one has: dpkg's database, systemd's folders.
R=$T/root
mkdir -p "$R"/var/lib/dpkg/{info,updates} "$R"/var/lib/systemd "$R"/etc/systemd/system
touch "$R"/var/lib/dpkg/status
(cd "$R" && find . | sort) >"$T/files.before"
rdpkg() { dpkg --root="$R" --force-script-chrootless --force-depends "$@"; }
# (its Depends are the host's, not the empty root's: --force-depends)
check "dpkg --root installs it (maintainer scripts run)" eval 'rdpkg -i "$deb" >"$T/install.log" 2>&1 || { cat "$T/install.log"; false; }'
check "installed: toe-loader --help, toectl --help run" \
	eval '"$R"/usr/sbin/toe-loader --help && "$R"/usr/sbin/toectl --help'
check "installed: the programs say version $V" test \
	"$("$R"/usr/sbin/toe-loader --version; "$R"/usr/sbin/toed --version; "$R"/usr/sbin/toectl --version)" = \
	"$(printf 'toe-loader %s\ntoed %s\ntoectl %s' "$V" "$V" "$V")"
conf=$R/etc/opentoe/opentoe.conf
check "installed: the example configuration is root's, mode 0644, and toed --check accepts it" \
	eval 'test "$(stat -c %U:%a "$conf")" = root:644 && "$R"/usr/sbin/toed --check "$conf"'
check "dpkg records it as a conffile" eval 'rdpkg -s opentoe | grep -q "^ /etc/opentoe/opentoe.conf "'
check "no unit enabled in the root (deb-systemd-helper made no wants/ link)" test -z "$(find "$R"/etc/systemd -type l)"
rdpkg --purge opentoe >"$T/purge.log" 2>&1 || cat "$T/purge.log"
(cd "$R" && find . | sort) >"$T/files.after"
check "purge leaves nothing behind (the root's files as before the install)" \
	diff <(grep -v '^./var/lib/dpkg/' "$T/files.before") <(grep -v '^./var/lib/dpkg/' "$T/files.after")
check "this machine's systemd state untouched (nothing of opentoe's added)" \
	diff "$T/host.before" <(host_state)
finish
