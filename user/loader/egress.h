/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toe-loader: the forward path's admission (egress.c): toe_nf_fwd on
 * netfilter's FORWARD hook, or toe_egress on each interface's tc egress.
 * toe_egress's pins (TOE_PIN_LINK_EGRESS, TOE_PIN_TC_EGRESS) are in
 * lib/pinned.h: toed reads them too.
 */
#ifndef __TOE_EGRESS_H
#define __TOE_EGRESS_H

#include <stdbool.h>
#include <linux/types.h>

struct opts;
struct bpf_program;

/*
 * The forward path's proof: why toe_nf_fwd cannot be used (NULL: it can),
 * its preparation before the load, its links.
 */
const char *nf_why_not(void);
void nf_prepare(const struct opts *o, struct bpf_program *nf,
		volatile __u32 *nf_admit);
int attach_nf(const struct opts *o, int prog_fd);
__u32 kernel_hz(void);
/*
 * The datapath's home namespace (toe_fwd_gen.rt_netns): made this one's if
 * it has none; whether this one is it.
 */
bool claim_home(int gen_fd);
/*
 * toe_egress on the interface's tcx egress, where XDP forwards: it sees
 * what the stack forwards, which alone admits a routed flow.  A link an
 * earlier load pinned gets prog_fd in place.  0 or -errno.
 */
int attach_egress(const struct opts *o, const char *ifname, int prog_fd);

#endif /* __TOE_EGRESS_H */
