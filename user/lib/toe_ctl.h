/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: the control protocol's facts that toed (user/toed/ctl*.c) and
 * toectl share.  One request line of at most TOE_CTL_REQ_MAX bytes, its
 * newline included, on the unix socket TOE_CTL_SOCK in toed's run folder.
 */
#ifndef __TOE_CTL_H
#define __TOE_CTL_H

#include "lib/dplock.h" /* TOE_RUN_DIR: the default run folder */

#define TOE_CTL_SOCK "toed.sock"
#define TOE_CTL_REQ_MAX 512

#endif /* __TOE_CTL_H */
