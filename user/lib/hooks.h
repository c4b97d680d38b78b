/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: the hook each interface of a datapath has (toe_ifaces, struct
 * toe_iface: TOE_IFACE_* flags, enum toe_hook_why), as toe-loader status
 * and toectl devices show it.
 */
#ifndef __TOE_HOOKS_H
#define __TOE_HOOKS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "lib/json.h"

/* enum toe_hook_why's short name ("veth", "native_xdp", ...). */
const char *toe_hook_why_name(unsigned int why);
/* Its sentence. */
const char *toe_hook_why_text(unsigned int why);

/*
 * Every interface of this namespace in the pinned toe_ifaces fd, one text
 * line each to f (none if json), or one JSON object each into j's open
 * array.  only: that ifindex alone, or 0 for all.
 */
void toe_hooks_show(int ifaces_fd, __u32 only, FILE *f, struct toe_json *j,
		    bool json);

#endif /* __TOE_HOOKS_H */
