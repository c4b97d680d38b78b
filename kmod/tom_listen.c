// SPDX-License-Identifier: GPL-2.0
/*
 * opentoe: the Chelsio TOM's listeners, each on a server TID (stid) of the
 * chip's table.
 */
#include <linux/slab.h>
#include <linux/xarray.h>
#include <net/ipv6.h>
#include <net/netlink.h>

#include "tom.h"
#include "trace.h"

static bool listen_match(const struct toe_listener *a,
			 const struct toe_listener *b)
{
	return a->family == b->family && a->port == b->port &&
	       ipv6_addr_equal(&a->addr, &b->addr);
}

/* Listener @l on the server TID it reserved (l->has_stid): 0 or -errno. */
static int tom_listen_take(struct toedev *dev, const struct toe_listener *l)
{
	struct tom_dev *td = TOM(dev);
	struct tom_listen *tl = xa_load(&td->stids, l->stid);
	int ret;

	if (!tl || !tl->reserved) {
		ret = -ENOENT;
		goto out;
	}
	ret = dev->listen_start(dev, l->stid, l);
	if (ret)
		goto out; /* refused: reserved still */
	tl->key.family = l->family;
	tl->key.port = l->port;
	tl->key.addr = l->addr;
	tl->reserved = false;
	td->nstid_reserved--;
	td->nlisten++;
	tom_stat(td, OPENTOE_STAT_LISTENS);
out:
	trace_listen_start(dev, ret ? -1 : (int)l->stid, l->family, &l->addr,
			   l->port, ret);
	return ret;
}

int tom_listen_start(struct toedev *dev, const struct toe_listener *l)
{
	struct tom_dev *td = TOM(dev);
	struct tom_listen *tl;
	u32 stid;
	int ret;

	if (l->has_stid)
		return tom_listen_take(dev, l);
	tl = kzalloc(sizeof(*tl), GFP_KERNEL);
	if (!tl)
		return -ENOMEM;
	tl->key.family = l->family;
	tl->key.port = l->port;
	tl->key.addr = l->addr;
	ret = xa_alloc(&td->stids, &stid, tl, XA_LIMIT(0, td->chip->nstids - 1),
		       GFP_KERNEL);
	if (ret == -EBUSY)
		ret = -ENOSPC; /* every server TID is taken */
	if (ret)
		goto err_free;
	tl->stid = stid;
	ret = dev->listen_start(dev, stid, l);
	if (ret)
		goto err_erase;
	td->nlisten++;
	tom_stat(td, OPENTOE_STAT_LISTENS);
	trace_listen_start(dev, stid, l->family, &l->addr, l->port, 0);
	return 0;

err_erase:
	xa_erase(&td->stids, stid);
err_free:
	kfree(tl);
	trace_listen_start(dev, -1, l->family, &l->addr, l->port, ret);
	return ret;
}

/* A listener, or a reserved server TID, goes with its server TID. */
void tom_listen_drop(struct tom_dev *td, struct tom_listen *tl)
{
	if (tl->reserved) {
		td->nstid_reserved--;
		trace_stid_free(td->tdev, tl->stid);
	} else {
		td->tdev->listen_stop(td->tdev, tl->stid);
		td->nlisten--;
		trace_listen_stop(td->tdev, tl->stid, tl->key.family,
				  &tl->key.addr, tl->key.port, 0);
	}
	xa_erase(&td->stids, tl->stid);
	kfree(tl);
}

void tom_listen_stop(struct toedev *dev, const struct toe_listener *l)
{
	struct tom_dev *td = TOM(dev);
	struct tom_listen *tl;
	unsigned long i;

	xa_for_each(&td->stids, i, tl)
	{
		if (!tl->reserved && listen_match(&tl->key, l)) {
			tom_listen_drop(td, tl);
			return;
		}
	}
}

/* A server TID for a listener to come: 0, or -ENOSPC when none is free. */
int tom_stid_reserve(struct toedev *dev, unsigned int *stidp)
{
	struct tom_dev *td = TOM(dev);
	struct tom_listen *tl;
	u32 stid;
	int ret;

	tl = kzalloc(sizeof(*tl), GFP_KERNEL);
	if (!tl)
		return -ENOMEM;
	tl->reserved = true;
	ret = xa_alloc(&td->stids, &stid, tl, XA_LIMIT(0, td->chip->nstids - 1),
		       GFP_KERNEL);
	if (ret) {
		kfree(tl);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	tl->stid = stid;
	td->nstid_reserved++;
	trace_stid_reserve(dev, stid);
	*stidp = stid;
	return 0;
}

/* A reserved server TID given back unused; -ENOENT if it is not one. */
int tom_stid_free(struct toedev *dev, unsigned int stid)
{
	struct tom_dev *td = TOM(dev);
	struct tom_listen *tl = xa_load(&td->stids, stid);

	if (!tl || !tl->reserved)
		return -ENOENT;
	tom_listen_drop(td, tl);
	return 0;
}

/*
 * The first listener with server TID >= *stid, put in a message; with
 * @reserved, the first server TID reserved for a listener to come
 * (TID_STATE HOST | RESERVED, no address: a daemon finds those no
 * listener took).
 */
int tom_fill_listen(struct toedev *dev, unsigned long *stid,
		    struct sk_buff *skb, bool reserved)
{
	struct tom_dev *td = TOM(dev);
	struct tom_listen *tl;
	int ret;

	tl = xa_find(&td->stids, stid, ULONG_MAX, XA_PRESENT);
	while (tl && tl->reserved != reserved)
		tl = xa_find_after(&td->stids, stid, ULONG_MAX, XA_PRESENT);
	if (!tl)
		return 0;
	if (reserved) {
		if (nla_put_u32(skb, OPENTOE_A_TID, tl->stid) ||
		    nla_put_u32(skb, OPENTOE_A_TID_STATE,
				OPENTOE_TID_F_HOST | OPENTOE_TID_F_RESERVED))
			return -EMSGSIZE;
		return 1;
	}
	if (tl->key.family == AF_INET)
		ret = nla_put_in_addr(skb, OPENTOE_A_LISTEN_ADDR4,
				      tl->key.addr.s6_addr32[3]);
	else
		ret = nla_put_in6_addr(skb, OPENTOE_A_LISTEN_ADDR6,
				       &tl->key.addr);
	if (ret || nla_put_u8(skb, OPENTOE_A_LISTEN_FAMILY, tl->key.family) ||
	    nla_put_be16(skb, OPENTOE_A_LISTEN_PORT, tl->key.port) ||
	    nla_put_u32(skb, OPENTOE_A_TID, tl->stid))
		return -EMSGSIZE;
	return 1;
}
