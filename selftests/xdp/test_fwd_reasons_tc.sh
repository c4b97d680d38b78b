#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_fwd_reasons.sh on the tc forward path (toe-loader --hook tc): every
# reason but XDP's stack_only, on tc.
TOE_FWD_HOOK=tc exec bash "$(dirname "$0")/test_fwd_reasons.sh" "$@"
