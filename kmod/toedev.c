// SPDX-License-Identifier: GPL-2.0
/*
 * opentoe: TOE device registry.
 *
 * The 2005 patch's net/core/toedev.c with what it left open fixed:
 *  - a mutex instead of the semaphore, RCU lookups by index, reference
 *    counts that make unregister_toedev() wait for its users;
 *  - name templates validated (at most one %d) and expanded without limit
 *    of 32, unique indexes from a cyclic IDR (30 bits, as in the patch);
 *  - default methods, so that callers never test a pointer (FreeBSD's
 *    toecore), and listeners replayed to a device attached late;
 *  - TOM detach refused (EBUSY) while it has work, forced on unregister;
 *  - the lower net_device is tracked and let go when it unregisters;
 *  - /proc/net/toe/devices per network namespace, removed on unload.
 */
#include <linux/ctype.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/proc_fs.h>
#include <linux/rculist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>

#include "toedev.h"
#include "trace.h"

/*
 * toedev_mutex protects: toedev_list, writes to toedev_idr, tom_list and
 * tom_info::ndevs, toe_listeners, a device's TOEDEV_F_REGISTERED flag,
 * lldev and net, and the attach state (taken before tom_sem).
 * Never held while taking rtnl_lock (the netdevice notifier takes it
 * with rtnl held).
 */
static DEFINE_MUTEX(toedev_mutex);
static LIST_HEAD(toedev_list);
static LIST_HEAD(tom_list);
static LIST_HEAD(toe_listeners);
/* index -> device; RCU readers, writers hold toedev_mutex */
static DEFINE_IDR(toedev_idr);

/* ---- defaults: the TOM of a device without one ---- */

static int null_attach(struct toedev *dev, const struct toe_id *entry)
{
	return -ENOPROTOOPT;
}

static int null_detach(struct toedev *dev, bool force)
{
	return 0;
}

static int null_can_offload(struct toedev *dev, const struct toe_flow *flow)
{
	return -ENOPROTOOPT;
}

static int null_connect(struct toedev *dev, const struct toe_flow *flow,
			unsigned int *tid, unsigned int *l2t_idx)
{
	return -ENOPROTOOPT;
}

static int null_close(struct toedev *dev, unsigned int tid)
{
	return -ENOENT;
}

static int null_reserve(struct toedev *dev, unsigned int *tid)
{
	return -ENOPROTOOPT;
}

static int null_bind(struct toedev *dev, unsigned int tid,
		     const struct toe_flow *flow, unsigned int *l2t_idx)
{
	return -ENOPROTOOPT;
}

static void null_tid_released(struct toedev *dev, unsigned int tid)
{
}

static int null_listen_start(struct toedev *dev, const struct toe_listener *l)
{
	return 0;
}

static void null_listen_stop(struct toedev *dev, const struct toe_listener *l)
{
}

static int null_reserve_stid(struct toedev *dev, unsigned int *stid)
{
	return -ENOPROTOOPT;
}

static int null_free_stid(struct toedev *dev, unsigned int stid)
{
	return -ENOENT;
}

static int null_fill_dev(struct toedev *dev, struct sk_buff *skb)
{
	return 0;
}

static int null_fill_l2t(struct toedev *dev, unsigned int idx,
			 struct sk_buff *skb)
{
	return 0;
}

static unsigned int null_l2t_size(struct toedev *dev)
{
	return 0;
}

static int null_fill_tid(struct toedev *dev, unsigned long *tid,
			 struct sk_buff *skb)
{
	return 0;
}

static int null_fill_listen(struct toedev *dev, unsigned long *stid,
			    struct sk_buff *skb, bool reserved)
{
	return 0;
}

const struct tom_info toe_null_tom = {
	.name = "<None>",
	.attach = null_attach,
	.detach = null_detach,
	.can_offload = null_can_offload,
	.connect = null_connect,
	.close = null_close,
	.reserve = null_reserve,
	.bind = null_bind,
	.tid_released = null_tid_released,
	.listen_start = null_listen_start,
	.listen_stop = null_listen_stop,
	.reserve_stid = null_reserve_stid,
	.free_stid = null_free_stid,
	.fill_dev = null_fill_dev,
	.fill_l2t = null_fill_l2t,
	.l2t_size = null_l2t_size,
	.fill_tid = null_fill_tid,
	.fill_listen = null_fill_listen,
};

