// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* toed's cpumap entries: one per CPU a device's "steer cpu N" names. */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/err.h"
#include "opentoe_policy.h"
#include "opentoe_xdp.h"
#include "cpumap.h"

#define errf toe_errf

/*
 * Steering: "steer cpu N" needs a cpumap entry for CPU N before any packet
 * is redirected there.  Made here, by the apply, rather than by toe-loader
 * for every CPU: an entry is a kernel thread and a queue of
 * TOE_CPUMAP_QSIZE frames, and only the configuration knows which CPUs are
 * named (an unnamed CPU costs nothing; a missing entry makes XDP pass the
 * packet).  An entry that is already there is left alone, so a re-apply
 * does not restart the CPU's thread under live traffic.
 */
int setup_cpumap(const struct pol_maps *m, const struct toe_cfg *c, char *err,
		 size_t len)
{
	struct bpf_cpumap_val want = { .qsize = TOE_CPUMAP_QSIZE }, cur;
	int d;

	for (d = 0; d < c->ndevs; d++) {
		const struct toe_cfg_dev *cd = &c->devs[d];
		__u32 cpu = cd->steer_cpu;

		if (cd->steer != TOE_STEER_CPU)
			continue;
		if (m->cpumap < 0)
			return errf(
				err, len,
				"device '%s' (line %d): steer cpu needs toe_cpumap, which the loaded datapath lacks (reload it with this toe-loader)",
				cd->name, cd->line);
		if (bpf_map_lookup_elem(m->cpumap, &cpu, &cur) == 0 &&
		    cur.qsize == want.qsize)
			continue;
		if (bpf_map_update_elem(m->cpumap, &cpu, &want, BPF_ANY))
			return errf(
				err, len,
				"device '%s' (line %d): steer cpu %u: cannot make its cpumap entry: %s (this machine has %d possible CPUs)",
				cd->name, cd->line, cpu, strerror(errno),
				libbpf_num_possible_cpus());
	}
	return 0;
}

/* After the switch: the entries of CPUs no device names any more go. */
void prune_cpumap(const struct pol_maps *m, const struct toe_cfg *c)
{
	struct bpf_map_info mi = {};
	struct bpf_cpumap_val cur;
	__u32 len = sizeof(mi), cpu;
	int d;

	if (m->cpumap < 0 || bpf_obj_get_info_by_fd(m->cpumap, &mi, &len))
		return;
	for (cpu = 0; cpu < mi.max_entries; cpu++) {
		for (d = 0; d < c->ndevs; d++)
			if (c->devs[d].steer == TOE_STEER_CPU &&
			    c->devs[d].steer_cpu == cpu)
				break;
		if (d == c->ndevs &&
		    bpf_map_lookup_elem(m->cpumap, &cpu, &cur) == 0)
			bpf_map_delete_elem(m->cpumap, &cpu);
	}
}
