/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: the datapath's TID pools (tidpool.c): filled from the kernel
 * module, drained, accounted.
 */
#ifndef __TOE_TIDPOOL_H
#define __TOE_TIDPOOL_H

#include <stdbool.h>
#include <linux/types.h>

void pool_close(void);
int pool_fill(__u32 i);
void pool_fill_all(void);
void pool_drain(__u32 i);
void pool_put(__u32 i, __u32 tid);
void stid_put(__u32 mdev, __u32 stid);
__u32 kmod_toe_index(__u32 mdev);
int pool_take(__u32 (**out)[2], bool servers);
bool take_in_progress(__u32 i, bool server);
void stid_reconcile(void);
int pool_queue_if_any(__u32 i);
bool pool_demote(__u64 cookie, __u32 dev, __u32 tid, __u32 reason);
void pool_refill_soon(void);
void pool_refill_tick(void);
int pool_refill_timeout_ms(int ms);
void acct_settle(__u32 i);
void acct_base(void);
void acct_view(__u32 i, long long *pool, long long *in_flight);
void acct_ssettle(__u32 i);
void acct_sview(__u32 i, long long *pool, long long *in_flight);

#endif /* __TOE_TIDPOOL_H */