/* ---- defaults: device methods a driver did not fill ---- */

static int def_open(struct toedev *dev)
{
	return 0;
}

static int def_can_offload(struct toedev *dev, const struct toe_flow *flow)
{
	return 0;
}

static int def_connect(struct toedev *dev, unsigned int tid,
		       const struct toe_flow *flow, unsigned int l2t_idx)
{
	return -EOPNOTSUPP;
}

static void def_disconnect(struct toedev *dev, unsigned int tid)
{
	/* nothing held on the device side: release at once */
	toedev_tid_released(dev, tid);
}

static int def_listen_start(struct toedev *dev, unsigned int stid,
			    const struct toe_listener *l)
{
	return 0;
}

static void def_listen_stop(struct toedev *dev, unsigned int stid)
{
}

static void def_neigh_update(struct toedev *dev, unsigned int l2t_idx,
			     const u8 *lladdr, u16 nud_state)
{
}

static int def_ctl(struct toedev *dev, unsigned int req, void *data)
{
	return -EOPNOTSUPP;
}

static void toedev_fill_defaults(struct toedev *dev)
{
	if (!dev->open)
		dev->open = def_open;
	if (!dev->close)
		dev->close = def_open;
	if (!dev->can_offload)
		dev->can_offload = def_can_offload;
	if (!dev->connect)
		dev->connect = def_connect;
	if (!dev->disconnect)
		dev->disconnect = def_disconnect;
	if (!dev->listen_start)
		dev->listen_start = def_listen_start;
	if (!dev->listen_stop)
		dev->listen_stop = def_listen_stop;
	if (!dev->neigh_update)
		dev->neigh_update = def_neigh_update;
	if (!dev->ctl)
		dev->ctl = def_ctl;
}

/* ---- lookups ---- */

static const struct toe_id *id_find(unsigned int id, const struct toe_id *table)
{
	const struct toe_id *p;

	for (p = table; p && p->id; ++p)
		if (p->id == id)
			return p;
	return NULL;
}

/* The namespace a device is seen in: its lower device's, else init_net. */
struct net *toedev_net(const struct toedev *dev)
{
	return READ_ONCE(dev->net);
}

void toedev_put(struct toedev *dev)
{
	if (refcount_dec_and_test(&dev->refcnt))
		complete(&dev->released);
}

/* A reference to device @index if it is seen in @net, else NULL. */
struct toedev *toedev_get_by_index(struct net *net, int index)
{
	struct toedev *dev;

	rcu_read_lock();
	dev = idr_find(&toedev_idr, index);
	if (dev && !refcount_inc_not_zero(&dev->refcnt))
		dev = NULL;
	rcu_read_unlock();
	if (dev && !net_eq(toedev_net(dev), net)) {
		toedev_put(dev);
		dev = NULL;
	}
	return dev;
}

/* The first device seen in @net with index >= *index, referenced. */
struct toedev *toedev_get_next(struct net *net, int *index)
{
	struct toedev *dev;
	int id = *index;

	rcu_read_lock();
	for (;;) {
		dev = idr_get_next(&toedev_idr, &id);
		if (!dev)
			break;
		if (net_eq(toedev_net(dev), net) &&
		    refcount_inc_not_zero(&dev->refcnt))
			break;
		id++;
	}
	rcu_read_unlock();
	*index = id;
	return dev;
}

static struct toedev *__find_toedev_by_name(const char *name)
{
	struct toedev *dev;

	lockdep_assert_held(&toedev_mutex);
	list_for_each_entry(dev, &toedev_list, toe_list)
		if (!strncmp(dev->name, name, TOENAMSIZ))
			return dev;
	return NULL;
}

/* ---- attach / detach (toedev_mutex held) ---- */

static void toedev_replay_listeners(struct toedev *dev)
{
	struct net *net = toedev_net(dev);
	struct toe_listener *l;

	lockdep_assert_held(&toedev_mutex);
	list_for_each_entry(l, &toe_listeners, list)
		if (net_eq(l->net, net) &&
		    (!l->dev_index || l->dev_index == dev->toe_index))
			dev->offload_mod->listen_start(dev, l);
}

/* The device's TOM went: the listeners asked of that device alone go too. */
static void toedev_drop_listeners(struct toedev *dev)
{
	struct toe_listener *l, *tmp;

	lockdep_assert_held(&toedev_mutex);
	list_for_each_entry_safe(l, tmp, &toe_listeners, list) {
		if (l->dev_index == dev->toe_index) {
			list_del(&l->list);
			kfree(l);
		}
	}
}

