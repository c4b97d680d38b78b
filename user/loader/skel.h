/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toe-loader: the eBPF object (skel.c: its one copy in the binary; every
 * other file that includes opentoe.skel.h calls this, never opentoe__open).
 */
#ifndef __TOE_SKEL_H
#define __TOE_SKEL_H

#include <stdbool.h>
#include <stddef.h>

struct opentoe;
/* The eBPF object, opened. */
struct opentoe *toe_skel_open(void);
/* The object's ELF image (xdpdisp.c opens a second copy from it). */
const void *toe_skel_elf(size_t *sz);
/*
 * Whether that is opentoe_kctx.bpf.o (the namespace by plain loads, 6.3
 * on), not opentoe.bpf.o (by probe reads): toe-loader features, kern_ctx.
 */
bool toe_skel_kctx(void);

#endif /* __TOE_SKEL_H */
