/* SPDX-License-Identifier: GPL-2.0 */
/*
 * opentoe: the Chelsio TOM's private header, shared by its parts:
 *  tom.c         chip table, attach and detach, DEV_GET, registration;
 *  tom_l2t.c     routes, the L2T and the netevent notifier;
 *  tom_conn.c    connections and their TIDs;
 *  tom_listen.c  listeners and server TIDs.
 */
#ifndef __OPENTOE_TOM_H
#define __OPENTOE_TOM_H

#include <linux/atomic.h>
#include <linux/if_ether.h>
#include <linux/in6.h>
#include <linux/list.h>
#include <linux/notifier.h>
#include <linux/rcupdate.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include "toedev.h"

struct tom_chip {
	const char *name;
	unsigned int l2t_size; /* L2T entries */
	unsigned int nstids; /* server TIDs (listeners) */
};

/*
 * tom_conn::flags: who still owns the connection.  0 while it is being
 * set up (tom_connect(), tom_bind()): nobody may close it then.  A
 * reserved TID is HOST | RESERVED, with no flow and no L2T entry.
 */
#define TOM_CONN_HOST BIT(0)
#define TOM_CONN_DEVICE BIT(1)
#define TOM_CONN_RESERVED BIT(2)

#define TOM_L2T_NONE UINT_MAX

struct tom_conn {
	unsigned int tid;
	unsigned int flags; /* TOM_CONN_*, tom_dev::lock */
	unsigned int l2t_idx; /* or TOM_L2T_NONE */
	struct toe_flow flow; /* tom_dev::lock once published */
};

struct tom_listen {
	unsigned int stid;
	bool reserved; /* for a listener to come: key unset */
	struct toe_listener key; /* list and net unused */
};

struct tom_l2e {
	unsigned int refcnt; /* TIDs using it, 0: free */
	u8 family;
	struct in6_addr addr; /* next hop */
	u16 state; /* NUD_* */
	u8 lladdr[ETH_ALEN];
};

struct tom_dev {
	struct list_head list; /* on tom_devs (RCU) */
	struct rcu_head rcu;
	struct toedev *tdev;
	/* the toedev's lower device: stable while attached */
	struct net_device *lldev;
	const struct tom_chip *chip;

	/*
	 * lock protects tom_conn::flags and ::flow, removal from tids, ntids,
	 * nreserved and nhost.  Process context only; taken before the xarray's
	 * own lock.
	 */
	spinlock_t lock;
	struct xarray tids; /* tid -> tom_conn */
	unsigned int ntids; /* TIDs in tids, closing ones too */
	unsigned int nreserved; /* of ntids: reserved, no flow yet */
	unsigned int nhost; /* of ntids: the host's, reserved or bound */
	wait_queue_head_t released; /* ntids reached 0 */

	/*
	 * Listeners: stids and nlisten are changed with toedev_mutex and
	 * tom_sem (write) held, read with tom_sem held (read: the
	 * LISTEN_GET dump, DEV_GET's count).
	 */
	struct xarray stids; /* stid -> tom_listen */
	unsigned int nlisten; /* listeners, not the reserved */
	unsigned int nstid_reserved;

	/* l2t_lock protects l2t[] (taken from netevent, softirq too) */
	spinlock_t l2t_lock;
	unsigned int l2t_size;
	struct tom_l2e *l2t;

	atomic64_t stats[__OPENTOE_STAT_MAX];
};

/* tom.c: the attached devices (tom_devs_lock) and the connections' cache */
extern spinlock_t tom_devs_lock;
extern struct list_head tom_devs;
extern struct kmem_cache *tom_conn_cache;

static inline struct tom_dev *TOM(struct toedev *dev)
{
	return dev->tom_data;
}

static inline void tom_stat(struct tom_dev *td, int stat)
{
	atomic64_inc(&td->stats[stat]);
}

/* tom_l2t.c */
extern struct notifier_block tom_netevent_nb;
int tom_route(struct tom_dev *td, const struct toe_flow *flow,
	      struct in6_addr *nh);
int tom_l2t_get(struct tom_dev *td, u8 family, const struct in6_addr *nh);
void tom_l2t_put(struct tom_dev *td, unsigned int idx);
int tom_fill_l2t(struct toedev *dev, unsigned int idx, struct sk_buff *skb);
unsigned int tom_l2t_size(struct toedev *dev);

/* tom_conn.c */
int tom_can_offload(struct toedev *dev, const struct toe_flow *flow);
void tom_conn_free(struct tom_dev *td, struct tom_conn *c);
int tom_connect(struct toedev *dev, const struct toe_flow *flow,
		unsigned int *tidp, unsigned int *l2t_idx);
int tom_reserve(struct toedev *dev, unsigned int *tidp);
int tom_bind(struct toedev *dev, unsigned int tid, const struct toe_flow *flow,
	     unsigned int *l2t_idx);
unsigned int tom_host_let_go(struct tom_dev *td, struct tom_conn *c);
int tom_close(struct toedev *dev, unsigned int tid);
void tom_tid_released(struct toedev *dev, unsigned int tid);
int tom_fill_tid(struct toedev *dev, unsigned long *tid, struct sk_buff *skb);

/* tom_listen.c */
int tom_listen_start(struct toedev *dev, const struct toe_listener *l);
void tom_listen_drop(struct tom_dev *td, struct tom_listen *tl);
void tom_listen_stop(struct toedev *dev, const struct toe_listener *l);
int tom_fill_listen(struct toedev *dev, unsigned long *stid,
		    struct sk_buff *skb, bool reserved);
int tom_stid_reserve(struct toedev *dev, unsigned int *stid);
int tom_stid_free(struct toedev *dev, unsigned int stid);

#endif /* __OPENTOE_TOM_H */
