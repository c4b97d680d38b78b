/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: the cpumap entries "steer cpu N" needs. */
#ifndef __TOE_CPUMAP_H
#define __TOE_CPUMAP_H

#include <stddef.h>
#include "config.h"
#include "policy.h"

/* Before the switch: an entry for every CPU a device of c steers to. */
int setup_cpumap(const struct pol_maps *m, const struct toe_cfg *c, char *err,
		 size_t len);
/* After it: the entries no device names any more go. */
void prune_cpumap(const struct pol_maps *m, const struct toe_cfg *c);

#endif /* __TOE_CPUMAP_H */
