// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Where opentoe is attached in toed's network namespace, for toectl
 * status: every interface toe-loader put a program on (its pins, as
 * toe-loader status reads them: lib/pinned.h), with the hook and how it
 * is attached, each checked against the kernel where a link says it (an
 * XDP or tcx link whose interface is gone is detached: not listed).
 * toed's own tracked set (the interfaces whose neighbours it mirrors) is
 * only part of this: it leaves tc's interfaces out (tc's forward path
 * reads the kernel's neighbour table, events.c's tracked_set).
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/netns.h"
#include "lib/path.h"
#include "lib/pinned.h"
#include "attached.h"

enum pin_kind {
	K_XDP_LINK,
	K_XDP_DISP,
	K_TCX,
	K_CLSACT,
	K_EG_TCX,
	K_EG_CLSACT
};

static const struct {
	const char *fmt;
	enum pin_kind kind;
} pin_kinds[] = {
	{ TOE_PIN_LINK_XDP "%c", K_XDP_LINK },
	{ TOE_PIN_XDP_DISP "%c", K_XDP_DISP },
	{ TOE_PIN_LINK_TC "%c", K_TCX },
	{ TOE_PIN_TC_INGRESS "%c", K_CLSACT },
	{ TOE_PIN_LINK_EGRESS "%c", K_EG_TCX },
	{ TOE_PIN_TC_EGRESS "%c", K_EG_CLSACT },
};

/*
 * A link pin's interface as the kernel has it (0: the link is detached,
 * its interface gone) and its program's id.  The tcx member of
 * bpf_link_info starts with ifindex, as the xdp member does.
 */
static __u32 link_ifindex(const char *path, __u32 *prog_id)
{
	struct bpf_link_info li = {};
	__u32 len = sizeof(li);
	int fd = bpf_obj_get(path);

	*prog_id = 0;
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &li, &len))
		li.xdp.ifindex = 0;
	close(fd);
	*prog_id = li.prog_id;
	return li.xdp.ifindex;
}

/* XDP's mode on ifindex: of prog_id, or (0) of what is attached there. */
static const char *xdp_mode(__u32 ifindex, __u32 prog_id)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(ifindex, 0, &q))
		return "?";
	if (prog_id ? q.drv_prog_id == prog_id :
		      q.attach_mode == XDP_ATTACHED_DRV)
		return "native";
	if (prog_id ? q.skb_prog_id == prog_id :
		      q.attach_mode == XDP_ATTACHED_SKB)
		return "generic";
	if (prog_id ? q.hw_prog_id == prog_id :
		      q.attach_mode == XDP_ATTACHED_HW)
		return "hw";
	return "?";
}

/* The row of ifindex in out[0..*n), added if it has none (NULL: full). */
static struct toe_attached *row(struct toe_attached *out, int *n, int max,
				__u32 ifindex)
{
	int i;

	for (i = 0; i < *n && out[i].ifindex != ifindex; i++)
		;
	if (i < *n)
		return &out[i];
	if (*n == max)
		return NULL;
	memset(&out[i], 0, sizeof(out[i]));
	out[i].ifindex = ifindex;
	(*n)++;
	return &out[i];
}

int attached_read(const struct toe_netns_id *ns_id, const char *pin_dir,
		  struct toe_attached *out, int max)
{
	char path[PATH_MAX];
	struct dirent *de;
	int n = 0, i;
	DIR *dir;

	dir = opendir(pin_dir);
	while (dir && (de = readdir(dir))) {
		for (i = 0; i < (int)(sizeof(pin_kinds) / sizeof(pin_kinds[0]));
		     i++) {
			unsigned long long ns;
			unsigned int ifindex;
			struct toe_attached *a;
			__u32 prog_id = 0;
			char kind, tail;

			if (sscanf(de->d_name, pin_kinds[i].fmt, &kind, &ns,
				   &ifindex, &tail) != 3 ||
			    !toe_netns_match(kind, ns, ns_id->cookie,
					     ns_id->ino))
				continue;
			toe_join(path, sizeof(path), pin_dir, de->d_name);
			switch (pin_kinds[i].kind) {
			case K_XDP_LINK:
			case K_TCX:
			case K_EG_TCX:
				/* the kernel's word: detached links drop out */
				if (link_ifindex(path, &prog_id) != ifindex)
					continue;
				break;
			default:
				break;
			}
			a = row(out, &n, max, ifindex);
			if (!a)
				break;
			switch (pin_kinds[i].kind) {
			case K_XDP_LINK:
				a->hook = "xdp";
				a->mode = xdp_mode(ifindex, prog_id);
				break;
			case K_XDP_DISP:
				a->hook = "xdp";
				a->mode = xdp_mode(ifindex, 0);
				a->dispatcher = true;
				break;
			case K_TCX:
				a->hook = "tc";
				a->mode = "tcx";
				break;
			case K_CLSACT:
				a->hook = "tc";
				a->mode = "clsact";
				break;
			case K_EG_TCX:
				a->egress = "tcx";
				break;
			case K_EG_CLSACT:
				a->egress = "clsact";
				break;
			}
			break;
		}
	}
	if (dir)
		closedir(dir);
	return n;
}
