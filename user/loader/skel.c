// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader: the eBPF object.  The skeleton embeds the whole object in
 * whichever file opens it, so it is opened here only, once in the binary;
 * and here the map table (toe_maps.h) is checked against it.
 *
 * There are two builds of the one datapath source: opentoe.bpf.o, for
 * every kernel, and opentoe_kctx.bpf.o (TOE_KERN_CTX), which reads each
 * packet's network namespace by plain loads through bpf_cast_to_kern_ctx
 * (6.3 on) instead of four bpf_probe_read_kernel calls.  The second is
 * opened through the first's skeleton (its image in place of the first's):
 * the Makefile refuses to build them if their skeletons' maps, programs or
 * variables differ, so every file that uses struct opentoe works with
 * either.
 */
#include <errno.h>
#include <stdlib.h>
#include <linux/types.h>
#include <bpf/libbpf.h>
#include "toe_maps.h"
#include "kernel_features.h"
#include "skel.h"
#include "opentoe.skel.h"
#include "opentoe_kctx.skel.h"

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

/* Which build this run loads: the kctx one where the kernel has the kfunc. */
bool toe_skel_kctx(void)
{
	static int kctx = -1;

	if (kctx < 0)
		kctx = kernel_has_kern_ctx();
	return kctx;
}

/* The object's ELF image (a second copy of toe_xdp: xdpdisp.c). */
const void *toe_skel_elf(size_t *sz)
{
	return toe_skel_kctx() ? opentoe_kctx__elf_bytes(sz) :
				 opentoe__elf_bytes(sz);
}

/* opentoe__open(), with the image toe_skel_elf() picks. */
struct opentoe *toe_skel_open(void)
{
	struct opentoe *obj;
	int err;

	if (!toe_skel_kctx())
		return opentoe__open();
	obj = calloc(1, sizeof(*obj));
	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	err = opentoe__create_skeleton(obj);
	if (!err) {
		obj->skeleton->data = toe_skel_elf(&obj->skeleton->data_sz);
		err = bpf_object__open_skeleton(obj->skeleton, NULL);
	}
	if (err) {
		opentoe__destroy(obj); /* frees what create_skeleton made */
		errno = -err;
		return NULL;
	}
	return obj;
}
