#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_xdp_forward_toed.sh on the tc forward path attached as a kernel
# before 6.6 attaches it, classic clsact filters (TOE_LOADER_NO_TCX=1):
# toectl status names the interfaces' hook and mode from the clsact pins
# (toed's attached.c), the flow runs as on tcx.  (Debian 12's 6.1 runs the
# tc path this way: this is its check on the host's kernel.)
TOE_FWD_HOOK=tc TOE_LOADER_NO_TCX=1 exec bash "$(dirname "$0")/test_xdp_forward_toed.sh" "$@"
