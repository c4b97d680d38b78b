#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_fwd_readmit.sh on the tc forward path (toe-loader --hook tc).
TOE_FWD_HOOK=tc exec bash "$(dirname "$0")/test_fwd_readmit.sh" "$@"
