#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toed's rtnetlink reader fed messages the kernel never sends
# (build/selftests/nl_feed, which compiles user/toed/neigh.c in): neighbour,
# address and link messages cut short, a neighbour without its destination,
# with one of the wrong size or of interface 0, an address without one; each
# counted under malformed (toectl stats' netlink_malformed) and nothing
# else, the well-formed ones beside them not; and a tracked interface
# deleted purges its own neighbours from a real BPF map, not the others'.
# Under a second: no namespace, no toed.
. "$(dirname "$0")/../lib.sh"
need_built selftests/nl_feed
"$TOE_BUILD/selftests/nl_feed"
