#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The datapath on Debian 12's own kernel.  Boots linux-image-6.1 (as the
# module test does: selftests/guest/kernel.sh) in qemu on this machine's
# own root (selftests/guest/boot.sh), runs there the tests that
# selftests/guest/tests.txt marks "check" (all of them with
# TOE_GUEST_ALL=1, as make check-guest does) through selftests/run.sh, and
# reports one result per test file: ok when every check of it passed on
# 6.1, else the checks that failed.  A check a test skips on 6.1 names the
# kernel feature it lacks.  Then the guest's kernel log must be clean.
#
# Environment: TOE_GUEST_TIMEOUT (default 900 s; TCG, no KVM here),
# TOE_GUEST_ALL=1, TOE_GUEST_ACCEL=kvm where nested KVM works,
# TOE_GUEST_TESTS="selftests/x/test_y.sh ..." to run only those,
# TOE_GUEST_TAP=FILE to keep the guest's whole TAP there.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
set -u

list=$here/tests.txt
if [ -n "${TOE_GUEST_TESTS:-}" ]; then
	read -ra tests <<<"$TOE_GUEST_TESTS"
elif [ "${TOE_GUEST_ALL:-0}" = 1 ]; then
	mapfile -t tests < <(awk '$1 == "check" || $1 == "guest" { print $2 }' "$list")
else
	mapfile -t tests < <(awk '$1 == "check" { print $2 }' "$list")
fi
plan $((${#tests[@]} + 3))
need_root
need_cmd qemu-system-x86_64 cpio gzip apt-get apt-cache dpkg timeout
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
	cannot_run "needs busybox-static (/bin/busybox, statically linked)"
[ -x "$TOE_BUILD/toe-loader" ] && [ -x "$TOE_BUILD/toed" ] || cannot_run "not built (make)"

. "$here/kernel.sh"
. "$here/boot.sh"
out=$(mktemp -d /tmp/opentoe-guest.XXXXXX)
defer "rm -rf $out"
start=$(date +%s)
guest_boot "$out" "${TOE_GUEST_TIMEOUT:-900}" "${tests[@]}"
qrc=$?
echo "guest ran $(($(date +%s) - start)) s (qemu exit $qrc)"
[ -s "$out/qemu.out" ] && sed 's/^/qemu: /' "$out/qemu.out" | head -n 20
if ! grep -q '^rc=' "$out/done" 2>/dev/null; then
	tr -d '\r' <"$out/serial" | grep -v '^\s*$' | tail -n 30
	fail "the guest ran the tests to the end ($([ $qrc = 124 ] && echo "timed out" || echo "qemu exit $qrc"))"
else
	ok "the guest ($abi-amd64) ran ${#tests[@]} test files to the end"
fi

# toe-loader features on 6.1: the fallbacks the tests below went through
# are the kernel's real lacks (tcx: 6.6, sockmap links: 6.10,
# bpf_cast_to_kern_ctx: 6.3, so opentoe.bpf.o, the probe reads); kept as
# $TOE_BUILD/features-<kernel>.json for scripts/features_table.py
if jq -e 'map({(.name): .present}) | add | .tcx == false and .sockmap_link == false and .kern_ctx == false and .ext == true and .xdp == true' \
	"$out/features.json" >/dev/null 2>&1; then
	cp "$out/features.json" "$TOE_BUILD/features-$abi.json"
	ok "toe-loader features on $abi: no tcx, no sockmap links, no kern_ctx (so the clsact, map-held and probe-read fallbacks ran), freplace (libxdp's dispatcher), the rest there"
else
	head -c 2000 "$out/features.json" 2>/dev/null
	fail "toe-loader features on $abi: no tcx, no sockmap links, no kern_ctx, freplace, the rest there"
fi

# one result per test file, from the guest's run.sh TAP
for t in "${tests[@]}"; do
	name=${t#selftests/}
	name=${name%.sh}
	res=$(grep -E "^(not )?ok [0-9]+ - $name(: |$)" "$out/tap" 2>/dev/null)
	np=$(grep -c '^ok' <<<"$res")
	nf=$(grep -c '^not ok' <<<"$res")
	ns=$(grep -c '# SKIP' <<<"$res")
	np=$((np - ns))
	grep -F "# SKIP" <<<"$res" | sed "s/^ok [0-9]* - /skipped on $abi: /"
	if [ -z "$res" ]; then
		fail "6.1: $name: no result"
	elif [ "$nf" -gt 0 ]; then
		grep '^not ok' <<<"$res" | sed "s/^not ok [0-9]* - /failed on $abi: /"
		grep -E "^# $name: exit" "$out/tap"
		fail "6.1: $name: $nf of $((np + nf + ns)) checks failed"
	else
		ok "6.1: $name: $np passed, $ns skipped"
	fi
done
# each failed check with the diagnostics printed after it (the test's
# own: bcheck's JSON, a server log), then the other diagnostics, without
# the step-time lines (summed up below), for whoever reads the log;
# TOE_GUEST_TAP=FILE keeps the guest's whole TAP
awk '/^not ok / { on = 1; n = 0; print "guest: " $0; next }
	/^(ok|not ok) / { on = 0; next }
	on && /^#/ && !/^# step-time / && n++ < 40 { print "guest: " $0 }' "$out/tap" 2>/dev/null
sed 's/^/guest: /' "$out/tap" 2>/dev/null | grep -E '^guest: (not ok|#)' |
	grep -v '^guest: # step-time ' | head -n 150
[ -n "${TOE_GUEST_TAP:-}" ] && cp "$out/tap" "$TOE_GUEST_TAP"
# where the guest's time went: the ten slowest test files (run.sh's "exit
# RC after Ns" lines), for whoever shortens make check
if grep -q '^# .*: exit [0-9]* after [0-9]*s$' "$out/tap" 2>/dev/null; then
	echo "the guest's slowest test files (seconds under TCG):"
	sed -n 's/^# \(.*\): exit [0-9]* after \([0-9]*\)s$/\2 \1/p' "$out/tap" |
		sort -rn | head -n 10 | sed 's/^/  /'
fi
# and its slowest checks: the time since the check before each (lib.sh's
# "step-time" line before it, which run.sh relays as a diagnostic)
if grep -q '^# step-time ' "$out/tap" 2>/dev/null; then
	echo "the guest's slowest checks (seconds under TCG):"
	awk '/^# step-time / { t = $3; next } /^(not )?ok [0-9]+ - / && t != "" { sub(/^(not )?ok [0-9]+ - /, ""); printf "%s %s\n", t, substr($0, 1, 150); t = "" }' "$out/tap" |
		sort -rn | head -n 10 | sed 's/^/  /'
fi

bad='WARNING|BUG|Oops|refcount|leak|Call Trace|general protection|unregister_netdevice: waiting|[Ll]ist corruption|cut here'
if [ ! -s "$out/dmesg" ]; then
	fail "guest kernel log dumped"
elif grep -qE "$bad" "$out/dmesg"; then
	# the first report whole (its stack trace), then every other line
	# that matched
	awk -v re="$bad" '$0 ~ re { n++ } n == 1 && k++ < 80' "$out/dmesg"
	grep -E "$bad" "$out/dmesg" | tail -n +2 | head -n 40
	fail "guest kernel log clean (no WARNING, BUG, Oops, Call Trace)"
else
	ok "guest kernel log clean (no WARNING, BUG, Oops, Call Trace)"
fi
finish
