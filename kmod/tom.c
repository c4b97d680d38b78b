// SPDX-License-Identifier: GPL-2.0
/*
 * opentoe: the Chelsio TCP offload module (TOM).
 *
 * Attaches to T1, T1C and T3 devices.  Per device it keeps
 *  - a connection-id (TID) table bounded by the device's nconn; each
 *    connection is owned by the host and by the device (two flags, as
 *    FreeBSD's cxgbe TOM does) and is freed when the last owner lets go;
 *  - a server-TID table for listeners;
 *  - an L2 table (L2T) of next hops, filled from the neighbour table and
 *    kept in sync by the netevent notifier (NETEVENT_NEIGH_UPDATE) instead
 *    of hooks patched into neighbour.c;
 *  - counters.
 */
#include <linux/atomic.h>
#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <net/arp.h>
#include <net/ip6_route.h>
#include <net/ndisc.h>
#include <net/neighbour.h>
#include <net/netevent.h>
#include <net/netlink.h>
#include <net/route.h>

#include "toedev.h"

struct tom_chip {
	const char *name;
	unsigned int l2t_size;		/* L2T entries */
	unsigned int nstids;		/* server TIDs (listeners) */
};

static const struct tom_chip chip_t1 = { "T1", 64, 16 };
static const struct tom_chip chip_t1c = { "T1C", 128, 32 };
static const struct tom_chip chip_t3 = { "T3", 256, 64 };

static const struct toe_id chelsio_ids[] = {
	{ OPENTOE_ID_CHELSIO_T1, (unsigned long)&chip_t1 },
	{ OPENTOE_ID_CHELSIO_T1C, (unsigned long)&chip_t1c },
	{ OPENTOE_ID_CHELSIO_T3, (unsigned long)&chip_t3 },
	{ 0, 0 }
};

/*
 * tom_conn::flags: who still owns the connection.  0 while it is being
 * set up (tom_connect(), tom_bind()): nobody may close it then.  A
 * reserved TID is HOST | RESERVED, with no flow and no L2T entry.
 */
#define TOM_CONN_HOST		BIT(0)
#define TOM_CONN_DEVICE		BIT(1)
#define TOM_CONN_RESERVED	BIT(2)

#define TOM_L2T_NONE		UINT_MAX

struct tom_conn {
	unsigned int tid;
	unsigned int flags;		/* TOM_CONN_*, tom_dev::lock */
	unsigned int l2t_idx;		/* or TOM_L2T_NONE */
	struct toe_flow flow;		/* tom_dev::lock once published */
};

struct tom_listen {
	unsigned int stid;
	struct toe_listener key;	/* list and net unused */
};

struct tom_l2e {
	unsigned int refcnt;		/* TIDs using it, 0: free */
	u8 family;
	struct in6_addr addr;		/* next hop */
	u16 state;			/* NUD_* */
	u8 lladdr[ETH_ALEN];
};

struct tom_dev {
	struct list_head list;		/* on tom_devs (RCU) */
	struct rcu_head rcu;
	struct toedev *tdev;
	/* the toedev's lower device: stable while attached */
	struct net_device *lldev;
	const struct tom_chip *chip;

	/*
	 * lock protects tom_conn::flags and ::flow, removal from tids, ntids
	 * and nreserved.  Process context only; taken before the xarray's
	 * own lock.
	 */
	spinlock_t lock;
	struct xarray tids;		/* tid -> tom_conn */
	unsigned int ntids;		/* TIDs in tids, closing ones too */
	unsigned int nreserved;		/* of ntids: reserved, no flow yet */
	wait_queue_head_t released;	/* ntids reached 0 */

	/*
	 * Listeners: stids and nlisten are changed with toedev_mutex and
	 * tom_sem (write) held, read with tom_sem held (read: the
	 * LISTEN_GET dump, DEV_GET's count).
	 */
	struct xarray stids;		/* stid -> tom_listen */
	unsigned int nlisten;

	/* l2t_lock protects l2t[] (taken from netevent, softirq too) */
	spinlock_t l2t_lock;
	unsigned int l2t_size;
	struct tom_l2e *l2t;

	atomic64_t stats[__OPENTOE_STAT_MAX];
};

/*
 * Attached devices, for the netevent notifier.  Writers hold
 * tom_devs_lock; the notifier walks it under RCU.
 */
static DEFINE_SPINLOCK(tom_devs_lock);
static LIST_HEAD(tom_devs);
static struct kmem_cache *tom_conn_cache;

