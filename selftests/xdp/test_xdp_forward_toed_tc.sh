#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_xdp_forward_toed.sh on the tc forward path (toe-loader --hook tc): the
# same file, the hook under test from TOE_FWD_HOOK (router.sh).  The
# neighbour deleted and its MAC changed under a running flow, toectl
# flows, the data intact.
TOE_FWD_HOOK=tc exec bash "$(dirname "$0")/test_xdp_forward_toed.sh" "$@"
