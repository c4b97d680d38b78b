// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader: the datapath's change lock (dplock.h, TOE_LOCK_CHANGE) and
 * the --wait option of the commands that take it.
 *
 * What the lock protects: the pin folder and everything its pins stand for
 * (the maps, the links, the sock_ops and XDP/tcx attachments, the chained
 * programs and their slots in toe_xdp_next, the egress entries of
 * toe_devmap and toe_ifaces).  load and unload hold it from before their
 * first look at the pin folder until they exit, so that no second loader
 * (or a policy apply, which takes the same lock) sees or changes the
 * folder half made, and a rollback never meets pins another run made
 * meanwhile.  status reads without it: it may see a load half done.  A
 * holder killed with SIGKILL releases it (flock): the next command finds
 * whatever the killed one left, and converges (load.c, unload.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include "lib/dplock.h"
#include "loader.h"
#include "lib/err.h"

#define WAIT_MAX_S 3600

int set_wait(struct opts *o, const char *arg)
{
	double s;
	char *end;

	errno = 0;
	s = strtod(arg, &end);
	if (errno || end == arg || *end || !(s >= 0 && s <= WAIT_MAX_S)) {
		toe_err("bad --wait '%s': expected 0 to %d seconds", arg,
			WAIT_MAX_S);
		return 1;
	}
	o->wait_ms = (int)(s * 1000 + 0.5);
	return 0;
}

int take_change_lock(const struct opts *o, const char *who)
{
	char err[PATH_MAX + 256];
	int fd;

	fd = toe_dplock_take(o->pin_dir, TOE_LOCK_CHANGE, who, o->wait_ms, err,
			     sizeof(err));
	if (fd < 0)
		toe_err("%s", err);
	return fd;
}
