// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader unload: its options; draining the local bypass (senders to
 * TCP, readers given --drain-timeout, sockets out of toe_bypass); then
 * detaching every link, putting chained XDP programs back on their
 * interfaces (in their network namespaces) and unpinning what is opentoe's.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "opentoe_bypass.h"
#include "toe_maps.h"
#include "lib/knob.h"
#include "loader.h"
#include "pins.h"
#include "pin_ns.h"
#include "tcclassic.h"
#include "xdpdisp.h"
#include "skel.h"
#include "lib/err.h"
#include "lib/path.h"
#include "lib/netns.h"
#include "opentoe.skel.h"

#define OPT_FORCE 256 /* --force has no short option */

static int set_drain_timeout(struct opts *o, const char *arg)
{
	char *end;

	errno = 0;
	o->drain_timeout = strtod(arg, &end);
	if (errno || *end || o->drain_timeout < 0 || o->drain_timeout > 3600) {
		toe_err("bad --drain-timeout '%s': expected 0 to 3600 seconds",
			arg);
		return 1;
	}
	return 0;
}

/* clang-format off */
const struct loader_opt unload_options[] = {
	{ .name = "drain-timeout", .has_arg = required_argument, .key = 't',
	  .set = set_drain_timeout, .help =
"  -t, --drain-timeout S  wait up to S seconds (default 10) for readers\n"
"                         of bypassed connections\n" },
	{ .name = "force", .has_arg = no_argument, .key = OPT_FORCE, .help =
"      --force            unload even if bypassed data is still unread (dropped)\n",
	  .flag = offsetof(struct opts, force) },
	WAIT_OPTION,
	{ NULL }
};
/* clang-format on */

/* Delete every entry of a pinned hash-like map (devmap, ifaces). */
static void clear_pinned(const char *dir, const char *name)
{
	char path[PATH_MAX];
	__u32 key, next;
	int fd;

	toe_join(path, sizeof(path), dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return;
	while (bpf_map_get_next_key(fd, NULL, &next) == 0) {
		key = next;
		if (bpf_map_delete_elem(fd, &key))
			break;
	}
	close(fd);
}

/*
 * Unload with bypassed connections open.  Taking a socket out of
 * toe_bypass (which freeing the map does too) frees its psock, and with it
 * whatever was redirected to the socket and not read yet.  So first every
 * sender is switched to TCP (toe_byp_conf.draining: the next send of each
 * socket goes over TCP, and so does every later one); then the readers are
 * given up to --drain-timeout seconds to read what was queued before, which
 * toe_byp_probe tells socket by socket; only then are the sockets taken out.
 * After that the connections are plain TCP connections: what is sent from
 * then on goes over TCP, in order after what was redirected.  If a reader
 * does not read in time, unload stops there (the datapath stays loaded,
 * nothing is redirected any more) unless --force, which drops that data.
 */

/* What the probe found of the sockets in toe_bypass. */
struct drain_count {
	long queued; /* sockets with data redirected to them and not read */
	long bytes; /* how much */
	long n; /* sockets */
};

/*
 * The object with only toe_byp_probe loaded, on the pinned toe_bypass.
 * TOE_LOADER_NO_PROBE=1 (tests) makes it fail, as it would against a
 * toe_bypass of another layout.
 */
static struct opentoe *probe_open(int map_fd)
{
	const char *knob = toe_knob("TOE_LOADER_NO_PROBE");
	struct opentoe *skel;
	struct bpf_program *prog;
	struct bpf_map *map;

	if (knob && !strcmp(knob, "1"))
		return NULL;
	skel = toe_skel_open();
	if (!skel)
		return NULL;
	bpf_object__for_each_map(map, skel->obj) {
		if (map == skel->maps.toe_bypass)
			bpf_map__reuse_fd(map, map_fd);
		else if (map != skel->maps.rodata) /* .rodata: made, always */
			bpf_map__set_autocreate(map, false);
	}
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog,
					  prog == skel->progs.toe_byp_probe);
	if (opentoe__load(skel)) {
		opentoe__destroy(skel);
		return NULL;
	}
	return skel;
}

/* Ask the probe about every socket in toe_bypass. */
static void probe_all(int map_fd, int probe_fd, struct drain_count *c)
{
	struct toe_bypass_key key, next;
	void *prev = NULL;

	c->queued = c->bytes = c->n = 0;
	while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
		struct toe_byp_probe pin = { .key = next }, pout;
		LIBBPF_OPTS(bpf_test_run_opts, ro, .data_in = &pin,
			    .data_size_in = sizeof(pin), .data_out = &pout,
			    .data_size_out = sizeof(pout), .repeat = 1);

		key = next;
		prev = &key;
		c->n++;
		if (bpf_prog_test_run_opts(probe_fd, &ro) || !pout.found)
			continue;
		if (pout.queued) {
			c->queued++;
			c->bytes += pout.bytes;
		}
	}
}

