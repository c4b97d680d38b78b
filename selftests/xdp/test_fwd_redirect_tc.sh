#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_fwd_redirect.sh on the tc forward path (toe-loader --hook tc): the
# same file, the hook under test from TOE_FWD_HOOK (router.sh).  A flow
# is admitted only if the router's stack forwarded it, never because a tc
# action carried its packets across.
TOE_FWD_HOOK=tc exec bash "$(dirname "$0")/test_fwd_redirect.sh" "$@"
