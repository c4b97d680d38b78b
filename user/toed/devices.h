/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: the configuration's devices into toe_devs (an apply's first step). */
#ifndef __TOE_DEVICES_H
#define __TOE_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "config.h"
#include "genl.h"
#include "policy.h"

/* Each device of c its toe_devs index, idx[0..c->ndevs): stable by name. */
int place_devices(const struct pol_maps *m, const struct toe_cfg *c, __u32 *idx,
		  char *err, size_t len);
int write_devices(const struct pol_maps *m, const struct toe_cfg *c,
		  const __u32 *idx, char *err, size_t len);
/* Refuses "steer cpu|forward" on an interface opentoe is on at tc ingress. */
int check_hooks(const char *pin_dir, const struct toe_cfg *c, char *err,
		size_t len);
void write_xdp_conf(const struct pol_maps *m, const struct toe_cfg *c);
void retire_devices(const struct pol_maps *m, const struct toe_cfg *c,
		    const __u32 *idx);

/* The module's device of that name in kdevs[0..nkdevs), or NULL. */
const struct toe_genl_dev *kdev_by_name(const struct toe_genl_dev *kdevs,
					int nkdevs, const char *name);

/*
 * The configuration toed applies: file's, merged with the kernel module's
 * devices kdevs[0..nkdevs) (module_up: the module is loaded).
 */
void kmod_merge(const struct toe_genl_dev *kdevs, int nkdevs, bool module_up,
		const struct toe_cfg *file, struct toe_cfg *out);

#endif /* __TOE_DEVICES_H */