static inline struct tom_dev *TOM(struct toedev *dev)
{
	return dev->tom_data;
}

static void tom_stat(struct tom_dev *td, int stat)
{
	atomic64_inc(&td->stats[stat]);
}

/* ---- routes and the L2T ---- */

/* The next hop of @flow if its route leaves through the lower device. */
static int tom_route(struct tom_dev *td, const struct toe_flow *flow,
		     struct in6_addr *nh)
{
	struct net *net = dev_net(td->lldev);

	if (flow->family == AF_INET) {
		struct flowi4 fl4 = {
			.daddr = flow->daddr.s6_addr32[3],
			.saddr = flow->saddr.s6_addr32[3],
			.flowi4_proto = IPPROTO_TCP,
			.fl4_sport = flow->sport,
			.fl4_dport = flow->dport,
		};
		struct rtable *rt = ip_route_output_key(net, &fl4);

		if (IS_ERR(rt))
			return -ENETUNREACH;
		if (rt->dst.dev != td->lldev ||
		    rt->rt_type != RTN_UNICAST) {
			ip_rt_put(rt);
			return -ENETUNREACH;
		}
		memset(nh, 0, sizeof(*nh));
		nh->s6_addr32[3] = rt_nexthop(rt, fl4.daddr);
		ip_rt_put(rt);
		return 0;
	}
#if IS_ENABLED(CONFIG_IPV6)
	if (flow->family == AF_INET6) {
		struct flowi6 fl6 = {
			.daddr = flow->daddr,
			.saddr = flow->saddr,
			.flowi6_proto = IPPROTO_TCP,
			.fl6_sport = flow->sport,
			.fl6_dport = flow->dport,
		};
		struct dst_entry *dst = ip6_route_output(net, NULL, &fl6);
		int err = dst->error;

		if (!err && dst->dev != td->lldev)
			err = -ENETUNREACH;
		if (!err)
			*nh = *rt6_nexthop((struct rt6_info *)dst, &flow->daddr);
		dst_release(dst);
		return err ? -ENETUNREACH : 0;
	}
#endif
	return -EAFNOSUPPORT;
}

static struct neigh_table *tom_neigh_tbl(u8 family)
{
	if (family == AF_INET)
		return &arp_tbl;
#if IS_ENABLED(CONFIG_IPV6)
	if (family == AF_INET6)
		return &nd_tbl;
#endif
	return NULL;
}

static const void *tom_neigh_key(u8 family, const struct in6_addr *a)
{
	return family == AF_INET ? (const void *)&a->s6_addr32[3] : a;
}

/* Copy a neighbour's state into an entry; l2t_lock held. */
static void l2e_snapshot(struct tom_l2e *e, struct neighbour *n)
{
	neigh_ha_snapshot(e->lladdr, n, n->dev);
	e->state = READ_ONCE(n->nud_state);
}

/* An L2T entry for next hop @nh, referenced: its index, or -errno. */
static int l2t_get(struct tom_dev *td, u8 family, const struct in6_addr *nh)
{
	struct neigh_table *tbl = tom_neigh_tbl(family);
	struct neighbour *n;
	struct tom_l2e *e;
	int i, idx = -1;

	if (!tbl)
		return -EAFNOSUPPORT;
	n = __neigh_lookup(tbl, tom_neigh_key(family, nh), td->lldev, 1);
	if (!n)
		return -ENOMEM;

	spin_lock_bh(&td->l2t_lock);
	for (i = 0; i < td->l2t_size; i++) {
		e = &td->l2t[i];
		if (e->refcnt && e->family == family &&
		    ipv6_addr_equal(&e->addr, nh)) {
			idx = i;
			break;
		}
		if (!e->refcnt && idx < 0)
			idx = i;
	}
	if (idx >= 0) {
		e = &td->l2t[idx];
		if (!e->refcnt++) {
			e->family = family;
			e->addr = *nh;
		}
		/*
		 * Later neighbour changes reach the notifier after we drop
		 * l2t_lock, so the entry cannot go stale.
		 */
		l2e_snapshot(e, n);
		td->tdev->neigh_update(td->tdev, idx, e->lladdr, e->state);
	}
	spin_unlock_bh(&td->l2t_lock);

	if (idx >= 0 && !(READ_ONCE(n->nud_state) & NUD_VALID))
		neigh_event_send(n, NULL);	/* start resolving it */
	neigh_release(n);
	return idx >= 0 ? idx : -ENOSPC;
}

