#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_fwd_admission.sh on the tc forward path (toe-loader --hook tc): the
# same file, the hook under test from TOE_FWD_HOOK (router.sh).  Forged
# handshakes get nothing through, a FORWARD DROP added under a running
# flow stops it within 100 ms, a SYN flood pushes no flow out.
TOE_FWD_HOOK=tc exec bash "$(dirname "$0")/test_fwd_admission.sh" "$@"
