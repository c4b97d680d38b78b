# SPDX-License-Identifier: GPL-2.0
# Shared helpers for opentoe selftests.  Source it from a test script:
#   . "$(dirname "$0")/../selftests/lib.sh"   (or relative to the test)
# Every object a test makes is named with $TOE_TEST_ID so that tests never
# collide and the cleanup trap removes exactly what this test made.

KSFT_SKIP=4
TOE_TOP=${TOE_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
TOE_BUILD=${TOE_BUILD:-$TOE_TOP/build}
export PATH=$TOE_BUILD:$PATH
# The pinned maps' names (MAP_FLOWS=toe_flows ...; TOE_MAPS: all of them)
# and the toe_stats indexes (STAT_XDP_FORWARD=37 ..., PARSE_BAD_IHL=7 ...),
# which make generates from the tables (build/toe-tables -j,
# scripts/gen-names.py); generated here when a tree is not built (the
# tables' dumper compiled on the spot: it needs the headers and json.c only).
if [ -r "$TOE_BUILD/toe_names.sh" ]; then
	. "$TOE_BUILD/toe_names.sh"
else
	_tt=$(mktemp -d)
	if "${CC:-cc}" -I"$TOE_TOP/include" -I"$TOE_TOP/user" -o "$_tt/toe-tables" \
		"$TOE_TOP/user/tables/toe-tables.c" "$TOE_TOP/user/lib/json.c"; then
		eval "$("$_tt/toe-tables" -j | python3 "$TOE_TOP/scripts/gen-names.py" -)"
	fi
	rm -rf "$_tt"
	unset _tt
fi
TOE_TEST_ID=${TOE_TEST_ID:-t$$}
TOE_PIN_DIR=/sys/fs/bpf/opentoe-$TOE_TEST_ID
# Where the kernel loads freplace programs (6.1), toe-loader puts toe_xdp
# into libxdp's dispatcher; the tests run BPF_PROG_TEST_RUN and bpf_stats
# on toe_xdp, which an extension program has neither of, so they take
# opentoe's own XDP link with libxdp's knob (toe-loader honours it).
# xdp/test_xdp_dispatcher.sh unsets it.
export LIBXDP_SKIP_DISPATCHER=${LIBXDP_SKIP_DISPATCHER-1}

_toe_cleanups=()
_toe_failed=0

# Register a cleanup command; they run in reverse order on exit.
defer() { _toe_cleanups+=("$*"); }

_toe_run_cleanups() {
	local i
	for ((i = ${#_toe_cleanups[@]} - 1; i >= 0; i--)); do
		_toe_cleanup_one "${_toe_cleanups[$i]}"
	done
}
# _toe_cleanup_one CMD: one cleanup, in a process group of its own, given
# TOE_CLEANUP_TIMEOUT seconds (30): then it is sent TERM and, 2 s later,
# KILL with everything it started (as timeout -k 2 30 would, but CMD may
# be a shell function), reported, and the next cleanup runs: one that hangs
# (a stuck toe-loader unload) must not leave the rest's namespaces, pins
# and cgroups behind.  (The signals the EXIT trap ignores are restored.)
_toe_cleanup_one() {
	local c=$1 t=${TOE_CLEANUP_TIMEOUT:-30} pid wd rc t0=$EPOCHSECONDS
	set -m
	(trap - INT TERM; eval "$c") </dev/null >/dev/null 2>&1 &
	pid=$!
	(
		trap - INT TERM
		sleep "$t"
		kill -TERM -- -$pid || exit
		for ((i = 0; i < 20; i++)); do
			sleep 0.1; kill -0 -- -$pid || exit
		done
		kill -KILL -- -$pid
	) </dev/null >/dev/null 2>&1 &
	wd=$!
	set +m
	wait $pid
	rc=$?
	if [ $rc -gt 128 ] && [ $((EPOCHSECONDS - t0)) -ge "$t" ]; then
		wait $wd # what it started is gone too
		echo "cleanup stopped after ${t}s (still running): $c"
	else
		kill -KILL -- -$wd 2>/dev/null
		wait $wd 2>/dev/null
	fi
	return 0
}
# A second INT or TERM while the cleanups run must not cut them short.
trap 'trap "" INT TERM; _toe_run_cleanups' EXIT
trap 'exit 130' INT TERM
# The datapath locks of this test's pin folders (toe-loader and toed take
# them, user/lib/dplock.h): PIN's and the ones a test names after it
# (opentoe-$TOE_TEST_ID-NAME); registered first, so removed last.
defer "rm -f /run/opentoe/locks/opentoe-$TOE_TEST_ID.* /run/opentoe/locks/opentoe-$TOE_TEST_ID-*"

# skip REASON: only for what this machine's kernel (or hardware) cannot do;
# selftests/run.sh lists every skip with its reason at the end.
skip() { echo "SKIP: $*"; exit $KSFT_SKIP; }
# cannot_run REASON: the test cannot start (a missing tool or binary that
# the project's own `make deps` / `make` provides): a failure, never a skip.
cannot_run() { echo "not ok - cannot run: $*"; exit 1; }
need_root() { [ "$(id -u)" -eq 0 ] || cannot_run "needs root"; }
need_cmd() {
	local c
	for c; do
		command -v "$c" >/dev/null ||
			cannot_run "missing command $c (scripts/install-deps.sh installs it: make deps)"
	done
}
# need_built FILE...: files `make` builds (relative to build/).
need_built() {
	local f
	for f; do [ -e "$TOE_BUILD/$f" ] || cannot_run "$TOE_BUILD/$f not built (make)"; done
}
# jq -e exits 0 on empty input (jq 1.6): `check X jq -e F < <(cmd)` (or
# `jq -e F FILE` with FILE empty) would pass when cmd failed and printed
# nothing.  This jq fails there instead.
jq() {
	local a e=0 s=0 pos=0 skipn=0 in files=()
	for a; do
		if [ $skipn -gt 0 ]; then skipn=$((skipn - 1)); continue; fi
		case $a in
		--arg|--argjson|--slurpfile|--rawfile) skipn=2 ;;
		--indent|-L) skipn=1 ;;
		-e|--exit-status) e=1 ;;
		-s|--slurp|-n|--null-input) s=1 ;;
		--*) ;;
		-*) [[ $a == *e* ]] && e=1; [[ $a == *[sn]* ]] && s=1 ;;
		*) pos=$((pos + 1)); [ $pos -gt 1 ] && files+=("$a") ;;
		esac
	done
	if [ $e = 1 ] && [ $s = 0 ] && [ $pos -gt 1 ]; then
		if [ -z "$(cat "${files[@]}" 2>/dev/null | tr -d '[:space:]')" ]; then
			echo "jq -e: no input in ${files[*]} (the command writing it failed or printed nothing)" >&2
			return 1
		fi
		command jq "$@"
		return
	fi
	if [ $e = 1 ] && [ $s = 0 ] && [ $pos -le 1 ]; then
		in=$(cat)
		# (a regex, not ${in//[[:space:]]/}: that is quadratic, minutes
		# on a megabyte of JSON such as toe_cap_cpu's dump)
		if ! [[ $in =~ [^[:space:]] ]]; then
			echo "jq -e: no input (the command feeding it failed or printed nothing)" >&2
			return 1
		fi
		command jq "$@" <<<"$in"
		return
	fi
	command jq "$@"
}

