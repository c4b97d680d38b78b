/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toe-loader load --hook auto|xdp|tc: which hook each interface gets, and
 * why (hook.c).
 */
#ifndef __TOE_HOOK_H
#define __TOE_HOOK_H

#include <stdbool.h>
#include <linux/types.h>

struct opts;

enum { TOE_HOOK_AUTO, TOE_HOOK_XDP, TOE_HOOK_TC };
int resolve_hooks(struct opts *o);
const char *hook_why_key(unsigned int why);
bool iface_is_veth(const char *ifname);
bool iface_is_vlan(const char *ifname);
bool iface_peer_elsewhere(__u32 ifindex);

#endif /* __TOE_HOOK_H */
