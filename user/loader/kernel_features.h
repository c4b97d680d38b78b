/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toe-loader: what this kernel offers of what opentoe's programs use
 * (features.c; the features subcommand is cmd_features, loader.h).  Not
 * features.h: that is glibc's, which its own headers include.
 */
#ifndef __TOE_KERNEL_FEATURES_H
#define __TOE_KERNEL_FEATURES_H

#include <stdbool.h>

/* Before a load: what the programs need that this kernel lacks. */
int check_features(void);
/* Whether the kernel's BTF lists val in enum name. */
bool kernel_enum_has(const char *name, const char *val);
/* Whether the kernel's BTF has the function name. */
bool kernel_func_has(const char *name);
/* Whether libbpf resolves conntrack's kfuncs. */
bool ct_kfuncs(void);
/* freplace (BPF_PROG_TYPE_EXT) programs load here. */
bool kernel_has_ext(void);
/* bpf_cast_to_kern_ctx (6.3), as probe() sees it (TOE_LOADER_HIDE_FEATURE). */
bool kernel_has_kern_ctx(void);

#endif /* __TOE_KERNEL_FEATURES_H */
