// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader: the packet capture's maps at a load (toectl dump;
 * include/opentoe_capture.h).  The ring's size (--capture-ring, kept
 * across reloads: a pinned map is reused only at its own size), one
 * scratch record per possible CPU, and whether these programs were built
 * with the capture (make CAPTURE=0: toectl dump then refuses, saying so).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "opentoe_capture.h"
#include "toe_maps.h"
#include "loader.h"
#include "capture_maps.h"
#include "lib/err.h"
#include "lib/path.h"
#include "opentoe.skel.h"

int set_capture_ring(struct opts *o, const char *arg)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 0);
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (errno || *end || v < TOE_CAP_RING_MIN || v > TOE_CAP_RING_MAX ||
	    (v & (v - 1))) {
		toe_err("bad --capture-ring '%s': expected a power of 2 from %uk to %um bytes",
			arg, TOE_CAP_RING_MIN >> 10, TOE_CAP_RING_MAX >> 20);
		return 1;
	}
	o->cap_ring = v;
	return 0;
}

/* The pinned ring's size in bytes, 0 if there is none. */
static __u32 pinned_ring(const struct opts *o)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	char path[PATH_MAX];
	int fd;

	toe_join(path, sizeof(path), o->pin_dir, TOE_MAP(CAP_RING));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &mi, &len))
		mi.max_entries = 0;
	close(fd);
	return mi.max_entries;
}

int capture_sizes(const struct opts *o, struct opentoe *skel)
{
	__u32 pinned = pinned_ring(o);
	int cpus = libbpf_num_possible_cpus();

	if (pinned && o->cap_ring && pinned != o->cap_ring) {
		toe_err("--capture-ring %u: the pinned capture ring has %u bytes ('toe-loader unload' first to change it)",
			o->cap_ring, pinned);
		return -EINVAL;
	}
	if (o->cap_ring || pinned)
		bpf_map__set_max_entries(skel->maps.toe_cap_ring,
					 o->cap_ring ? o->cap_ring : pinned);
	if (cpus > 0)
		bpf_map__set_max_entries(skel->maps.toe_cap_cpu, cpus);
	return 0;
}

void capture_mark(struct opentoe *skel)
{
	int fd = bpf_map__fd(skel->maps.toe_cap_conf);
	struct toe_cap_conf c = {};
	__u32 zero = 0;
#ifdef TOE_NO_CAPTURE
	const __u32 built_out = 1;
#else
	const __u32 built_out = 0;
#endif

	if (bpf_map_lookup_elem(fd, &zero, &c))
		return;
	if (c.no_capture == built_out && !(built_out && c.on))
		return;
	c.no_capture = built_out;
	if (built_out)
		c.on = 0; /* these programs capture nothing: a dump ends */
	bpf_map_update_elem(fd, &zero, &c, BPF_ANY);
}
