/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toe-loader: the network namespace a per-interface pin's name says
 * (pin_ns.c; the names: lib/pinned.h).
 */
#ifndef __TOE_PIN_NS_H
#define __TOE_PIN_NS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/*
 * kind TOE_NS_COOKIE and its cookie, or TOE_NS_INO and its inode (pins an
 * older toe-loader made).
 */
struct pin_ns {
	char kind;
	unsigned long long id;
};
/* Parse "<prefix>c<COOKIE>_if<N>..." (or n<INODE>) pin names. */
bool parse_if_pin(const char *name, const char *prefix, struct pin_ns *ns,
		  __u32 *ifindex);
/*
 * Unload's first step for a per-interface pin (name n, at path; prefix
 * as parse_if_pin): its interface's index in *ifindex and its network
 * namespace entered.  False if n is not such a pin, or if its namespace
 * is gone (then said: "what went with it").
 */
bool enter_if_pin(const char *n, const char *prefix, const char *path,
		  const char *what, __u32 *ifindex);
/* Is ns this process's namespace? */
bool pin_ns_self(const struct pin_ns *ns);
/* "cookie N (inode I)" or "inode I", for messages. */
const char *pin_ns_str(const struct pin_ns *ns, char *buf, size_t len);
/* Enter the network namespace ns; 0 or -errno (-ENOENT: it is gone). */
int enter_netns(const struct pin_ns *ns);
/* The inode of namespace ns, for display (0: gone). */
unsigned long netns_ino_of(const struct pin_ns *ns);

#endif /* __TOE_PIN_NS_H */