# plan N: this test reports exactly N checks (selftests/run.sh fails it if
# it stops early); print it first.
plan() { echo "1..$1"; }

# Sub-results, counted by selftests/run.sh.
# In the qemu guest (TOE_GUEST=1) each check's line is preceded by the
# time since the check before it ("# step-time SECONDS"): test_guest.sh
# prints the slowest, for whoever shortens make check.
_toe_t_last=$EPOCHREALTIME
_toe_step_time() {
	[ "${TOE_GUEST:-0}" = 1 ] || return 0
	local now=$EPOCHREALTIME
	awk -v a="$_toe_t_last" -v b="$now" 'BEGIN { printf "step-time %.1f\n", b - a }'
	_toe_t_last=$now
}
ok() { _toe_step_time; echo "ok - $*"; }
fail() { _toe_step_time; echo "not ok - $*"; _toe_failed=1; }
# check DESC CMD...: run CMD, report ok/not ok.
check() {
	local desc=$1; shift
	if "$@" >/dev/null; then ok "$desc"; else fail "$desc"; fi
}
# check_not DESC CMD...: CMD must fail.
check_not() {
	local desc=$1; shift
	if "$@" >/dev/null; then fail "$desc"; else ok "$desc"; fi
}
finish() { exit $_toe_failed; }

