// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * A capture of toectl dump left on by a dump that was killed (kill -9:
 * include/opentoe_capture.h).  Every CAPTURE_CHECK_MS toed reads
 * toe_cap_conf; if the capture is on and the pin folder's dump lock is
 * free (no dump holds it: flock ends with its holder), it switches the
 * capture off under that lock, and says whose it was.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "opentoe_capture.h"
#include "toe_maps.h"
#include "capture.h"
#include "log.h"
#include "lib/dplock.h"
#include "lib/path.h"
#include "lib/clock.h"

#define CAPTURE_CHECK_MS 2000

/* The capture's switch, under the dump lock: off if a killed dump's. */
static void capture_off(const char *pin_dir, int fd)
{
	struct toe_cap_conf c;
	char err[256];
	__u32 zero = 0;
	int lock;

	lock = toe_dplock_take(pin_dir, TOE_LOCK_DUMP, "toed (stale capture)",
			       0, err, sizeof(err));
	if (lock < 0)
		return; /* a dump runs: the capture is its */
	if (!bpf_map_lookup_elem(fd, &zero, &c) && c.on) {
		c.on = 0;
		if (bpf_map_update_elem(fd, &zero, &c, BPF_ANY))
			logm(LOG_WARN, "cannot switch off a stale capture: %s",
			     strerror(errno));
		else
			logm(LOG_WARN,
			     "the capture of toectl dump pid %u was left on (the dump was killed): switched off",
			     c.owner);
	}
	close(lock);
}

void capture_sweep(struct capture *cp, const char *pin_dir)
{
	struct toe_cap_conf c;
	char path[PATH_MAX];
	__u64 now = toe_now_ns();
	__u32 zero = 0;
	int fd;

	if (now < cp->next_check_ns)
		return;
	cp->next_check_ns = now + CAPTURE_CHECK_MS * 1000000ULL;
	toe_join(path, sizeof(path), pin_dir, TOE_MAP(CAP_CONF));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return; /* no datapath, or one without the capture */
	if (!bpf_map_lookup_elem(fd, &zero, &c) && c.on)
		capture_off(pin_dir, fd);
	close(fd);
}
