#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_fwd_neigh.sh on the tc forward path (toe-loader --hook tc): toed
# killed, the next hop's MAC changed, the fast path follows within 100 ms
# of the server announcing it (kernel timestamps: unscaled in the guest too).
TOE_FWD_HOOK=tc exec bash "$(dirname "$0")/test_fwd_neigh.sh" "$@"
