// SPDX-License-Identifier: GPL-2.0
/*
 * opentoe: the "opentoe" generic netlink family (include/opentoe_genl.h
 * documents the ABI).  Every operation needs CAP_NET_ADMIN; requests are
 * validated strictly against opentoe_policy.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/module.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "toedev.h"

static struct genl_family opentoe_family;
static bool opentoe_genl_ready;

static const struct nla_policy opentoe_policy[OPENTOE_A_MAX + 1] = {
	[OPENTOE_A_DEV_INDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[OPENTOE_A_TID] = { .type = NLA_U32 },
	[OPENTOE_A_FLOW_SADDR4] = { .type = NLA_BE32 },
	[OPENTOE_A_FLOW_DADDR4] = { .type = NLA_BE32 },
	[OPENTOE_A_FLOW_SADDR6] = NLA_POLICY_EXACT_LEN(16),
	[OPENTOE_A_FLOW_DADDR6] = NLA_POLICY_EXACT_LEN(16),
	[OPENTOE_A_FLOW_SPORT] = { .type = NLA_BE16 },
	[OPENTOE_A_FLOW_DPORT] = { .type = NLA_BE16 },
	[OPENTOE_A_LISTEN_FAMILY] = { .type = NLA_U8 },
	[OPENTOE_A_LISTEN_ADDR4] = { .type = NLA_BE32 },
	[OPENTOE_A_LISTEN_ADDR6] = NLA_POLICY_EXACT_LEN(16),
	[OPENTOE_A_LISTEN_PORT] = { .type = NLA_BE16 },
	[OPENTOE_A_SERVER] = { .type = NLA_FLAG },
	/* everything else is reply-only: refused in requests (strict) */
};

/* ---- messages ---- */

int opentoe_fill_dev(struct sk_buff *skb, struct toedev *dev)
{
	int ret = -EMSGSIZE;

	down_read(&dev->tom_sem);
	if (nla_put_u32(skb, OPENTOE_A_DEV_INDEX, dev->toe_index) ||
	    nla_put_string(skb, OPENTOE_A_DEV_NAME, dev->name) ||
	    nla_put_u32(skb, OPENTOE_A_DEV_TTID, dev->ttid) ||
	    nla_put_u32(skb, OPENTOE_A_DEV_NCONN, dev->nconn))
		goto out;
	if (toedev_attached(dev) &&
	    nla_put_string(skb, OPENTOE_A_DEV_TOM, dev->offload_mod->name))
		goto out;
	if (dev->lldev &&
	    (nla_put_u32(skb, OPENTOE_A_DEV_IFINDEX, dev->lldev->ifindex) ||
	     nla_put_string(skb, OPENTOE_A_DEV_IFNAME, dev->lldev->name)))
		goto out;
	ret = dev->offload_mod->fill_dev(dev, skb);
out:
	up_read(&dev->tom_sem);
	return ret;
}

/*
 * A notification of cmd for net, when anyone there listens: the message,
 * its header in *hdr; NULL when there is no one to tell or no memory.
 */
