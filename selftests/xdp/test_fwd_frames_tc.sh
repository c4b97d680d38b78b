#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_fwd_frames.sh on the tc forward path (toe-loader --hook tc): the
# VLAN tag in the skb's metadata, pkt_type.
TOE_FWD_HOOK=tc exec bash "$(dirname "$0")/test_fwd_frames.sh" "$@"