/* Until no socket holds unread data, or --drain-timeout. */
static void wait_readers(const struct opts *o, int map_fd, int probe_fd,
			 struct drain_count *c)
{
	struct timespec t0, t;
	bool first = true;

	/* Sends that chose the redirect before the switch finish first. */
	usleep(50 * 1000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		probe_all(map_fd, probe_fd, c);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (!c->queued ||
		    (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >=
			    o->drain_timeout)
			break;
		if (first)
			printf("waiting for the readers of %ld bypassed socket%s to read what was redirected to them\n",
			       c->queued, c->queued == 1 ? "" : "s");
		first = false;
		usleep(20 * 1000);
	}
}

/* Take the sockets out: from here on they are plain TCP sockets. */
static int take_out_all(int map_fd)
{
	struct toe_bypass_key key, next;

	while (bpf_map_get_next_key(map_fd, NULL, &next) == 0) {
		key = next;
		if (bpf_map_delete_elem(map_fd, &key)) {
			toe_err("cannot take a socket out of %s: %s",
				TOE_MAP(BYPASS), strerror(errno));
			return -EIO;
		}
	}
	return 0;
}

/* Readers given their time (or --force): take the sockets out. */
static int drain_with_probe(const struct opts *o, int map_fd,
			    struct opentoe *skel)
{
	struct drain_count c;

