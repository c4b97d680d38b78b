#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toed lives in the sandbox its unit gives it (dist/toed.service.in): the
# settings are read from the unit itself, and toed runs its work under
# them: the capability bounding set and no_new_privs (setpriv),
# RestrictNamespaces (selftests/tools/nsrestrict: systemd's seccomp
# filter, with a configuration that names a namespace), the whole
# file system read-only but ReadWritePaths (ProtectSystem=strict, in a
# mount namespace of its own), every system call it makes within
# SystemCallFilter (strace against systemd-analyze's groups), every socket
# of a family RestrictAddressFamilies allows.  Under that it applies the
# policy, offloads a connection, serves toectl and /metrics, reloads on
# SIGHUP and stops cleanly.  systemd-analyze security rates the unit.
. "$(dirname "$0")/setup.sh"
plan 14
need_cmd setpriv strace unshare curl systemd-analyze
need_built selftests/nsrestrict
UNIT=$TOE_TOP/dist/toed.service.in
setting() { sed -n "s/^$1=//p" "$UNIT" | tail -n 1; }

caps=$(setting CapabilityBoundingSet)
[ -n "$caps" ] || { fail "the unit has a CapabilityBoundingSet"; finish; }
bset=-all
for c in $caps; do bset="$bset,+$(tr 'A-Z' 'a-z' <<<"${c#CAP_}")"; done
check "the unit sets NoNewPrivileges and ProtectSystem=strict" \
	test "$(setting NoNewPrivileges)" = yes -a "$(setting ProtectSystem)" = strict

# sandboxed CMD...: CMD with the unit's capability bounding set and
# no_new_privs, every mount read-only but the API file systems, the unit's
# ReadWritePaths, $RUN (the test's stand-in for RuntimeDirectory) and $TRD
# (strace's output: strace is the test's, not toed's).
sandboxed() {
	unshare -m --propagation private bash -c '
		rw=$1 bset=$2; shift 2
		for d in $rw; do
			mkdir -p "$d" && mount --bind "$d" "$d" || exit 99
		done
		awk "{print \$2}" /proc/self/mounts | while read -r m; do
			case " $rw " in *" $m "*) continue ;; esac
			case $m in /proc | /proc/* | /sys | /sys/* | /dev | /dev/*) continue ;; esac
			mount -o remount,bind,ro "$m" 2>/dev/null
		done
		exec setpriv --bounding-set "$bset" --inh-caps=-all --no-new-privs "$@"' \
		- "$(setting ReadWritePaths) $RUN $TRD" "$bset" "$@"
}

load_toe_xdp || { fail "load"; finish; }
# the configuration names a namespace (netns NAME): toed reads its cookie
# in it (setns), which the unit's RestrictNamespaces must allow
cfg=$(printf 'device t3 type chelsio-t3 nconn 100\nrule offload dev t3 rport 5300\nrule offload dev t3 rport 5301 netns %s\n' \
	"$(ns_name b)" | conf sandbox)
MPORT=$((20000 + RANDOM % 20000))
TRD=$CONF_DIR/trace
TR=$TRD/strace
# RestrictNamespaces as systemd applies it (a seccomp filter, nsrestrict:
# this machine's PID 1 is not systemd), after the namespace the unit would
# start toed in was entered
NSR=$(setting RestrictNamespaces)
sandboxed strace -f -qq -o "$TR" nsenter --net=/run/netns/"$(ns_name a)" \
	"$TOE_BUILD/selftests/nsrestrict" "${NSR:-no}" \
	toed --config "$cfg" --pin-dir "$PIN" --run-dir "$RUN" --metrics "$MPORT" \
	>>"$TOED_LOG" 2>&1 &
spid=$!
defer "kill -9 $spid; pkill -9 -f 'toed --config $cfg'"
if ! wait_for 20 ctl status >/dev/null; then
	cat "$TOED_LOG"
	fail "toed starts in the unit's sandbox"
	finish
fi
ok "toed starts in the unit's sandbox (RestrictNamespaces=${NSR:-unset} too) with a netns rule, and answers toectl status"
# the filter holds: what the unit forbids fails under it
if [ "${NSR:-no}" != no ]; then
	check "  RestrictNamespaces=$NSR holds: a mount namespace cannot be made under it" \
		bash -c "! '$TOE_BUILD/selftests/nsrestrict' '$NSR' unshare -m true 2>/dev/null"
else
	fail "  the unit sets RestrictNamespaces"
fi
tpid=$(pgrep -f "^toed --config $cfg" | head -n 1)
# the mask the unit's names make, numbers from the kernel's header
want=0
for c in $caps; do
	n=$(awk -v c="$c" '$1 == "#define" && $2 == c {print $3}' /usr/include/linux/capability.h)
	[ -n "$n" ] && want=$((want | (1 << n)))
done
have=$(sed -n 's/^CapBnd:[[:space:]]*//p' "/proc/$tpid/status")
check "  its bounding set is the unit's ($caps: 0x$have) and no_new_privs is set" \
	test $((16#$have)) = "$want" -a -n "$(grep '^NoNewPrivs:[[:space:]]*1' "/proc/$tpid/status")"
check "  it cannot write outside its run folder (/etc, /var and /tmp are read-only to it)" \
	nsenter -t "$tpid" -m sh -c '! touch /etc/.toe-x 2>/dev/null && ! touch /var/tmp/.toe-x 2>/dev/null'

server 5300
client --addr "$B4" --port 5300 --send 100000 --hold 60 >"$CONF_DIR/held" &
cpid=$!
flows_on() { ctl -j flows port 5300 dev t3 | jq -e '[.[] | select(.decision == "offload")] | length >= 1' >/dev/null; }
check "it applied the policy: a connection to port 5300 is offloaded on t3" wait_for 5 flows_on
wait_for 10 grep -q held "$CONF_DIR/held"
unhold "$CONF_DIR/held"
wait $cpid
stats_devices() { ctl stats >/dev/null && ctl devices >/dev/null; }
check "toectl stats and devices answer" stats_devices
check "/metrics answers 200" \
	test "$(nsx a curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/metrics")" = 200
kill -HUP "$tpid"
sleep 0.5
check "SIGHUP: it reloads the configuration and still answers" ctl status

# the families of every socket it holds, from its namespace's tables
families() {
	local f ino
	for f in /proc/"$tpid"/fd/*; do
		ino=$(readlink "$f" | sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p')
		[ -n "$ino" ] || continue
		for t in unix:AF_UNIX netlink:AF_NETLINK tcp:AF_INET udp:AF_INET raw:AF_INET \
			 tcp6:AF_INET6 udp6:AF_INET6 raw6:AF_INET6 packet:AF_PACKET; do
			grep -qw "$ino" /proc/"$tpid"/net/"${t%%:*}" && echo "${t#*:}"
		done
	done | sort -u
}
fams=$(families | tr '\n' ' ')
allowed=$(setting RestrictAddressFamilies)
bad=""
for f in $fams; do grep -qw "$f" <<<"$allowed" || bad="$bad $f"; done
check "every socket it holds ($fams) is of a family RestrictAddressFamilies allows" \
	test -n "$fams" -a -z "$bad"

kill -TERM "$tpid"
check "SIGTERM: it stops cleanly in the sandbox" wait_for 10 bash -c "! kill -0 $tpid 2>/dev/null"
wait "$spid" 2>/dev/null

# Each capability of the set is needed: without it toed does not start
# (a set that grows without a reason fails here).  CAP_NET_ADMIN is asked
# by the module's generic-netlink commands (GENL_ADMIN_PERM in
# kmod/genl.c), which this host kernel cannot load: its evidence is that.
needless=""
for c in $caps; do
	if [ "$c" = CAP_NET_ADMIN ]; then
		grep -q GENL_ADMIN_PERM "$TOE_TOP/kmod/genl.c" || needless="$needless $c"
		continue
	fi
	bset=-all
	for o in $caps; do [ "$o" = "$c" ] || bset="$bset,+$(tr 'A-Z' 'a-z' <<<"${o#CAP_}")"; done
	sandboxed nsenter --net=/run/netns/"$(ns_name a)" timeout 5 \
		toed --config "$cfg" --pin-dir "$PIN" --run-dir "$RUN" >"$CONF_DIR/without" 2>&1 &
	if wait_for 3 ctl status >/dev/null; then
		needless="$needless $c"
	fi
	pkill -9 -f "^toed --config $cfg"
	wait $! 2>/dev/null
done
check "toed does not start without any one of them${needless:+; it did without:$needless}" \
	test -z "$needless"

# every system call it made, against SystemCallFilter's expansion
expand() { # groups and names -> syscall names, one a line
	local x
	for x; do
		case $x in
		@*) systemd-analyze syscall-filter "$x" | sed -n 's/^    //p' | grep -v '^#' |
			while read -r y; do expand "$y"; done ;;
		*) echo "$x" ;;
		esac
	done
}
# shellcheck disable=SC2046
expand $(setting SystemCallFilter) | sort -u >"$CONF_DIR/allowed"
sed -n 's/^[0-9]* *\([a-z_0-9]*\)(.*/\1/p' "$TR" | sort -u >"$CONF_DIR/used"
# strace's own exec of nsenter and toed happen before the filter would apply
# in systemd: execve is in @system-service anyway
missing=$(comm -23 "$CONF_DIR/used" "$CONF_DIR/allowed" | tr '\n' ' ')
check "every system call it made ($(wc -l <"$CONF_DIR/used")) is in SystemCallFilter${missing:+; not: $missing}" \
	test -s "$CONF_DIR/used" -a -z "$missing"
score=$(sed "s|@SBINDIR@|/usr/sbin|g" "$UNIT" >"$CONF_DIR/toed.service" &&
	systemd-analyze security --offline=yes "$CONF_DIR/toed.service" 2>/dev/null |
	sed -n 's/.*Overall exposure level for toed.service: \([0-9.]*\).*/\1/p')
check "systemd-analyze security: exposure ${score:-?} (at most 4.0, \"OK\")" \
	awk -v s="${score:-99}" 'BEGIN { exit !(s <= 4.0) }'
finish
