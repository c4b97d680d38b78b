/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toe-loader: the attach steps of a load (attach.c).
 */
#ifndef __TOE_ATTACH_H
#define __TOE_ATTACH_H

#include <stdbool.h>
#include <linux/types.h>

struct opts;
struct bpf_object;

int attach_sockops(const struct opts *o, int prog_fd);
int attach_skmsg(const struct opts *o, int prog_fd, int map_fd);
/*
 * The XDP chain: toe_xdp_next (slot = ifindex) and toe_xdp_next_ns, the
 * namespace that owns each slot.
 */
struct chain_maps {
	int next_fd;
	int ns_fd;
	const struct bpf_object *obj; /* the loaded object (xdpdisp.c) */
};

/*
 * XDP on the interface, or with --hook tc toe_tc on its tcx ingress: a
 * link an earlier load pinned gets prog_fd in place, else a new one is
 * made and pinned.  cm: the chain an XDP program already there goes into.
 * 0 or -errno.
 */
int attach_iface(const struct opts *o, const char *ifname, bool tc, int prog_fd,
		 const struct chain_maps *cm);
int add_egress(const char *ifname, __u32 ifindex, __u32 flags, __u16 why,
	       int dev_fd, int if_fd);
/* Pin a link just made (path); rollback detaches and unpins it.  0 or -errno. */
int pin_new_link(int link_fd, const char *path);

/* What swap_if_link found pinned (or a negative error). */
enum if_link {
	IF_LINK_NONE = 0, /* no usable link (a stale pin is removed) */
	IF_LINK_SWAPPED = 1, /* ours: the new program is in it */
};
/*
 * The link an earlier load pinned for ifindex (pin name fmt, its path into
 * path), if it is still a link of this type there: prog_fd is swapped in.
 */
int swap_if_link(const struct opts *o, const char *fmt, __u32 type,
		 __u32 ifindex, int prog_fd, const char *ifname,
		 const char *what, char *path);
/* An interface is XDP or tc, never both (tc: and no 'steer cpu'). */
int check_other_hook(const struct opts *o, const char *ifname, bool tc);

#endif /* __TOE_ATTACH_H */
