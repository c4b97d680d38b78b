/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: the datapath's TID pools (tidpool.c): filled from the kernel
 * module, drained, accounted.
 */
#ifndef __TOE_TIDPOOL_H
#define __TOE_TIDPOOL_H

struct toed;

#include <stdbool.h>
#include <linux/types.h>

void pool_close(void);
int pool_fill(struct toed *d, __u32 i);
void pool_fill_all(struct toed *d);
void pool_drain(struct toed *d, __u32 i);
void pool_put(struct toed *d, __u32 i, __u32 tid);
void stid_put(struct toed *d, __u32 mdev, __u32 stid);
__u32 kmod_toe_index(struct toed *d, __u32 mdev);
int pool_take(struct toed *d, __u32 (**out)[2], bool servers);
bool take_in_progress(struct toed *d, __u32 i, bool server);
void stid_reconcile(struct toed *d);
int pool_queue_if_any(struct toed *d, __u32 i);
bool pool_demote(struct toed *d, __u64 cookie, __u32 dev, __u32 tid,
		 __u32 reason);
void pool_refill_soon(void);
void pool_refill_tick(struct toed *d);
int pool_refill_timeout_ms(int ms);
void acct_settle(struct toed *d, __u32 i);
void acct_base(struct toed *d);
void acct_view(struct toed *d, __u32 i, long long *pool, long long *in_flight);
void acct_ssettle(struct toed *d, __u32 i);
void acct_sview(struct toed *d, __u32 i, long long *pool, long long *in_flight);

#endif /* __TOE_TIDPOOL_H */
