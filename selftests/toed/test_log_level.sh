#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The configuration's "log LEVEL" honoured: with log warning a reload
# writes no info line (its "applied policy"), nor a request its debug
# line; a reload of the file saying log debug turns the request lines on
# without a restart, log error keeps a failed reload's error and nothing
# below it, and a file without log is back to info.  toed --log-level wins
# over the file.  toectl policy shows the level (text and -j), and the
# statement's errors name the bad word.
. "$(dirname "$0")/setup.sh"
plan 11
load_toe_xdp || { fail "load"; finish; }
body='device t3 type chelsio-t3 nconn 10
rule offload dev t3 rport 5300'
cfg=$(printf '%s\nlog warning\n' "$body" | conf log)
start_toed "$cfg" || { fail "toed starts"; cat "$TOED_LOG"; finish; }
# since FROM (a byte offset of the log): what toed logged after it
since() { tail -c +$(($1 + 1)) "$TOED_LOG"; }
mark() { stat -c %s "$TOED_LOG"; }
set_log() { printf '%s\n%s' "$body" "${1:+log $1
}" >"$cfg"; }
m=$(mark)
ctl reload >/dev/null && ctl status >/dev/null
sleep 0.2
check "log warning: a reload and a request log nothing ($(since "$m" | tr '\n' '|'))" \
	test -z "$(since "$m")"
check "toectl policy says log warning" grep -qx 'log warning' < <(ctl policy)
set_log debug
m=$(mark)
ctl reload >/dev/null && ctl status >/dev/null
sleep 0.2
out=$(since "$m")
check "reloaded with log debug: the apply's info line and the request's debug line" \
	test -n "$(grep 'toed: info: .*applied policy' <<<"$out")" -a -n "$(grep "toed: debug: request 'status'" <<<"$out")"
check "toectl -j policy says log debug" jq -e '.log == "debug"' < <(ctl -j policy)
set_log error
ctl reload >/dev/null
m=$(mark)
printf 'log verbose\n' >>"$cfg"
ctl reload >/dev/null 2>&1
ctl status >/dev/null
sleep 0.2
out=$(since "$m")
check "log error: a failed reload's error, and nothing else ($(tr '\n' '|' <<<"$out"))" \
	test "$(grep -c . <<<"$out")" = 1 -a -n "$(grep "toed: error: .*:4:5: expected 'error', 'warning', 'info' or 'debug', got 'verbose'" <<<"$out")"
check "  the level in force stays the last good file's: log error" grep -qx 'log error' < <(ctl policy)
set_log ""
m=$(mark)
ctl reload >/dev/null && ctl status >/dev/null
sleep 0.2
out=$(since "$m")
check "a file without log: info again (the apply's line, no request line)" \
	test -n "$(grep 'toed: info: .*applied policy' <<<"$out")" -a -z "$(grep 'toed: debug:' <<<"$out")"
check "  toectl policy says log info" grep -qx 'log info' < <(ctl policy)
# --log-level wins: debug from the command line, error in the file
stop_toed
set_log error
start_toed "$cfg" --log-level debug || { fail "toed starts again"; finish; }
m=$(mark)
ctl status >/dev/null
sleep 0.2
check "toed --log-level debug wins over log error: the request's debug line" \
	grep -q "toed: debug: request 'status'" < <(since "$m")
f=$(conf bad1 <<<"log")
check "'log' alone refused: $(toed --check "$f" 2>&1)" \
	sh -c "toed --check '$f' 2>&1 | grep -q \"1:1: 'log' needs 'error', 'warning', 'info' or 'debug'\""
f=$(conf bad2 <<<"log debug now")
check "'log debug now' refused at now: $(toed --check "$f" 2>&1)" \
	sh -c "toed --check '$f' 2>&1 | grep -q \"1:11: expected the end of the line, got 'now'\""
finish
