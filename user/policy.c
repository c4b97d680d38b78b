// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * opentoe policy compiler: turns the rules of a configuration into the
 * tuple-space classifier of include/opentoe.h and switches to it
 * atomically.  Also writes the devices the rules name.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "policy.h"
#include "util.h"

#include "dplock.h"

struct maps {
	int devs, live, gen, hdr, tuples, rules, cells, lclass, rclass, rcu;
	/* Optional: a datapath loaded by an older toe-loader has neither. */
	int cpumap, xconf;
};

#define errf toe_errf

static const struct toe_pin policy_pins[] = {
	TOE_PIN(struct maps, devs, DEVS),
	TOE_PIN(struct maps, live, DEV_LIVE),
	TOE_PIN(struct maps, gen, POL_GEN),
	TOE_PIN(struct maps, hdr, POL_HDR),
	TOE_PIN(struct maps, tuples, POL_TUPLES),
	TOE_PIN(struct maps, rules, POL_RULES),
	TOE_PIN(struct maps, cells, POL_CELLS),
	TOE_PIN(struct maps, lclass, POL_LCLASS),
	TOE_PIN(struct maps, rclass, POL_RCLASS),
	TOE_PIN(struct maps, rcu, RCU_SYNC),
	/* a datapath loaded by an older toe-loader has neither */
	TOE_PIN_OPT(struct maps, cpumap, CPUMAP),
	TOE_PIN_OPT(struct maps, xconf, XDP_CONF),
};
#define N_POLICY_PINS (sizeof(policy_pins) / sizeof(policy_pins[0]))

static void close_maps(struct maps *m)
{
	toe_close_pins(policy_pins, N_POLICY_PINS, m);
}

static int open_maps(const char *dir, struct maps *m, char *err, size_t len)
{
	return toe_open_pins(dir, policy_pins, N_POLICY_PINS, m, err, len);
}

/* ---- devices */

/*
 * Device indexes are stable by name across applies, and an index whose
 * device is gone is not given to a new one while connections still hold
 * slots on it (the slot is released by index at close).
 */
static int place_devices(const struct maps *m, const struct toe_cfg *c,
			 __u32 *idx, char *err, size_t len)
{
	struct toe_dev cur[TOE_MAX_DEVS];
	bool used[TOE_MAX_DEVS] = { false };
	struct toe_dev_live live;
	__u32 i, j;
	int d;

	for (i = 0; i < TOE_MAX_DEVS; i++)
		if (bpf_map_lookup_elem(m->devs, &i, &cur[i]))
			return errf(err, len, "cannot read toe_devs: %s", strerror(errno));
	for (d = 0; d < c->ndevs; d++) {
		idx[d] = TOE_DEV_NONE;
		for (i = 0; i < TOE_MAX_DEVS; i++) {
			if (!used[i] && cur[i].name[0] &&
			    !strncmp(cur[i].name, c->devs[d].name, sizeof(cur[i].name))) {
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
				continue;	/* another device's, kept below */
			if (bpf_map_lookup_elem(m->live, &j, &live) == 0 && live.live)
				continue;	/* gone, but slots still held */
			break;
		}
		if (j == TOE_MAX_DEVS)
			return errf(err, len, "no free device index for '%s' (%d in use)",
				    c->devs[d].name, TOE_MAX_DEVS);
		idx[d] = j;
		used[j] = true;
	}
	return 0;
}

static int write_devices(const struct maps *m, const struct toe_cfg *c,
			 const __u32 *idx, char *err, size_t len)
{
	int d;

	for (d = 0; d < c->ndevs; d++) {
		const struct toe_cfg_dev *cd = &c->devs[d];
		struct toe_dev v = {};

		memcpy(v.name, cd->name, sizeof(v.name));
		v.type = cd->type;
		v.nconn = cd->nconn;
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
				return errf(err, len, "device '%s' (line %d): unknown interface '%s'",
					    cd->name, cd->line, cd->ifname);
		}
		if (bpf_map_update_elem(m->devs, &idx[d], &v, BPF_ANY))
			return errf(err, len, "cannot write toe_devs: %s", strerror(errno));
	}
	return 0;
}

