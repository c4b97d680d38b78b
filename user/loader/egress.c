// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toe-loader: the forward path's admission program.  toe_egress goes on
 * netfilter's FORWARD hook (kernel 6.4 on: toe_nf_fwd, pins
 * link_nf_fwd_ipv4 and _ipv6, the proof in force), or, as the fallback,
 * the tcx egress hook of every interface XDP is attached to (pin
 * link_egress_n<NS>_if<N>; before Linux 6.6, a classic clsact filter:
 * tcclassic.c): it sees what the host stack forwards out of
 * that interface, and only a handshake the stack forwarded both ways admits
 * a routed flow to the XDP fast path (bpf/egress.h).  Like every link of
 * ours, a pinned one gets the new program in place, a new one goes into
 * the rollback log (undo.c), and unload detaches it with the other links.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "opentoe_forward.h"
#include "lib/pinned.h"
#include "lib/knob.h"
#include "loader.h"
#include "undo.h"
#include "attach.h"
#include "egress.h"
#include "kernel_features.h"
#include "tcclassic.h"
#include "uapi_compat.h"
#include "lib/err.h"
#include "lib/netns.h"
#include "lib/path.h"

/* Last but one: the kernel refuses NF_IP_PRI_LAST itself. */
#define TOE_NF_PRIORITY (INT_MAX - 1)
#define TOE_NF_PRIORITIES 64 /* tried from TOE_NF_PRIORITY down */
/* toe_nf_fwd's links, per namespace and family. */
#define TOE_PIN_LINK_NF "link_nf_fwd_%c%llu_%s"

int attach_egress(const struct opts *o, const char *ifname, int prog_fd)
{
	char path[PATH_MAX];
	__u32 ifindex = if_nametoindex(ifname);
	int link_fd, err;

	err = swap_if_link(o, TOE_PIN_LINK_EGRESS, TOE_LINK_TYPE_TCX, ifindex,
			   prog_fd, ifname, "tc egress", path);
	if (err != IF_LINK_NONE)
		return err < 0 ? err : 0;
	/* No tcx (before 6.6, e.g. Debian 12's 6.1): a classic filter. */
	if (!kernel_has_tcx())
		return attach_tc_classic(o, TOE_PIN_TC_EGRESS, ifindex, ifname,
					 true, prog_fd);
	/* tcx keeps a list: programs others attached there stay and run too. */
	link_fd = bpf_link_create(prog_fd, ifindex, TOE_TCX_EGRESS, NULL);
	if (link_fd < 0) {
		err = -errno;
		toe_err("%s: cannot attach the forward path's admission to tc egress (tcx): %s",
			ifname, strerror(errno));
		return err;
	}
	return pin_new_link(link_fd, path);
}

/* ------------------------------------ the proof: netfilter's FORWARD */

/*
 * Why this load cannot use the netfilter program (toe_nf_fwd), or NULL if
 * it can: the kernel's BTF names BPF_PROG_TYPE_NETFILTER (Linux 6.4) and
 * TOE_LOADER_NO_NF=1 does not ask for the fallback (the tests' knob).
 */
const char *nf_why_not(void)
{
	const char *knob = toe_knob("TOE_LOADER_NO_NF");

	if (knob && !strcmp(knob, "1"))
		return "TOE_LOADER_NO_NF=1 asked for the tc egress fallback";
	if (!kernel_enum_has("bpf_prog_type", "BPF_PROG_TYPE_NETFILTER"))
		return "this kernel has no netfilter BPF programs (Linux 6.4)";
	return NULL;
}

/*
 * Before the object's load: toe_nf_fwd gets the type and attach type
 * libbpf 1.1 cannot read from SEC("netfilter"), and toe_egress is told to
 * leave admission to it; or, where it cannot be used, it is not loaded at
 * all (both hooks forward: both need the admission).
 */
void nf_prepare(const struct opts *o, struct bpf_program *nf,
		volatile __u32 *nf_admit)
{
	(void)o;
	if (nf_why_not()) {
		bpf_program__set_autoload(nf, false);
		*nf_admit = 0;
		return;
	}
	bpf_program__set_type(nf, TOE_PROG_TYPE_NETFILTER);
	bpf_program__set_expected_attach_type(nf, TOE_ATTACH_NETFILTER);
	*nf_admit = 1;
}

/*
 * The kernel's CONFIG_HZ, from /proc/config.gz (0 if it cannot be read):
 * the fast path turns conntrack's timeouts (jiffies) into the
 * milliseconds bpf_ct_change_timeout takes (bpf/fwd_ct.h).
 */
