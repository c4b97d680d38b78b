/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: the server TIDs it holds for offloaded listeners (listen.c). */
#ifndef __TOE_LISTEN_H
#define __TOE_LISTEN_H

struct toed;

#include <stddef.h>
#include <linux/types.h>
#include "opentoe.h"

/* the event table's (evtypes.c): a listener's start or stop */
void listen_event(struct toed *d, const struct toe_event *e);
void listen_reconcile(struct toed *d);
void listen_clear(void);
__u32 listeners_held(__u32 mdev);
size_t listeners_held_all(void);

#endif /* __TOE_LISTEN_H */