static void l2t_put(struct tom_dev *td, unsigned int idx)
{
	spin_lock_bh(&td->l2t_lock);
	if (!WARN_ON_ONCE(!td->l2t[idx].refcnt))
		td->l2t[idx].refcnt--;
	spin_unlock_bh(&td->l2t_lock);
}

static int tom_netevent(struct notifier_block *nb, unsigned long event,
			void *ctx)
{
	struct neighbour *n = ctx;
	struct tom_dev *td;
	u8 family;
	struct in6_addr addr = {};
	int i;

	if (event != NETEVENT_NEIGH_UPDATE)
		return NOTIFY_DONE;
	if (n->tbl == &arp_tbl) {
		family = AF_INET;
		memcpy(&addr.s6_addr32[3], n->primary_key, 4);
#if IS_ENABLED(CONFIG_IPV6)
	} else if (n->tbl == &nd_tbl) {
		family = AF_INET6;
		memcpy(&addr, n->primary_key, 16);
#endif
	} else {
		return NOTIFY_DONE;
	}

	rcu_read_lock();
	list_for_each_entry_rcu(td, &tom_devs, list) {
		int changed = -1;

		if (td->lldev != n->dev)
			continue;
		spin_lock_bh(&td->l2t_lock);
		for (i = 0; i < td->l2t_size; i++) {
			struct tom_l2e *e = &td->l2t[i];

			if (!e->refcnt || e->family != family ||
			    !ipv6_addr_equal(&e->addr, &addr))
				continue;
			l2e_snapshot(e, n);
			td->tdev->neigh_update(td->tdev, i, e->lladdr,
					       e->state);
			tom_stat(td, OPENTOE_STAT_L2T_UPDATES);
			changed = i;
			break;
		}
		spin_unlock_bh(&td->l2t_lock);
		if (changed >= 0)
			opentoe_notify_l2t(td->tdev, changed);
	}
	rcu_read_unlock();
	return NOTIFY_DONE;
}

static struct notifier_block tom_netevent_nb = {
	.notifier_call = tom_netevent,
};

/* ---- connections ---- */

static int tom_can_offload(struct toedev *dev, const struct toe_flow *flow)
{
	struct tom_dev *td = TOM(dev);
	struct in6_addr nh;
	int ret;

	if (!netif_running(td->lldev))
		return -ENETDOWN;
	ret = tom_route(td, flow, &nh);
	if (!ret)
		ret = dev->can_offload(dev, flow);
	if (ret)
		tom_stat(td, OPENTOE_STAT_NO_ROUTE);
	return ret;
}

/*
 * Frees a connection nobody owns any more.  The last ntids-- may let a
 * detach free @td (it waits for ntids == 0 under td->lock, see
 * tom_all_released()): so every use of @td comes before it, and nothing
 * after the spin_unlock() touches @td.
 */
static void tom_conn_free(struct tom_dev *td, struct tom_conn *c)
{
	if (c->l2t_idx != TOM_L2T_NONE)
		l2t_put(td, c->l2t_idx);
	spin_lock(&td->lock);
	xa_erase(&td->tids, c->tid);
	td->ntids--;
	if (!td->ntids)
		wake_up_all(&td->released);
	spin_unlock(&td->lock);
	kmem_cache_free(tom_conn_cache, c);
}

/*
 * A free TID for @c, whose flags are 0 (nobody's yet): 0, or -ENOSPC when
 * nconn TIDs are in use.
 */
static int tom_tid_take(struct tom_dev *td, struct tom_conn *c, u32 *tid)
{
	int ret = xa_alloc(&td->tids, tid, c,
			   XA_LIMIT(0, td->tdev->nconn - 1), GFP_KERNEL);

	if (ret == -EBUSY) {
		tom_stat(td, OPENTOE_STAT_NO_TID);
		ret = -ENOSPC;
	}
	return ret;
}