static int toedev_attach(struct toedev *dev)
{
	struct tom_info *t;
	int ret = -ENOPROTOOPT;

	lockdep_assert_held(&toedev_mutex);
	if (toedev_attached(dev))
		return -EALREADY;
	list_for_each_entry(t, &tom_list, list_node) {
		const struct toe_id *entry = id_find(dev->ttid, t->id_table);

		if (!entry)
			continue;
		down_write(&dev->tom_sem);
		ret = t->attach(dev, entry);
		if (!ret) {
			dev->offload_mod = t;
			t->ndevs++;
			toedev_replay_listeners(dev);
		}
		up_write(&dev->tom_sem);
		if (!ret) {
			opentoe_notify_dev(dev, OPENTOE_CMD_DEV_CHANGE_NTF);
			return 0;
		}
	}
	return ret;
}

static int toedev_detach(struct toedev *dev, bool force)
{
	struct tom_info *t;
	int ret;

	lockdep_assert_held(&toedev_mutex);
	if (!toedev_attached(dev))
		return -ENOTCONN;
	down_write(&dev->tom_sem);
	/* cast: the TOM was registered non-const, see register_tom() */
	t = (struct tom_info *)dev->offload_mod;
	ret = t->detach(dev, force);
	if (!ret || force) {
		dev->offload_mod = &toe_null_tom;
		dev->tom_data = NULL;
		t->ndevs--;
		ret = 0;
	}
	up_write(&dev->tom_sem);
	if (!ret)
		toedev_drop_listeners(dev);
	if (!ret)
		opentoe_notify_dev(dev, OPENTOE_CMD_DEV_CHANGE_NTF);
	return ret;
}

/* ---- device registration ---- */

struct toedev *alloc_toedev(void)
{
	struct toedev *dev = kzalloc(sizeof(*dev), GFP_KERNEL);

	if (!dev)
		return NULL;
	INIT_LIST_HEAD(&dev->toe_list);
	init_rwsem(&dev->tom_sem);
	dev->offload_mod = &toe_null_tom;
	dev->net = &init_net;
	init_completion(&dev->released);
	return dev;
}
EXPORT_SYMBOL_GPL(alloc_toedev);

/* Frees a device that is not (or no longer) registered. */
void free_toedev(struct toedev *dev)
{
	if (!dev)
		return;
	WARN_ON(test_bit(TOEDEV_F_REGISTERED, &dev->flags));
	toe_set_lldev(dev, NULL);
	/* idr_find() readers may still look at it: wait a grace period */
	kfree_rcu(dev, rcu);
}
EXPORT_SYMBOL_GPL(free_toedev);

/*
 * Set the link-layer device of an unregistered TOE device (registered
 * devices lose theirs only when it unregisters).
 */
void toe_set_lldev(struct toedev *dev, struct net_device *lldev)
{
	struct net_device *old = dev->lldev;

	if (old == lldev)
		return;
	if (old)
		netdev_put(old, &dev->lldev_tracker);
	if (lldev)
		netdev_hold(lldev, &dev->lldev_tracker, GFP_KERNEL);
	WRITE_ONCE(dev->lldev, lldev);
	WRITE_ONCE(dev->net, lldev ? dev_net(lldev) : &init_net);
}
EXPORT_SYMBOL_GPL(toe_set_lldev);

static int toedev_valid_template(const char *name)
{
	const char *p;

	if (!name || !*name || strnlen(name, TOENAMSIZ) >= TOENAMSIZ)
		return -EINVAL;
	for (p = name; *p; p++)
		if (*p == '/' || *p == ':' || isspace(*p) || !isprint(*p))
			return -EINVAL;
	p = strchr(name, '%');
	if (p && (p[1] != 'd' || strchr(p + 2, '%')))
		return -EINVAL;
	return 0;
}

static int toedev_assign_name(struct toedev *dev, const char *name)
{
	char s[TOENAMSIZ];
	int i;

	if (!strchr(name, '%')) {
		if (__find_toedev_by_name(name))
			return -EEXIST;
		strscpy(dev->name, name, sizeof(dev->name));
		return 0;
	}
	for (i = 0; i < TOE_MAX_NAME_UNITS; i++) {
		/* the template was validated: one %d and nothing else */
		if (snprintf(s, sizeof(s), name, i) >= sizeof(s))
			return -EINVAL;
		if (!__find_toedev_by_name(s)) {
			strscpy(dev->name, s, sizeof(dev->name));
			return 0;
		}
	}
	return -ENFILE;
}

