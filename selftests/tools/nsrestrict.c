// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Test helper: run a command under a seccomp filter that does what
 * systemd's RestrictNamespaces= does (src/shared/seccomp-util.c,
 * seccomp_restrict_namespaces), for the unit's sandbox test
 * (selftests/toed/test_sandbox.sh) on a machine whose PID 1 is not
 * systemd.
 *
 *   nsrestrict SPEC CMD [ARG...]
 *
 * SPEC: "yes" (no namespace type), "no" (every type), or a list of
 * types systemd names, separated by commas or spaces (net, mnt, uts, ipc,
 * user, pid, cgroup).  As systemd does: unshare(2) and clone(2) fail with
 * EPERM when their flags hold a namespace type not allowed; setns(2)
 * fails unless its nstype is one type, allowed (nstype 0, "whatever the
 * fd is", only when every type is); clone3(2) fails with ENOSYS, so that
 * the C library falls back to clone(2), whose flags a filter can read.
 * x86-64 only (the machines' kind); any other architecture is refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define NS_ALL                                                         \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | \
	 CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWTIME)

static const struct {
	const char *name;
	unsigned int flag;
} types[] = {
	{ "cgroup", CLONE_NEWCGROUP }, { "ipc", CLONE_NEWIPC },
	{ "net", CLONE_NEWNET },       { "mnt", CLONE_NEWNS },
	{ "pid", CLONE_NEWPID },       { "user", CLONE_NEWUSER },
	{ "uts", CLONE_NEWUTS },
};

/* SPEC -> the namespace flags allowed; -1 for a word it does not know. */
static long allowed_of(const char *spec)
{
	char buf[256], *w, *save = NULL;
	unsigned int i, a = 0;

	if (!strcmp(spec, "yes"))
		return 0;
	if (!strcmp(spec, "no"))
		return NS_ALL;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (w = strtok_r(buf, ", ", &save); w;
	     w = strtok_r(NULL, ", ", &save)) {
		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (!strcmp(w, types[i].name))
				break;
		if (i == sizeof(types) / sizeof(types[0]))
			return -1;
		a |= types[i].flag;
	}
	return a;
}

#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))
#define STMT(c, k) ((struct sock_filter)BPF_STMT(c, k))
#define JUMP(c, k, t, f) ((struct sock_filter)BPF_JUMP(c, k, t, f))
#define DENY(err) STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err))
#define ALLOW STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

int main(int argc, char **argv)
{
	long a = argc > 2 ? allowed_of(argv[1]) : -1;
	unsigned int deny = NS_ALL & ~(unsigned int)a;
	unsigned int i, n, setns_ok[9], nok = 0;
	struct sock_filter f[64];
	struct sock_fprog prog;

	if (a < 0) {
		fprintf(stderr,
			"usage: nsrestrict yes|no|TYPE[,TYPE...] CMD [ARG...]\n");
		return 2;
	}
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (a & types[i].flag)
			setns_ok[nok++] = types[i].flag;
	n = 0;
	f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS,
		      offsetof(struct seccomp_data, arch));
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS,
		      offsetof(struct seccomp_data, nr));
	/* clone3: its flags are in memory; ENOSYS sends libc to clone */
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1);
	f[n++] = DENY(ENOSYS);
	/* unshare(flags), clone(flags, ...): flags is the first argument */
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 1, 0);
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4);
	f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0));
	f[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, deny, 0, 1);
	f[n++] = DENY(EPERM);
	f[n++] = ALLOW;
	/* setns(fd, nstype): one allowed type, or 0 when all are */
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setns, 0,
		      nok + 2 + (deny ? 0 : 1));
	f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1));
	for (i = 0; i < nok; i++)
		f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, setns_ok[i],
			      nok - i + (deny ? 0 : 1), 0);
	if (!deny)
		f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
	f[n++] = DENY(EPERM);
	f[n++] = ALLOW;
	prog.len = n;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("nsrestrict: seccomp");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
