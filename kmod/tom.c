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
 *
 * Its parts share tom.h: this file (chip table, attach and detach, DEV_GET,
 * registration), tom_conn.c (connections and their TIDs), tom_listen.c
 * (listeners) and tom_l2t.c (routes, the L2T, the netevent notifier).
 */
#include <linux/module.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <net/netevent.h>
#include <net/netlink.h>

#include "tom.h"
#include "trace.h"

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
 * Attached devices, for the netevent notifier.  Writers hold
 * tom_devs_lock; the notifier walks it under RCU.
 */
DEFINE_SPINLOCK(tom_devs_lock);
LIST_HEAD(tom_devs);
struct kmem_cache *tom_conn_cache;

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
MODULE_PARM_DESC(
	detach_timeout_ms,
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

	xa_for_each(&td->stids, i, tl) tom_listen_drop(td, tl);

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
		trace_tid_free(dev, i, left & TOM_CONN_DEVICE);
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
	xa_for_each(&td->tids, i, c) pr_warn(
		"opentoe: %s: detach gave up after %u ms: TID %lu still held by the device (flags %#x)\n",
		dev->name, detach_timeout_ms, i, c->flags);
	spin_unlock(&td->lock);
}

/* After a shutdown that gave up: what the device never released. */
static void tom_free_left(struct tom_dev *td)
{
	struct tom_conn *c;
	unsigned long i;

	xa_for_each(&td->tids, i, c)
	{
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

/* ---- DEV_GET ---- */

static int tom_fill_dev(struct toedev *dev, struct sk_buff *skb)
{
	struct tom_dev *td = TOM(dev);
	unsigned int ntids, nreserved, nhost, l2t_used = 0;
	struct nlattr *nest;
	int i;

	spin_lock(&td->lock);
	ntids = td->ntids;
	nreserved = td->nreserved;
	nhost = td->nhost;
	spin_unlock(&td->lock);
	spin_lock_bh(&td->l2t_lock);
	for (i = 0; i < td->l2t_size; i++)
		l2t_used += !!td->l2t[i].refcnt;
	spin_unlock_bh(&td->l2t_lock);

	if (nla_put_u32(skb, OPENTOE_A_DEV_TIDS_USED, ntids - nreserved) ||
	    nla_put_u32(skb, OPENTOE_A_DEV_TIDS_RESERVED, nreserved) ||
	    nla_put_u32(skb, OPENTOE_A_DEV_TIDS_HOST, nhost) ||
	    nla_put_u32(skb, OPENTOE_A_DEV_LISTENERS, td->nlisten) ||
	    nla_put_u32(skb, OPENTOE_A_DEV_STIDS_RESERVED,
			td->nstid_reserved) ||
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

static struct tom_info chelsio_tom = {
	.name = "chelsio_tom",
	.id_table = chelsio_ids,
	.attach = tom_attach,
	.detach = tom_detach,
	.can_offload = tom_can_offload,
	.connect = tom_connect,
	.close = tom_close,
	.reserve = tom_reserve,
	.bind = tom_bind,
	.tid_released = tom_tid_released,
	.listen_start = tom_listen_start,
	.listen_stop = tom_listen_stop,
	.reserve_stid = tom_stid_reserve,
	.free_stid = tom_stid_free,
	.fill_dev = tom_fill_dev,
	.fill_l2t = tom_fill_l2t,
	.l2t_size = tom_l2t_size,
	.fill_tid = tom_fill_tid,
	.fill_listen = tom_fill_listen,
};

int chelsio_tom_init(void)
{
	int ret;

	tom_conn_cache = kmem_cache_create("opentoe_conn",
					   sizeof(struct tom_conn), 0, 0, NULL);
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