static struct sk_buff *opentoe_ntf_new(struct net *net, u8 cmd, gfp_t gfp,
				       void **hdr)
{
	struct sk_buff *msg;

	if (!READ_ONCE(opentoe_genl_ready) ||
	    !genl_has_listeners(&opentoe_family, net, 0))
		return NULL;
	msg = genlmsg_new(NLMSG_GOODSIZE, gfp);
	if (!msg)
		return NULL;
	*hdr = genlmsg_put(msg, 0, 0, &opentoe_family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static void opentoe_ntf_send(struct net *net, struct sk_buff *msg, void *hdr,
			     gfp_t gfp)
{
	genlmsg_end(msg, hdr);
	genlmsg_multicast_netns(&opentoe_family, net, msg, 0, 0, gfp);
}

void opentoe_notify_dev(struct toedev *dev, u8 cmd)
{
	struct net *net = toedev_net(dev);
	struct sk_buff *msg;
	void *hdr;

	msg = opentoe_ntf_new(net, cmd, GFP_KERNEL, &hdr);
	if (!msg)
		return;
	if (opentoe_fill_dev(msg, dev)) {
		nlmsg_free(msg);
		return;
	}
	opentoe_ntf_send(net, msg, hdr, GFP_KERNEL);
}

/* May run in atomic context (netevent notifier). */
void opentoe_notify_l2t(struct toedev *dev, unsigned int idx)
{
	struct net *net = toedev_net(dev);
	struct sk_buff *msg;
	void *hdr;

	msg = opentoe_ntf_new(net, OPENTOE_CMD_L2T_CHANGE_NTF, GFP_ATOMIC,
			      &hdr);
	if (!msg)
		return;
	if (nla_put_u32(msg, OPENTOE_A_DEV_INDEX, dev->toe_index) ||
	    dev->offload_mod->fill_l2t(dev, idx, msg) <= 0) {
		nlmsg_free(msg);
		return;
	}
	opentoe_ntf_send(net, msg, hdr, GFP_ATOMIC);
}

/* A message of cmd in a dump; NULL when skb is full. */
static void *opentoe_dump_hdr(struct sk_buff *skb, struct netlink_callback *cb,
			      u8 cmd)
{
	return genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			   &opentoe_family, NLM_F_MULTI, cmd);
}

/* The same, about device idx (its DEV_INDEX put in). */
static void *opentoe_dump_dev_hdr(struct sk_buff *skb,
				  struct netlink_callback *cb, u8 cmd, int idx)
{
	void *hdr = opentoe_dump_hdr(skb, cb, cmd);

	if (hdr && nla_put_u32(skb, OPENTOE_A_DEV_INDEX, idx)) {
		genlmsg_cancel(skb, hdr);
		return NULL;
	}
	return hdr;
}

/* ---- helpers ---- */

static struct toedev *opentoe_get_dev(struct genl_info *info)
{
	struct toedev *dev;

	if (GENL_REQ_ATTR_CHECK(info, OPENTOE_A_DEV_INDEX))
		return ERR_PTR(-EINVAL);
	dev = toedev_get_by_index(
		genl_info_net(info),
		nla_get_u32(info->attrs[OPENTOE_A_DEV_INDEX]));
	if (!dev) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[OPENTOE_A_DEV_INDEX],
				    "no such TOE device");
		return ERR_PTR(-ENODEV);
	}
	return dev;
}

/*
 * The device the request names and, in *msg, a reply to fill; an ERR_PTR
 * (no reference held) when there is no such device or no memory.
 */
static struct toedev *opentoe_get_dev_msg(struct genl_info *info,
					  struct sk_buff **msg)
{
	struct toedev *dev = opentoe_get_dev(info);

	if (IS_ERR(dev))
		return dev;
	*msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!*msg) {
		toedev_put(dev);
		return ERR_PTR(-ENOMEM);
	}
	return dev;
}

/* fn on the device the request names, its reference put back after. */
static int opentoe_on_dev(struct genl_info *info, int (*fn)(struct toedev *))
{
	struct toedev *dev = opentoe_get_dev(info);
	int ret;

	if (IS_ERR(dev))
		return PTR_ERR(dev);
	ret = fn(dev);
	toedev_put(dev);
	return ret;
}

/* An IPv4 or IPv6 address from a pair of attributes, one of them set. */
static int opentoe_get_addr(struct genl_info *info, int a4, int a6, u8 *family,
			    struct in6_addr *addr)
{
	struct nlattr **tb = info->attrs;

	memset(addr, 0, sizeof(*addr));
	if (tb[a4] && tb[a6]) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[a6],
				    "IPv4 and IPv6 address both given");
		return -EINVAL;
	}
	if (tb[a4]) {
		if (*family && *family != AF_INET)
			goto mismatch;
		*family = AF_INET;
		addr->s6_addr32[3] = nla_get_in_addr(tb[a4]);
	} else if (tb[a6]) {
		if (*family && *family != AF_INET6)
			goto mismatch;
		*family = AF_INET6;
		*addr = nla_get_in6_addr(tb[a6]);
	}
	return 0;
mismatch:
	NL_SET_ERR_MSG(info->extack, "address families do not match");
	return -EINVAL;
}

static int opentoe_get_port(struct genl_info *info, int attr, __be16 *port)
{
	if (GENL_REQ_ATTR_CHECK(info, attr))
		return -EINVAL;
	*port = nla_get_be16(info->attrs[attr]);
	if (!*port) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[attr], "port 0");
		return -EINVAL;
	}
	return 0;
}

/* ---- devices ---- */

