// SPDX-License-Identifier: GPL-2.0
/*
 * opentoe: the Chelsio TOM's connections and their TIDs, bounded by the
 * device's nconn.  Each connection is owned by the host and by the device
 * (two flags, as FreeBSD's cxgbe TOM does) and is freed when the last
 * owner lets go; a reserved TID waits for the flow the datapath binds it to.
 */
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <net/netlink.h>

#include "tom.h"
#include "trace.h"

int tom_can_offload(struct toedev *dev, const struct toe_flow *flow)
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
void tom_conn_free(struct tom_dev *td, struct tom_conn *c)
{
	if (c->l2t_idx != TOM_L2T_NONE)
		tom_l2t_put(td, c->l2t_idx);
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
	int ret = xa_alloc(&td->tids, tid, c, XA_LIMIT(0, td->tdev->nconn - 1),
			   GFP_KERNEL);

	if (ret == -EBUSY) {
		tom_stat(td, OPENTOE_STAT_NO_TID);
		ret = -ENOSPC;
	}
	return ret;
}

int tom_connect(struct toedev *dev, const struct toe_flow *flow,
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

	ret = tom_l2t_get(td, flow->family, &nh);
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
	td->nhost++;
	spin_unlock(&td->lock);
	tom_stat(td, OPENTOE_STAT_CONNECTS);
	trace_tid_bind(dev, tid, flow, c->l2t_idx, 0);
	*tidp = tid;
	*l2t_idx = c->l2t_idx;
	return 0;

err_l2t:
	tom_l2t_put(td, c->l2t_idx);
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
int tom_reserve(struct toedev *dev, unsigned int *tidp)
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
	td->nhost++;
	spin_unlock(&td->lock);
	tom_stat(td, OPENTOE_STAT_RESERVES);
	trace_tid_reserve(dev, tid);
	*tidp = tid;
	return 0;
}

/*
 * The flow of reserved TID @tid, as tom_connect() makes one.  While it is
 * set up its flags are 0, so neither a TID_FREE nor a second bind can touch
 * it; a detach cannot run meanwhile (toe_bind() holds tom_sem).  Refused,
 * the TID is reserved again, for the caller to give back or reuse.
 */
int tom_bind(struct toedev *dev, unsigned int tid, const struct toe_flow *flow,
	     unsigned int *l2t_idx)
{
	struct tom_dev *td = TOM(dev);
	struct in6_addr nh;
	struct tom_conn *c;
	int ret, l2t;

	spin_lock(&td->lock);
	c = xa_load(&td->tids, tid);
	if (!c || c->flags != (TOM_CONN_HOST | TOM_CONN_RESERVED)) {
		spin_unlock(&td->lock);
		trace_tid_bind(dev, tid, flow, -1, -ENOENT);
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
	l2t = tom_l2t_get(td, flow->family, &nh);
	if (l2t < 0) {
		ret = l2t;
		if (ret == -ENOSPC)
			tom_stat(td, OPENTOE_STAT_NO_L2T);
		goto err_reserved;
	}
	ret = dev->connect(dev, tid, flow, l2t);
	if (ret) {
		tom_stat(td, OPENTOE_STAT_CONNECT_FAILS);
		tom_l2t_put(td, l2t);
		goto err_reserved;
	}
	spin_lock(&td->lock);
	c->flow = *flow;
	c->l2t_idx = l2t;
	c->flags = TOM_CONN_HOST | TOM_CONN_DEVICE;
	spin_unlock(&td->lock);
	tom_stat(td, OPENTOE_STAT_CONNECTS);
	trace_tid_bind(dev, tid, flow, l2t, 0);
	*l2t_idx = l2t;
	return 0;

err_reserved:
	spin_lock(&td->lock);
	c->flags = TOM_CONN_HOST | TOM_CONN_RESERVED;
	td->nreserved++;
	spin_unlock(&td->lock);
	trace_tid_bind(dev, tid, flow, -1, ret);
	return ret;
}

/*
 * The host's hold on @c goes, under td->lock: what is left of the flags.
 * A reserved TID has no device side: nothing is left.
 */
unsigned int tom_host_let_go(struct tom_dev *td, struct tom_conn *c)
{
	lockdep_assert_held(&td->lock);
	td->nhost--;
	if (c->flags & TOM_CONN_RESERVED) {
		td->nreserved--;
		c->flags = 0;
		return 0;
	}
	c->flags &= ~TOM_CONN_HOST;
	return c->flags;
}

/* The host lets go of @tid; the device's side follows. */
int tom_close(struct toedev *dev, unsigned int tid)
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
	trace_tid_free(dev, tid, left & TOM_CONN_DEVICE);
	if (left & TOM_CONN_DEVICE)
		dev->disconnect(dev, tid); /* -> tom_tid_released() */
	else
		tom_conn_free(td, c);
	return 0;
}

/* The device lets go of @tid. */
void tom_tid_released(struct toedev *dev, unsigned int tid)
{
	/* rcu: toedev_tid_released() holds the read lock; tom_detach()
	 * clears tom_data and waits for a grace period before freeing td
	 */
	struct tom_dev *td = READ_ONCE(dev->tom_data);
	struct tom_conn *c;
	unsigned int left;

	if (!td) {
		/* a detach that gave up waiting freed it already */
		pr_info_ratelimited(
			"opentoe: %s released TID %u after its TOM let go\n",
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
	trace_tid_release(dev, tid);
	if (!left)
		tom_conn_free(td, c);
}

int tom_fill_tid(struct toedev *dev, unsigned long *tid, struct sk_buff *skb)
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
	if (ret || nla_put_u32(skb, OPENTOE_A_TID, conn.tid) ||
	    nla_put_u32(skb, OPENTOE_A_TID_STATE, state) ||
	    nla_put_u32(skb, OPENTOE_A_L2T_INDEX, conn.l2t_idx) ||
	    nla_put_be16(skb, OPENTOE_A_FLOW_SPORT, conn.flow.sport) ||
	    nla_put_be16(skb, OPENTOE_A_FLOW_DPORT, conn.flow.dport))
		return -EMSGSIZE;
	return 1;
}
