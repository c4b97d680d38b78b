#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_fwd_route.sh on the tc forward path (toe-loader --hook tc): the
# same file, the hook under test from TOE_FWD_HOOK (router.sh).  Route
# changes under a running flow reach it within 100 ms (one route lookup a
# skb, the kernel's neighbours), the transfer intact.
TOE_FWD_HOOK=tc exec bash "$(dirname "$0")/test_fwd_route.sh" "$@"
