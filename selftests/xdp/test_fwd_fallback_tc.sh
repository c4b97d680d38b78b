#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_fwd_fallback.sh on the tc forward path (toe-loader --hook tc): the
# same file, the hook under test from TOE_FWD_HOOK (router.sh).  A step
# failing once the path has begun (the TTL) leaves the stack the skb as it
# came: MACs, TTL, NAT untouched.
TOE_FWD_HOOK=tc exec bash "$(dirname "$0")/test_fwd_fallback.sh" "$@"
