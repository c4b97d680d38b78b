#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_fwd_conntrack.sh on the tc forward path (toe-loader --hook tc): the
# same file, the hook under test from TOE_FWD_HOOK (router.sh).  A
# conntrack entry destroyed ends its fast path, IPv4 and IPv6.
TOE_FWD_HOOK=tc exec bash "$(dirname "$0")/test_fwd_conntrack.sh" "$@"
