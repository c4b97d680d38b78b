// SPDX-License-Identifier: GPL-2.0
/*
 * opentoe: a simulated Chelsio adapter, made and destroyed from user space
 * the way netdevsim's devices are:
 *
 *   echo "ID IFNAME TTID NCONN [NAME]" > /sys/bus/opentoe_sim/new_device
 *   echo ID > /sys/bus/opentoe_sim/del_device
 *
 * binds a TOE device of type id TTID with NCONN TIDs to the existing
 * net_device IFNAME (in the writer's network namespace), registers it with
 * the name template NAME (default "toe%d") and activates it.  Fault knobs
 * in /sys/kernel/debug/opentoe_sim/opentoe_simID/:
 *   fail_attach       the device refuses to open (TOM attach fails)
 *   fail_connect      the device refuses new connections
 *   fail_listen       the device refuses new listeners
 *   connect_delay_ms  the device takes this long to accept or refuse one
 *                     (at most TOE_SIM_MAX_DELAY_MS): widens the window
 *                     between a flow's TID bind and its close
 *   release_delay_ms  the device lets go of a closed TID this much later
 *                     (at most TOE_SIM_MAX_DELAY_MS)
 * and read-only counters (l2t_writes, conns, listens).
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>

#include "toedev.h"

#define TOE_SIM_MAX_NCONN 65536
/* a release never waits longer: del_device and rmmod wait for it */
#define TOE_SIM_MAX_DELAY_MS 10000

struct toe_sim {
	struct device dev;
	unsigned int id;
	struct list_head list; /* on toe_sim_list, toe_sim_lock */
	struct toedev *tdev;
	struct dentry *ddir;
	/* knobs, written from debugfs at any time */
	bool fail_attach;
	bool fail_connect;
	bool fail_listen;
	u32 connect_delay_ms;
	u32 release_delay_ms;
	/* counters */
	atomic_t l2t_writes;
	atomic_t conns;
	atomic_t listens;
};

struct toe_sim_release {
	struct delayed_work dwork;
	struct toe_sim *sim;
	unsigned int tid;
};

/*
 * toe_sim_lock serialises new_device / del_device and module exit, and
 * protects toe_sim_list and toe_sim_enabled.  Taken before toedev_mutex.
 */
static DEFINE_MUTEX(toe_sim_lock);
static LIST_HEAD(toe_sim_list);
static bool toe_sim_enabled;

/*
 * struct device release callbacks still to run, plus one for the module:
 * exit waits for toe_sim_gone before the code of the callback goes away.
 */
static atomic_t toe_sim_refs = ATOMIC_INIT(1);
static DECLARE_COMPLETION(toe_sim_gone);

/* the device side's delayed TID releases; flushed before a device goes */
static struct workqueue_struct *toe_sim_wq;
static struct dentry *toe_sim_ddir;

static struct toe_sim *to_sim(struct device *dev)
{
	return container_of(dev, struct toe_sim, dev);
}

/* ---- the device's methods ---- */

static int sim_open(struct toedev *tdev)
{
	struct toe_sim *sim = tdev->priv;

	return READ_ONCE(sim->fail_attach) ? -EIO : 0;
}

static int sim_connect(struct toedev *tdev, unsigned int tid,
		       const struct toe_flow *flow, unsigned int l2t_idx)
{
	struct toe_sim *sim = tdev->priv;
	u32 delay = READ_ONCE(sim->connect_delay_ms);

	/* process context: callers hold only tom_sem (a rw_semaphore) */
	if (delay)
		msleep(min_t(u32, delay, TOE_SIM_MAX_DELAY_MS));
	if (READ_ONCE(sim->fail_connect))
		return -EIO;
	atomic_inc(&sim->conns);
	return 0;
}

static void sim_release_work(struct work_struct *work)
{
	struct toe_sim_release *r = container_of(to_delayed_work(work),
						 struct toe_sim_release, dwork);

	atomic_dec(&r->sim->conns);
	toedev_tid_released(r->sim->tdev, r->tid);
	kfree(r);
}

static void sim_disconnect(struct toedev *tdev, unsigned int tid)
{
	struct toe_sim *sim = tdev->priv;
	struct toe_sim_release *r;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r) {
		/* no memory for the delay: release at once */
		atomic_dec(&sim->conns);
		toedev_tid_released(tdev, tid);
		return;
	}
	r->sim = sim;
	r->tid = tid;
	INIT_DELAYED_WORK(&r->dwork, sim_release_work);
	queue_delayed_work(
		toe_sim_wq, &r->dwork,
		msecs_to_jiffies(min_t(u32, TOE_SIM_MAX_DELAY_MS,
				       READ_ONCE(sim->release_delay_ms))));
}

