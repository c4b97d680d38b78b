/* SPDX-License-Identifier: GPL-2.0 */
/*
 * opentoe: the TOE device registry (the 2005 patch's include/linux/toedev.h,
 * as a module-internal API).
 *
 * A driver allocates a struct toedev, fills the device methods it has,
 * registers it with a name template and activates it: the registry attaches
 * the first registered TCP offload module (TOM) whose id table knows the
 * device's type id.  Methods the driver leaves NULL, and the TOM methods of a
 * device without TOM, are defaults: callers never test a pointer.
 */
#ifndef __OPENTOE_TOEDEV_H
#define __OPENTOE_TOEDEV_H

#include <linux/completion.h>
#include <linux/in6.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/refcount.h>
#include <linux/rwsem.h>
#include <linux/types.h>

#include "../include/opentoe_genl.h"

#define TOENAMSIZ OPENTOE_NAMSIZ
/* Units tried for a name template's %d before giving up (ENFILE). */
#define TOE_MAX_NAME_UNITS 1024

struct sk_buff;
struct toedev;
struct tom_info;

/* A TCP flow offered for offload; addresses and ports in network order. */
struct toe_flow {
	u8 family; /* AF_INET or AF_INET6 */
	__be16 sport;
	__be16 dport;
	struct in6_addr saddr; /* IPv4: s6_addr32[3] only */
	struct in6_addr daddr;
};

/*
 * A listening socket the host told the registry about, for every device of
 * its namespace (dev_index 0), or for one device, which must then give it a
 * server TID (the listener lives as long as that device's TOM attachment).
 */
struct toe_listener {
	struct list_head list; /* on toe_listeners, toedev_mutex */
	struct net *net; /* namespace of the socket, no ref */
	u8 family;
	__be16 port;
	struct in6_addr addr; /* any: wildcard */
	int dev_index; /* 0: every device */
	/* with dev_index: take server TID stid, reserved (reserve_stid) */
	bool has_stid;
	unsigned int stid;
};

/* toedev::flags */
enum {
	TOEDEV_F_REGISTERED, /* in the registry */
};

struct toedev {
	char name[TOENAMSIZ]; /* final name, template expanded */
	struct list_head toe_list; /* on toedev_list, toedev_mutex */
	int toe_index; /* unique, >= 1, not reused soon */
	unsigned int ttid; /* TOE type id */
	unsigned long flags; /* TOEDEV_F_* */
	unsigned int mtu; /* max size of TX offloaded data */
	unsigned int nconn; /* max # of offloaded connections */

	/*
	 * Lower (link-layer) device and its tracker.  Set by the driver
	 * before registration, cleared under toedev_mutex and tom_sem
	 * (write) when the net_device goes away (the device stays, detached):
	 * read it under either.
	 */
	struct net_device *lldev;
	netdevice_tracker lldev_tracker;
	/* lldev's namespace, else &init_net; compared, never dereferenced */
	struct net *net;

	/*
	 * Attached TOM (&toe_null_tom when none) and its per-device state.
	 * Written with tom_sem held for writing (and toedev_mutex); TOM
	 * operations run with tom_sem held for reading.
	 */
	struct rw_semaphore tom_sem;
	const struct tom_info *offload_mod;
	void *tom_data;

	/*
	 * Device (hardware) methods.  Never NULL once registered.
	 * neigh_update runs in atomic context; the others may sleep.
	 * disconnect starts the device's side of a close: the device calls
	 * toedev_tid_released() once it has let go of the TID (later, from
	 * any process context, or from within disconnect).
	 */
	int (*open)(struct toedev *dev);
	int (*close)(struct toedev *dev);
	int (*can_offload)(struct toedev *dev, const struct toe_flow *flow);
	int (*connect)(struct toedev *dev, unsigned int tid,
		       const struct toe_flow *flow, unsigned int l2t_idx);
	void (*disconnect)(struct toedev *dev, unsigned int tid);
	int (*listen_start)(struct toedev *dev, unsigned int stid,
			    const struct toe_listener *l);
	void (*listen_stop)(struct toedev *dev, unsigned int stid);
	void (*neigh_update)(struct toedev *dev, unsigned int l2t_idx,
			     const u8 *lladdr, u16 nud_state);
	int (*ctl)(struct toedev *dev, unsigned int req, void *data);
	void *priv; /* driver private data */

	/*
	 * Users: the registration holds one reference; lookups take more.
	 * unregister_toedev() drops the registration's and waits on
	 * @released until every user has called toedev_put().
	 */
	refcount_t refcnt;
	struct completion released;
	struct rcu_head rcu;
};

struct toe_id {
	unsigned int id;
	unsigned long data;
};

/*
 * A TCP offload module.  All methods are mandatory (the registry fills the
 * missing ones with defaults at registration).  attach/detach and the
 * listen methods run under toedev_mutex and tom_sem (write); the others
 * under tom_sem (read), except tid_released (no registry lock).
 */
struct tom_info {
	const char *name;
	const struct toe_id *id_table; /* ends with id 0 */
	struct list_head list_node; /* on tom_list, toedev_mutex */
	unsigned int ndevs; /* attached devices, toedev_mutex */

