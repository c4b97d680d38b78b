// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* opentoe: the hook each interface of a datapath has (hooks.h). */
#include <net/if.h>
#include <bpf/bpf.h>
#include "opentoe_forward.h"
#include "lib/hooks.h"
#include "lib/netns.h"

const char *toe_hook_why_name(unsigned int why)
{
	static const char *const keys[] = {
		[TOE_HOOK_WHY_FORCED] = "forced",
		[TOE_HOOK_WHY_VETH] = "veth",
		[TOE_HOOK_WHY_NATIVE] = "native_xdp",
		[TOE_HOOK_WHY_NO_NATIVE] = "no_native_xdp",
		[TOE_HOOK_WHY_KEPT] = "kept",
		[TOE_HOOK_WHY_SKB_MODE] = "xdp_mode",
		[TOE_HOOK_WHY_VLAN] = "vlan",
	};

	if (why < sizeof(keys) / sizeof(keys[0]) && keys[why])
		return keys[why];
	return "unknown";
}

const char *toe_hook_why_text(unsigned int why)
{
	switch (why) {
	case TOE_HOOK_WHY_FORCED:
		return "forced (--hook)";
	case TOE_HOOK_WHY_VETH:
		return "veth: tc keeps the skb (XDP copies every frame and turns TSO off on the peer)";
	case TOE_HOOK_WHY_NATIVE:
		return "native XDP driver";
	case TOE_HOOK_WHY_NO_NATIVE:
		return "no native XDP in its driver (XDP only in skb mode): tc";
	case TOE_HOOK_WHY_KEPT:
		return "kept: opentoe was already there with it";
	case TOE_HOOK_WHY_SKB_MODE:
		return "--xdp-mode asked for XDP";
	case TOE_HOOK_WHY_VLAN:
		return "VLAN sub-interface: tc gets its skbs untagged (XDP only in skb mode there)";
	}
	return "unknown";
}

/* What the forward path sends into the interface with. */
static const char *into(const struct toe_iface *v)
{
	if (v->flags & TOE_IFACE_TC)
		return v->flags & TOE_IFACE_PEER ?
			       "redirect_peer (no transmit here: its qdisc and tcpdump on it see nothing)" :
			       "redirect / redirect_neigh";
	return v->flags & TOE_IFACE_NO_XDP_TX ?
		       "none from XDP (a veth: the stack forwards)" :
		       "XDP redirect";
}

static void show_one(__u32 ifindex, const char *name, const struct toe_iface *v,
		     FILE *f, struct toe_json *j, bool json)
{
	const char *hook = v->flags & TOE_IFACE_TC ? "tc" : "xdp";

	if (!json) {
		fprintf(f, "%-16s %-5s %-14s into it: %s\n", name, hook,
			toe_hook_why_name(v->hook_why), into(v));
		return;
	}
	tj_obj(j);
	tj_kstr(j, "iface", name);
	tj_ku64(j, "ifindex", ifindex);
	tj_kstr(j, "hook", hook);
	tj_kstr(j, "why", toe_hook_why_name(v->hook_why));
	tj_kstr(j, "why_text", toe_hook_why_text(v->hook_why));
	tj_key(j, "redirect_peer");
	tj_bool(j, v->flags & TOE_IFACE_PEER);
	tj_key(j, "xdp_redirect_into");
	tj_bool(j, !(v->flags & TOE_IFACE_NO_XDP_TX));
	tj_obj_end(j);
}

void toe_hooks_show(int ifaces_fd, __u32 only, FILE *f, struct toe_json *j,
		    bool json)
{
	char name[IF_NAMESIZE];
	__u64 ns = toe_netns_cookie();
	__u32 key, next, *prev = NULL;
	struct toe_iface v;

	while (ifaces_fd >= 0 &&
	       !bpf_map_get_next_key(ifaces_fd, prev, &next)) {
		key = next;
		prev = &key;
		if ((only && key != only) ||
		    bpf_map_lookup_elem(ifaces_fd, &key, &v) || v.netns != ns ||
		    !if_indextoname(key, name))
			continue;
		show_one(key, name, &v, f, j, json);
	}
}