/*
 * "steer cpu N" and "steer forward" are XDP's (cpumap and devmap redirects):
 * a device whose interface opentoe is on at tc ingress (toe-loader --hook
 * tc, pin link_tc_n<NETNS>_if<IFINDEX>, or tc_ingress_n... without tcx, in
 * this network namespace) would
 * only be accounted, so such a configuration is refused, not half applied.
 */
static int check_hooks(const char *pin_dir, const struct toe_cfg *c, char *err, size_t len)
{
	char name[64], path[PATH_MAX], ifname[IF_NAMESIZE + 16];
	unsigned long ns = toe_netns_ino();
	int d;

	if (!ns)
		return 0;
	for (d = 0; d < c->ndevs; d++) {
		const struct toe_cfg_dev *cd = &c->devs[d];
		__u32 ifindex = cd->ifindex;

		if (cd->steer == TOE_STEER_ACCOUNT)
			continue;
		if (!ifindex && cd->ifname[0])
			ifindex = if_nametoindex(cd->ifname);
		if (!ifindex)
			continue;
		snprintf(name, sizeof(name), TOE_PIN_LINK_TC, ns, ifindex);
		toe_join(path, sizeof(path), pin_dir, name);
		if (access(path, F_OK)) {
			/* or its classic filter, on a kernel without tcx */
			snprintf(name, sizeof(name), TOE_PIN_TC_INGRESS, ns,
				 ifindex);
			toe_join(path, sizeof(path), pin_dir, name);
			if (access(path, F_OK))
				continue;
		}
		if (!if_indextoname(ifindex, ifname))
			snprintf(ifname, sizeof(ifname), "ifindex %u", ifindex);
		return errf(err, len, "device '%s' (line %d): steer %s needs XDP on %s, where opentoe is at tc ingress (toe-loader --hook tc): load it with --hook xdp, or steer account",
			    cd->name, cd->line, cd->steer == TOE_STEER_CPU ? "cpu" : "forward",
			    ifname);
	}
	return 0;
}

/*
 * Steering: "steer cpu N" needs a cpumap entry for CPU N before any packet
 * is redirected there.  Made here, by the apply, rather than by toe-loader
 * for every CPU: an entry is a kernel thread and a queue of
 * TOE_CPUMAP_QSIZE frames, and only the configuration knows which CPUs are
 * named (an unnamed CPU costs nothing; a missing entry makes XDP pass the
 * packet).  An entry that is already there is left alone, so a re-apply
 * does not restart the CPU's thread under live traffic.
 */
static int setup_cpumap(const struct maps *m, const struct toe_cfg *c, char *err, size_t len)
{
	struct bpf_cpumap_val want = { .qsize = TOE_CPUMAP_QSIZE }, cur;
	int d;

	for (d = 0; d < c->ndevs; d++) {
		const struct toe_cfg_dev *cd = &c->devs[d];
		__u32 cpu = cd->steer_cpu;

		if (cd->steer != TOE_STEER_CPU)
			continue;
		if (m->cpumap < 0)
			return errf(err, len, "device '%s' (line %d): steer cpu needs toe_cpumap, which the loaded datapath lacks (reload it with this toe-loader)",
				    cd->name, cd->line);
		if (bpf_map_lookup_elem(m->cpumap, &cpu, &cur) == 0 && cur.qsize == want.qsize)
			continue;
		if (bpf_map_update_elem(m->cpumap, &cpu, &want, BPF_ANY))
			return errf(err, len, "device '%s' (line %d): steer cpu %u: cannot make its cpumap entry: %s (this machine has %d possible CPUs)",
				    cd->name, cd->line, cpu, strerror(errno), libbpf_num_possible_cpus());
	}
	return 0;
}

/* After the switch: the entries of CPUs no device names any more go. */
static void prune_cpumap(const struct maps *m, const struct toe_cfg *c)
{
	struct bpf_map_info mi = {};
	struct bpf_cpumap_val cur;
	__u32 len = sizeof(mi), cpu;
	int d;

	if (m->cpumap < 0 || bpf_obj_get_info_by_fd(m->cpumap, &mi, &len))
		return;
	for (cpu = 0; cpu < mi.max_entries; cpu++) {
		for (d = 0; d < c->ndevs; d++)
			if (c->devs[d].steer == TOE_STEER_CPU && c->devs[d].steer_cpu == cpu)
				break;
		if (d == c->ndevs && bpf_map_lookup_elem(m->cpumap, &cpu, &cur) == 0)
			bpf_map_delete_elem(m->cpumap, &cpu);
	}
}

