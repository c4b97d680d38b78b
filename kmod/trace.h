/* SPDX-License-Identifier: GPL-2.0 */
/*
 * opentoe: the module's tracepoints (tracefs events/opentoe/, bpftrace's
 * tracepoint:opentoe:*; scripts/trace/tid.bt follows a TID's life).
 * Defined once, in main.c (CREATE_TRACE_POINTS).
 *
 *  toedev_register, toedev_unregister  a TOE device in the registry
 *  tid_reserve   a TID held for a flow to come (TID_RESERVE)
 *  tid_bind      a reserved TID given its flow (TID_ALLOC + TID), or not
 *  tid_free      the host lets go (TID_FREE, close, forced detach)
 *  tid_release   the device lets go (after tid_free of a bound TID)
 *  l2t_update    an L2T entry written to the device (new or neighbour change)
 *  listen_start, listen_stop  a listener on a server TID, or refused one
 *  stid_reserve, stid_free  a server TID held for a listener to come
 *
 * A device is named by its registry index and name; a TID by the device's
 * index and its number.  Addresses: IPv4 as ::ffff:a.b.c.d (printed so),
 * ports in host order.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM opentoe

#if !defined(__OPENTOE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define __OPENTOE_TRACE_H

#include <linux/in6.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "toedev.h"

/* the kernel's trace-event layout, not clang-format's */
/* clang-format off */
TRACE_EVENT(toedev_register,
	TP_PROTO(const struct toedev *dev),
	TP_ARGS(dev),
	TP_STRUCT__entry(
		__field(int, index)
		__array(char, name, TOENAMSIZ)
		__field(unsigned int, ttid)
		__field(unsigned int, nconn)
		__field(int, ifindex)
	),
	TP_fast_assign(
		__entry->index = dev->toe_index;
		strscpy(__entry->name, dev->name, TOENAMSIZ);
		__entry->ttid = dev->ttid;
		__entry->nconn = dev->nconn;
		__entry->ifindex = dev->lldev ? dev->lldev->ifindex : 0;
	),
	TP_printk("index=%d name=%s ttid=%u nconn=%u ifindex=%d",
		  __entry->index, __entry->name, __entry->ttid,
		  __entry->nconn, __entry->ifindex)
);

TRACE_EVENT(toedev_unregister,
	TP_PROTO(const struct toedev *dev),
	TP_ARGS(dev),
	TP_STRUCT__entry(
		__field(int, index)
		__array(char, name, TOENAMSIZ)
	),
	TP_fast_assign(
		__entry->index = dev->toe_index;
		strscpy(__entry->name, dev->name, TOENAMSIZ);
	),
	TP_printk("index=%d name=%s", __entry->index, __entry->name)
);

DECLARE_EVENT_CLASS(opentoe_tid,
	TP_PROTO(const struct toedev *dev, unsigned int tid),
	TP_ARGS(dev, tid),
	TP_STRUCT__entry(
		__field(int, index)
		__array(char, name, TOENAMSIZ)
		__field(unsigned int, tid)
	),
	TP_fast_assign(
		__entry->index = dev->toe_index;
		strscpy(__entry->name, dev->name, TOENAMSIZ);
		__entry->tid = tid;
	),
	TP_printk("index=%d name=%s tid=%u", __entry->index, __entry->name,
		  __entry->tid)
);

DEFINE_EVENT(opentoe_tid, tid_reserve,
	TP_PROTO(const struct toedev *dev, unsigned int tid),
	TP_ARGS(dev, tid)
);

DEFINE_EVENT(opentoe_tid, tid_release,
	TP_PROTO(const struct toedev *dev, unsigned int tid),
	TP_ARGS(dev, tid)
);

/* a server TID reserved for a listener to come, and given back unused */
DEFINE_EVENT(opentoe_tid, stid_reserve,
	TP_PROTO(const struct toedev *dev, unsigned int tid),
	TP_ARGS(dev, tid)
);

DEFINE_EVENT(opentoe_tid, stid_free,
	TP_PROTO(const struct toedev *dev, unsigned int tid),
	TP_ARGS(dev, tid)
);

/* @bound: the device had the TID (a tid_release follows); else reserved */
TRACE_EVENT(tid_free,
	TP_PROTO(const struct toedev *dev, unsigned int tid, bool bound),
	TP_ARGS(dev, tid, bound),
	TP_STRUCT__entry(
		__field(int, index)
		__array(char, name, TOENAMSIZ)
		__field(unsigned int, tid)
		__field(bool, bound)
	),
	TP_fast_assign(
		__entry->index = dev->toe_index;
		strscpy(__entry->name, dev->name, TOENAMSIZ);
		__entry->tid = tid;
		__entry->bound = bound;
	),
	TP_printk("index=%d name=%s tid=%u bound=%d", __entry->index,
		  __entry->name, __entry->tid, __entry->bound)
);

