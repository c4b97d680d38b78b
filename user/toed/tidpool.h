/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: the datapath's TID pools (tidpool.c): filled from the kernel
 * module, drained, accounted.
 */
#ifndef __TOE_TIDPOOL_H
#define __TOE_TIDPOOL_H

struct kmod;

struct toed;

#include <stdbool.h>
#include <linux/types.h>

void pool_close(struct kmod *km);
int pool_fill(struct kmod *km, __u32 i);
void pool_fill_all(struct kmod *km);
void pool_drain(struct kmod *km, __u32 i);
void pool_put(struct kmod *km, __u32 i, __u32 tid);
void stid_put(struct kmod *km, __u32 mdev, __u32 stid);
__u32 kmod_toe_index(struct kmod *km, __u32 mdev);
int pool_take(struct kmod *km, __u32 (**out)[2], bool servers);
bool take_in_progress(struct kmod *km, __u32 i, bool server);
void stid_reconcile(struct kmod *km);
int pool_queue_if_any(struct kmod *km, __u32 i);
bool pool_demote(struct kmod *km, __u64 cookie, __u32 dev, __u32 tid,
		 __u32 reason);
void pool_refill_soon(struct kmod *km);
void pool_refill_tick(struct kmod *km);
int pool_refill_timeout_ms(struct kmod *km, int ms);
void acct_settle(struct kmod *km, __u32 i);
void acct_base(struct kmod *km);
void acct_view(struct kmod *km, __u32 i, long long *pool, long long *in_flight);
void acct_ssettle(struct kmod *km, __u32 i);
void acct_sview(struct kmod *km, __u32 i, long long *pool,
		long long *in_flight);

#endif /* __TOE_TIDPOOL_H */