static int opentoe_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	struct toedev *dev = opentoe_get_dev_msg(info, &msg);
	void *hdr;
	int ret;

	if (IS_ERR(dev))
		return PTR_ERR(dev);
	ret = -EMSGSIZE;
	hdr = genlmsg_put_reply(msg, info, &opentoe_family, 0,
				OPENTOE_CMD_DEV_GET);
	if (!hdr || opentoe_fill_dev(msg, dev)) {
		nlmsg_free(msg);
		goto out;
	}
	genlmsg_end(msg, hdr);
	ret = genlmsg_reply(msg, info);
out:
	toedev_put(dev);
	return ret;
}

static int opentoe_dev_get_dumpit(struct sk_buff *skb,
				  struct netlink_callback *cb)
{
	struct net *net = sock_net(skb->sk);
	int idx = cb->args[0] ? cb->args[0] : 1;
	struct toedev *dev;
	void *hdr;

	while ((dev = toedev_get_next(net, &idx))) {
		hdr = opentoe_dump_hdr(skb, cb, OPENTOE_CMD_DEV_GET);
		if (!hdr || opentoe_fill_dev(skb, dev)) {
			if (hdr)
				genlmsg_cancel(skb, hdr);
			toedev_put(dev);
			break;
		}
		genlmsg_end(skb, hdr);
		toedev_put(dev);
		idx++;
	}
	cb->args[0] = idx;
	return skb->len;
}

static int opentoe_dev_attach_doit(struct sk_buff *skb, struct genl_info *info)
{
	int ret = opentoe_on_dev(info, activate_toedev);

	if (ret == -ENOPROTOOPT)
		NL_SET_ERR_MSG(info->extack, "no TOM for the device's type id");
	return ret;
}

static int opentoe_dev_detach_doit(struct sk_buff *skb, struct genl_info *info)
{
	int ret = opentoe_on_dev(info, deactivate_toedev);

	if (ret == -EBUSY)
		NL_SET_ERR_MSG(info->extack,
			       "connections, listeners or releases remain");
	return ret;
}

/* ---- TOMs ---- */

struct tom_dump_ctx {
	struct toe_tom_walk walk;
	struct sk_buff *skb;
	struct netlink_callback *cb;
	unsigned int done;
};