	wait_readers(o, map_fd, bpf_program__fd(skel->progs.toe_byp_probe), &c);
	opentoe__destroy(skel);
	if (c.queued && !o->force) {
		toe_err("%ld of %ld bypassed sockets still hold data redirected to them and not read (%ld bytes) after %.1f s; bypass is off, new data goes over TCP; run unload again once they have read it, or unload --force to drop it",
			c.queued, c.n, c.bytes, o->drain_timeout);
		return -EBUSY;
	}
	if (c.queued)
		toe_err("--force: dropping %ld bytes redirected to %ld sockets and not read",
			c.bytes, c.queued);
	return take_out_all(map_fd);
}

static int bypass_drain(const struct opts *o)
{
	char path[PATH_MAX];
	struct toe_byp_conf conf = { .draining = 1 };
	struct toe_bypass_key next;
	struct opentoe *skel;
	int map_fd, conf_fd, err;
	__u32 zero = 0;

	toe_join(path, sizeof(path), o->pin_dir, TOE_MAP(BYPASS));
	map_fd = bpf_obj_get(path);
	if (map_fd < 0)
		return 0; /* a datapath from before the bypass */
	toe_join(path, sizeof(path), o->pin_dir, TOE_MAP(BYP_CONF));
	conf_fd = bpf_obj_get(path);
	if (conf_fd >= 0) {
		bpf_map_update_elem(conf_fd, &zero, &conf, BPF_ANY);
		close(conf_fd);
	}
	if (bpf_map_get_next_key(map_fd, NULL, &next)) {
		close(map_fd);
		return 0; /* no bypassed socket */
	}
	skel = probe_open(map_fd);
	if (skel) {
		err = drain_with_probe(o, map_fd, skel);
	} else if (!o->force) {
		/*
		 * Cannot ask the kernel whether a reader still has data queued:
		 * taking the sockets out could drop it.  Senders are on TCP
		 * already (draining); the operator decides.
		 */
		toe_err("cannot load the bypass probe, so cannot tell whether the sockets in %s have read the data redirected to them; bypass is off, new data goes over TCP; unload --force drops what may be unread",
			TOE_MAP(BYPASS));
		err = -EBUSY;
	} else {
		toe_err("--force: cannot load the bypass probe; waiting %.1f s for readers, then dropping what may be unread",
			o->drain_timeout);
		usleep((useconds_t)(o->drain_timeout * 1e6));
		err = take_out_all(map_fd);
	}
	close(map_fd);
	return err;
}

/* Pass 0: detach a link (its pin goes after).  1 if it failed. */
static int detach_link(const char *path)
{
	int fd, bad = 0;

	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	/* ENOLINK: its interface or cgroup is gone already */
	if (bpf_link_detach(fd) && errno != ENOLINK) {
		toe_err("cannot detach %s: %s", path, strerror(errno));
		bad = 1;
	}
	close(fd);
	return bad;
}

/*
 * Whether the program of fd is on ifindex in the mode of flags already (a
 * load was killed before it took the program over): nothing to put back.
 */
static bool still_attached(__u32 ifindex, __u32 flags, int fd)
{
	__u32 id = 0;

	return !bpf_xdp_query_id(ifindex, flags, &id) && id &&
	       id == obj_id_of(fd);
}

/* Pass 1: put a chained program (pin name n) back on its interface. */
static void put_back_chained(const char *n, const char *path, int home)
{
	struct pin_ns ns = { 0 };
	__u32 ifindex = 0;
	__u32 flags = strstr(n, "_skb") ? XDP_FLAGS_SKB_MODE :
					  XDP_FLAGS_DRV_MODE;
	int fd;

	fd = bpf_obj_get(path);
	if (fd >= 0 && parse_if_pin(n, "chain_", &ns, &ifindex) &&
	    enter_netns(&ns) == 0 &&
	    bpf_xdp_attach(ifindex, fd, flags | XDP_FLAGS_UPDATE_IF_NOEXIST,
			   NULL) &&
	    errno != ENODEV && !still_attached(ifindex, flags, fd))
		toe_err("cannot put chained XDP program back on ifindex %u: %s",
			ifindex, strerror(errno));
	if (fd >= 0)
		close(fd);
	setns(home, CLONE_NEWNET);
}

/*
 * One pass over the pin folder.  Pass 0: detach links, delete classic
 * tc filters, take toe_xdp out of libxdp dispatchers.  1: put chained
 * programs back.  2: unpin maps (and count in *left what is not ours).
 * Every pin of the pass is removed.  Returns how many things failed.
 */
static int unload_pass(const struct opts *o, DIR *d, int pass, int home,
		       int *left)
{
	char path[PATH_MAX];
	struct dirent *de;
	int bad = 0;

	rewinddir(d);
	while ((de = readdir(d))) {
		const char *n = de->d_name;

		if (n[0] == '.')
			continue;
		if (!is_ours(n)) {
			if (pass == 2) {
				toe_err("leaving %s/%s: not opentoe's",
					o->pin_dir, n);
				(*left)++;
			}
			continue;
		}
		if ((pass == 0) !=
			    (!strncmp(n, "link_", 5) || !strncmp(n, "tc_", 3) ||
			     !strncmp(n, "xdpd_", 5)) ||
		    (pass == 1) != !strncmp(n, "chain_", 6))
			continue;
		toe_join(path, sizeof(path), o->pin_dir, n);
		if (pass == 0 && n[0] == 't')
			bad += detach_tc_classic(n, path, home);
		else if (pass == 0 && n[0] == 'x')
			bad += detach_xdp_disp(n, path, home);
		else if (pass == 0)
			bad += detach_link(path);
		else if (pass == 1)
			put_back_chained(n, path, home);
		if (unlink(path)) {
			toe_err("cannot unpin %s: %s", path, strerror(errno));
			bad++;
		}
	}
	return bad;
}

int cmd_unload(struct opts *o)
{
	int pass, home, lock, bad = 0, left = 0;
	char path[PATH_MAX];
	__u32 flows_id;
	DIR *d;

	if (check_root())
		return 1;
	/*
	 * Held until exit (lock.c): a load waits for the folder to be gone, or
	 * this waits for it to be complete, never half of either.
	 */
	lock = take_change_lock(o, "toe-loader unload");
	if (lock < 0)
		return 1;
	d = opendir(o->pin_dir);
	if (!d) {
		toe_err("opentoe is not loaded (no pin folder %s)", o->pin_dir);
		return 1;
	}
	if (bypass_drain(o)) {
		closedir(d);
		return 1;
	}
	home = open("/proc/self/ns/net", O_RDONLY);
	toe_join(path, sizeof(path), o->pin_dir, TOE_MAP(FLOWS));
	flows_id = pinned_id(path);
	for (pass = 0; pass < 3; pass++) {
		if (pass == 1) {
			/* toe_xdp a killed load left unpinned in a dispatcher */
			xdp_disp_sweep_all(flows_id);
			/* XDP detached: release the redirect targets' devices now. */
			clear_pinned(o->pin_dir, TOE_MAP(IFACES));
			clear_pinned(o->pin_dir, TOE_MAP(DEVMAP));
		}
		bad += unload_pass(o, d, pass, home, &left);
	}
	closedir(d);
	if (home >= 0)
		close(home);
	if (!left && rmdir(o->pin_dir)) {
		toe_err("cannot remove %s: %s", o->pin_dir, strerror(errno));
		bad++;
	}
	if (bad)
		return 1;
	printf("opentoe unloaded from %s\n", o->pin_dir);
	return 0;
}
