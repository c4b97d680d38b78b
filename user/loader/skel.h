/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toe-loader: the eBPF object (skel.c: its one copy in the binary; every
 * other file that includes opentoe.skel.h calls this, never opentoe__open).
 */
#ifndef __TOE_SKEL_H
#define __TOE_SKEL_H

#include <stddef.h>

struct opentoe;
/* The eBPF object, opened. */
struct opentoe *toe_skel_open(void);
/* The object's ELF image (xdpdisp.c opens a second copy from it). */
const void *toe_skel_elf(size_t *sz);

#endif /* __TOE_SKEL_H */