# Network namespaces: ns_add NAME makes netns "$TOE_TEST_ID-NAME" and
# removes it on exit.  nsx NAME CMD... runs CMD inside it (nsenter, so
# bpffs pins stay visible; `ip netns exec` remounts /sys).
ns_name() { echo "$TOE_TEST_ID-$1"; }
ns_add() {
	local n; n=$(ns_name "$1")
	ip netns add "$n" || return 1
	# every process still in the namespace is the test's own: a server
	# started as "nsx NS cmd &" leaves nsenter's child behind its subshell
	defer "ip netns pids $n | xargs -r kill -9; ip netns del $n"
	ip -n "$n" link set lo up
}
nsx() { local n; n=$(ns_name "$1"); shift; nsenter --net=/run/netns/"$n" "$@"; }
# nsx_t SECONDS NS CMD...: nsx with a time-out (timeout(1): status 124 when
# CMD had to be stopped).  For transfers: a wrong datapath must fail the
# check, not hang the test until the runner's limit.
nsx_t() {
	local t=$1 n; n=$(ns_name "$2"); shift 2
	timeout --kill-after=5 "$t" nsenter --net=/run/netns/"$n" "$@"
}
# nsx_bg NS CMD...: CMD in the background in NS, killed when the test ends;
# its pid (not a subshell's) in NSX_PID.
nsx_bg() {
	local n; n=$(ns_name "$1"); shift
	nsenter --net=/run/netns/"$n" "$@" &
	NSX_PID=$!
	defer "kill $NSX_PID"
}

# veth_pair NS1 IF1 NS2 IF2: a veth pair between two test namespaces
# ("-" for the root namespace; the root end is removed on exit).
# Each end is created inside its namespace, so its ifindex comes from that
# namespace's own counter (small), not from the root namespace's, which
# grows with every test ever run on the machine (XDP chaining needs < 1024).
veth_pair() {
	local ns1=$1 if1=$2 ns2=$3 if2=$4 at1=() at2=()
	[ "$ns1" = - ] || at1=(netns "$(ns_name "$ns1")")
	[ "$ns2" = - ] || at2=(netns "$(ns_name "$ns2")")
	ip link add "$if1" "${at1[@]}" type veth peer name "$if2" "${at2[@]}" || return 1
	[ "$ns1" = - ] && defer "ip link del $if1"
	return 0
}

# two_hosts N [4]: namespaces a and b joined by a veth (va in a, vb in b),
# both ends up, 10.N.0.1/24 and fd00:N::1/64 on va, 10.N.0.2 and fd00:N::2
# on vb (with 4: IPv4 only).
two_hosts() {
	local n=$1
	ns_add a && ns_add b || return 1
	veth_pair a va b vb || return 1
	nsx a ip addr add "10.$n.0.1/24" dev va && nsx a ip link set va up
	nsx b ip addr add "10.$n.0.2/24" dev vb && nsx b ip link set vb up
	[ "${2:-}" = 4 ] && return 0
	nsx a ip addr add "fd00:$n::1/64" dev va nodad
	nsx b ip addr add "fd00:$n::2/64" dev vb nodad
	return 0
}