static int opentoe_fill_tom(struct toe_tom_walk *w, const struct tom_info *t)
{
	struct tom_dump_ctx *ctx = container_of(w, struct tom_dump_ctx, walk);
	struct sk_buff *skb = ctx->skb;
	const struct toe_id *id;
	struct nlattr *nest;
	void *hdr;

	hdr = opentoe_dump_hdr(skb, ctx->cb, OPENTOE_CMD_TOM_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_string(skb, OPENTOE_A_TOM_NAME, t->name) ||
	    nla_put_u32(skb, OPENTOE_A_TOM_NDEVS, t->ndevs))
		goto cancel;
	nest = nla_nest_start(skb, OPENTOE_A_TOM_IDS);
	if (!nest)
		goto cancel;
	for (id = t->id_table; id->id; id++)
		if (nla_put_u32(skb, OPENTOE_A_TOM_ID, id->id))
			goto cancel;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	ctx->done++;
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int opentoe_tom_get_dumpit(struct sk_buff *skb,
				  struct netlink_callback *cb)
{
	struct tom_dump_ctx ctx = {
		.walk.fn = opentoe_fill_tom,
		.skb = skb,
		.cb = cb,
	};

	ctx.walk.skip = cb->args[0];
	toe_walk_toms(&ctx.walk);
	cb->args[0] += ctx.done;
	return skb->len;
}

/* ---- TIDs ---- */

/*
 * The reply to a TID_ALLOC (with its L2T index) or TID_RESERVE, in msg
 * (consumed): the device and the TID taken.
 */
static int opentoe_tid_reply(struct sk_buff *msg, struct genl_info *info,
			     u8 cmd, struct toedev *dev, unsigned int tid,
			     const unsigned int *l2t_idx)
{
	void *hdr = genlmsg_put_reply(msg, info, &opentoe_family, 0, cmd);

	if (!hdr || nla_put_u32(msg, OPENTOE_A_DEV_INDEX, dev->toe_index) ||
	    nla_put_u32(msg, OPENTOE_A_TID, tid) ||
	    (l2t_idx && nla_put_u32(msg, OPENTOE_A_L2T_INDEX, *l2t_idx)) ||
	    (info->attrs[OPENTOE_A_SERVER] &&
	     nla_put_flag(msg, OPENTOE_A_SERVER))) {
		/* nobody will ever know the TID: give it back */
		if (info->attrs[OPENTOE_A_SERVER])
			toe_stid_free(dev, tid);
		else
			toe_close(dev, tid);
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int opentoe_tid_alloc_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct toe_flow flow = {};
	unsigned int tid, l2t_idx;
	u8 dfamily = 0;
	struct toedev *dev;
	struct sk_buff *msg;
	int ret;

	ret = opentoe_get_addr(info, OPENTOE_A_FLOW_SADDR4,
			       OPENTOE_A_FLOW_SADDR6, &flow.family,
			       &flow.saddr);
	if (ret)
		return ret;
	dfamily = flow.family;
	ret = opentoe_get_addr(info, OPENTOE_A_FLOW_DADDR4,
			       OPENTOE_A_FLOW_DADDR6, &dfamily, &flow.daddr);
	if (ret)
		return ret;
	if (!flow.family || (!info->attrs[OPENTOE_A_FLOW_DADDR4] &&
			     !info->attrs[OPENTOE_A_FLOW_DADDR6])) {
		NL_SET_ERR_MSG(info->extack,
			       "source and destination address needed");
		return -EINVAL;
	}
	if (opentoe_get_port(info, OPENTOE_A_FLOW_SPORT, &flow.sport) ||
	    opentoe_get_port(info, OPENTOE_A_FLOW_DPORT, &flow.dport))
		return -EINVAL;

	dev = opentoe_get_dev_msg(info, &msg);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	if (info->attrs[OPENTOE_A_TID]) {
		/* a reserved TID: refused, it stays reserved (the caller's) */
		tid = nla_get_u32(info->attrs[OPENTOE_A_TID]);
		ret = toe_bind(dev, tid, &flow, &l2t_idx);
		if (ret == -ENOENT)
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[OPENTOE_A_TID],
					    "TID not reserved");
	} else {
		ret = toe_connect(dev, &flow, &tid, &l2t_idx);
	}
	if (ret) {
		nlmsg_free(msg);
		goto out;
	}
	ret = opentoe_tid_reply(msg, info, OPENTOE_CMD_TID_ALLOC, dev, tid,
				&l2t_idx);
out:
	toedev_put(dev);
	return ret;
}

static int opentoe_tid_free_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct toedev *dev;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, OPENTOE_A_TID))
		return -EINVAL;
	dev = opentoe_get_dev(info);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	if (info->attrs[OPENTOE_A_SERVER]) {
		ret = toe_stid_free(dev,
				    nla_get_u32(info->attrs[OPENTOE_A_TID]));
		if (ret == -ENOENT)
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[OPENTOE_A_TID],
					    "server TID not reserved");
		toedev_put(dev);
		return ret;
	}
	ret = toe_close(dev, nla_get_u32(info->attrs[OPENTOE_A_TID]));
	if (ret == -ENOENT)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[OPENTOE_A_TID],
				    "TID not held");
	toedev_put(dev);
	return ret;
}

static int opentoe_tid_reserve_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct toedev *dev;
	struct sk_buff *msg;
	unsigned int tid;
	int ret;

	dev = opentoe_get_dev_msg(info, &msg);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	if (info->attrs[OPENTOE_A_SERVER])
		ret = toe_stid_reserve(dev, &tid);
	else
		ret = toe_reserve(dev, &tid);
	if (ret) {
		if (ret == -ENOSPC && info->attrs[OPENTOE_A_SERVER])
			NL_SET_ERR_MSG(info->extack,
				       "no server TID free on the device");
		nlmsg_free(msg);
		goto out;
	}
	ret = opentoe_tid_reply(msg, info, OPENTOE_CMD_TID_RESERVE, dev, tid,
				NULL);
out:
	toedev_put(dev);
	return ret;
}

/* ---- L2T ---- */

/*
 * The messages of one device in a dump, from position *pos on (an index of
 * the device's table); < 0 when skb is full, *pos then where to resume.
 */
typedef int (*opentoe_dev_dump_fn)(struct sk_buff *skb,
				   struct netlink_callback *cb,
				   struct toedev *dev, int idx,
				   unsigned long *pos);

