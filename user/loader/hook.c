// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader load --hook auto|xdp|tc: which hook each --dev gets, and why.
 *
 * auto (the default): a veth gets tc (on a veth XDP copies every frame into
 * a page-pool page, turns TSO off on its peer, and a frame it redirects
 * loses CHECKSUM_PARTIAL); a device whose driver runs XDP natively (a NIC,
 * a tun) keeps XDP; a VLAN sub-interface gets tc (resolve_hooks(): --hook
 * xdp is refused there); any other device (dummy, bridge, ...: XDP only in skb
 * mode) gets tc.  An interface opentoe is already on keeps the hook it
 * has, and the reason it was given it (toe_ifaces' hook_why: status says
 * "veth", not "kept", and a kept bridge stays TOE_IFACE_NO_XDP_TX).
 * Native XDP: an interface with an XDP program says by its attach mode;
 * else the kernel's XDP feature flags say (Linux 6.3, netdev netlink);
 * only where the kernel has none is it probed, saying so, by attaching a
 * two-instruction XDP program in driver mode for a moment (a link, closed
 * at once).
 *
 * The choice is written into toe_ifaces (struct toe_iface: flags
 * TOE_IFACE_TC, hook_why), where status and toectl read it back.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "opentoe_forward.h"
#include "loader.h"
#include "pins.h"
#include "hook.h"
#include "lib/pinned.h"
#include "lib/err.h"
#include "lib/hooks.h"
#include "lib/netns.h"
#include "lib/nlmsg.h"
#include "lib/path.h"

const char *hook_why_key(unsigned int why)
{
	return toe_hook_why_name(why);
}

/* The interface's driver is the one named (ETHTOOL_GDRVINFO). */
static bool iface_driver_is(const char *ifname, const char *driver)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = {};
	bool same = false;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&di;
	if (!ioctl(fd, SIOCETHTOOL, &ifr))
		same = !strcmp(di.driver, driver);
	close(fd);
	return same;
}

/* The interface is a veth. */
bool iface_is_veth(const char *ifname)
{
	return iface_driver_is(ifname, "veth");
}

/*
 * The interface is a VLAN sub-interface (8021q: 802.1Q or 802.1ad), whose
 * driver reports itself so (vlan_ethtool_get_drvinfo()).
 */
bool iface_is_vlan(const char *ifname)
{
	return iface_driver_is(ifname, "802.1Q VLAN Support");
}

/*
 * Whether the interface's link has its other end in another network
 * namespace: RTM_GETLINK answers with IFLA_LINK_NETNSID then (a veth whose
 * peer was moved away).  false on any error.
 */
bool iface_peer_elsewhere(__u32 ifindex)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
	} req = {
		.nh = { .nlmsg_len = sizeof(req),
			.nlmsg_type = RTM_GETLINK,
			.nlmsg_flags = NLM_F_REQUEST,
			.nlmsg_seq = 1 },
		.ifi = { .ifi_family = AF_UNSPEC, .ifi_index = (int)ifindex },
	};
	char buf[16384];
	struct nlmsghdr *nh = (void *)buf;
	struct rtattr *rta;
	bool found = false;
	int fd, len, alen;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return false;
	if (send(fd, &req, sizeof(req), 0) < 0)
		goto out;
	len = recv(fd, buf, sizeof(buf), 0);
	if (len < (int)NLMSG_LENGTH(sizeof(struct ifinfomsg)) ||
	    !NLMSG_OK(nh, (unsigned int)len) || nh->nlmsg_type != RTM_NEWLINK)
		goto out;
	rta = IFLA_RTA(NLMSG_DATA(nh));
	alen = IFLA_PAYLOAD(nh);
	for (; RTA_OK(rta, alen); rta = RTA_NEXT(rta, alen))
		if (rta->rta_type == IFLA_LINK_NETNSID)
			found = true;
out:
	close(fd);
	return found;
}

/* A program that passes everything, for the native XDP probe. */
static int pass_prog(void)
{
	static int fd = -1;
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K,
		  .dst_reg = BPF_REG_0,
		  .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	if (fd < 0)
		fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "toe_xdp_probe", "GPL",
				   insns, 2, NULL);
	return fd;
}

/*
 * The kernel's own word on a device's XDP (Linux 6.3: the netdev
 * generic-netlink family, NETDEV_CMD_DEV_GET's NETDEV_A_DEV_XDP_FEATURES;
 * the UAPI header is newer than Debian 12's): 1 if the driver runs XDP
 * natively (NETDEV_XDP_ACT_BASIC), 0 if not, -1 if the kernel does not
 * say (no such family: probe instead).
 */
#define TOE_NETDEV_CMD_DEV_GET 1
#define TOE_NETDEV_A_DEV_IFINDEX 1
#define TOE_NETDEV_A_DEV_XDP_FEATURES 3
#define TOE_NETDEV_XDP_ACT_BASIC 1ULL

static int xdp_features_cb(const struct nlmsghdr *nh, struct nlattr **tb,
			   void *ctx)
{
	const struct nlattr *a = tb[TOE_NETDEV_A_DEV_XDP_FEATURES];
	__u64 f;

	(void)nh;
	if (!a || toe_nla_len(a) < (int)sizeof(f))
		return 0;
	memcpy(&f, toe_nla_data(a), sizeof(f));
	*(int *)ctx = !!(f & TOE_NETDEV_XDP_ACT_BASIC);
	return 0;
}

