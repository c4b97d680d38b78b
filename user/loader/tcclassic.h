/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toe-loader: tc without tcx (tcclassic.c): classic clsact filters where
 * the kernel has no tcx links (before 6.6).
 */
#ifndef __TOE_TCCLASSIC_H
#define __TOE_TCCLASSIC_H

#include <stdbool.h>
#include <linux/types.h>

struct opts;

/* tcx links (Linux 6.6): BPF_TCX_EGRESS in the kernel's BTF. */
bool kernel_has_tcx(void);
__u32 tc_classic_prog(__u32 ifindex, bool egress);
int tc_classic_set(__u32 ifindex, bool egress, int prog_fd, bool replace);
int tc_classic_del(__u32 ifindex, bool egress, __u32 id);
int attach_tc_classic(const struct opts *o, const char *fmt, __u32 ifindex,
		      const char *ifname, bool egress, int prog_fd);
int detach_tc_classic(const char *n, const char *path, int home);

#endif /* __TOE_TCCLASSIC_H */