	int (*attach)(struct toedev *dev, const struct toe_id *entry);
	/* !force: EBUSY while connections, listeners or releases remain */
	int (*detach)(struct toedev *dev, bool force);
	int (*can_offload)(struct toedev *dev, const struct toe_flow *flow);
	int (*connect)(struct toedev *dev, const struct toe_flow *flow,
		       unsigned int *tid, unsigned int *l2t_idx);
	int (*close)(struct toedev *dev, unsigned int tid);
	/* A TID held for a flow to come (close() gives it back). */
	int (*reserve)(struct toedev *dev, unsigned int *tid);
	/* connect() with a reserved TID; refused: it stays reserved. */
	int (*bind)(struct toedev *dev, unsigned int tid,
		    const struct toe_flow *flow, unsigned int *l2t_idx);
	void (*tid_released)(struct toedev *dev, unsigned int tid);
	int (*listen_start)(struct toedev *dev, const struct toe_listener *l);
	void (*listen_stop)(struct toedev *dev, const struct toe_listener *l);
	/*
	 * A server TID held for a listener to come (listen_start with
	 * has_stid takes it), and given back unused; toedev_mutex and
	 * tom_sem (write) held, as the listen methods.
	 */
	int (*reserve_stid)(struct toedev *dev, unsigned int *stid);
	int (*free_stid)(struct toedev *dev, unsigned int stid);
	/* Adds the TOM's device attributes to a genetlink device message. */
	int (*fill_dev)(struct toedev *dev, struct sk_buff *skb);
	/* Adds L2T entry @idx (if in use: 1) to a message; 0 if unused. */
	int (*fill_l2t)(struct toedev *dev, unsigned int idx,
			struct sk_buff *skb);
	unsigned int (*l2t_size)(struct toedev *dev);
	/*
	 * Adds the first TID >= *tid (updated) to a message: 1, 0 if there
	 * is none, -EMSGSIZE.
	 */
	int (*fill_tid)(struct toedev *dev, unsigned long *tid,
			struct sk_buff *skb);
	/*
	 * Adds the first listener with server TID >= *stid (updated) to a
	 * message: 1, 0 if there is none, -EMSGSIZE.  With @reserved, the
	 * first server TID reserved for a listener to come instead.  tom_sem
	 * held (read).
	 */
	int (*fill_listen)(struct toedev *dev, unsigned long *stid,
			   struct sk_buff *skb, bool reserved);
};

extern const struct tom_info toe_null_tom;

static inline bool toedev_attached(const struct toedev *dev)
{
	return dev->offload_mod != &toe_null_tom;
}

static inline void toedev_hold(struct toedev *dev)
{
	refcount_inc(&dev->refcnt);
}

void toedev_put(struct toedev *dev);

struct toedev *alloc_toedev(void);
void free_toedev(struct toedev *dev);
void toe_set_lldev(struct toedev *dev, struct net_device *lldev);
int register_toedev(struct toedev *dev, const char *name);
void unregister_toedev(struct toedev *dev);
int activate_toedev(struct toedev *dev);
int deactivate_toedev(struct toedev *dev);
int register_tom(struct tom_info *t);
void unregister_tom(struct tom_info *t);
void toedev_tid_released(struct toedev *dev, unsigned int tid);

struct toedev *toedev_get_by_index(struct net *net, int index);
struct toedev *toedev_get_next(struct net *net, int *index);
struct net *toedev_net(const struct toedev *dev);

int toe_connect(struct toedev *dev, const struct toe_flow *flow,
		unsigned int *tid, unsigned int *l2t_idx);
int toe_close(struct toedev *dev, unsigned int tid);
int toe_reserve(struct toedev *dev, unsigned int *tid);
int toe_bind(struct toedev *dev, unsigned int tid, const struct toe_flow *flow,
	     unsigned int *l2t_idx);
int toe_listen_start(struct net *net, const struct toe_listener *l,
		     struct toedev *dev);
int toe_listen_stop(struct net *net, const struct toe_listener *l);
int toe_stid_reserve(struct toedev *dev, unsigned int *stid);
int toe_stid_free(struct toedev *dev, unsigned int stid);

/* Visit the registered TOMs after the first @skip, under toedev_mutex. */
struct toe_tom_walk {
	int (*fn)(struct toe_tom_walk *w, const struct tom_info *t);
	unsigned int skip;
};

int toe_walk_toms(struct toe_tom_walk *w);

int toedev_init(void);
void toedev_exit(void);

/* Chelsio TOM (tom.c) */
int chelsio_tom_init(void);
void chelsio_tom_exit(void);

/* Simulated adapter (sim.c) */
int toe_sim_init(void);
void toe_sim_exit(void);

/* Generic netlink (genl.c) */
int opentoe_genl_init(void);
void opentoe_genl_exit(void);
void opentoe_notify_dev(struct toedev *dev, u8 cmd);
void opentoe_notify_l2t(struct toedev *dev, unsigned int idx);
int opentoe_fill_dev(struct sk_buff *skb, struct toedev *dev);

#endif /* __OPENTOE_TOEDEV_H */