static int xdp_features(__u32 ifindex)
{
	static int fd = -2;
	static __u16 family;
	static __u32 seq;
	struct toe_nlmsg m;
	int native = -1;

	if (fd == -2) {
		fd = toe_nlmsg_socket(false);
		if (fd >= 0 && toe_nlmsg_resolve(fd, &seq, "netdev", NULL,
						 &family, NULL, NULL, 0)) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0)
		return -1;
	toe_nlmsg_init(&m, family, NLM_F_REQUEST, TOE_NETDEV_CMD_DEV_GET, 1);
	if (toe_nla_put_u32(&m, TOE_NETDEV_A_DEV_IFINDEX, ifindex) ||
	    toe_nlmsg_call(fd, &seq, &m, TOE_NETDEV_A_DEV_XDP_FEATURES,
			   xdp_features_cb, &native, "netdev dev-get", NULL, 0))
		return -1;
	return native;
}

/*
 * Whether the interface's driver runs XDP natively (see the top): the
 * attach mode of a program already there, else the kernel's XDP feature
 * flags, else (before Linux 6.3) a probe: a pass program attached in
 * driver mode for a moment, which on some NICs rebuilds the rings or
 * flaps the link, so the loader says when it does it.
 */
static bool native_xdp(__u32 ifindex, const char *dev)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = XDP_FLAGS_DRV_MODE);
	int prog, link, f;

	if (!bpf_xdp_query(ifindex, 0, &q) && q.prog_id)
		return q.attach_mode == XDP_ATTACHED_DRV ||
		       q.attach_mode == XDP_ATTACHED_HW ||
		       q.attach_mode == XDP_ATTACHED_MULTI;
	f = xdp_features(ifindex);
	if (f >= 0)
		return f;
	fprintf(stderr,
		"toe-loader: note: this kernel reports no XDP features (netdev netlink, Linux 6.3): native XDP on %s probed by attaching a pass program for a moment (--hook xdp or tc chooses without it)\n",
		dev);
	prog = pass_prog();
	if (prog < 0)
		return false;
	link = bpf_link_create(prog, ifindex, BPF_XDP, &lo);
	if (link < 0)
		return false;
	close(link); /* detaches it */
	return true;
}

/* The hook an earlier load left on the interface: 1 tc, 0 XDP, -1 none. */
static int hook_in_place(const struct opts *o, __u32 ifindex)
{
	static const char *const tc[] = { TOE_PIN_LINK_TC, TOE_PIN_TC_INGRESS };
	static const char *const xdp[] = { TOE_PIN_LINK_XDP, TOE_PIN_XDP_DISP };
	char path[PATH_MAX];
	int i;

	for (i = 0; i < 2; i++) {
		pin_path(path, o->pin_dir, tc[i], ifindex);
		if (!access(path, F_OK))
			return 1;
		pin_path(path, o->pin_dir, xdp[i], ifindex);
		if (!access(path, F_OK))
			return 0;
	}
	return -1;
}

/*
 * Why an earlier load in this namespace put ifindex on its hook
 * (toe_ifaces' hook_why), or TOE_HOOK_WHY_KEPT if it is not recorded.
 */
static __u8 why_in_place(const struct opts *o, __u32 ifindex)
{
	char path[PATH_MAX];
	struct toe_iface v;
	__u8 why = TOE_HOOK_WHY_KEPT;
	int fd;

	toe_join(path, sizeof(path), o->pin_dir, TOE_MAP(IFACES));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return why;
	if (!bpf_map_lookup_elem(fd, &ifindex, &v) &&
	    v.netns == toe_netns_cookie() && v.hook_why &&
	    v.hook_why <= TOE_HOOK_WHY_VLAN)
		why = v.hook_why;
	close(fd);
	return why;
}

/*
 * o->dev_tc[] and o->dev_why[] for every --dev (interfaces checked).  0,
 * or 1 after a message: --hook xdp named a VLAN sub-interface.  A vlan
 * device has XDP only in skb mode, and XDP on its parent sees frames whose
 * tag the NIC may already have stripped (in the descriptor, not the
 * frame), and would have to push tags into frames redirected to it: tc on
 * the sub-interface itself gets the skb untagged, its tag in skb metadata,
 * and bpf_fib_lookup() and the redirect helpers take the vlan device as
 * any other (the kernel's vlan_dev_hard_start_xmit() tags it on the way).
 */
int resolve_hooks(struct opts *o)
{
	int i;

	for (i = 0; i < o->ndevs; i++) {
		__u32 ifindex = if_nametoindex(o->devs[i]);
		int cur = hook_in_place(o, ifindex);

		if (o->hook == TOE_HOOK_XDP && iface_is_vlan(o->devs[i])) {
			toe_err("%s is a VLAN sub-interface: opentoe runs on tc there, not XDP (--hook tc, or auto); nothing was changed",
				o->devs[i]);
			return 1;
		}
		if (o->hook != TOE_HOOK_AUTO) {
			o->dev_tc[i] = o->hook == TOE_HOOK_TC;
			o->dev_why[i] = TOE_HOOK_WHY_FORCED;
		} else if (cur >= 0) {
			o->dev_tc[i] = cur;
			o->dev_why[i] = why_in_place(o, ifindex);
			o->dev_kept[i] = true;
		} else if (iface_is_vlan(o->devs[i])) {
			o->dev_tc[i] = true;
			o->dev_why[i] = TOE_HOOK_WHY_VLAN;
		} else if (o->xdp_flags) {
			o->dev_tc[i] = false;
			o->dev_why[i] = TOE_HOOK_WHY_SKB_MODE;
		} else if (iface_is_veth(o->devs[i])) {
			o->dev_tc[i] = true;
			o->dev_why[i] = TOE_HOOK_WHY_VETH;
		} else if (native_xdp(ifindex, o->devs[i])) {
			o->dev_tc[i] = false;
			o->dev_why[i] = TOE_HOOK_WHY_NATIVE;
		} else {
			o->dev_tc[i] = true;
			o->dev_why[i] = TOE_HOOK_WHY_NO_NATIVE;
		}
	}
	return 0;
}