/*
 * Register a TOE device.  @name is a template with at most one %d.  The
 * caller activates it afterwards (activate_toedev()) to attach a TOM.
 */
int register_toedev(struct toedev *dev, const char *name)
{
	struct net_device *lldev;
	int ret;

	ret = toedev_valid_template(name);
	if (ret)
		return ret;

	mutex_lock(&toedev_mutex);
	if (test_bit(TOEDEV_F_REGISTERED, &dev->flags)) {
		ret = -EEXIST;
		goto out;
	}
	lldev = dev->lldev;
	/* a net_device already on its way out would never be let go */
	if (lldev && READ_ONCE(lldev->reg_state) != NETREG_REGISTERED) {
		ret = -ENODEV;
		goto out;
	}
	ret = toedev_assign_name(dev, name);
	if (ret)
		goto out;
	/* 30 bits as in the patch; cyclic: an index is not reused soon */
	ret = idr_alloc_cyclic(&toedev_idr, NULL, 1, 0x40000000, GFP_KERNEL);
	if (ret < 0)
		goto out;
	dev->toe_index = ret;
	ret = 0;
	toedev_fill_defaults(dev);
	dev->offload_mod = &toe_null_tom;
	refcount_set(&dev->refcnt, 1);
	reinit_completion(&dev->released);
	list_add_tail(&dev->toe_list, &toedev_list);
	set_bit(TOEDEV_F_REGISTERED, &dev->flags);
	/* publish last: lookups see a complete device */
	idr_replace(&toedev_idr, dev, dev->toe_index);
	trace_toedev_register(dev);
out:
	mutex_unlock(&toedev_mutex);
	if (!ret)
		opentoe_notify_dev(dev, OPENTOE_CMD_DEV_NEW_NTF);
	return ret;
}
EXPORT_SYMBOL_GPL(register_toedev);

/*
 * Unregister a TOE device: detach its TOM (closing what it still has) and
 * wait until the last user has dropped its reference.  May sleep long.
 */
void unregister_toedev(struct toedev *dev)
{
	mutex_lock(&toedev_mutex);
	if (!test_bit(TOEDEV_F_REGISTERED, &dev->flags)) {
		mutex_unlock(&toedev_mutex);
		return;
	}
	if (toedev_attached(dev))
		toedev_detach(dev, true);
	idr_remove(&toedev_idr, dev->toe_index);
	list_del_init(&dev->toe_list);
	/* users still holding a reference can no longer attach a TOM */
	clear_bit(TOEDEV_F_REGISTERED, &dev->flags);
	trace_toedev_unregister(dev);
	mutex_unlock(&toedev_mutex);

	opentoe_notify_dev(dev, OPENTOE_CMD_DEV_DEL_NTF);
	toedev_put(dev);
	wait_for_completion(&dev->released);
}
EXPORT_SYMBOL_GPL(unregister_toedev);