/* What XDP needs to know globally: is any device forwarding or steering? */
static void write_xdp_conf(const struct maps *m, const struct toe_cfg *c)
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
static void retire_devices(const struct maps *m, const struct toe_cfg *c,
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
		if (bpf_map_lookup_elem(m->devs, &i, &v) || !(v.flags & TOE_DEVF_PRESENT))
			continue;
		v.flags &= ~TOE_DEVF_PRESENT;
		bpf_map_update_elem(m->devs, &i, &v, BPF_ANY);
	}
}

/* ---- rules into tuples and cells */

/*
 * Port classes: the boundaries of every non-wildcard range cut 0-65535 into
 * intervals; cls[p] is the number of p's interval.  Every range is then a
 * contiguous run of whole classes.
 */
static bool is_wild(__u16 lo, __u16 hi)
{
	return lo == 0 && hi == 65535;
}

static void port_classes(const struct toe_cfg *c, bool local, __u32 *cls)
{
	static __u8 cut[TOE_POL_PORTS + 1];
	__u32 p, k = 0;
	int i;

	memset(cut, 0, sizeof(cut));
	for (i = 0; i < c->nrules; i++) {
		const struct toe_cfg_rule *r = &c->rules[i];
		__u16 lo = local ? r->lport_lo : r->rport_lo;
		__u16 hi = local ? r->lport_hi : r->rport_hi;

		if (is_wild(lo, hi))
			continue;
		cut[lo] = 1;
		cut[hi + 1] = 1;
	}
	for (p = 0; p < TOE_POL_PORTS; p++) {
		if (p && cut[p])
			k++;
		cls[p] = k;
	}
}

static int write_classes(int fd, __u32 gen, const __u32 *cls, char *err, size_t len)
{
	static __u32 keys[TOE_POL_PORTS];
	__u32 p, n = TOE_POL_PORTS;

	for (p = 0; p < TOE_POL_PORTS; p++)
		keys[p] = gen * TOE_POL_PORTS + p;
	if (bpf_map_update_batch(fd, keys, (void *)cls, &n, NULL)) {
		/* Older kernels: one by one. */
		for (p = 0; p < TOE_POL_PORTS; p++)
			if (bpf_map_update_elem(fd, &keys[p], &cls[p], BPF_ANY))
				return errf(err, len, "cannot write port classes: %s",
					    strerror(errno));
	}
	return 0;
}

struct compiled {
	struct toe_pol_tuple t[TOE_POL_MAX_TUPLES];
	__u32 nt;
	__u32 cells;
	__u32 lcls[TOE_POL_PORTS];
	__u32 rcls[TOE_POL_PORTS];
};

static int find_tuple(struct compiled *cp, const struct toe_pol_tuple *want)
{
	__u32 i;

	for (i = 0; i < cp->nt; i++) {
		struct toe_pol_tuple *t = &cp->t[i];

		if (t->family == want->family && t->use_cgroup == want->use_cgroup &&
		    t->use_lport == want->use_lport && t->use_rport == want->use_rport &&
		    !memcmp(t->lmask, want->lmask, 16) && !memcmp(t->rmask, want->rmask, 16))
			return i;
	}
	if (cp->nt == TOE_POL_MAX_TUPLES)
		return -1;
	cp->t[cp->nt] = *want;
	return cp->nt++;
}

/*
 * Rules are taken in order, so the first rule to claim a cell is the one
 * that wins it (BPF_NOEXIST keeps it), and tuples are created in the order
 * of their lowest rule: sorted as the lookup needs them.
 */