static int tom_connect(struct toedev *dev, const struct toe_flow *flow,
		       unsigned int *tidp, unsigned int *l2t_idx)
{
	struct tom_dev *td = TOM(dev);
	struct in6_addr nh;
	struct tom_conn *c;
	u32 tid;
	int ret;

	ret = tom_route(td, flow, &nh);
	if (ret) {
		tom_stat(td, OPENTOE_STAT_NO_ROUTE);
		return ret;
	}
	c = kmem_cache_zalloc(tom_conn_cache, GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->flow = *flow;
	c->l2t_idx = TOM_L2T_NONE;

	/* flags stay 0 (nobody's yet) until the device has accepted it */
	ret = tom_tid_take(td, c, &tid);
	if (ret) {
		kmem_cache_free(tom_conn_cache, c);
		return ret;
	}
	c->tid = tid;
	spin_lock(&td->lock);
	td->ntids++;
	spin_unlock(&td->lock);

	ret = l2t_get(td, flow->family, &nh);
	if (ret < 0) {
		if (ret == -ENOSPC)
			tom_stat(td, OPENTOE_STAT_NO_L2T);
		goto err_tid;
	}
	c->l2t_idx = ret;

	ret = dev->connect(dev, tid, flow, c->l2t_idx);
	if (ret) {
		tom_stat(td, OPENTOE_STAT_CONNECT_FAILS);
		goto err_l2t;
	}
	spin_lock(&td->lock);
	c->flags = TOM_CONN_HOST | TOM_CONN_DEVICE;
	spin_unlock(&td->lock);
	tom_stat(td, OPENTOE_STAT_CONNECTS);
	*tidp = tid;
	*l2t_idx = c->l2t_idx;
	return 0;

err_l2t:
	l2t_put(td, c->l2t_idx);
err_tid:
	spin_lock(&td->lock);
	xa_erase(&td->tids, tid);
	td->ntids--;
	if (!td->ntids)
		wake_up_all(&td->released);
	spin_unlock(&td->lock);
	kmem_cache_free(tom_conn_cache, c);
	return ret;
}

/* A TID for a flow to come: HOST | RESERVED, no flow, no L2T entry. */
static int tom_reserve(struct toedev *dev, unsigned int *tidp)
{
	struct tom_dev *td = TOM(dev);
	struct tom_conn *c;
	u32 tid;
	int ret;

	c = kmem_cache_zalloc(tom_conn_cache, GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->l2t_idx = TOM_L2T_NONE;
	/* flags 0 (nobody's) until it is counted */
	ret = tom_tid_take(td, c, &tid);
	if (ret) {
		kmem_cache_free(tom_conn_cache, c);
		return ret;
	}
	spin_lock(&td->lock);
	c->tid = tid;
	c->flags = TOM_CONN_HOST | TOM_CONN_RESERVED;
	td->ntids++;
	td->nreserved++;
	spin_unlock(&td->lock);
	tom_stat(td, OPENTOE_STAT_RESERVES);
	*tidp = tid;
	return 0;
}

/*
 * The flow of reserved TID @tid, as tom_connect() makes one.  While it is
 * set up its flags are 0, so neither a TID_FREE nor a second bind can touch
 * it; a detach cannot run meanwhile (toe_bind() holds tom_sem).  Refused,
 * the TID is reserved again, for the caller to give back or reuse.
 */
static int tom_bind(struct toedev *dev, unsigned int tid,
		    const struct toe_flow *flow, unsigned int *l2t_idx)
{
	struct tom_dev *td = TOM(dev);
	struct in6_addr nh;
	struct tom_conn *c;
	int ret, l2t;

	spin_lock(&td->lock);
	c = xa_load(&td->tids, tid);
	if (!c || c->flags != (TOM_CONN_HOST | TOM_CONN_RESERVED)) {
		spin_unlock(&td->lock);
		return -ENOENT;
	}
	c->flags = 0;
	td->nreserved--;
	spin_unlock(&td->lock);

	ret = tom_route(td, flow, &nh);
	if (ret) {
		tom_stat(td, OPENTOE_STAT_NO_ROUTE);
		goto err_reserved;
	}
	l2t = l2t_get(td, flow->family, &nh);
	if (l2t < 0) {
		ret = l2t;
		if (ret == -ENOSPC)
			tom_stat(td, OPENTOE_STAT_NO_L2T);
		goto err_reserved;
	}
	ret = dev->connect(dev, tid, flow, l2t);
	if (ret) {
		tom_stat(td, OPENTOE_STAT_CONNECT_FAILS);
		l2t_put(td, l2t);
		goto err_reserved;
	}
	spin_lock(&td->lock);
	c->flow = *flow;
	c->l2t_idx = l2t;
	c->flags = TOM_CONN_HOST | TOM_CONN_DEVICE;
	spin_unlock(&td->lock);
	tom_stat(td, OPENTOE_STAT_CONNECTS);
	*l2t_idx = l2t;
	return 0;

err_reserved:
	spin_lock(&td->lock);
	c->flags = TOM_CONN_HOST | TOM_CONN_RESERVED;
	td->nreserved++;
	spin_unlock(&td->lock);
	return ret;
}

/*
 * The host's hold on @c goes, under td->lock: what is left of the flags.
 * A reserved TID has no device side: nothing is left.
 */
static unsigned int tom_host_let_go(struct tom_dev *td, struct tom_conn *c)
{
	lockdep_assert_held(&td->lock);
	if (c->flags & TOM_CONN_RESERVED) {
		td->nreserved--;
		c->flags = 0;
		return 0;
	}
	c->flags &= ~TOM_CONN_HOST;
	return c->flags;
}

/* The host lets go of @tid; the device's side follows. */
static int tom_close(struct toedev *dev, unsigned int tid)
{
	struct tom_dev *td = TOM(dev);
	struct tom_conn *c;
	unsigned int left;

	spin_lock(&td->lock);
	c = xa_load(&td->tids, tid);
	if (!c || !(c->flags & TOM_CONN_HOST)) {
		spin_unlock(&td->lock);
		return -ENOENT;
	}
	left = tom_host_let_go(td, c);
	spin_unlock(&td->lock);

	tom_stat(td, OPENTOE_STAT_CLOSES);
	if (left & TOM_CONN_DEVICE)
		dev->disconnect(dev, tid);	/* -> tom_tid_released() */
	else
		tom_conn_free(td, c);
	return 0;
}

/* The device lets go of @tid. */
static void tom_tid_released(struct toedev *dev, unsigned int tid)
{
	/* rcu: toedev_tid_released() holds the read lock; tom_detach()
	 * clears tom_data and waits for a grace period before freeing td
	 */
	struct tom_dev *td = READ_ONCE(dev->tom_data);
	struct tom_conn *c;
	unsigned int left;

	if (!td) {
		/* a detach that gave up waiting freed it already */
		pr_info_ratelimited("opentoe: %s released TID %u after its TOM let go\n",
				    dev->name, tid);
		return;
	}
	spin_lock(&td->lock);
	c = xa_load(&td->tids, tid);
	if (!c || !(c->flags & TOM_CONN_DEVICE)) {
		spin_unlock(&td->lock);
		pr_warn_ratelimited("opentoe: %s released unknown TID %u\n",
				    dev->name, tid);
		return;
	}
	c->flags &= ~TOM_CONN_DEVICE;
	left = c->flags;
	spin_unlock(&td->lock);

	tom_stat(td, OPENTOE_STAT_RELEASES);
	if (!left)
		tom_conn_free(td, c);
}

/* ---- listeners ---- */

static bool listen_match(const struct toe_listener *a,
			 const struct toe_listener *b)
{
	return a->family == b->family && a->port == b->port &&
	       ipv6_addr_equal(&a->addr, &b->addr);
}

static int tom_listen_start(struct toedev *dev, const struct toe_listener *l)
{
	struct tom_dev *td = TOM(dev);
	struct tom_listen *tl;
	u32 stid;
	int ret;

	tl = kzalloc(sizeof(*tl), GFP_KERNEL);
	if (!tl)
		return -ENOMEM;
	tl->key.family = l->family;
	tl->key.port = l->port;
	tl->key.addr = l->addr;
	ret = xa_alloc(&td->stids, &stid, tl,
		       XA_LIMIT(0, td->chip->nstids - 1), GFP_KERNEL);
	if (ret == -EBUSY)
		ret = -ENOSPC;	/* every server TID is taken */
	if (ret)
		goto err_free;
	tl->stid = stid;
	ret = dev->listen_start(dev, stid, l);
	if (ret)
		goto err_erase;
	td->nlisten++;
	tom_stat(td, OPENTOE_STAT_LISTENS);
	return 0;

err_erase:
	xa_erase(&td->stids, stid);
err_free:
	kfree(tl);
	return ret;
}

static void tom_listen_drop(struct tom_dev *td, struct tom_listen *tl)
{
	td->tdev->listen_stop(td->tdev, tl->stid);
	xa_erase(&td->stids, tl->stid);
	td->nlisten--;
	kfree(tl);
}

static void tom_listen_stop(struct toedev *dev, const struct toe_listener *l)
{
	struct tom_dev *td = TOM(dev);
	struct tom_listen *tl;
	unsigned long i;

	xa_for_each(&td->stids, i, tl) {
		if (listen_match(&tl->key, l)) {
			tom_listen_drop(td, tl);
			return;
		}
	}
}

/* The first listener with server TID >= *stid, put in a message. */
static int tom_fill_listen(struct toedev *dev, unsigned long *stid,
			   struct sk_buff *skb)
{
	struct tom_dev *td = TOM(dev);
	struct tom_listen *tl;
	int ret;

	tl = xa_find(&td->stids, stid, ULONG_MAX, XA_PRESENT);
	if (!tl)
		return 0;
	if (tl->key.family == AF_INET)
		ret = nla_put_in_addr(skb, OPENTOE_A_LISTEN_ADDR4,
				      tl->key.addr.s6_addr32[3]);
	else
		ret = nla_put_in6_addr(skb, OPENTOE_A_LISTEN_ADDR6,
				       &tl->key.addr);
	if (ret ||
	    nla_put_u8(skb, OPENTOE_A_LISTEN_FAMILY, tl->key.family) ||
	    nla_put_be16(skb, OPENTOE_A_LISTEN_PORT, tl->key.port) ||
	    nla_put_u32(skb, OPENTOE_A_TID, tl->stid))
		return -EMSGSIZE;
	return 1;
}

/* ---- attach / detach ---- */

static int tom_attach(struct toedev *dev, const struct toe_id *entry)
{
	const struct tom_chip *chip = (const struct tom_chip *)entry->data;
	struct tom_dev *td;
	int ret, i;

	if (!dev->lldev || !dev->nconn)
		return -EINVAL;
	td = kzalloc(sizeof(*td), GFP_KERNEL);
	if (!td)
		return -ENOMEM;
	td->l2t = kcalloc(chip->l2t_size, sizeof(*td->l2t), GFP_KERNEL);
	if (!td->l2t) {
		kfree(td);
		return -ENOMEM;
	}
	td->tdev = dev;
	td->lldev = dev->lldev;
	td->chip = chip;
	td->l2t_size = chip->l2t_size;
	spin_lock_init(&td->lock);
	spin_lock_init(&td->l2t_lock);
	xa_init_flags(&td->tids, XA_FLAGS_ALLOC);
	xa_init_flags(&td->stids, XA_FLAGS_ALLOC);
	init_waitqueue_head(&td->released);
	for (i = 0; i < ARRAY_SIZE(td->stats); i++)
		atomic64_set(&td->stats[i], 0);

	ret = dev->open(dev);
	if (ret) {
		kfree(td->l2t);
		kfree(td);
		return ret;
	}
	dev->tom_data = td;
	spin_lock(&tom_devs_lock);
	list_add_tail_rcu(&td->list, &tom_devs);
	spin_unlock(&tom_devs_lock);
	return 0;
}

/*
 * How long a forced detach waits for the device to release its TIDs.  It
 * may run from the netdev notifier under rtnl: bounded, so a device that
 * never lets go cannot hang networking.
 */
static unsigned int detach_timeout_ms = 5000;
module_param(detach_timeout_ms, uint, 0644);
MODULE_PARM_DESC(detach_timeout_ms,
		 "forced detach: longest wait for the device's TID releases (ms)");

/*
 * ntids == 0, read under td->lock: once it is seen, the tom_conn_free()
 * that made it 0 has also left td->lock, so td may be freed.
 */
static bool tom_all_released(struct tom_dev *td)
{
	bool none;

	spin_lock(&td->lock);
	none = !td->ntids;
	spin_unlock(&td->lock);
	return none;
}

/*
 * Close every host-owned connection and wait, a bounded time
 * (detach_timeout_ms), for the device's releases.
 */
static void tom_shutdown(struct tom_dev *td)
{
	struct toedev *dev = td->tdev;
	struct tom_listen *tl;
	struct tom_conn *c;
	unsigned long i;

	xa_for_each(&td->stids, i, tl)
		tom_listen_drop(td, tl);

	for (i = 0; i < dev->nconn; i++) {
		unsigned int left;

		spin_lock(&td->lock);
		c = xa_load(&td->tids, i);
		if (!c || !(c->flags & TOM_CONN_HOST)) {
			spin_unlock(&td->lock);
			continue;
		}
		left = tom_host_let_go(td, c);
		spin_unlock(&td->lock);
		tom_stat(td, OPENTOE_STAT_CLOSES);
		if (left & TOM_CONN_DEVICE)
			dev->disconnect(dev, i);
		else
			tom_conn_free(td, c);
	}

	if (wait_event_timeout(td->released, tom_all_released(td),
			       msecs_to_jiffies(READ_ONCE(detach_timeout_ms))))
		return;
	/*
	 * The device holds TIDs past the limit: give up, so that a netdev
	 * notifier holding rtnl does not hang networking.  tom_detach() frees
	 * what is left; a late release finds no TOM (tom_tid_released()).
	 */
	spin_lock(&td->lock);
	xa_for_each(&td->tids, i, c)
		pr_warn("opentoe: %s: detach gave up after %u ms: TID %lu still held by the device (flags %#x)\n",
			dev->name, detach_timeout_ms, i, c->flags);
	spin_unlock(&td->lock);
}

/* After a shutdown that gave up: what the device never released. */
static void tom_free_left(struct tom_dev *td)
{
	struct tom_conn *c;
	unsigned long i;

	xa_for_each(&td->tids, i, c) {
		xa_erase(&td->tids, i);
		kmem_cache_free(tom_conn_cache, c);
	}
}

static int tom_detach(struct toedev *dev, bool force)
{
	struct tom_dev *td = TOM(dev);

	if (!force) {
		bool busy;

		spin_lock(&td->lock);
		busy = td->ntids != td->nreserved || td->nlisten;
		spin_unlock(&td->lock);
		if (busy)
			return -EBUSY;
	}
	/* forced: closes everything; else only reserved TIDs are left */
	tom_shutdown(td);

	spin_lock(&tom_devs_lock);
	list_del_rcu(&td->list);
	spin_unlock(&tom_devs_lock);
	WRITE_ONCE(dev->tom_data, NULL);
	/* the netevent notifier and tom_tid_released() are done with td */
	synchronize_rcu();

	dev->close(dev);
	tom_free_left(td);
	xa_destroy(&td->tids);
	xa_destroy(&td->stids);
	kfree(td->l2t);
	kfree(td);
	dev->tom_data = NULL;
	return 0;
}

/* ---- netlink ---- */

static int tom_fill_dev(struct toedev *dev, struct sk_buff *skb)
{
	struct tom_dev *td = TOM(dev);
	unsigned int ntids, nreserved, l2t_used = 0;
	struct nlattr *nest;
	int i;

	spin_lock(&td->lock);
	ntids = td->ntids;
	nreserved = td->nreserved;
	spin_unlock(&td->lock);
	spin_lock_bh(&td->l2t_lock);
	for (i = 0; i < td->l2t_size; i++)
		l2t_used += !!td->l2t[i].refcnt;
	spin_unlock_bh(&td->l2t_lock);

	if (nla_put_u32(skb, OPENTOE_A_DEV_TIDS_USED, ntids - nreserved) ||
	    nla_put_u32(skb, OPENTOE_A_DEV_TIDS_RESERVED, nreserved) ||
	    nla_put_u32(skb, OPENTOE_A_DEV_LISTENERS, td->nlisten) ||
	    nla_put_u32(skb, OPENTOE_A_DEV_L2T_SIZE, td->l2t_size) ||
	    nla_put_u32(skb, OPENTOE_A_DEV_L2T_USED, l2t_used))
		return -EMSGSIZE;
	nest = nla_nest_start(skb, OPENTOE_A_DEV_STATS);
	if (!nest)
		return -EMSGSIZE;
	for (i = OPENTOE_STAT_CONNECTS; i <= OPENTOE_STAT_MAX; i++)
		if (nla_put_u64_64bit(skb, i, atomic64_read(&td->stats[i]),
				      OPENTOE_STAT_PAD)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
	nla_nest_end(skb, nest);
	return 0;
}

static int tom_fill_l2t(struct toedev *dev, unsigned int idx,
			struct sk_buff *skb)
{
	struct tom_dev *td = TOM(dev);
	struct tom_l2e e;
	int ret;

	if (idx >= td->l2t_size)
		return 0;
	spin_lock_bh(&td->l2t_lock);
	e = td->l2t[idx];
	spin_unlock_bh(&td->l2t_lock);
	if (!e.refcnt)
		return 0;

	if (e.family == AF_INET)
		ret = nla_put_in_addr(skb, OPENTOE_A_L2T_ADDR4,
				      e.addr.s6_addr32[3]);
	else
		ret = nla_put_in6_addr(skb, OPENTOE_A_L2T_ADDR6, &e.addr);
	if (ret ||
	    nla_put_u32(skb, OPENTOE_A_L2T_INDEX, idx) ||
	    nla_put_u32(skb, OPENTOE_A_L2T_IFINDEX, td->lldev->ifindex) ||
	    nla_put_u16(skb, OPENTOE_A_L2T_STATE, e.state) ||
	    nla_put_u32(skb, OPENTOE_A_L2T_REFCNT, e.refcnt))
		return -EMSGSIZE;
	if ((e.state & NUD_VALID) &&
	    nla_put(skb, OPENTOE_A_L2T_LLADDR, ETH_ALEN, e.lladdr))
		return -EMSGSIZE;
	return 1;
}

static unsigned int tom_l2t_size(struct toedev *dev)
{
	return TOM(dev)->l2t_size;
}

static int tom_fill_tid(struct toedev *dev, unsigned long *tid,
			struct sk_buff *skb)
{
	struct tom_dev *td = TOM(dev);
	unsigned int state = 0;
	struct tom_conn *c, conn;
	int ret;

	spin_lock(&td->lock);
	c = xa_find(&td->tids, tid, dev->nconn - 1, XA_PRESENT);
	if (c)
		conn = *c;
	spin_unlock(&td->lock);
	if (!c)
		return 0;

	if (conn.flags & TOM_CONN_HOST)
		state |= OPENTOE_TID_F_HOST;
	if (conn.flags & TOM_CONN_DEVICE)
		state |= OPENTOE_TID_F_DEVICE;
	if (conn.flags & TOM_CONN_RESERVED)
		state |= OPENTOE_TID_F_RESERVED;
	if (!conn.flow.family || conn.l2t_idx == TOM_L2T_NONE) {
		/* reserved, or being bound: no flow to show yet */
		if (nla_put_u32(skb, OPENTOE_A_TID, conn.tid) ||
		    nla_put_u32(skb, OPENTOE_A_TID_STATE, state))
			return -EMSGSIZE;
		return 1;
	}
	if (conn.flow.family == AF_INET)
		ret = nla_put_in_addr(skb, OPENTOE_A_FLOW_SADDR4,
				      conn.flow.saddr.s6_addr32[3]) ||
		      nla_put_in_addr(skb, OPENTOE_A_FLOW_DADDR4,
				      conn.flow.daddr.s6_addr32[3]);
	else
		ret = nla_put_in6_addr(skb, OPENTOE_A_FLOW_SADDR6,
				       &conn.flow.saddr) ||
		      nla_put_in6_addr(skb, OPENTOE_A_FLOW_DADDR6,
				       &conn.flow.daddr);
	if (ret ||
	    nla_put_u32(skb, OPENTOE_A_TID, conn.tid) ||
	    nla_put_u32(skb, OPENTOE_A_TID_STATE, state) ||
	    nla_put_u32(skb, OPENTOE_A_L2T_INDEX, conn.l2t_idx) ||
	    nla_put_be16(skb, OPENTOE_A_FLOW_SPORT, conn.flow.sport) ||
	    nla_put_be16(skb, OPENTOE_A_FLOW_DPORT, conn.flow.dport))
		return -EMSGSIZE;
	return 1;
}

static struct tom_info chelsio_tom = {
	.name		= "chelsio_tom",
	.id_table	= chelsio_ids,
	.attach		= tom_attach,
	.detach		= tom_detach,
	.can_offload	= tom_can_offload,
	.connect	= tom_connect,
	.close		= tom_close,
	.reserve	= tom_reserve,
	.bind		= tom_bind,
	.tid_released	= tom_tid_released,
	.listen_start	= tom_listen_start,
	.listen_stop	= tom_listen_stop,
	.fill_dev	= tom_fill_dev,
	.fill_l2t	= tom_fill_l2t,
	.l2t_size	= tom_l2t_size,
	.fill_tid	= tom_fill_tid,
	.fill_listen	= tom_fill_listen,
};

int chelsio_tom_init(void)
{
	int ret;

	tom_conn_cache = kmem_cache_create("opentoe_conn",
					   sizeof(struct tom_conn), 0, 0,
					   NULL);
	if (!tom_conn_cache)
		return -ENOMEM;
	ret = register_netevent_notifier(&tom_netevent_nb);
	if (ret)
		goto err_cache;
	ret = register_tom(&chelsio_tom);
	if (ret)
		goto err_netevent;
	return 0;

err_netevent:
	unregister_netevent_notifier(&tom_netevent_nb);
err_cache:
	kmem_cache_destroy(tom_conn_cache);
	return ret;
}

void chelsio_tom_exit(void)
{
	unregister_tom(&chelsio_tom);
	unregister_netevent_notifier(&tom_netevent_nb);
	/* reports (and warns about) connections leaked */
	kmem_cache_destroy(tom_conn_cache);
}
