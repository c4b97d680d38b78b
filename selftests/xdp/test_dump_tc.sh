#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_dump.sh on the tc forward path (toe-loader --hook tc): the same
# file, the hook under test from TOE_FWD_HOOK (router.sh).  tc forwards
# skbs whole (GSO): each is one frame of the pcap, up to 64 KiB.
TOE_FWD_HOOK=tc exec bash "$(dirname "$0")/test_dump.sh" "$@"