static int compile_rule(const struct maps *m, struct compiled *cp, __u8 gen,
			__u32 ri, const struct toe_cfg_rule *r, char *err, size_t len)
{
	bool ul = !is_wild(r->lport_lo, r->lport_hi);
	bool ur = !is_wild(r->rport_lo, r->rport_hi);
	__u32 l0 = ul ? cp->lcls[r->lport_lo] : 0, l1 = ul ? cp->lcls[r->lport_hi] : 0;
	__u32 r0 = ur ? cp->rcls[r->rport_lo] : 0, r1 = ur ? cp->rcls[r->rport_hi] : 0;
	__u8 fams[2] = { TOE_AF_INET, TOE_AF_INET6 };
	int nf = 2, f, i, ti;
	__u32 a, b;

	if (r->family) {
		fams[0] = r->family;
		nf = 1;
	}
	for (f = 0; f < nf; f++) {
		struct toe_pol_tuple t = {};
		struct toe_pol_key k = {};

		t.family = fams[f];
		toe_prefix_mask(t.family, r->lplen, t.lmask);
		toe_prefix_mask(t.family, r->rplen, t.rmask);
		t.use_lport = ul;
		t.use_rport = ur;
		t.use_cgroup = r->cgroup != 0;
		t.min_rule = ri;
		ti = find_tuple(cp, &t);
		if (ti < 0)
			return errf(err, len, "rule on line %d needs more than %d distinct rule shapes (family x prefix lengths x which of ports and cgroup it matches); merge or simplify rules",
				    r->line, TOE_POL_MAX_TUPLES);
		for (i = 0; i < 4; i++) {
			k.laddr[i] = r->laddr[i] & t.lmask[i];
			k.raddr[i] = r->raddr[i] & t.rmask[i];
		}
		k.cgroup = r->cgroup;
		k.tuple = ti;
		k.gen = gen;
		for (a = l0; a <= l1; a++) {
			for (b = r0; b <= r1; b++) {
				k.lclass = a;
				k.rclass = b;
				if (bpf_map_update_elem(m->cells, &k, &ri, BPF_NOEXIST) == 0)
					cp->cells++;
				else if (errno != EEXIST)
					return errf(err, len, "policy too large: toe_pol_cells is full after %u cells (%s)",
						    cp->cells, strerror(errno));
			}
		}
	}
	return 0;
}

