// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toed's devices into toe_devs: placed by name at stable indexes, written,
 * checked against the hooks toe-loader made, retired when the
 * configuration drops them; and the kernel module's devices merged into the
 * configuration (kmod_merge) before any of it.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/err.h"
#include "lib/netns.h"
#include "lib/path.h"
#include "lib/pinned.h"
#include "opentoe_common.h"
#include "opentoe_policy.h"
#include "opentoe_xdp.h"
#include "devices.h"
#include "log.h"

#define errf toe_errf

/*
 * Device indexes are stable by name across applies, and an index whose
 * device is gone is not given to a new one while connections still hold
 * slots on it (the slot is released by index at close).
 */
int place_devices(const struct pol_maps *m, const struct toe_cfg *c, __u32 *idx,
		  char *err, size_t len)
{
	struct toe_dev cur[TOE_MAX_DEVS];
	bool used[TOE_MAX_DEVS] = { false };
	struct toe_dev_live live;
	__u32 i, j;
	int d;

	for (i = 0; i < TOE_MAX_DEVS; i++)
		if (bpf_map_lookup_elem(m->devs, &i, &cur[i]))
			return errf(err, len, "cannot read toe_devs: %s",
				    strerror(errno));
	for (d = 0; d < c->ndevs; d++) {
		idx[d] = TOE_DEV_NONE;
		for (i = 0; i < TOE_MAX_DEVS; i++) {
			if (!used[i] && cur[i].name[0] &&
			    !strncmp(cur[i].name, c->devs[d].name,
				     sizeof(cur[i].name))) {
				idx[d] = i;
				used[i] = true;
				break;
			}
		}
	}
	for (d = 0; d < c->ndevs; d++) {
		if (idx[d] != TOE_DEV_NONE)
			continue;
		for (j = 0; j < TOE_MAX_DEVS; j++) {
			if (used[j])
				continue;
			if (cur[j].flags & TOE_DEVF_PRESENT)
				continue; /* another device's, kept below */
			if (bpf_map_lookup_elem(m->live, &j, &live) == 0 &&
			    live.live)
				continue; /* gone, but slots still held */
			break;
		}
		if (j == TOE_MAX_DEVS)
			return errf(err, len,
				    "no free device index for '%s' (%d in use)",
				    c->devs[d].name, TOE_MAX_DEVS);
		idx[d] = j;
		used[j] = true;
	}
	return 0;
}

int write_devices(const struct pol_maps *m, const struct toe_cfg *c,
		  const __u32 *idx, char *err, size_t len)
{
	int d;

	for (d = 0; d < c->ndevs; d++) {
		const struct toe_cfg_dev *cd = &c->devs[d];
		struct toe_dev v = {};

		memcpy(v.name, cd->name, sizeof(v.name));
		v.type = cd->type;
		v.nconn = cd->nconn;
		/* a tenant's share, at least one slot (toe_tenants) */
		v.tenant_max =
			(__u32)((__u64)cd->nconn *
				(c->quota_slots ? c->quota_slots :
						  TOE_QUOTA_SLOTS_DEFAULT) /
				100);
		if (!v.tenant_max)
			v.tenant_max = 1;
		v.steer = cd->steer;
		v.steer_cpu = cd->steer_cpu;
		v.flags = cd->absent ? 0 : TOE_DEVF_PRESENT;
		if (cd->kmod)
			v.flags |= TOE_DEVF_KMOD;
		if (cd->ifindex) {
			v.ifindex = cd->ifindex;
		} else if (cd->ifname[0]) {
			v.ifindex = if_nametoindex(cd->ifname);
			if (!v.ifindex)
				return errf(
					err, len,
					"device '%s' (line %d): unknown interface '%s'",
					cd->name, cd->line, cd->ifname);
		}
		if (bpf_map_update_elem(m->devs, &idx[d], &v, BPF_ANY))
			return errf(err, len, "cannot write toe_devs: %s",
				    strerror(errno));
	}
	return 0;
}

/*
 * "steer cpu N" and "steer forward" are XDP's (cpumap and devmap redirects):
 * a device whose interface opentoe is on at tc ingress (toe-loader --hook
 * tc, pin link_tc_c<NETNS>_if<IFINDEX>, or tc_ingress_c... without tcx, in
 * this network namespace) would
 * only be accounted, so such a configuration is refused, not half applied.
 */
/*
 * Is opentoe at tc ingress on ifindex here: its tcx link or classic
 * filter pinned under this namespace's cookie, or its inode (the pins of
 * an older toe-loader)?
 */
static bool tc_hooked(const char *pin_dir, __u32 ifindex)
{
	static const char *const fmts[] = { TOE_PIN_LINK_TC,
					    TOE_PIN_TC_INGRESS };
	unsigned long long ids[] = { toe_netns_cookie(), toe_netns_ino() };
	const char kinds[] = { TOE_NS_COOKIE, TOE_NS_INO };
	char name[64], path[PATH_MAX];
	int f, k;

	for (f = 0; f < 2; f++)
		for (k = 0; k < 2; k++) {
			if (!ids[k])
				continue;
			snprintf(name, sizeof(name), fmts[f], kinds[k], ids[k],
				 ifindex);
			toe_join(path, sizeof(path), pin_dir, name);
			if (!access(path, F_OK))
				return true;
		}
	return false;
}