# veth_loop: namespace a holding both ends of a veth pair (va, vb), up.
veth_loop() {
	ns_add a && veth_pair a va a vb && nsx a ip link set va up && nsx a ip link set vb up
}

# dp_start CGROUP: the start of a test or benchmark that loads the
# datapath: root, toe-loader built, the pin folder in $PIN, a cgroup CGROUP
# ($CG) and a work folder ($work), both removed on exit.  Not in $(...)
# (the cleanups must be registered in the test's own shell).
dp_start() {
	need_root
	need_built toe-loader
	PIN=$TOE_PIN_DIR
	cg_add "$1" || skip "no cgroup v2 mount"
	work=$(mktemp -d) && defer "rm -rf $work"
}

# dp_load NS [ARGS...]: toe-loader load ARGS from namespace NS ("-": this
# one) into $PIN for the cgroup $CG, unloaded (and $PIN removed) on exit.
DP_HOOK_ARGS=${DP_HOOK_ARGS-"--hook xdp"} # the XDP tests: XDP unless a test says
dp_load() {
	local ns=$1 run=(); shift
	[ "$ns" = - ] || run=(nsx "$ns")
	defer "${run[*]} toe-loader unload --pin-dir $PIN; rm -rf $PIN"
	# DP_HOOK_ARGS (router.sh): the hook under test, unless the caller names one
	case " $* " in *" --hook "* | *" -H "*) ;; *) set -- "$@" $DP_HOOK_ARGS ;; esac
	"${run[@]}" toe-loader load --cgroup "$CG" --pin-dir "$PIN" "$@" >/dev/null && return 0
	# a load the kernel refused: its verifier's words, from libbpf (a
	# failed load changes nothing: toe-loader undoes what it did)
	"${run[@]}" env TOE_DEBUG=1 toe-loader load --cgroup "$CG" --pin-dir "$PIN" "$@" 2>&1 >/dev/null |
		grep -E "failed to load|stack|invalid|too large|Too large|unknown func|R[0-9]+ |processed" | tail -n 12 | sed 's/^/# verifier: /' >&2
	return 1
}

# stat_of PIN INDEX: toe_stats' counter INDEX (STAT_XDP_FORWARD ..., PARSE_BAD_IHL
# ...) of the datapath pinned in PIN, summed over the CPUs.
stat_of() {
	bpftool -j map lookup pinned "$1/$MAP_STATS" key "$2" 0 0 0 | jq '[.formatted.values[].value] | add'
}
# rsn_of PIN INDEX: a toe_reasons counter summed over the CPUs (INDEX: $RSN_*)
rsn_of() {
	bpftool -j map lookup pinned "$1/$MAP_REASONS" key "$2" 0 0 0 | jq '[.formatted.values[].value] | add'
}

# cg_add NAME: a cgroup v2 folder for this test in $CG, removed on exit
# with every process still in it.  (Not in $(...): the cleanup must be
# registered in the test's own shell.)
cgroup2_root() { awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts; }
cg_add() {
	local root; root=$(cgroup2_root)
	[ -n "$root" ] || return 1
	CG=$root/opentoe-$TOE_TEST_ID-$1
	mkdir -p "$CG" || return 1
	defer "cg_del $CG"
}
# Every process left in a test cgroup is the test's own: kill it, then remove.
cg_del() {
	local cg=$1 i
	[ -d "$cg" ] || return 0
	if [ -e "$cg/cgroup.kill" ]; then
		echo 1 >"$cg/cgroup.kill"
	else
		xargs -r kill -9 <"$cg/cgroup.procs"
	fi
	# (cgroup.procs always has size 0: read it)
	for ((i = 0; i < 50; i++)); do
		[ -n "$(cat "$cg/cgroup.procs")" ] || break
		sleep 0.1
	done
	# the last exits may still be in flight (EBUSY): try for a few seconds
	for ((i = 0; i < 50; i++)); do
		rmdir "$cg" 2>/dev/null && return 0
		sleep 0.1
	done
	rmdir "$cg"
}