/* @ret: 0 bound (on L2T entry @l2t), or why not (the TID stays reserved) */
TRACE_EVENT(tid_bind,
	TP_PROTO(const struct toedev *dev, unsigned int tid,
		 const struct toe_flow *flow, int l2t, int ret),
	TP_ARGS(dev, tid, flow, l2t, ret),
	TP_STRUCT__entry(
		__field(int, index)
		__array(char, name, TOENAMSIZ)
		__field(unsigned int, tid)
		__field(int, l2t)
		__field(int, ret)
		__field(u8, family)
		__array(u8, saddr, 16)
		__array(u8, daddr, 16)
		__field(u16, sport)
		__field(u16, dport)
	),
	TP_fast_assign(
		__entry->index = dev->toe_index;
		strscpy(__entry->name, dev->name, TOENAMSIZ);
		__entry->tid = tid;
		__entry->l2t = l2t;
		__entry->ret = ret;
		__entry->family = flow->family;
		memcpy(__entry->saddr, &flow->saddr, 16);
		memcpy(__entry->daddr, &flow->daddr, 16);
		if (flow->family == AF_INET) { /* ::ffff:a.b.c.d */
			__entry->saddr[10] = 0xff;
			__entry->saddr[11] = 0xff;
			__entry->daddr[10] = 0xff;
			__entry->daddr[11] = 0xff;
		}
		__entry->sport = be16_to_cpu(flow->sport);
		__entry->dport = be16_to_cpu(flow->dport);
	),
	TP_printk("index=%d name=%s tid=%u %pI6c:%u -> %pI6c:%u l2t=%d ret=%d",
		  __entry->index, __entry->name, __entry->tid,
		  __entry->saddr, __entry->sport, __entry->daddr,
		  __entry->dport, __entry->l2t, __entry->ret)
);

TRACE_EVENT(l2t_update,
	TP_PROTO(const struct toedev *dev, unsigned int idx, u8 family,
		 const struct in6_addr *nh, const u8 *lladdr, u16 state),
	TP_ARGS(dev, idx, family, nh, lladdr, state),
	TP_STRUCT__entry(
		__field(int, index)
		__array(char, name, TOENAMSIZ)
		__field(unsigned int, idx)
		__field(u8, family)
		__array(u8, addr, 16)
		__array(u8, lladdr, 6)
		__field(u16, state)
	),
	TP_fast_assign(
		__entry->index = dev->toe_index;
		strscpy(__entry->name, dev->name, TOENAMSIZ);
		__entry->idx = idx;
		__entry->family = family;
		memcpy(__entry->addr, nh, 16);
		if (family == AF_INET) {
			__entry->addr[10] = 0xff;
			__entry->addr[11] = 0xff;
		}
		memcpy(__entry->lladdr, lladdr, 6);
		__entry->state = state;
	),
	TP_printk("index=%d name=%s l2t=%u nexthop=%pI6c lladdr=%pM state=%#x",
		  __entry->index, __entry->name, __entry->idx, __entry->addr,
		  __entry->lladdr, __entry->state)
);

DECLARE_EVENT_CLASS(opentoe_listen,
	TP_PROTO(const struct toedev *dev, int stid, u8 family,
		 const struct in6_addr *addr, __be16 port, int ret),
	TP_ARGS(dev, stid, family, addr, port, ret),
	TP_STRUCT__entry(
		__field(int, index)
		__array(char, name, TOENAMSIZ)
		__field(int, stid)
		__field(int, ret)
		__field(u8, family)
		__array(u8, addr, 16)
		__field(u16, port)
	),
	TP_fast_assign(
		__entry->index = dev->toe_index;
		strscpy(__entry->name, dev->name, TOENAMSIZ);
		__entry->stid = stid;
		__entry->ret = ret;
		__entry->family = family;
		memcpy(__entry->addr, addr, 16);
		if (family == AF_INET) {
			__entry->addr[10] = 0xff;
			__entry->addr[11] = 0xff;
		}
		__entry->port = be16_to_cpu(port);
	),
	TP_printk("index=%d name=%s stid=%d [%pI6c]:%u ret=%d",
		  __entry->index, __entry->name, __entry->stid, __entry->addr,
		  __entry->port, __entry->ret)
);

/* @stid -1 and @ret < 0: refused (ENOSPC: no server TID free) */
DEFINE_EVENT(opentoe_listen, listen_start,
	TP_PROTO(const struct toedev *dev, int stid, u8 family,
		 const struct in6_addr *addr, __be16 port, int ret),
	TP_ARGS(dev, stid, family, addr, port, ret)
);

DEFINE_EVENT(opentoe_listen, listen_stop,
	TP_PROTO(const struct toedev *dev, int stid, u8 family,
		 const struct in6_addr *addr, __be16 port, int ret),
	TP_ARGS(dev, stid, family, addr, port, ret)
);
/* clang-format on */

#endif /* __OPENTOE_TRACE_H */

/* out of tree: this folder, not include/trace/events/ */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
