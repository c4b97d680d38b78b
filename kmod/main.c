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

static int __init opentoe_init(void)
{
	int ret;

	ret = toedev_init();
	if (ret)
		return ret;
	ret = chelsio_tom_init();
	if (ret)
		goto err_toedev;
	ret = opentoe_genl_init();
	if (ret)
		goto err_tom;
	ret = toe_sim_init();
	if (ret)
		goto err_genl;
	return 0;

err_genl:
	opentoe_genl_exit();
err_tom:
	chelsio_tom_exit();
err_toedev:
	toedev_exit();
	return ret;
}

static void __exit opentoe_exit(void)
{
	toe_sim_exit();
	opentoe_genl_exit();
	chelsio_tom_exit();
	toedev_exit();
}

module_init(opentoe_init);
module_exit(opentoe_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION(
	"opentoe: TOE device registry, Chelsio TOM, simulated adapter");
MODULE_ALIAS_GENL_FAMILY(OPENTOE_GENL_NAME);
