// SPDX-License-Identifier: GPL-2.0
/*
 * opentoe: the Chelsio TOM's routes and L2 table (L2T) of next hops,
 * filled from the neighbour table and kept in sync by the netevent notifier
 * (NETEVENT_NEIGH_UPDATE) instead of hooks patched into neighbour.c.
 */
#include <linux/rculist.h>
#include <linux/spinlock.h>
#include <net/arp.h>
#include <net/ip6_route.h>
#include <net/ndisc.h>
#include <net/neighbour.h>
#include <net/netevent.h>
#include <net/netlink.h>
#include <net/route.h>

#include "tom.h"
#include "trace.h"

/* The next hop of @flow if its route leaves through the lower device. */
int tom_route(struct tom_dev *td, const struct toe_flow *flow,
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
		if (rt->dst.dev != td->lldev || rt->rt_type != RTN_UNICAST) {
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
			*nh = *rt6_nexthop((struct rt6_info *)dst,
					   &flow->daddr);
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
int tom_l2t_get(struct tom_dev *td, u8 family, const struct in6_addr *nh)
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
		trace_l2t_update(td->tdev, idx, family, nh, e->lladdr,
				 e->state);
	}
	spin_unlock_bh(&td->l2t_lock);

	if (idx >= 0 && !(READ_ONCE(n->nud_state) & NUD_VALID))
		neigh_event_send(n, NULL); /* start resolving it */
	neigh_release(n);
	return idx >= 0 ? idx : -ENOSPC;
}

void tom_l2t_put(struct tom_dev *td, unsigned int idx)
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
			trace_l2t_update(td->tdev, i, family, &addr, e->lladdr,
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

struct notifier_block tom_netevent_nb = {
	.notifier_call = tom_netevent,
};

int tom_fill_l2t(struct toedev *dev, unsigned int idx, struct sk_buff *skb)
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
	if (ret || nla_put_u32(skb, OPENTOE_A_L2T_INDEX, idx) ||
	    nla_put_u32(skb, OPENTOE_A_L2T_IFINDEX, td->lldev->ifindex) ||
	    nla_put_u16(skb, OPENTOE_A_L2T_STATE, e.state) ||
	    nla_put_u32(skb, OPENTOE_A_L2T_REFCNT, e.refcnt))
		return -EMSGSIZE;
	if ((e.state & NUD_VALID) &&
	    nla_put(skb, OPENTOE_A_L2T_LLADDR, ETH_ALEN, e.lladdr))
		return -EMSGSIZE;
	return 1;
}

unsigned int tom_l2t_size(struct toedev *dev)
{
	return TOM(dev)->l2t_size;
}
