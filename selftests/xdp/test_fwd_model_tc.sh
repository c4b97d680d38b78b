#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_fwd_model.sh on the tc forward path (toe-loader --hook tc): the same
# seeded sequence of events (TOE_MODEL_SEED, TOE_MODEL_STEPS), the hook under
# test from TOE_FWD_HOOK (router.sh).
TOE_FWD_HOOK=tc exec bash "$(dirname "$0")/test_fwd_model.sh" "$@"