/* Remove every cell of generation gen (left from two applies ago). */
static int clear_gen(const struct maps *m, __u8 gen, char *err, size_t len)
{
	struct toe_pol_key k, next, *prev = NULL;
	struct toe_pol_key *dead = NULL;
	size_t n = 0, cap = 0, i;
	int ret = 0;

	while (bpf_map_get_next_key(m->cells, prev, &next) == 0) {
		if (next.gen == gen) {
			if (n == cap) {
				void *p = realloc(dead, (cap = cap ? 2 * cap : 1024) * sizeof(*dead));

				if (!p) {
					free(dead);
					return errf(err, len, "out of memory");
				}
				dead = p;
			}
			dead[n++] = next;
		}
		k = next;
		prev = &k;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(m->cells, &dead[i]);
	free(dead);
	return ret;
}

/* Wait until no program still runs with what it looked up before now. */
static int rcu_sync(const struct maps *m, char *err, size_t len)
{
	__u32 zero = 0;
	int inner, ret = 0;

	inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "toe_rcu_inner", 4, 4, 1, NULL);
	if (inner < 0)
		return errf(err, len, "cannot create a map: %s", strerror(errno));
	if (bpf_map_update_elem(m->rcu, &zero, &inner, BPF_ANY))
		ret = errf(err, len, "cannot wait for a grace period: %s", strerror(errno));
	close(inner);
	return ret;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * What the apply starts from: the generation in force (*cur), its header
 * (*old, zeroed if unreadable) and every device slot (saved, to put back if
 * the apply fails).
 */
static int read_state(const struct maps *m, __u32 *cur, struct toe_pol_hdr *old,
		      struct toe_dev *saved, char *err, size_t len)
{
	__u32 zero = 0, i;

	if (bpf_map_lookup_elem(m->gen, &zero, cur))
		return errf(err, len, "cannot read toe_pol_gen: %s",
			    strerror(errno));
	*cur &= 1;
	bpf_map_lookup_elem(m->hdr, cur, old);
	for (i = 0; i < TOE_MAX_DEVS; i++)
		if (bpf_map_lookup_elem(m->devs, &i, &saved[i]))
			return errf(err, len, "cannot read toe_devs: %s",
				    strerror(errno));
	return 0;
}

/* The rules of c into generation gen: port classes, rules, cells, tuples. */
static int fill_gen(const struct maps *m, const struct toe_cfg *c, __u32 gen,
		    const __u32 *devidx, struct compiled *cp, char *err,
		    size_t len)
{
	__u32 i;

	memset(cp, 0, sizeof(*cp));
	port_classes(c, true, cp->lcls);
	port_classes(c, false, cp->rcls);
	if (write_classes(m->lclass, gen, cp->lcls, err, len) ||
	    write_classes(m->rclass, gen, cp->rcls, err, len))
		return -1;
	for (i = 0; i < (__u32)c->nrules; i++) {
		const struct toe_cfg_rule *r = &c->rules[i];
		struct toe_pol_rule pr = {
			.action = r->action,
			.dev = r->dev >= 0 ? devidx[r->dev] : TOE_DEV_NONE,
			.ka_idle = r->ka_idle,
			.ka_intvl = r->ka_intvl,
			.ka_cnt = r->ka_cnt,
		};
		__u32 idx = gen * TOE_POL_MAX_RULES + i;

		if (bpf_map_update_elem(m->rules, &idx, &pr, BPF_ANY))
			return errf(err, len, "cannot write toe_pol_rules: %s",
				    strerror(errno));
		if (compile_rule(m, cp, gen, i, r, err, len))
			return -1;
	}
	for (i = 0; i < cp->nt; i++) {
		__u32 idx = gen * TOE_POL_MAX_TUPLES + i;

		if (bpf_map_update_elem(m->tuples, &idx, &cp->t[i], BPF_ANY))
			return errf(err, len, "cannot write toe_pol_tuples: %s",
				    strerror(errno));
	}
	return 0;
}

/* Generation gen's header, the serial one past the one in force (old). */
static int write_hdr(const struct maps *m, const struct toe_cfg *c, __u32 gen,
		     const __u32 *devidx, const struct compiled *cp,
		     const struct toe_pol_hdr *old, struct toe_pol_hdr *hdr,
		     char *err, size_t len)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	memset(hdr, 0, sizeof(*hdr));
	hdr->ntuples = cp->nt;
	hdr->nrules = c->nrules;
	hdr->default_action = c->default_action;
	hdr->track = c->track;
	hdr->default_dev = c->default_dev >= 0 ? devidx[c->default_dev] :
						 TOE_DEV_NONE;
	hdr->applied_ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	hdr->serial = old->serial + 1;
	if (bpf_map_update_elem(m->hdr, &gen, hdr, BPF_ANY))
		return errf(err, len, "cannot write toe_pol_hdr: %s",
			    strerror(errno));
	return 0;
}

int toe_policy_apply(const char *pin_dir, const struct toe_cfg *c,
		     struct toe_apply_stats *st, char *err, size_t errlen)
{
	static struct compiled cp;
	struct toe_dev saved[TOE_MAX_DEVS];
	__u32 devidx[TOE_MAX_DEVS];
	struct toe_pol_hdr hdr = {}, old = {};
	struct maps m;
	__u32 zero = 0, cur = 0, gen, i;
	double t0 = now_ms();
	int ret = -1;

	memset(st, 0, sizeof(*st));
	if (check_hooks(pin_dir, c, err, errlen) ||
	    open_maps(pin_dir, &m, err, errlen))
		return -1;
	if (read_state(&m, &cur, &old, saved, err, errlen))
		goto out;
	gen = !cur;

	/*
	 * 1. Devices: new ones appear before any rule can name them (a
	 * changed nconn applies from here; devices are not generation-switched,
	 * only rules are).
	 */
	if (place_devices(&m, c, devidx, err, errlen) ||
	    setup_cpumap(&m, c, err, errlen) ||
	    write_devices(&m, c, devidx, err, errlen))
		goto fail_devs;

	/* 2. The idle generation: emptied, then filled. */
	if (clear_gen(&m, gen, err, errlen))
		goto out;
	if (fill_gen(&m, c, gen, devidx, &cp, err, errlen) ||
	    write_hdr(&m, c, gen, devidx, &cp, &old, &hdr, err, errlen))
		goto fail_clear;

