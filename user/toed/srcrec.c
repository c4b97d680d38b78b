// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Where the policy in force came from: the record toed writes next to the
 * datapath's locks at each apply, and reads back for toectl status and
 * policy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/dplock.h"
#include "lib/err.h"
#include "srcrec.h"

#define errf toe_errf

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
		     (unsigned long long)serial,
		     strchr(config, '\n') ? "?" : config);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return errf(err, errlen, "cannot write %s: %s", tmp,
			    strerror(errno));
	bad = n >= (int)sizeof(head) || write_all(fd, head, n) ||
	      write_all(fd, text, len);
	if (close(fd) || bad || rename(tmp, path)) {
		unlink(tmp);
		return errf(err, errlen, "cannot write %s: %s", path,
			    strerror(errno ? errno : EIO));
	}
	return 0;
}

/* The record's header: serial and config path; the text after it. */
static int src_parse(char *buf, size_t len, struct toe_policy_src *s)
{
	char *p = buf + strlen(SRC_MAGIC), *end;
	unsigned long long serial;

	if (len < strlen(SRC_MAGIC) ||
	    memcmp(buf, SRC_MAGIC, strlen(SRC_MAGIC)) ||
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