int check_hooks(const char *pin_dir, const struct toe_cfg *c, char *err,
		size_t len)
{
	char ifname[IF_NAMESIZE + 16];
	int d;

	for (d = 0; d < c->ndevs; d++) {
		const struct toe_cfg_dev *cd = &c->devs[d];
		__u32 ifindex = cd->ifindex;

		if (cd->steer != TOE_STEER_CPU)
			continue; /* account, forward: both hooks */
		if (!ifindex && cd->ifname[0])
			ifindex = if_nametoindex(cd->ifname);
		if (!ifindex || !tc_hooked(pin_dir, ifindex))
			continue;
		if (!if_indextoname(ifindex, ifname))
			snprintf(ifname, sizeof(ifname), "ifindex %u", ifindex);
		return errf(
			err, len,
			"device '%s' (line %d): steer cpu needs XDP on %s, where opentoe is at tc ingress (toe-loader --hook tc or auto): load it with --hook xdp, or steer account or forward",
			cd->name, cd->line, ifname);
	}
	return 0;
}

/* What XDP needs to know globally: is any device forwarding or steering? */
void write_xdp_conf(const struct pol_maps *m, const struct toe_cfg *c)
{
	struct toe_xdp_conf xc = {};
	__u32 zero = 0;
	int d;

	if (m->xconf < 0)
		return;
	for (d = 0; d < c->ndevs; d++) {
		xc.fwd_devs += c->devs[d].steer == TOE_STEER_FORWARD;
		xc.cpu_devs += c->devs[d].steer == TOE_STEER_CPU;
	}
	bpf_map_update_elem(m->xconf, &zero, &xc, BPF_ANY);
}

/* Devices the new configuration no longer has: marked absent, name kept. */
void retire_devices(const struct pol_maps *m, const struct toe_cfg *c,
		    const __u32 *idx)
{
	struct toe_dev v;
	__u32 i;
	int d;

	for (i = 0; i < TOE_MAX_DEVS; i++) {
		for (d = 0; d < c->ndevs; d++)
			if (idx[d] == i)
				break;
		if (d < c->ndevs)
			continue;
		if (bpf_map_lookup_elem(m->devs, &i, &v) ||
		    !(v.flags & TOE_DEVF_PRESENT))
			continue;
		v.flags &= ~TOE_DEVF_PRESENT;
		bpf_map_update_elem(m->devs, &i, &v, BPF_ANY);
	}
}

/* The module's device of that name in kdevs[0..nkdevs), or NULL. */
const struct toe_genl_dev *kdev_by_name(const struct toe_genl_dev *kdevs,
					int nkdevs, const char *name)
{
	int i;

	for (i = 0; i < nkdevs; i++)
		if (!strncmp(kdevs[i].name, name, OPENTOE_NAMSIZ))
			return &kdevs[i];
	return NULL;
}

/*
 * The configuration toed applies: the file's, with its 'kmod' devices
 * filled in from the module, and every other device of the module (with a
 * TOM attached) added, so that toe_devs shows all of them.  Shallow: the
 * rules are the file's.
 */
void kmod_merge(const struct toe_genl_dev *kdevs, int nkdevs, bool module_up,
		const struct toe_cfg *file, struct toe_cfg *out)
{
	const struct toe_genl_dev *k;
	int i, j;

	*out = *file;
	for (i = 0; i < out->ndevs; i++) {
		struct toe_cfg_dev *d = &out->devs[i];

		if (!d->kmod)
			continue;
		k = kdev_by_name(kdevs, nkdevs, d->name);
		if (!k || !k->tom[0]) {
			d->absent = true;
			logm(LOG_WARN,
			     "device %s (line %d): %s; rules naming it leave connections on the host until it %s",
			     d->name, d->line,
			     !module_up ? "the kernel module is not loaded" :
			     !k ? "the kernel module has no such device" :
				  "the kernel module has it, but no TOM attached",
			     !k ? "appears" : "is attached");
			continue;
		}
		d->type = toe_genl_dev_type(k->ttid);
		d->nconn = k->nconn ? k->nconn : 1;
		d->ifindex = k->ifindex;
		d->absent = false;
	}
	for (j = 0; j < nkdevs; j++) {
		struct toe_cfg_dev *d;

		k = &kdevs[j];
		if (!k->tom[0])
			continue; /* registered, no TOM: it cannot take a connection */
		for (i = 0;
		     i < out->ndevs && strncmp(out->devs[i].name, k->name, 16);
		     i++)
			;
		if (i < out->ndevs) {
			if (!out->devs[i].kmod)
				logm(LOG_WARN,
				     "the kernel module's device %s is hidden by the configuration's device of the same name (line %d); declare it 'device %s kmod' to use the module's",
				     k->name, out->devs[i].line, k->name);
			continue;
		}
		if (out->ndevs == TOE_MAX_DEVS) {
			logm(LOG_WARN,
			     "the kernel module's device %s left out: %d devices already",
			     k->name, TOE_MAX_DEVS);
			continue;
		}
		d = &out->devs[out->ndevs++];
		memset(d, 0, sizeof(*d));
		snprintf(d->name, sizeof(d->name), "%s", k->name);
		d->kmod = true;
		d->type = toe_genl_dev_type(k->ttid);
		d->nconn = k->nconn ? k->nconn : 1;
		d->ifindex = k->ifindex;
	}
}