/* Attach a TOM that knows the device's type id. */
int activate_toedev(struct toedev *dev)
{
	int ret;

	mutex_lock(&toedev_mutex);
	if (!test_bit(TOEDEV_F_REGISTERED, &dev->flags))
		ret = -ENODEV;
	else
		ret = toedev_attach(dev);
	mutex_unlock(&toedev_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(activate_toedev);

/* Detach the TOM; EBUSY while it has connections, listeners or work. */
int deactivate_toedev(struct toedev *dev)
{
	int ret;

	mutex_lock(&toedev_mutex);
	if (!test_bit(TOEDEV_F_REGISTERED, &dev->flags))
		ret = -ENODEV;
	else
		ret = toedev_detach(dev, false);
	mutex_unlock(&toedev_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(deactivate_toedev);

/* Called by the device once its side of a closed TID is let go. */
void toedev_tid_released(struct toedev *dev, unsigned int tid)
{
	/*
	 * No registry lock (a device may release from any context): the TOM
	 * stays attached until every TID is released, or until its forced
	 * detach gives up waiting; then it clears dev->tom_data and waits for
	 * an RCU grace period before freeing its state, so a release that
	 * comes late finds no TOM data instead of freed memory.
	 */
	rcu_read_lock();
	READ_ONCE(dev->offload_mod)->tid_released(dev, tid);
	rcu_read_unlock();
}
EXPORT_SYMBOL_GPL(toedev_tid_released);

/* ---- TOM registration ---- */

static void tom_fill_defaults(struct tom_info *t)
{
#define TOM_DEFAULT(m)                         \
	do {                                   \
		if (!t->m)                     \
			t->m = toe_null_tom.m; \
	} while (0)
	TOM_DEFAULT(attach);
	TOM_DEFAULT(detach);
	TOM_DEFAULT(can_offload);
	TOM_DEFAULT(connect);
	TOM_DEFAULT(close);
	TOM_DEFAULT(reserve);
	TOM_DEFAULT(bind);
	TOM_DEFAULT(tid_released);
	TOM_DEFAULT(listen_start);
	TOM_DEFAULT(listen_stop);
	TOM_DEFAULT(reserve_stid);
	TOM_DEFAULT(free_stid);
	TOM_DEFAULT(fill_dev);
	TOM_DEFAULT(fill_l2t);
	TOM_DEFAULT(l2t_size);
	TOM_DEFAULT(fill_tid);
	TOM_DEFAULT(fill_listen);
#undef TOM_DEFAULT
}

/* Register a TOM and attach it to the waiting devices it knows. */
int register_tom(struct tom_info *t)
{
	struct tom_info *o;
	struct toedev *dev;

	if (!t->name || strlen(t->name) >= OPENTOE_TOM_NAMSIZ || !t->id_table)
		return -EINVAL;
	tom_fill_defaults(t);
	mutex_lock(&toedev_mutex);
	list_for_each_entry(o, &tom_list, list_node) {
		if (o == t || !strcmp(o->name, t->name)) {
			mutex_unlock(&toedev_mutex);
			return -EEXIST;
		}
	}
	t->ndevs = 0;
	list_add_tail(&t->list_node, &tom_list);
	list_for_each_entry(dev, &toedev_list, toe_list)
		if (!toedev_attached(dev) && id_find(dev->ttid, t->id_table))
			toedev_attach(dev);
	mutex_unlock(&toedev_mutex);
	return 0;
}
EXPORT_SYMBOL_GPL(register_tom);

/* Unregister a TOM, detaching it (forcibly) from its devices first. */
void unregister_tom(struct tom_info *t)
{
	struct toedev *dev;

	mutex_lock(&toedev_mutex);
	list_for_each_entry(dev, &toedev_list, toe_list)
		if (dev->offload_mod == t)
			toedev_detach(dev, true);
	WARN_ON(t->ndevs);
	list_del(&t->list_node);
	mutex_unlock(&toedev_mutex);
}
EXPORT_SYMBOL_GPL(unregister_tom);

int toe_walk_toms(struct toe_tom_walk *w)
{
	const struct tom_info *t;
	unsigned int i = 0;
	int ret = 0;

	mutex_lock(&toedev_mutex);
	list_for_each_entry(t, &tom_list, list_node) {
		if (i++ < w->skip)
			continue;
		ret = w->fn(w, t);
		if (ret)
			break;
	}
	mutex_unlock(&toedev_mutex);
	return ret;
}

/* ---- operations for user space ---- */

int toe_connect(struct toedev *dev, const struct toe_flow *flow,
		unsigned int *tid, unsigned int *l2t_idx)
{
	int ret;

	down_read(&dev->tom_sem);
	ret = dev->offload_mod->can_offload(dev, flow);
	if (!ret)
		ret = dev->offload_mod->connect(dev, flow, tid, l2t_idx);
	up_read(&dev->tom_sem);
	return ret;
}

int toe_close(struct toedev *dev, unsigned int tid)
{
	int ret;

	down_read(&dev->tom_sem);
	ret = dev->offload_mod->close(dev, tid);
	up_read(&dev->tom_sem);
	return ret;
}

int toe_reserve(struct toedev *dev, unsigned int *tid)
{
	int ret;

	down_read(&dev->tom_sem);
	ret = dev->offload_mod->reserve(dev, tid);
	up_read(&dev->tom_sem);
	return ret;
}

/* A flow for reserved TID @tid: as toe_connect(), the route checked first. */
int toe_bind(struct toedev *dev, unsigned int tid, const struct toe_flow *flow,
	     unsigned int *l2t_idx)
{
	int ret;

	down_read(&dev->tom_sem);
	ret = dev->offload_mod->can_offload(dev, flow);
	if (!ret)
		ret = dev->offload_mod->bind(dev, tid, flow, l2t_idx);
	up_read(&dev->tom_sem);
	return ret;
}

/*
 * The listener of @k's address in @net: with @exact, the one for the same
 * device (or for every device); without, any that would reach a device @k
 * reaches (one for every device meets every other).
 */
static struct toe_listener *
__find_listener(struct net *net, const struct toe_listener *k, bool exact)
{
	struct toe_listener *l;

	lockdep_assert_held(&toedev_mutex);
	list_for_each_entry(l, &toe_listeners, list) {
		if (!net_eq(l->net, net) || l->family != k->family ||
		    l->port != k->port || !ipv6_addr_equal(&l->addr, &k->addr))
			continue;
		if (l->dev_index == k->dev_index ||
		    (!exact && (!l->dev_index || !k->dev_index)))
			return l;
	}
	return NULL;
}

/*
 * A listening socket: kept, and told to every attached device in @net
 * (@dev NULL: a device without room simply does not offload it, and one
 * attached later is told too), or to @dev alone, whose TOM must take it:
 * its error is returned (ENOPROTOOPT without a TOM, ENOSPC without a free
 * server TID) and nothing is kept.  EEXIST if a listener of the address
 * already reaches one of the same devices.
 */
int toe_listen_start(struct net *net, const struct toe_listener *k,
		     struct toedev *dev)
{
	struct toe_listener *l;
	int ret = 0;

	if (k->has_stid && !dev)
		return -EINVAL; /* a server TID is a device's */
	l = kmemdup(k, sizeof(*k), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	l->net = net;
	l->dev_index = dev ? dev->toe_index : 0;
	mutex_lock(&toedev_mutex);
	if (__find_listener(net, l, false)) {
		ret = -EEXIST;
		goto err;
	}
	if (dev) {
		if (!test_bit(TOEDEV_F_REGISTERED, &dev->flags)) {
			ret = -ENODEV;
			goto err;
		}
		if (!toedev_attached(dev)) {
			ret = -ENOPROTOOPT;
			goto err;
		}
		down_write(&dev->tom_sem);
		ret = dev->offload_mod->listen_start(dev, l);
		up_write(&dev->tom_sem);
		if (ret)
			goto err;
		list_add_tail(&l->list, &toe_listeners);
		mutex_unlock(&toedev_mutex);
		return 0;
	}
	list_add_tail(&l->list, &toe_listeners);
	list_for_each_entry(dev, &toedev_list, toe_list) {
		if (!toedev_attached(dev) || !net_eq(toedev_net(dev), net))
			continue;
		down_write(&dev->tom_sem);
		/* a device without room simply does not offload it */
		dev->offload_mod->listen_start(dev, l);
		up_write(&dev->tom_sem);
	}
	mutex_unlock(&toedev_mutex);
	return 0;

err:
	mutex_unlock(&toedev_mutex);
	kfree(l);
	return ret;
}

/* The listener @k (same address and dev_index) goes; ENOENT if unknown. */
int toe_listen_stop(struct net *net, const struct toe_listener *k)
{
	struct toe_listener *l;
	struct toedev *dev;

	mutex_lock(&toedev_mutex);
	l = __find_listener(net, k, true);
	if (!l) {
		mutex_unlock(&toedev_mutex);
		return -ENOENT;
	}
	list_for_each_entry(dev, &toedev_list, toe_list) {
		if (!toedev_attached(dev) || !net_eq(toedev_net(dev), net) ||
		    (l->dev_index && l->dev_index != dev->toe_index))
			continue;
		down_write(&dev->tom_sem);
		dev->offload_mod->listen_stop(dev, l);
		up_write(&dev->tom_sem);
	}
	list_del(&l->list);
	mutex_unlock(&toedev_mutex);
	kfree(l);
	return 0;
}

/*
 * A server TID of @dev held for a listener to come: toe_listen_start()
 * with has_stid takes it.  Under toedev_mutex and tom_sem (write), as the
 * server-TID table changes (tom.h).
 */
int toe_stid_reserve(struct toedev *dev, unsigned int *stid)
{
	int ret;

	mutex_lock(&toedev_mutex);
	down_write(&dev->tom_sem);
	ret = test_bit(TOEDEV_F_REGISTERED, &dev->flags) ?
		      dev->offload_mod->reserve_stid(dev, stid) :
		      -ENODEV;
	up_write(&dev->tom_sem);
	mutex_unlock(&toedev_mutex);
	return ret;
}

/* A reserved server TID given back unused; ENOENT if it is not one. */
int toe_stid_free(struct toedev *dev, unsigned int stid)
{
	int ret;

	mutex_lock(&toedev_mutex);
	down_write(&dev->tom_sem);
	ret = dev->offload_mod->free_stid(dev, stid);
	up_write(&dev->tom_sem);
	mutex_unlock(&toedev_mutex);
	return ret;
}

/* ---- lower devices going away ---- */

static int toedev_netdev_event(struct notifier_block *nb, unsigned long event,
			       void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct toedev *dev;

	if (event != NETDEV_UNREGISTER)
		return NOTIFY_DONE;
	mutex_lock(&toedev_mutex);
	list_for_each_entry(dev, &toedev_list, toe_list) {
		if (dev->lldev != ndev)
			continue;
		/* the device loses its wire: close everything */
		if (toedev_attached(dev))
			toedev_detach(dev, true);
		down_write(&dev->tom_sem);
		toe_set_lldev(dev, NULL);
		up_write(&dev->tom_sem);
		opentoe_notify_dev(dev, OPENTOE_CMD_DEV_CHANGE_NTF);
	}
	mutex_unlock(&toedev_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block toedev_netdev_nb = {
	.notifier_call = toedev_netdev_event,
};

/* ---- /proc/net/toe/devices, in every namespace ---- */

static int devices_show(struct seq_file *seq, void *v)
{
	struct net *net = seq_file_single_net(seq);
	struct toedev *dev;

	seq_puts(seq, "Device           Offload Module       Interfaces\n");
	mutex_lock(&toedev_mutex);
	list_for_each_entry(dev, &toedev_list, toe_list) {
		if (!net_eq(toedev_net(dev), net))
			continue;
		seq_printf(seq, "%-16s %-20s", dev->name,
			   dev->offload_mod->name);
		if (dev->lldev)
			seq_printf(seq, " %s", dev->lldev->name);
		seq_putc(seq, '\n');
	}
	mutex_unlock(&toedev_mutex);
	return 0;
}

static int __net_init toe_net_init(struct net *net)
{
	struct proc_dir_entry *dir;

	dir = proc_net_mkdir(net, "toe", net->proc_net);
	if (!dir)
		return -ENOMEM;
	if (!proc_create_net_single("devices", 0444, dir, devices_show, NULL)) {
		remove_proc_entry("toe", net->proc_net);
		return -ENOMEM;
	}
	return 0;
}

static void __net_exit toe_net_exit(struct net *net)
{
	struct toe_listener *l, *tmp;

	remove_proc_subtree("toe", net->proc_net);
	/* its net_devices, hence its devices, are gone already */
	mutex_lock(&toedev_mutex);
	list_for_each_entry_safe(l, tmp, &toe_listeners, list) {
		if (net_eq(l->net, net)) {
			list_del(&l->list);
			kfree(l);
		}
	}
	mutex_unlock(&toedev_mutex);
}

static struct pernet_operations toe_net_ops = {
	.init = toe_net_init,
	.exit = toe_net_exit,
};

int toedev_init(void)
{
	int ret;

	ret = register_pernet_subsys(&toe_net_ops);
	if (ret)
		return ret;
	ret = register_netdevice_notifier(&toedev_netdev_nb);
	if (ret)
		unregister_pernet_subsys(&toe_net_ops);
	return ret;
}

/* Called once every device and TOM is gone. */
void toedev_exit(void)
{
	struct toe_listener *l, *tmp;

	unregister_netdevice_notifier(&toedev_netdev_nb);
	unregister_pernet_subsys(&toe_net_ops);
	WARN_ON(!list_empty(&toedev_list));
	WARN_ON(!list_empty(&tom_list));
	list_for_each_entry_safe(l, tmp, &toe_listeners, list) {
		list_del(&l->list);
		kfree(l);
	}
	idr_destroy(&toedev_idr);
	/* kfree_rcu()'d devices must be gone before the module text */
	rcu_barrier();
}