__u32 kernel_hz(void)
{
	gzFile z = gzopen("/proc/config.gz", "rb");
	char line[256];
	__u32 hz = 0;

	if (!z)
		return 0;
	while (gzgets(z, line, sizeof(line)))
		if (!strncmp(line, "CONFIG_HZ=", 10)) {
			hz = (__u32)strtoul(line + 10, NULL, 10);
			break;
		}
	gzclose(z);
	return hz;
}

/* BPF_LINK_CREATE of a netfilter link (libbpf 1.1 has no opts for it). */
static int nf_link_create_at(int prog_fd, __u32 pf, __s32 priority)
{
	union {
		char b[128];
		struct {
			__u32 prog_fd, target_fd, attach_type, flags;
			__u32 pf, hooknum;
			__s32 priority;
			__u32 nf_flags;
		} s;
	} a;

	memset(&a, 0, sizeof(a));
	a.s.prog_fd = prog_fd;
	a.s.attach_type = TOE_ATTACH_NETFILTER;
	a.s.pf = pf;
	a.s.hooknum = TOE_NF_INET_FORWARD;
	a.s.priority = priority;
	return syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
}

/*
 * The link at the last free priority from TOE_NF_PRIORITY down: the kernel
 * takes one BPF program per hook and priority (EBUSY), and another
 * datapath in this namespace (another pin folder) may hold the first.
 * Where in the last few it runs does not matter: it only watches.
 */
static int nf_link_create(int prog_fd, __u32 pf)
{
	int i, fd = -1;

	for (i = 0; i < TOE_NF_PRIORITIES; i++) {
		fd = nf_link_create_at(prog_fd, pf, TOE_NF_PRIORITY - i);
		if (fd >= 0 || errno != EBUSY)
			break;
	}
	return fd;
}

/*
 * toe_nf_fwd at FORWARD, IPv4 and IPv6, in this namespace: pins
 * link_nf_fwd_n<NS>_ipv4 and _ipv6.  In the home namespace it admits; in
 * another it only counts what it would have (fwd_not_home).  Netfilter
 * links cannot take a new program in place, and the kernel takes one
 * program per priority: the new link is made beside the one an earlier
 * load pinned (at the next free priority), takes its pin, and the old one
 * is detached only once the whole load succeeded (undo_forget); a load
 * that fails later pins the old link back (UNDO_REPIN), still attached, its
 * id unchanged.  For that instant both admit: the same toe_fwd entries,
 * written twice.
 */
/*
 * The link an earlier load pinned at path (fd old, this function's now):
 * unpinned, to be detached when the load succeeds or pinned back when it
 * fails (UNDO_REPIN).  Non-zero, old closed and still pinned, if the
 * rollback log cannot take it.
 */
static int retire_link(int old, const char *path)
{
	struct undo *u = undo_push(UNDO_REPIN, path);

	if (!u) {
		close(old);
		return -ENOSPC;
	}
	u->fd = old;
	unlink(path);
	return 0;
}

int attach_nf(const struct opts *o, int prog_fd)
{
	static const struct {
		__u32 pf;
		const char *name;
	} fams[] = { { 2, "ipv4" }, { 10, "ipv6" } };
	char path[PATH_MAX], pin[NAME_MAX];
	int i, fd, old, err;

	for (i = 0; i < 2; i++) {
		snprintf(pin, sizeof(pin), TOE_PIN_LINK_NF, TOE_NS_COOKIE,
			 (unsigned long long)toe_netns_cookie(), fams[i].name);
		toe_join(path, sizeof(path), o->pin_dir, pin);
		fd = nf_link_create(prog_fd, fams[i].pf);
		if (fd < 0) {
			err = -errno;
			toe_err("cannot attach the forward path's admission at netfilter FORWARD (%s): %s",
				fams[i].name, strerror(errno));
			return err;
		}
		old = bpf_obj_get(path);
		if (old >= 0 && retire_link(old, path)) {
			close(fd);
			return -ENOSPC;
		}
		err = pin_new_link(fd, path);
		if (err)
			return err;
	}
	return 0;
}

bool claim_home(int gen_fd)
{
	struct toe_fwd_gen g = {};
	__u64 me = toe_netns_cookie();
	__u32 zero = 0;

	if (bpf_map_lookup_elem(gen_fd, &zero, &g))
		return false;
	/* none yet, or an inode an older toed wrote: this one's */
	if (!g.rt_netns || g.rt_netns == toe_netns_ino()) {
		g.rt_netns = me;
		if (bpf_map_update_elem(gen_fd, &zero, &g, BPF_ANY))
			return false;
	}
	if (g.rt_netns == me)
		return true;
	fprintf(stderr,
		"toe-loader: note: the datapath's home is another network namespace (cookie %llu): the forward path serves only its home, flows routed here are never admitted (fwd_not_home)\n",
		(unsigned long long)g.rt_netns);
	return false;
}
