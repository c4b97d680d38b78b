#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# 1,000 bypassed connections at once, each with its own byte pattern both
# ways: a byte of any other connection would be caught.  Same tuples in two
# namespaces at the same time do not cross either (the key carries both
# ISNs).
. "$(dirname "$0")/setup.sh"
plan 3
load_toe
apply "$BYPASS_CONF" || { fail "bypass policy applies"; finish; }
ulimit -n 8192 2>/dev/null || true

b0=$(byp_bytes)
out=$(bcheck a --port 7400 --count 1000 pairs)
jqcheck "1,000 concurrent pairs, 64 KiB each way, no cross-talk" "$out" \
	'.ok and .client.recvd == 65536000 and .server.recvd == 65536000 and .client.v[2] == 0 and .server.v[2] == 0'
jqcheck "  all of them bypassed (client and server ends moved no TCP data)" "$out" \
	'.client.v[0] == 1000 and .server.v[0] == 1000'
echo "bypassed: client ends $(jq .client.v[0] <<<"$out"), server ends $(jq .server.v[0] <<<"$out"); $(( $(byp_bytes) - b0 )) bytes redirected"

# The same addresses and ports in two namespaces at once (loopback in a and b)
in_cg a "$BC" --port 7401 --count 200 pairs >"$TMP/pa" &
pa=$!
in_cg b "$BC" --port 7401 --count 200 pairs >"$TMP/pb" &
pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
check "200 pairs on 127.0.0.1:7401 in namespace a and 200 in b at once: no cross-talk" \
	test $ra = 0 -a $rb = 0
finish
