/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: the pins toe-loader makes and toed reads: the maps of
 * toe_maps.h opened into a struct of fds, and the names of the links.
 */
#ifndef __TOE_PINNED_H
#define __TOE_PINNED_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include "toe_maps.h"

/*
 * One pinned map to open into the int at offset off of a struct of fds:
 * TOE_PIN(struct toe_maps, flows, FLOWS).  An optional one that is not
 * pinned (a datapath loaded by an older toe-loader) is left at -1.
 */
struct toe_pin {
	enum toe_map_id id;
	size_t off;
	bool optional;
};
#define TOE_PIN(type, field, id)                              \
	{                                                     \
		TOE_MAP_ID_##id, offsetof(type, field), false \
	}
#define TOE_PIN_OPT(type, field, id)                         \
	{                                                    \
		TOE_MAP_ID_##id, offsetof(type, field), true \
	}
/*
 * Open dir's pins of pins[0..n) into the fds of base.  On failure every fd
 * is closed and set to -1, err says which pin is missing, and -1 is returned.
 */
int toe_open_pins(const char *dir, const struct toe_pin *pins, unsigned int n,
		  void *base, char *err, size_t len);
/* Close the fds of pins[0..n) in base that are open, and set them to -1. */
void toe_close_pins(const struct toe_pin *pins, unsigned int n, void *base);
/* Close the fds that are open (>= 0) and set them to -1. */
void toe_close_fds(int *fds, unsigned int n);

/*
 * The cgroup sock_ops link (toe-loader pins it; toed follows a reload by
 * the ids behind it, datapath.c).
 */
#define TOE_PIN_LINK_SOCKOPS "link_sockops"
/*
 * The pins of per-interface links (toe-loader): ifindexes are per network
 * namespace, so the name carries the namespace too: a kind, then its
 * number, "c<COOKIE>" (TOE_NS_COOKIE: the namespace's cookie, never reused
 * while the system runs) or, in pins an older toe-loader made, "n<INODE>"
 * (TOE_NS_INO: an inode number, reused once the namespace is gone).
 * Printed with (kind, unsigned long long id, ifindex); lib/netns.h.
 */
#define TOE_PIN_LINK_XDP "link_xdp_%c%llu_if%u"
#define TOE_PIN_LINK_TC "link_tc_%c%llu_if%u"
/* The same hook without tcx (before Linux 6.6): a classic clsact filter. */
#define TOE_PIN_TC_INGRESS "tc_ingress_%c%llu_if%u"
/*
 * XDP through libxdp's dispatcher (kernels with freplace): toe_xdp's
 * component program, not a link.
 */
#define TOE_PIN_XDP_DISP "xdpd_%c%llu_if%u"
/*
 * toe_egress, the forward path's admission at tc egress where netfilter
 * programs are missing (toe-loader's egress.c): a tcx link, or without
 * tcx a classic clsact filter's program.
 */
#define TOE_PIN_LINK_EGRESS "link_egress_%c%llu_if%u"
#define TOE_PIN_TC_EGRESS "tc_egress_%c%llu_if%u"

/*
 * errno says the process or system ran out (descriptors, memory), not that
 * what was asked for is missing or refused.
 */
static inline bool toe_errno_resource(int e)
{
	return e == EMFILE || e == ENFILE || e == ENOMEM;
}

#endif /* __TOE_PINNED_H */
