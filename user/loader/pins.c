// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader: the pin folder's names and checks.  What is opentoe's in it
 * (link_*, chain_*, the maps of toe_maps.h and retired ones), the names of
 * per-interface pins (the namespace in them: pin_ns.c), whether a pinned
 * map has this object's layout; and the checks every subcommand makes
 * first (root, kernel BTF).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "toe_maps.h"
#include "lib/knob.h"
#include "pins.h"
#include "lib/err.h"
#include "lib/path.h"
#include "lib/netns.h"

/* Maps older opentoes pinned and this one does not: unload removes them. */
static const char *retired_maps[] = {
	"toe_flow_pkts", /* XDP counters, now in toe_flows and toe_fwd */
};

int check_root(void)
{
	if (geteuid() != 0) {
		toe_err("must be run as root (loading eBPF needs CAP_BPF and CAP_NET_ADMIN)");
		return -EPERM;
	}
	return 0;
}

int check_btf(void)
{
	const char *btf = toe_knob("TOE_SYSFS_BTF");

	if (!btf)
		btf = "/sys/kernel/btf/vmlinux";
	if (access(btf, R_OK)) {
		toe_err("kernel has no BTF (%s: %s): opentoe needs a kernel built with CONFIG_DEBUG_INFO_BTF",
			btf, strerror(errno));
		return -ENOENT;
	}
	return 0;
}

const char *mode_name(__u32 attach_mode)
{
	switch (attach_mode) {
	case XDP_ATTACHED_DRV:
		return "native";
	case XDP_ATTACHED_SKB:
		return "skb";
	case XDP_ATTACHED_HW:
		return "hw";
	case XDP_ATTACHED_MULTI:
		return "multi";
	default:
		return "none";
	}
}

/* The netns cookie too, ifindexes are per namespace. */
int pin_path(char *buf, const char *dir, const char *fmt, __u32 n)
{
	char name[96];

	snprintf(name, sizeof(name), fmt, TOE_NS_COOKIE,
		 (unsigned long long)toe_netns_cookie(), n);
	return toe_join(buf, PATH_MAX, dir, name);
}

/* The per-interface pins' prefixes: the namespace follows each. */
static const char *const ns_prefixes[] = {
	"link_xdp_",   "link_tc_",   "link_egress_", "link_nf_fwd_",
	"tc_ingress_", "tc_egress_", "xdpd_",	     "chain_",
};

/*
 * name with this namespace's old-style token (prefix, n<INO>, '_') in new:
 * the same with c<COOKIE>; false if name is not one.
 */
static bool upgraded_name(const char *name, unsigned long ino, __u64 cookie,
			  char *new, size_t len)
{
	unsigned long long id;
	unsigned int k;
	size_t l;
	int used;

	for (k = 0; k < sizeof(ns_prefixes) / sizeof(ns_prefixes[0]); k++) {
		l = strlen(ns_prefixes[k]);
		if (strncmp(name, ns_prefixes[k], l) || name[l] != TOE_NS_INO)
			continue;
		if (sscanf(name + l + 1, "%llu%n", &id, &used) != 1 ||
		    name[l + 1 + used] != '_' || id != ino)
			return false;
		snprintf(new, len, "%.*s%c%llu%s", (int)l, name, TOE_NS_COOKIE,
			 (unsigned long long)cookie, name + l + 1 + used);
		return true;
	}
	return false;
}

void pins_upgrade(const char *dir)
{
	char from[PATH_MAX], to[PATH_MAX], name[NAME_MAX + 1];
	unsigned long ino = toe_netns_ino();
	__u64 cookie = toe_netns_cookie();
	struct dirent *de;
	DIR *d;

	if (!ino || !cookie)
		return;
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (!upgraded_name(de->d_name, ino, cookie, name, sizeof(name)))
			continue;
		toe_join(from, sizeof(from), dir, de->d_name);
		toe_join(to, sizeof(to), dir, name);
		if (rename(from, to))
			toe_err("cannot rename %s to %s: %s", from, to,
				strerror(errno));
	}
	if (d)
		closedir(d);
}

bool is_ours(const char *name)
{
	unsigned int k;

	if (!strncmp(name, "link_", 5) || !strncmp(name, "chain_", 6) ||
	    !strncmp(name, "tc_ingress_", 11) ||
	    !strncmp(name, "tc_egress_", 10) || !strncmp(name, "xdpd_", 5))
		return true;
	for (k = 0; k < TOE_MAP__N; k++)
		if (!strcmp(name, toe_map_names[k]))
			return true;
	for (k = 0; k < sizeof(retired_maps) / sizeof(retired_maps[0]); k++)
		if (!strcmp(name, retired_maps[k]))
			return true;
	return false;
}

/*
 * struct bpf_link_info's sockmap member is newer than the uapi headers
 * here; it is the first __u32 of the union, which sits right after type,
 * id and prog_id (offset 16: the union holds 64-bit members).
 */
__u32 sockmap_link_map_id(const struct bpf_link_info *li)
{
	__u32 id;

	memcpy(&id, (const char *)li + 16, sizeof(id));
	return id;
}

__u32 map_id_of(int fd)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);

	return bpf_obj_get_info_by_fd(fd, &mi, &len) ? 0 : mi.id;
}

/* bpf_prog_info, bpf_map_info, bpf_link_info: each starts with type, id. */
union obj_info {
	struct bpf_prog_info prog;
	struct bpf_map_info map;
	struct bpf_link_info link;
};

__u32 obj_id_of(int fd)
{
	union obj_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.map.id;
}

__u32 pinned_id(const char *path)
{
	int fd = bpf_obj_get(path);
	__u32 id;

	if (fd < 0)
		return 0;
	id = obj_id_of(fd);
	close(fd);
	return id;
}

/*
 * A pinned map is reused only if it has this object's layout: pins an
 * older opentoe made (a record that grew a field) are refused by name,
 * before anything is attached, rather than by libbpf's "invalid argument".
 */
int check_pin_layout(const struct bpf_map *map, const char *path)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	int fd, err = 0;

	fd = bpf_obj_get(path);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &mi, &len)) {
		err = errno ? -errno : -EIO;
		toe_err("cannot read pinned map %s: %s", path, strerror(errno));
	} else if (mi.type != bpf_map__type(map) ||
		   mi.key_size != bpf_map__key_size(map) ||
		   mi.value_size != bpf_map__value_size(map)) {
		toe_err("pinned map %s is not this opentoe's (type %u, key %u, value %u bytes; expected %u, %u, %u): pins of an older opentoe? 'toe-loader unload' first",
			path, mi.type, mi.key_size, mi.value_size,
			bpf_map__type(map), bpf_map__key_size(map),
			bpf_map__value_size(map));
		err = -EINVAL;
	}
	if (fd >= 0)
		close(fd);
	return err;
}
