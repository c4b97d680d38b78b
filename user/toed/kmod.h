/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: the kernel module (kmod.c): its devices, the TIDs toed holds there. */
#ifndef __TOE_KMOD_H
#define __TOE_KMOD_H

struct toed;

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "genl.h"
#include "opentoe.h"

long long tid_of(const struct toe_flow_key *k, void *ctx);
void tid_clear(struct toed *d);
__u32 tids_held(struct toed *d, __u32 mdev);
size_t tids_held_all(struct toed *d);
bool kmod_read_devs(struct toed *d);
void kmod_map_refresh(struct toed *d);
/* the event table's (evtypes.c): a flow offloaded; closed */
void kmod_on_offloaded(struct toed *d, struct toe_event *e);
void kmod_on_closed(struct toed *d, const struct toe_event *e);
void kmod_reconcile(struct toed *d);
void kmod_retry_soon(void);
void kmod_retry_tick(struct toed *d);
int kmod_retry_timeout_ms(int ms);
void on_genl(struct toe_genl *g, enum toe_genl_ev ev, __u32 dev, void *ctx);

#endif /* __TOE_KMOD_H */
