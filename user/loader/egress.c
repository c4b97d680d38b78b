// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader: the forward path's admission program.  toe_egress goes on
 * the tcx egress hook of every interface XDP is attached to (pin
 * link_egress_n<NS>_if<N>; before Linux 6.6, a classic clsact filter:
 * tcclassic.c): it sees what the host stack forwards out of
 * that interface, and only a handshake the stack forwarded both ways admits
 * a routed flow to the XDP fast path (bpf/egress.h).  Like every link of
 * ours, a pinned one gets the new program in place, a new one goes into
 * the rollback log (undo.c), and unload detaches it with the other links.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader.h"
#include "lib/err.h"

int attach_egress(const struct opts *o, const char *ifname, int prog_fd)
{
	char path[PATH_MAX];
	__u32 ifindex = if_nametoindex(ifname);
	int link_fd, err;

	err = swap_if_link(o, TOE_PIN_LINK_EGRESS, TOE_LINK_TYPE_TCX, ifindex,
			   prog_fd, ifname, "tc egress", path);
	if (err != IF_LINK_NONE)
		return err < 0 ? err : 0;
	/* No tcx (before 6.6, e.g. Debian 12's 6.1): a classic filter. */
	if (!kernel_has_tcx())
		return attach_tc_classic(o, TOE_PIN_TC_EGRESS, ifindex, ifname,
					 true, prog_fd);
	/* tcx keeps a list: programs others attached there stay and run too. */
	link_fd = bpf_link_create(prog_fd, ifindex, TOE_TCX_EGRESS, NULL);
	if (link_fd < 0) {
		err = -errno;
		toe_err("%s: cannot attach the forward path's admission to tc egress (tcx): %s",
			ifname, strerror(errno));
		return err;
	}
	return pin_new_link(link_fd, path);
}