static int sim_listen_start(struct toedev *tdev, unsigned int stid,
			    const struct toe_listener *l)
{
	struct toe_sim *sim = tdev->priv;

	if (READ_ONCE(sim->fail_listen))
		return -EIO;
	atomic_inc(&sim->listens);
	return 0;
}

static void sim_listen_stop(struct toedev *tdev, unsigned int stid)
{
	struct toe_sim *sim = tdev->priv;

	atomic_dec(&sim->listens);
}

/* atomic context */
static void sim_neigh_update(struct toedev *tdev, unsigned int l2t_idx,
			     const u8 *lladdr, u16 nud_state)
{
	struct toe_sim *sim = tdev->priv;

	atomic_inc(&sim->l2t_writes);
}

/* ---- sysfs: the device's attributes ---- */

static ssize_t toe_name_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%s\n", to_sim(dev)->tdev->name);
}
static DEVICE_ATTR_RO(toe_name);

static ssize_t toe_index_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%d\n", to_sim(dev)->tdev->toe_index);
}
static DEVICE_ATTR_RO(toe_index);

static ssize_t ttid_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%u\n", to_sim(dev)->tdev->ttid);
}
static DEVICE_ATTR_RO(ttid);

static ssize_t nconn_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%u\n", to_sim(dev)->tdev->nconn);
}
static DEVICE_ATTR_RO(nconn);

static struct attribute *toe_sim_dev_attrs[] = {
	&dev_attr_toe_name.attr,
	&dev_attr_toe_index.attr,
	&dev_attr_ttid.attr,
	&dev_attr_nconn.attr,
	NULL,
};
ATTRIBUTE_GROUPS(toe_sim_dev);

/* ---- create / destroy ---- */

static void toe_sim_release(struct device *dev)
{
	kfree(to_sim(dev));
	if (atomic_dec_and_test(&toe_sim_refs))
		complete(&toe_sim_gone);
}

static struct bus_type toe_sim_bus;

static struct toe_sim *toe_sim_find(unsigned int id)
{
	struct toe_sim *sim;

	list_for_each_entry(sim, &toe_sim_list, list)
		if (sim->id == id)
			return sim;
	return NULL;
}

static void toe_sim_debugfs(struct toe_sim *sim)
{
	struct dentry *d;

	d = debugfs_create_dir(dev_name(&sim->dev), toe_sim_ddir);
	sim->ddir = d;
	debugfs_create_bool("fail_attach", 0600, d, &sim->fail_attach);
	debugfs_create_bool("fail_connect", 0600, d, &sim->fail_connect);
	debugfs_create_bool("fail_listen", 0600, d, &sim->fail_listen);
	debugfs_create_u32("connect_delay_ms", 0600, d, &sim->connect_delay_ms);
	debugfs_create_u32("release_delay_ms", 0600, d, &sim->release_delay_ms);
	debugfs_create_atomic_t("l2t_writes", 0400, d, &sim->l2t_writes);
	debugfs_create_atomic_t("conns", 0400, d, &sim->conns);
	debugfs_create_atomic_t("listens", 0400, d, &sim->listens);
}

/* toe_sim_lock held */
static int toe_sim_create(struct net *net, unsigned int id, const char *ifname,
			  unsigned int ttid, unsigned int nconn,
			  const char *template)
{
	struct net_device *lldev;
	struct toedev *tdev;
	struct toe_sim *sim;
	int ret;

	if (!ttid || !nconn || nconn > TOE_SIM_MAX_NCONN)
		return -EINVAL;
	if (toe_sim_find(id))
		return -EEXIST;

	sim = kzalloc(sizeof(*sim), GFP_KERNEL);
	if (!sim)
		return -ENOMEM;
	sim->id = id;
	INIT_LIST_HEAD(&sim->list);
	device_initialize(&sim->dev);
	atomic_inc(&toe_sim_refs);
	/* from here on, put_device() frees sim */
	sim->dev.bus = &toe_sim_bus;
	sim->dev.groups = toe_sim_dev_groups;
	sim->dev.release = toe_sim_release;
	ret = dev_set_name(&sim->dev, "opentoe_sim%u", id);
	if (ret)
		goto err_put;

	tdev = alloc_toedev();
	if (!tdev) {
		ret = -ENOMEM;
		goto err_put;
	}
	sim->tdev = tdev;
	tdev->priv = sim;
	tdev->ttid = ttid;
	tdev->nconn = nconn;
	tdev->open = sim_open;
	tdev->connect = sim_connect;
	tdev->disconnect = sim_disconnect;
	tdev->listen_start = sim_listen_start;
	tdev->listen_stop = sim_listen_stop;
	tdev->neigh_update = sim_neigh_update;

	lldev = dev_get_by_name(net, ifname);
	if (!lldev) {
		ret = -ENODEV;
		goto err_free_tdev;
	}
	tdev->mtu = lldev->mtu;
	toe_set_lldev(tdev, lldev);
	dev_put(lldev); /* toe_set_lldev() holds its own */

	ret = register_toedev(tdev, template);
	if (ret)
		goto err_free_tdev;
	ret = device_add(&sim->dev);
	if (ret)
		goto err_unregister;
	toe_sim_debugfs(sim);
	list_add_tail(&sim->list, &toe_sim_list);

	/* no TOM for the type id (or the device fails): stays unattached */
	ret = activate_toedev(tdev);
	if (ret)
		dev_info(&sim->dev, "%s: no TOM attached (%d)\n", tdev->name,
			 ret);
	return 0;

err_unregister:
	unregister_toedev(tdev);
err_free_tdev:
	free_toedev(tdev);
err_put:
	put_device(&sim->dev);
	return ret;
}