/* A dump of every device (or the one DEV_INDEX names), fn for each. */
static int opentoe_dump_devs(struct sk_buff *skb, struct netlink_callback *cb,
			     opentoe_dev_dump_fn fn)
{
	const struct genl_dumpit_info *gi = genl_dumpit_info(cb);
	struct nlattr *filter = gi->attrs[OPENTOE_A_DEV_INDEX];
	int idx = cb->args[0] ? cb->args[0] : 1;
	struct net *net = sock_net(skb->sk);
	unsigned long pos = cb->args[1];
	struct toedev *dev;
	int ret = 0;

	while (ret >= 0 && (dev = toedev_get_next(net, &idx))) {
		if (!filter || nla_get_u32(filter) == idx) {
			down_read(&dev->tom_sem);
			ret = fn(skb, cb, dev, idx, &pos);
			up_read(&dev->tom_sem);
		}
		toedev_put(dev);
		if (ret >= 0) {
			idx++;
			pos = 0;
		}
	}
	cb->args[0] = idx;
	cb->args[1] = pos;
	return skb->len;
}

static int opentoe_l2t_dump_dev(struct sk_buff *skb,
				struct netlink_callback *cb, struct toedev *dev,
				int idx, unsigned long *pos)
{
	unsigned int e, size = dev->offload_mod->l2t_size(dev);
	void *hdr;
	int ret = 0;

	for (e = *pos; e < size; e++) {
		hdr = opentoe_dump_dev_hdr(skb, cb, OPENTOE_CMD_L2T_GET, idx);
		if (!hdr) {
			ret = -EMSGSIZE;
			break;
		}
		ret = dev->offload_mod->fill_l2t(dev, e, skb);
		if (ret <= 0) {
			genlmsg_cancel(skb, hdr);
			if (ret < 0)
				break;
			continue;
		}
		genlmsg_end(skb, hdr);
	}
	*pos = e;
	return ret;
}

static int opentoe_l2t_get_dumpit(struct sk_buff *skb,
				  struct netlink_callback *cb)
{
	return opentoe_dump_devs(skb, cb, opentoe_l2t_dump_dev);
}

/*
 * One device's part of a TID_GET or LISTEN_GET dump: the TOM's method for
 * the command (fill_tid, fill_listen) puts the first entry at *pos or after
 * in a message, and moves *pos to it.  LISTEN_GET with SERVER: the server
 * TIDs reserved for listeners to come instead of the listeners.
 */
static int opentoe_fill_dump_dev(struct sk_buff *skb,
				 struct netlink_callback *cb,
				 struct toedev *dev, int idx,
				 unsigned long *pos)
{
	const struct genl_dumpit_info *gi = genl_dumpit_info(cb);
	bool reserved = gi->attrs[OPENTOE_A_SERVER];
	u8 cmd = gi->op.cmd;
	void *hdr;
	int ret;

	for (;; (*pos)++) {
		hdr = opentoe_dump_dev_hdr(skb, cb, cmd, idx);
		if (!hdr)
			return -EMSGSIZE;
		if (cmd == OPENTOE_CMD_TID_GET)
			ret = dev->offload_mod->fill_tid(dev, pos, skb);
		else
			ret = dev->offload_mod->fill_listen(dev, pos, skb,
							    reserved);
		if (ret <= 0) {
			genlmsg_cancel(skb, hdr);
			return ret;
		}
		genlmsg_end(skb, hdr);
	}
}

/* TID_GET and LISTEN_GET */
static int opentoe_fill_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return opentoe_dump_devs(skb, cb, opentoe_fill_dump_dev);
}

/* ---- listeners ---- */

static int opentoe_get_listener(struct genl_info *info, struct toe_listener *l)
{
	struct nlattr *fa = info->attrs[OPENTOE_A_LISTEN_FAMILY];
	int ret;

	memset(l, 0, sizeof(*l));
	if (fa) {
		l->family = nla_get_u8(fa);
		if (l->family != AF_INET && l->family != AF_INET6) {
			NL_SET_ERR_MSG_ATTR(info->extack, fa,
					    "family is not AF_INET(6)");
			return -EAFNOSUPPORT;
		}
	}
	ret = opentoe_get_addr(info, OPENTOE_A_LISTEN_ADDR4,
			       OPENTOE_A_LISTEN_ADDR6, &l->family, &l->addr);
	if (ret)
		return ret;
	if (!l->family) {
		NL_SET_ERR_MSG(info->extack, "address or family needed");
		return -EINVAL;
	}
	return opentoe_get_port(info, OPENTOE_A_LISTEN_PORT, &l->port);
}

static int opentoe_listen_start_doit(struct sk_buff *skb,
				     struct genl_info *info)
{
	struct toedev *dev = NULL;
	struct toe_listener l;
	int ret = opentoe_get_listener(info, &l);

