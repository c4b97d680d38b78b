// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader: the eBPF object.  The skeleton embeds the whole object in
 * whichever file opens it, so it is opened here only, once in the binary;
 * and here the map table (toe_maps.h) is checked against it.
 */
#include <linux/types.h>
#include <bpf/libbpf.h>
#include "toe_maps.h"
#include "skel.h"
#include "opentoe.skel.h"

/*
 * The map table (toe_maps.h) and the eBPF object agree: the skeleton has a
 * member for every map of the table, and no more (but .rodata, the
 * load-time settings: toe_nf_admit).
 */
#define TOE_MAP_IN_SKEL(id, name) +sizeof(((struct opentoe *)0)->maps.name)
_Static_assert(0 TOE_MAP_TABLE(TOE_MAP_IN_SKEL) ==
		       sizeof(((struct opentoe *)0)->maps) -
			       sizeof(((struct opentoe *)0)->maps.rodata),
	       "include/toe_maps.h and bpf/ declare different maps");
#undef TOE_MAP_IN_SKEL

struct opentoe *toe_skel_open(void)
{
	return opentoe__open();
}

/* The object's ELF image (a second copy of toe_xdp: xdpdisp.c). */
const void *toe_skel_elf(size_t *sz)
{
	return opentoe__elf_bytes(sz);
}
