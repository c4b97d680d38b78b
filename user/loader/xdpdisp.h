/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toe-loader: XDP through libxdp's multi-program dispatcher (xdpdisp.c).
 */
#ifndef __TOE_XDPDISP_H
#define __TOE_XDPDISP_H

#include <stdbool.h>
#include <linux/types.h>

struct opts;
struct bpf_object;

bool xdp_disp_possible(void);
bool xdp_disp_wanted(__u32 ifindex);
bool xdp_disp_holds(__u32 ifindex, __u32 id);
const char *xdp_disp_mode(__u32 ifindex);
/* attach_xdp_disp: no dispatcher could be made, nothing changed. */
#define XDP_DISP_NONE 1
int attach_xdp_disp(const struct opts *o, __u32 ifindex, const char *ifname,
		    const struct bpf_object *main);
int detach_xdp_disp(const char *n, const char *path, int home);
void xdp_disp_sweep_all(__u32 mid);

#endif /* __TOE_XDPDISP_H */
