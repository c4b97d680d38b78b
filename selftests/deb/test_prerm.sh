#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The package's prerm (debian/opentoe.prerm) never leaves programs attached
# with no loader on disk: on remove it unloads the datapath with a drain;
# while bypassed data waits unread past OPENTOE_DRAIN_TIMEOUT it fails the
# removal, says why, and leaves the datapath whole; OPENTOE_FORCE_UNLOAD=1
# unloads anyway; an upgrade leaves the datapath alone.  The script runs
# for real against a datapath of the test's own, in a private mount
# namespace whose /etc/default/opentoe names that datapath's pin folder
# (and with /run/systemd hidden, so no unit of the host is touched).
. "$(dirname "$0")/../bypass/setup.sh"
plan 14
need_cmd unshare
PRERM=$TOE_TOP/debian/opentoe.prerm

# prerm ARG [VAR=VALUE...]: debian/opentoe.prerm ARG with /etc/default/opentoe
# naming this test's pin folder; its output in $TMP/prerm, its status returned.
prerm() {
	local arg=$1
	shift
	unshare -m bash -c '
		mount -t tmpfs none /etc/default || exit 99
		[ -d /run/systemd ] && mount -t tmpfs none /run/systemd
		echo "OPENTOE_LOADER_ARGS=\"--dev lo --pin-dir $1\"" >/etc/default/opentoe
		exec env "${@:4}" sh "$2" "$3"' - "$PIN" "$PRERM" "$arg" "$@" >"$TMP/prerm" 2>&1
}
attached() { test -e "$PIN/link_sockops" -a "$(bpftool -j cgroup show "$CG" | jq -s 'add | length')" != 0; }
gone() { test ! -e "$PIN" -a "$(bpftool -j cgroup show "$CG" | jq -s 'add | length')" = 0; }
started() { touch "$1"; wait_for 10 grep -q -e connected -e written "$1"; }

check "prerm remove with nothing loaded: exit 0" prerm remove
load_toe
check "prerm upgrade: exit 0" prerm upgrade
check "  and the datapath stays (an upgrade keeps it running)" attached
check "prerm remove with the datapath loaded: exit 0" prerm remove
check "  nothing left: pin folder gone, no sock_ops on the cgroup" gone

# a reader that naps 3 s before reading the 2 MiB redirected to it
slow_reader() {
	load_toe
	apply "$BYPASS_CONF" || fail "bypass policy applies"
	in_cg a "$BC" --port "$1" --seconds 3 slowreader >"$2" &
	pid=$!
	started "$2" || fail "slow reader started"
	sleep 0.3
}
slow_reader 7601 "$TMP/s1"
prerm remove OPENTOE_DRAIN_TIMEOUT=0.5
check "prerm remove with 2 MiB unread past the drain timeout fails (exit $?)" test $? -ne 0
check "  and says why and what to do" \
	grep -q "could not be unloaded.*opentoe stays installed" <(tr '\n' ' ' <"$TMP/prerm")
check "  the whole datapath is still attached (the loader stays on disk with it)" attached
wait_for 10 prerm remove
check "prerm remove succeeds once the reader has read" gone
wait $pid
jqcheck "  the reader got every byte (3 MiB)" "$(tail -1 "$TMP/s1")" \
	'.ok and .server.recvd == 3145728'

slow_reader 7602 "$TMP/s2"
check "OPENTOE_FORCE_UNLOAD=1: prerm remove unloads with data unread" \
	prerm remove OPENTOE_DRAIN_TIMEOUT=0.5 OPENTOE_FORCE_UNLOAD=1
check "  nothing left" gone
wait $pid
# the default file's setting: the environment's wins over it, and the
# file alone is read too
load_toe
check "the pin folder comes from OPENTOE_LOADER_ARGS (another folder is left alone)" \
	bash -c "PIN=/sys/fs/bpf/opentoe-none-\$\$; unshare -m bash -c 'mount -t tmpfs none /etc/default; echo OPENTOE_LOADER_ARGS=--pin-dir=\$0 >/etc/default/opentoe; sh $PRERM remove' \$PIN && test -e $PIN/link_sockops"
check "shellcheck: prerm" shellcheck -s sh "$PRERM"
finish