# unhold FILE: end the hold of the tcpx.py client whose output is FILE (it
# names its pid in its "held" line): tests hold connections open for long
# (--hold 60) and end the hold once their checks have read what they look
# for, so a loaded machine slows the checks without closing the connections
# under them.
unhold() { kill -USR1 "$(grep -m1 '"held"' "$1" | command jq '.pid')" 2>/dev/null; }

# wait_for SECONDS CMD...: poll CMD until it succeeds.
wait_for() {
	local t=$1 i; shift
	for ((i = 0; i < t * 10; i++)); do "$@" && return 0; sleep 0.1; done
	return 1
}

# run_fuzzer FUZZER CORPUS DICT MAX_LEN LIMIT: a libFuzzer target of build/
# (ASan + UBSan) from a copy of the seed corpus CORPUS with the dictionary
# DICT; LIMIT is -runs=N or -max_total_time=S.  One check: no crash, no
# sanitizer report, no broken invariant (the failing input's log if not).
run_fuzzer() {
	local f=$TOE_BUILD/$1 work out
	[ -x "$f" ] || cannot_run "$1 not built (needs clang's libFuzzer: libclang-rt-14-dev)"
	work=$(mktemp -d); defer "rm -rf $work"
	cp "$TOE_TOP/$2"/* "$work/"
	out=$work/log
	if "$f" "$5" -max_len="$4" -dict="$TOE_TOP/$3" "$work" >"$out" 2>&1; then
		ok "libFuzzer: $(grep -o 'Done [0-9]* runs' "$out" | tail -1), no crash, no sanitizer report, no broken invariant"
	else
		tail -30 "$out"
		fail "libFuzzer found a failing input"
	fi
}

# fwd_proof: what admits routed flows on this kernel: netfilter (toe_nf_fwd
# at FORWARD, 6.4 on) or tc-egress (toe_egress, the fallback; also with
# TOE_LOADER_NO_NF=1).
fwd_proof() {
	if [ "${TOE_LOADER_NO_NF:-0}" = 1 ] ||
		! toe-loader features -j | jq -e '.[] | select(.name == "netfilter_prog") | .present' >/dev/null; then
		echo tc-egress
	else
		echo netfilter
	fi
}

# How toe-loader attaches its tc programs on this kernel: "tcx" (Linux
# 6.6+) or "clsact" (a classic filter: older kernels, or TOE_LOADER_NO_TCX=1,
# the loader's knob for the tests), as toe-loader status names the mode.
tc_mode() {
	if [ "${TOE_LOADER_NO_TCX:-0}" = 1 ] ||
		! toe-loader features -j | jq -e '.[] | select(.name == "tcx") | .present' >/dev/null; then
		echo clsact
	else
		echo tcx
	fi
}

# tc_runs NS DEV ingress|egress PROG_ID: how many times the program is on
# that tc hook, as a tcx link or as a classic clsact filter.
tc_runs() {
	local links filters
	links=$(bpftool -j link show | jq --argjson p "$4" \
		'[.[] | select(.prog_id == $p and (.type == "tcx" or .type == 11))] | length')
	filters=$(nsx "$1" tc -j filter show dev "$2" "$3" 2>/dev/null |
		jq --argjson p "$4" '[.[]? | select(.options.prog.id == $p)] | length')
	echo $((${links:-0} + ${filters:-0}))
}

# slow SECONDS: SECONDS times TOE_SLOW (1; the qemu guest sets more, as
# TCG runs the tests several times slower): for how long a test holds
# something open while it looks, never a limit on how fast a thing is.
slow() { awk -v t="$1" -v s="${TOE_SLOW:-1}" 'BEGIN { print t * s }'; }
