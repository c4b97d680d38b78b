#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bad configurations: each rejected by toed --check and --apply with file,
# line and column, and the policy in force stays in force.
. "$(dirname "$0")/setup.sh"
plan 51
load_toe
good=$(conf_t3 good 10 5500)
apply "$good" >/dev/null || { fail "apply good"; finish; }
serial=$(policy_serial)
before=$(policy_state)

bad() { # NAME "LINE:COL: message part" <<config
	local name=$1 want=$2 f out rc
	f=$(conf "$name")
	out=$(toed --check "$f" 2>&1); rc=$?
	if [ $rc = 1 ] && grep -qF -- "$f:$want" <<<"$out" && [ "$(wc -l <<<"$out")" = 1 ]; then
		ok "check rejects $name: $out"
	else
		fail "check $name (rc=$rc): want '$f:$want', got: $out"
	fi
	if refused "$f:$want" toed --apply "$f" --pin-dir "$PIN"; then
		ok "apply rejects $name, policy $serial still in force"
	else
		fail "apply $name (rc=$rc): $out"
	fi
}
bad unknown-device "3:18: unknown device 'nosuch'" <<'EOF2'
device t3 type chelsio-t3 nconn 10
# a comment
rule offload dev nosuch rport 80
EOF2
bad invalid-prefix "1:20: expected an address prefix" <<'EOF2'
rule host   remote 10.0.0.300/24
EOF2
bad prefix-length "1:27: a prefix length 33 is out of range" <<'EOF2'
rule host remote 10.0.0.0/33
EOF2
bad host-bits "1:18: prefix 10.1.2.3/8 has host bits set" <<'EOF2'
rule host remote 10.1.2.3/8
EOF2
bad reversed-range "2:17: port range 90-80 is reversed" <<'EOF2'
device t3 type chelsio-t3 nconn 10
rule host rport 90-80
EOF2
bad reversed-by-one "1:17: port range 81-80 is reversed" <<'EOF2'
rule host rport 81-80
EOF2
bad port-range "1:17: a port 65536 is out of range" <<'EOF2'
rule host lport 65536
EOF2
bad family-mix "1:35: prefix fd00::/8 is IPv6, but the rule is IPv4" <<'EOF2'
rule host remote 10.0.0.0/8 local fd00::/8
EOF2
bad offload-no-dev "1:6: 'rule offload' needs 'dev NAME'" <<'EOF2'
rule offload rport 80
EOF2
bad unknown-word "1:11: expected dev, family, local" <<'EOF2'
rule host colour blue
EOF2
bad track-word "1:7: expected 'all' or 'policy', got 'some'" <<'EOF2'
track some
EOF2
for t in all policy; do
	f=$(conf "track-$t" <<<"track $t")
	check "check takes 'track $t'" toed --check "$f"
done
# the statements, in the order of their table (user/toed/config_stmts.h)
stmts=$(toe-tables -j | jq -r '[.statements[].keyword] | (.[:-1] | join(", ")) + " or " + .[-1]')
bad unknown-statement "2:1: expected $stmts, got 'rules'" <<'EOF2'
default host
rules host
EOF2
bad missing-nconn "1:1: device 't3' needs 'nconn N'" <<'EOF2'
device t3 type chelsio-t3
EOF2
bad bad-type "1:16: expected a type" <<'EOF2'
device t3 type chelsio-t4 nconn 4
EOF2
bad duplicate-device "2:8: device 't3' is already declared on line 1" <<'EOF2'
device t3 type chelsio-t3 nconn 4
device t3 type software nconn 4
EOF2
# an interface name at the kernel's limit (IF_NAMESIZE 16, its NUL
# included): 15 characters are a name, 16 are not
bad ifname-16 "1:40: interface name 'abcdefghijklmnop' is 16 characters long; at most 15" <<'EOF2'
device t3 type chelsio-t3 nconn 10 dev abcdefghijklmnop
EOF2
check "an interface name of 15 characters passes toed --check" \
	toed --check "$(conf ifname-15 <<<'device t3 type chelsio-t3 nconn 10 dev abcdefghijklmno')"
python3 -c "
print('device t3 type chelsio-t3 nconn 4')
print('rule offload dev t3 rport 80 keepalive 10 5')" | bad keepalive-short "2:30: 'keepalive' needs IDLE INTVL CNT"
printf 'rule host rport 80\nrule host rport 8\x001\n' | bad nul-byte "2:18: unexpected NUL byte"
python3 -c "print('rule host rport 80 # ' + 'x' * 5000)" | bad long-line "1:4097: line longer than 4096 characters"
python3 -c "
for i in range(131073): print('rule host rport', i % 65536)" | bad too-many-rules "131073:1: too many rules (at most 131072)"

# Policy files others can write are refused, as sshd refuses them: by
# others, by its group, or owned by anyone but root.  The error names the
# file, its owner and its mode.  Root's own 0644 and 0640 are accepted.
perm() { # NAME MODE UID WANT(refused|accepted)
	local f out rc
	f=$(conf "perm-$1" <"$good")
	chmod "$2" "$f" && chown "$3" "$f"
	out=$(toed --check "$f" 2>&1); rc=$?
	if [ "$4" = accepted ]; then
		check "mode $2, owner uid $3: accepted ($out)" test $rc = 0
	elif [ $rc = 1 ] && grep -qF -- "$f: refusing it: it must be owned by root and writable by no one else (owner uid $3, mode $2)" <<<"$out"; then
		ok "mode $2, owner uid $3: refused, naming the file, owner and mode"
	else
		fail "mode $2, owner uid $3: want refused (exit 1, file, owner, mode), got exit $rc: $out"
	fi
}
perm world 0666 0 refused
perm others 0602 0 refused
perm group 0620 0 refused
perm owner 0600 65534 refused
perm owner-ro 0400 65534 refused
perm readable 0644 0 accepted
perm group-read 0640 0 accepted
check "policy $serial is still in force after every rejection" test "$(policy_serial)" = "$serial"
finish
