/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* opentoe: this process's network namespace, as /proc and the datapath name it. */
#ifndef __TOE_NETNS_H
#define __TOE_NETNS_H

#include <linux/types.h>

/* The inode of this process's network namespace (0 if unknown). */
unsigned long toe_netns_ino(void);
/*
 * The cookie of this process's network namespace, as the datapath sees it
 * (bpf_get_netns_cookie(), struct toe_flow_key's netns); 0 if unknown.
 */
#define TOE_SO_NETNS_COOKIE 71 /* <asm-generic/socket.h>, Linux 5.14 */
__u64 toe_netns_cookie(void);
/*
 * The cookie of the namespace whose nsfs file is path (/run/netns/NAME):
 * the calling thread enters it for one getsockopt and comes back.  0, or
 * an errno (ENOTSUP: the kernel gives no cookie).
 */
int toe_netns_cookie_at(const char *path, __u64 *cookie);

/*
 * A namespace as a pin name says it (lib/pinned.h): by cookie, or by inode
 * in the pins of an older toe-loader.  The inode is for display only.
 */
#define TOE_NS_COOKIE 'c'
#define TOE_NS_INO 'n'
/* Is (kind, id) the namespace of this cookie and inode? */
static inline int toe_netns_match(char kind, unsigned long long id,
				  __u64 cookie, unsigned long ino)
{
	return kind == TOE_NS_COOKIE ? id && id == cookie :
	       kind == TOE_NS_INO    ? id && id == ino :
				       0;
}

#endif /* __TOE_NETNS_H */
