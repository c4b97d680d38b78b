#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toectl policy writes every statement back (issue 47): its text, fed back
# to toed as its configuration, is the same policy (the text again, and
# the JSON, line numbers aside).  The configuration has every statement's
# example from the table (user/toed/config_stmts.h through toe-tables -j:
# a statement added there is tried here with no change to this test), then
# the other forms of the options: a kmod device, steer forward and
# account, each action, IPv6 prefixes, a port and a range, a cgroup by
# path, namespaces by name, a list and any, a family alone.  Some values
# are looked for in the JSON, so that a statement or option dropped on the
# way is seen even when both rounds drop it.
. "$(dirname "$0")/setup.sh"
plan 10
load_toe_xdp || { fail "load"; finish; }
B=$(ns_name b)
T=$(toe-tables -j)
cfg=$(conf roundtrip <<EOF2
$(jq -r '.statements[].example' <<<"$T")
device k0 kmod steer forward
device sw0 type software nconn 7 steer account
device sw1 type chelsio-t1 nconn 3 dev va steer forward
rule bypass family inet6 local fd00:202::/64 rport 5400-5401 netns any
rule host lport 22 netns host,$B
rule offload dev sw0 remote fd00:202::2/128 cgroup $CG
rule host family inet6
rule offload dev k0 rport 80 keepalive 1 1 1
rule offload dev sw1 rport 53 proto udp
rule bypass lport 4433 proto any
rule host rport 25 proto tcp
EOF2
)
missing=$(jq -r '.statements[].keyword' <<<"$T" | while read -r k; do
	grep -q "^$k " "$cfg" || echo "$k"
done)
check "the configuration has every statement of the table ($(jq -c '[.statements[].keyword]' <<<"$T"))" \
	test -z "$missing"
check "toed --check takes it" toed --check "$cfg"
start_toed "$cfg" || { fail "toed starts"; cat "$TOED_LOG"; finish; }
ctl policy >"$CONF_DIR/p1.txt" && ctl -j policy >"$CONF_DIR/p1.json"
missing=$(jq -r '.statements[].keyword' <<<"$T" | while read -r k; do
	grep -q "^$k " "$CONF_DIR/p1.txt" || echo "$k"
done)
check "toectl policy writes every statement back${missing:+ (not: $missing)}" test -z "$missing"
check "its JSON has the values written: netns, cgroup by inode, steer, keepalive, track, quota" \
	jq -e --arg ns "host,$B" --argjson cg "$(stat -c %i "$CG")" '
		(.rules | map(.netns) | index($ns) != null) and (.rules | map(.netns) | index("any") != null) and
		(.rules | map(.cgroup) | index($cg) != null) and
		([.devices[] | select(.name == "k0" and .kmod and .steer == "forward")] | length) == 1 and
		([.devices[] | select(.name == "d0" and .steer == "cpu" and .steer_cpu == 1)] | length) == 1 and
		(.rules[0].keepalive == [60, 10, 5]) and .default_dev == "d0" and
		.track == "policy" and .quota == {slots: 40, flows: 30, events: 20}' "$CONF_DIR/p1.json"
# the text back as the configuration: the same file toed reads, reloaded
cp "$CONF_DIR/p1.txt" "$CONF_DIR/p1.conf" && chmod 600 "$CONF_DIR/p1.conf"
check "toed --check takes toectl policy's text" toed --check "$CONF_DIR/p1.conf"
serial=$(jq .serial "$CONF_DIR/p1.json")
cp "$CONF_DIR/p1.txt" "$cfg"
check "toectl reload applies it" ctl reload
ctl policy >"$CONF_DIR/p2.txt" && ctl -j policy >"$CONF_DIR/p2.json"
check "a new policy is in force (serial $serial, then $(jq .serial "$CONF_DIR/p2.json"))" \
	test "$(jq .serial "$CONF_DIR/p2.json")" -gt "$serial"
# the same text, but for the header and each rule's "# line N"
strip() { grep -v '^# policy ' "$1" | sed 's/    # line [0-9]*$//'; }
out=$(diff <(strip "$CONF_DIR/p1.txt") <(strip "$CONF_DIR/p2.txt"))
check "the same text back${out:+: $out}" test -z "$out"
same() { jq -S 'del(.serial, .generation, .config, .rules[].line)' "$1"; }
out=$(diff <(same "$CONF_DIR/p1.json") <(same "$CONF_DIR/p2.json"))
check "the same JSON back, every statement's fields (line numbers aside)${out:+: $out}" test -z "$out"
# and the comparison sees a difference: a rule's keepalive changed
sed -i 's/keepalive 60 10 5/keepalive 60 10 6/' "$cfg"
ctl reload >/dev/null
out=$(diff <(same "$CONF_DIR/p1.json") <(ctl -j policy | same /dev/stdin))
check "  (a keepalive changed in the file is a difference it reports)" grep -q '6' <<<"$out"
finish
