// SPDX-License-Identifier: GPL-2.0
/*
 * opentoe: the toedev registry, the Chelsio TOM and a simulated Chelsio
 * adapter in one module.  Unloading is safe with devices, connections and
 * listeners still there: the simulated devices are destroyed first (which
 * closes their connections and waits for every release), then the netlink
 * family, the TOM and the registry go.
 */
#include <linux/module.h>
#include <net/genetlink.h>

#include "toedev.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

/*
 * The module's parts in the order they come up; they go in the reverse
 * order, on unload and when one fails to come up.
 */
static const struct {
	int (*init)(void);
	void (*exit)(void);
} parts[] = {
	{ toedev_init, toedev_exit },
	{ chelsio_tom_init, chelsio_tom_exit },
	{ opentoe_genl_init, opentoe_genl_exit },
	{ toe_sim_init, toe_sim_exit },
};

/* The first n parts, gone in reverse order. */
static void parts_exit(unsigned int n)
{
	while (n-- > 0)
		parts[n].exit();
}

static int __init opentoe_init(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(parts); i++) {
		ret = parts[i].init();
		if (ret) {
			parts_exit(i);
			return ret;
		}
	}
	return 0;
}

static void __exit opentoe_exit(void)
{
	parts_exit(ARRAY_SIZE(parts));
}

module_init(opentoe_init);
module_exit(opentoe_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION(
	"opentoe: TOE device registry, Chelsio TOM, simulated adapter");
MODULE_ALIAS_GENL_FAMILY(OPENTOE_GENL_NAME);
