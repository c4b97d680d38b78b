#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_fwd_nat.sh on the tc forward path (toe-loader --hook tc): NATed
# flows (masquerade, DNAT) translated by fwd_nat() (bpf/fwd_xmit.h) on skbs the far ends send
# with their default offloads (TSO: CHECKSUM_PARTIAL, up to 64 KiB),
# byte-exact both ways, conntrack kept through a 3 s established timeout.
TOE_FWD_HOOK=tc exec bash "$(dirname "$0")/test_fwd_nat.sh" "$@"
