#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_fwd_netconf.sh on the tc forward path (toe-loader --hook tc): the
# same file, the hook under test from TOE_FWD_HOOK (router.sh).  Forwarding
# switched off (ip_forward, a device's forwarding) stops a running flow
# within 100 ms.
TOE_FWD_HOOK=tc exec bash "$(dirname "$0")/test_fwd_netconf.sh" "$@"