/* toe_sim_lock held */
static void toe_sim_destroy(struct toe_sim *sim)
{
	list_del(&sim->list);
	debugfs_remove_recursive(sim->ddir);
	device_del(&sim->dev);
	/* closes its connections; waits for the delayed releases */
	unregister_toedev(sim->tdev);
	/* the release works have returned, not only called back */
	flush_workqueue(toe_sim_wq);
	free_toedev(sim->tdev);
	sim->tdev = NULL;
	put_device(&sim->dev);
}

static ssize_t new_device_store(struct bus_type *bus, const char *buf,
				size_t count)
{
	char ifname[IFNAMSIZ], template[32] = "toe%d";
	unsigned int id, ttid, nconn;
	int n, ret;

	n = sscanf(buf, "%u %15s %u %u %31s", &id, ifname, &ttid, &nconn,
		   template);
	if (n < 4)
		return -EINVAL;

	mutex_lock(&toe_sim_lock);
	if (!toe_sim_enabled)
		ret = -EBUSY;
	else
		ret = toe_sim_create(current->nsproxy->net_ns, id, ifname, ttid,
				     nconn, template);
	mutex_unlock(&toe_sim_lock);
	return ret ? ret : count;
}
static BUS_ATTR_WO(new_device);

static ssize_t del_device_store(struct bus_type *bus, const char *buf,
				size_t count)
{
	struct toe_sim *sim;
	unsigned int id;
	int ret = 0;

	if (kstrtouint(buf, 0, &id))
		return -EINVAL;

	mutex_lock(&toe_sim_lock);
	sim = toe_sim_enabled ? toe_sim_find(id) : NULL;
	if (sim)
		toe_sim_destroy(sim);
	else
		ret = -ENOENT;
	mutex_unlock(&toe_sim_lock);
	return ret ? ret : count;
}
static BUS_ATTR_WO(del_device);

static struct attribute *toe_sim_bus_attrs[] = {
	&bus_attr_new_device.attr,
	&bus_attr_del_device.attr,
	NULL,
};
ATTRIBUTE_GROUPS(toe_sim_bus);

static struct bus_type toe_sim_bus = {
	.name = "opentoe_sim",
	.dev_name = "opentoe_sim",
	.bus_groups = toe_sim_bus_groups,
};

int toe_sim_init(void)
{
	int ret;

	toe_sim_wq = alloc_workqueue("opentoe_sim", 0, 0);
	if (!toe_sim_wq)
		return -ENOMEM;
	toe_sim_ddir = debugfs_create_dir("opentoe_sim", NULL);
	ret = bus_register(&toe_sim_bus);
	if (ret) {
		debugfs_remove_recursive(toe_sim_ddir);
		destroy_workqueue(toe_sim_wq);
		return ret;
	}
	mutex_lock(&toe_sim_lock);
	toe_sim_enabled = true;
	mutex_unlock(&toe_sim_lock);
	return 0;
}

/* Destroys every simulated device, then waits for their release. */
void toe_sim_exit(void)
{
	struct toe_sim *sim, *tmp;

	mutex_lock(&toe_sim_lock);
	toe_sim_enabled = false;
	list_for_each_entry_safe(sim, tmp, &toe_sim_list, list)
		toe_sim_destroy(sim);
	mutex_unlock(&toe_sim_lock);

	bus_unregister(&toe_sim_bus);
	if (!atomic_dec_and_test(&toe_sim_refs))
		wait_for_completion(&toe_sim_gone);
	destroy_workqueue(toe_sim_wq);
	debugfs_remove_recursive(toe_sim_ddir);
}
