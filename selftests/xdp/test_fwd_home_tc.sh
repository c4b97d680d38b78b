#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_fwd_home.sh on the tc forward path (toe-loader --hook tc): the
# same file, the hook under test from TOE_FWD_HOOK (router.sh).  Only the
# datapath's home namespace is served: flows another namespace routes are
# never admitted, a FORWARD DROP there holds.
TOE_FWD_HOOK=tc exec bash "$(dirname "$0")/test_fwd_home.sh" "$@"
