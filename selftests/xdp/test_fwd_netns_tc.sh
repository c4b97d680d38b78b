#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_fwd_netns.sh on the tc forward path (toe-loader --hook tc): the
# same file, the hook under test from TOE_FWD_HOOK (router.sh).  Namespaces
# by cookie: a FIN run through toe_tc in another namespace, on an
# interface with r0's ifindex, does not end the flow.
TOE_FWD_HOOK=tc exec bash "$(dirname "$0")/test_fwd_netns.sh" "$@"
