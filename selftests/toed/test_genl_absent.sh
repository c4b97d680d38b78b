#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toed without the kernel module (this host's kernel cannot load modules; the
# module side runs in selftests/kmod's guest): toed says so once at info and
# runs as before.  A configuration that declares a module device
# ("device toe0 kmod") is valid for --check, applies, and leaves the
# connections its rules name on the host (reason nodev) until the module
# gives the device; the kmod keyword is refused next to type/dev/nconn.
. "$(dirname "$0")/setup.sh"
plan 24
if command -v genl >/dev/null && genl ctrl get name opentoe >/dev/null 2>&1; then
	skip "the opentoe kernel module is loaded here"
fi
load_toe_xdp || { fail "load"; finish; }
cfg=$(conf absent <<'EOF2'
device t3 type chelsio-t3 nconn 100
device toe0 kmod
rule offload dev t3 rport 5300
rule offload dev toe0 rport 5301
EOF2
)
out=$(toed --check "$cfg" 2>&1)
check "toed --check: a kmod device is valid without the module: $out" \
	grep -q "valid: 2 devices, 2 rules" <<<"$out"
# each of the three the module gives, after kmod (column 18) and before it
for w in "nconn 8" "type software" "dev lo"; do
	bad=$(echo "device toe0 kmod $w" | conf bad)
	out=$(toed --check "$bad" 2>&1); rc=$?
	check "toed --check refuses ${w% *} next to kmod, naming line and column: $out" \
		test "$rc" = 1 -a -n "$(grep -F "$bad:1:18: a kmod device takes no type, dev or nconn" <<<"$out")"
	bad=$(echo "device toe0 $w kmod" | conf bad)
	out=$(toed --check "$bad" 2>&1); rc=$?
	check "  and before kmod (column 13): $out" \
		test "$rc" = 1 -a -n "$(grep -F "$bad:1:13: a kmod device takes no type, dev or nconn" <<<"$out")"
done

start_toed "$cfg" || { fail "toed starts"; cat "$TOED_LOG"; finish; }
ok "toed starts without the module"
check "it logs 'kernel module not loaded: configuration devices only' at info" \
	grep -q "^toed: info: kernel module not loaded: configuration devices only$" "$TOED_LOG"
check "toectl status: module not loaded" grep -q "^module: *not loaded" < <(ctl status)
check "toectl status -j: kmod.loaded false, no devices, no TIDs" \
	jq -e '.kmod == {"loaded": false, "devices": 0, "tids_held": 0}' < <(ctl -j status)
check "toectl stats: kmod_loaded 0, nothing allocated" \
	jq -e '.daemon.kmod_loaded == 0 and .daemon.kmod_tid_bound == 0 and .daemon.kmod_devices == 0' < <(ctl -j stats)
check "toectl devices: t3 served by sock_ops, no TID/L2T columns filled" \
	jq -e 'length == 1 and .[0].device == "t3" and .[0].module == "sock_ops" and .[0].kmod == false and (.[0] | has("tids_used") | not)' < <(ctl -j devices)
check "toectl devices (text): TIDS and L2T are '-'" \
	grep -qE '^t3 .* -  +-$' < <(ctl devices)
check "$MAP_DEVS: toe0 is there, kmod, not present (its rules leave flows on the host)" \
	jq -e '[.[].formatted.value | select(.name == "toe0")] | length == 1 and .[0].flags == 2' \
	< <(bpftool -j map dump pinned "$PIN/$MAP_DEVS")
check "toectl policy shows it back as 'device toe0 kmod'" grep -q "^device toe0 kmod$" < <(ctl policy)

server 5300 5301 || exit 1
client --addr "$B4" --port 5300 --send 1000 >/dev/null
client --addr "$B4" --port 5301 --send 1000 >/dev/null
check "a connection the t3 rule names is offloaded as before (flow_offloaded counted)" \
	jq -e '.daemon.events_flow_offloaded == 1' < <(ctl -j stats)
check "a connection the toe0 rule names stays on the host: reason nodev (flow_refused)" \
	jq -e '.daemon.events_flow_refused == 1' < <(ctl -j stats)
check "  counted by the datapath under its reason (toectl stats' reasons: refused_nodev)" \
	jq -e '.reasons.refused_nodev == 1' < <(ctl -j stats)
client --addr "$B4" --port 5300 --send 1000 --hold 60 >"$CONF_DIR/held" &
HELD=$!
hasflow() { ctl -j flows port 5300 dev t3 | jq -e 'length >= 1' >/dev/null; }
wait_for 5 hasflow
check "toectl flows: an offloaded flow has tid null (no module)" \
	jq -e 'length >= 1 and all(.[]; has("tid") and .tid == null)' < <(ctl -j flows port 5300 dev t3)
check "toectl flows (text): a TID column, '-'" grep -qE '^LOCAL .* TID$' < <(ctl flows)
wait_for 10 grep -q held "$CONF_DIR/held"
unhold "$CONF_DIR/held"
wait $HELD

ctl reload >/dev/null
kill -HUP "$TOED_PID"
sleep 0.5
check "after reload and SIGHUP the info line is still there once" \
	test "$(grep -c "kernel module not loaded" "$TOED_LOG")" = 1
check "toed logged no error" test -z "$(grep -E '^toed: error' "$TOED_LOG")"
out=$(toed --apply "$cfg" --pin-dir "$PIN" 2>&1)
check "toed --apply: applies, and warns that toe0's module is not loaded: $(tail -n 1 <<<"$out")" \
	grep -q "device toe0 (line 2): the kernel module is not loaded" <<<"$out"
stop_toed TERM
finish