	if (ret)
		return ret;
	if (info->attrs[OPENTOE_A_TID]) {
		if (!info->attrs[OPENTOE_A_DEV_INDEX]) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[OPENTOE_A_TID],
					    "a server TID needs its DEV_INDEX");
			return -EINVAL;
		}
		l.has_stid = true;
		l.stid = nla_get_u32(info->attrs[OPENTOE_A_TID]);
	}
	if (info->attrs[OPENTOE_A_DEV_INDEX]) {
		dev = opentoe_get_dev(info);
		if (IS_ERR(dev))
			return PTR_ERR(dev);
	}
	ret = toe_listen_start(genl_info_net(info), &l, dev);
	switch (ret) {
	case -ENOENT:
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[OPENTOE_A_TID],
				    "server TID not reserved");
		break;
	case -EEXIST:
		NL_SET_ERR_MSG(
			info->extack,
			"a listener of this address already reaches the device");
		break;
	case -ENOPROTOOPT:
		NL_SET_ERR_MSG(info->extack, "no TOM attached to the device");
		break;
	case -ENOSPC:
		NL_SET_ERR_MSG(info->extack,
			       "no server TID free on the device");
		break;
	}
	if (dev)
		toedev_put(dev);
	return ret;
}

static int opentoe_listen_stop_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *da = info->attrs[OPENTOE_A_DEV_INDEX];
	struct toe_listener l;
	int ret = opentoe_get_listener(info, &l);

	if (ret)
		return ret;
	/* no device lookup: a device that went took its listeners along */
	l.dev_index = da ? nla_get_u32(da) : 0;
	ret = toe_listen_stop(genl_info_net(info), &l);
	if (ret == -ENOENT)
		NL_SET_ERR_MSG(info->extack, "no such listener");
	return ret;
}

/* ---- family ---- */

static const struct genl_small_ops opentoe_ops[] = {
	{
		.cmd = OPENTOE_CMD_DEV_GET,
		.doit = opentoe_dev_get_doit,
		.dumpit = opentoe_dev_get_dumpit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = OPENTOE_CMD_DEV_ATTACH,
		.doit = opentoe_dev_attach_doit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = OPENTOE_CMD_DEV_DETACH,
		.doit = opentoe_dev_detach_doit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = OPENTOE_CMD_TOM_GET,
		.dumpit = opentoe_tom_get_dumpit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = OPENTOE_CMD_TID_ALLOC,
		.doit = opentoe_tid_alloc_doit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = OPENTOE_CMD_TID_FREE,
		.doit = opentoe_tid_free_doit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = OPENTOE_CMD_TID_GET,
		.dumpit = opentoe_fill_dumpit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = OPENTOE_CMD_TID_RESERVE,
		.doit = opentoe_tid_reserve_doit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = OPENTOE_CMD_L2T_GET,
		.dumpit = opentoe_l2t_get_dumpit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = OPENTOE_CMD_LISTEN_START,
		.doit = opentoe_listen_start_doit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = OPENTOE_CMD_LISTEN_STOP,
		.doit = opentoe_listen_stop_doit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = OPENTOE_CMD_LISTEN_GET,
		.dumpit = opentoe_fill_dumpit,
		.flags = GENL_ADMIN_PERM,
	},
};

static const struct genl_multicast_group opentoe_mcgrps[] = {
	{
		.name = OPENTOE_GENL_MCGRP_EVENTS,
		.flags = GENL_MCAST_CAP_NET_ADMIN,
	},
};

static struct genl_family opentoe_family __ro_after_init = {
	.name = OPENTOE_GENL_NAME,
	.version = OPENTOE_GENL_VERSION,
	.maxattr = OPENTOE_A_MAX,
	.policy = opentoe_policy,
	.netnsok = true,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.small_ops = opentoe_ops,
	.n_small_ops = ARRAY_SIZE(opentoe_ops),
	.mcgrps = opentoe_mcgrps,
	.n_mcgrps = ARRAY_SIZE(opentoe_mcgrps),
};

int opentoe_genl_init(void)
{
	int ret = genl_register_family(&opentoe_family);

	if (!ret)
		WRITE_ONCE(opentoe_genl_ready, true);
	return ret;
}

void opentoe_genl_exit(void)
{
	WRITE_ONCE(opentoe_genl_ready, false);
	genl_unregister_family(&opentoe_family);
}
