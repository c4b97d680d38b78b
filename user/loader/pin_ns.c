// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader: the network namespace of a per-interface pin (struct pin_ns,
 * lib/pinned.h's c<COOKIE> or an older toe-loader's n<INODE>): read from
 * the pin's name, compared with this process's, shown, found among the
 * namespaces of /run/netns and of every process, and entered (to put a
 * chained program back on its interface, to delete a filter there).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pin_ns.h"
#include "lib/err.h"
#include "lib/netns.h"

bool parse_if_pin(const char *name, const char *prefix, struct pin_ns *ns,
		  __u32 *ifindex)
{
	size_t l = strlen(prefix);

	return !strncmp(name, prefix, l) &&
	       sscanf(name + l, "%c%llu_if%u", &ns->kind, &ns->id, ifindex) ==
		       3 &&
	       (ns->kind == TOE_NS_COOKIE || ns->kind == TOE_NS_INO);
}

bool pin_ns_self(const struct pin_ns *ns)
{
	return toe_netns_match(ns->kind, ns->id,
			       ns->kind == TOE_NS_COOKIE ? toe_netns_cookie() :
							   0,
			       ns->kind == TOE_NS_INO ? toe_netns_ino() : 0);
}

const char *pin_ns_str(const struct pin_ns *ns, char *buf, size_t len)
{
	unsigned long ino = netns_ino_of(ns);

	if (ns->kind == TOE_NS_INO)
		snprintf(buf, len, "inode %llu", ns->id);
	else if (ino)
		snprintf(buf, len, "cookie %llu, inode %lu", ns->id, ino);
	else
		snprintf(buf, len, "cookie %llu", ns->id);
	return buf;
}

/*
 * The cookie of the namespace at path: entered for the instant of a
 * socket (SO_NETNS_COOKIE), then back to self; 0 if it cannot be.
 */
static __u64 cookie_at(const char *path, int self)
{
	__u64 c = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (setns(fd, CLONE_NEWNET) == 0) {
		c = toe_netns_cookie();
		if (setns(self, CLONE_NEWNET)) {
			toe_err("cannot return to this network namespace: %s",
				strerror(errno));
			exit(1); /* nothing done in the wrong one */
		}
	}
	close(fd);
	return c;
}

#define NS_SEEN 1024 /* distinct namespaces not asked twice for a cookie */

/*
 * The namespace ns, one named in /run/netns or one a process is in: an fd
 * open on it and its inode in *ino, or -ENOENT.  By cookie, each distinct
 * namespace (by inode) is asked once; by inode (an older toe-loader's
 * pins), the first with that inode.
 */
static int find_netns(const struct pin_ns *ns, unsigned long *ino)
{
	const char *dirs[] = { "/run/netns", "/proc" };
	unsigned long seen[NS_SEEN];
	int fd = -ENOENT, self = -1, nseen = 0, k;
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	unsigned int i;
	DIR *d;

	if (ns->kind == TOE_NS_COOKIE) {
		self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (self < 0)
			return -errno;
	}
	for (i = 0; i < 2 && fd < 0; i++) {
		d = opendir(dirs[i]);
		while (d && fd < 0 && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path),
				 i ? "%s/%s/ns/net" : "%s/%s", dirs[i],
				 de->d_name);
			if (stat(path, &st))
				continue;
			if (ns->kind == TOE_NS_INO) {
				if (st.st_ino != ns->id)
					continue;
			} else {
				for (k = 0; k < nseen && seen[k] != st.st_ino;
				     k++)
					;
				if (k < nseen)
					continue;
				if (nseen < NS_SEEN)
					seen[nseen++] = st.st_ino;
				if (cookie_at(path, self) != ns->id)
					continue;
			}
			fd = open(path, O_RDONLY | O_CLOEXEC);
			*ino = st.st_ino;
		}
		if (d)
			closedir(d);
	}
	if (self >= 0)
		close(self);
	return fd < 0 ? -ENOENT : fd;
}

/*
 * Enter the network namespace ns (to put a chained program back on its
 * interface, to delete its filter): 0, or -ENOENT when it is gone.
 */
int enter_netns(const struct pin_ns *ns)
{
	unsigned long ino;
	int fd, ret = 0;

	if (pin_ns_self(ns))
		return 0;
	fd = find_netns(ns, &ino);
	if (fd < 0)
		return fd;
	if (setns(fd, CLONE_NEWNET))
		ret = -errno;
	close(fd);
	return ret;
}

bool enter_if_pin(const char *n, const char *prefix, const char *path,
		  const char *what, __u32 *ifindex)
{
	struct pin_ns ns = { 0 };

	if (!parse_if_pin(n, prefix, &ns, ifindex))
		return false;
	if (enter_netns(&ns)) {
		toe_err("%s: its network namespace (%s %llu) is gone: %s went with it",
			path, ns.kind == TOE_NS_INO ? "inode" : "cookie", ns.id,
			what);
		return false;
	}
	return true;
}

unsigned long netns_ino_of(const struct pin_ns *ns)
{
	unsigned long ino = 0;
	int fd;

	if (ns->kind == TOE_NS_INO)
		return ns->id;
	if (pin_ns_self(ns))
		return toe_netns_ino();
	fd = find_netns(ns, &ino);
	if (fd < 0)
		return 0;
	close(fd);
	return ino;
}
