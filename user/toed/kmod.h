/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: the kernel module (kmod.c): its devices, the TIDs toed holds there. */
#ifndef __TOE_KMOD_H
#define __TOE_KMOD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "genl.h"
#include "opentoe.h"

long long tid_of(const struct toe_flow_key *k, void *ctx);
void tid_clear(void);
__u32 tids_held(__u32 mdev);
size_t tids_held_all(void);
bool kmod_read_devs(void);
void kmod_map_refresh(void);
/* the event table's (evtypes.c): a flow offloaded; closed */
void kmod_on_offloaded(struct toe_event *e);
void kmod_on_closed(const struct toe_event *e);
void kmod_reconcile(void);
void kmod_retry_soon(void);
void kmod_retry_tick(void);
int kmod_retry_timeout_ms(int ms);
void on_genl(struct toe_genl *g, enum toe_genl_ev ev, __u32 dev, void *ctx);

#endif /* __TOE_KMOD_H */