	/* 3. The switch: one 4-byte write. */
	if (bpf_map_update_elem(m.gen, &zero, &gen, BPF_ANY)) {
		errf(err, errlen, "cannot switch toe_pol_gen: %s",
		     strerror(errno));
		goto fail_clear;
	}
	write_xdp_conf(&m, c);
	/* 4. After a grace period nobody uses the old generation. */
	if (rcu_sync(&m, err, errlen))
		goto out;
	retire_devices(&m, c, devidx);
	prune_cpumap(&m, c);

	st->rules = c->nrules;
	st->tuples = cp.nt;
	st->cells = cp.cells;
	st->gen = gen;
	st->serial = hdr.serial;
	st->ms = now_ms() - t0;
	ret = 0;
	goto out;

fail_clear:
	/* The policy in force was never touched; drop the half-built one. */
	{
		char e2[8];

		clear_gen(&m, gen, e2, sizeof(e2));
	}
fail_devs:
	for (i = 0; i < TOE_MAX_DEVS; i++)
		bpf_map_update_elem(m.devs, &i, &saved[i], BPF_ANY);
out:
	close_maps(&m);
	return ret;
}

/* ------------------------------------------------ the policy's source */

#define SRC_MAGIC "opentoe-policy 1\n"
#define SRC_MAX (4 << 20)

/* The record's path: the datapath's change lock's, ".policy" for ".change.lock". */
static int src_path(const char *pin_dir, char *buf, size_t len)
{
	size_t n;

	if (toe_dplock_path(pin_dir, TOE_LOCK_CHANGE, buf, len))
		return -1;
	n = strlen(buf);
	if (n < 12 || strcmp(buf + n - 12, ".change.lock"))
		return -1;
	snprintf(buf + n - 12, len - (n - 12), ".policy");
	return 0;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

int toe_policy_src_write(const char *pin_dir, __u64 serial, const char *config,
			 const char *text, size_t len, char *err, size_t errlen)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32], head[PATH_MAX + 128];
	int fd, n, bad;

	if (src_path(pin_dir, path, sizeof(path)))
		return errf(err, errlen, "no record path for %s", pin_dir);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	n = snprintf(head, sizeof(head), SRC_MAGIC "serial %llu\nconfig %s\n\n",
		     (unsigned long long)serial, strchr(config, '\n') ? "?" : config);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return errf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
	bad = n >= (int)sizeof(head) || write_all(fd, head, n) || write_all(fd, text, len);
	if (close(fd) || bad || rename(tmp, path)) {
		unlink(tmp);
		return errf(err, errlen, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
	}
	return 0;
}

/* The record's header: serial and config path; the text after it. */
static int src_parse(char *buf, size_t len, struct toe_policy_src *s)
{
	char *p = buf + strlen(SRC_MAGIC), *end;
	unsigned long long serial;

	if (len < strlen(SRC_MAGIC) || memcmp(buf, SRC_MAGIC, strlen(SRC_MAGIC)) ||
	    sscanf(p, "serial %llu\n", &serial) != 1)
		return -1;
	p = strchr(p, '\n');
	if (!p || strncmp(p + 1, "config ", 7))
		return -1;
	p += 8;
	end = strstr(p, "\n\n");
	if (!end || (size_t)(end - p) >= sizeof(s->config))
		return -1;
	memcpy(s->config, p, end - p);
	s->config[end - p] = 0;
	s->serial = serial;
	s->text = end + 2;
	s->len = len - (s->text - buf);
	s->buf = buf;
	return 0;
}

int toe_policy_src_read(const char *pin_dir, struct toe_policy_src *s)
{
	char path[PATH_MAX], *buf;
	struct stat st;
	ssize_t n;
	int fd;

	memset(s, 0, sizeof(*s));
	if (src_path(pin_dir, path, sizeof(path)))
		return -1;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) || st.st_size > SRC_MAX ||
	    !(buf = malloc(st.st_size + 1))) {
		close(fd);
		return -1;
	}
	n = pread(fd, buf, st.st_size, 0);
	close(fd);
	if (n < 0 || (buf[n] = 0, src_parse(buf, n, s))) {
		free(buf);
		memset(s, 0, sizeof(*s));
		return -1;
	}
	return 0;
}

void toe_policy_src_free(struct toe_policy_src *s)
{
	free(s->buf);
	memset(s, 0, sizeof(*s));
}
