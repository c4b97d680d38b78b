// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* opentoe: pinned maps opened into a struct of fds, and closed. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/err.h"
#include "lib/path.h"
#include "lib/pinned.h"

void toe_close_fds(int *fds, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

static int *pin_fd(const struct toe_pin *pin, void *base)
{
	return (int *)((char *)base + pin->off);
}

void toe_close_pins(const struct toe_pin *pins, unsigned int n, void *base)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		toe_close_fds(pin_fd(&pins[i], base), 1);
}

int toe_open_pins(const char *dir, const struct toe_pin *pins, unsigned int n,
		  void *base, char *err, size_t len)
{
	char path[4096];
	unsigned int i;

	for (i = 0; i < n; i++)
		*pin_fd(&pins[i], base) = -1;
	for (i = 0; i < n; i++) {
		int *fd = pin_fd(&pins[i], base);

		toe_join(path, sizeof(path), dir, toe_map_names[pins[i].id]);
		*fd = bpf_obj_get(path);
		/*
		 * a pin not there is an unload (or, optional, an older
		 * datapath); one that cannot be opened for want of a
		 * descriptor or memory is said as it is
		 */
		if (*fd < 0 && toe_errno_resource(errno)) {
			toe_errf(err, len, "cannot open %s: %s", path,
				 strerror(errno));
			toe_close_pins(pins, n, base);
			return -1;
		}
		if (*fd < 0 && !pins[i].optional) {
			toe_errf(
				err, len,
				"opentoe is not loaded: cannot open %s: %s (run toe-loader load)",
				path, strerror(errno));
			toe_close_pins(pins, n, base);
			return -1;
		}
	}
	return 0;
}
