// SPDX-License-Identifier: GPL-2.0
/* gen.py's fixture (gen.py selftest): each rule's sites, and code that no
 * rule may touch (comments, strings, macros, dead branches, declarations);
 * fixture.expected lists the mutants the rules make of it, and each of them
 * must compile (cc -O2 -Wall -Wextra -Werror).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

struct key {
	unsigned int saddr, daddr;
	unsigned short sport, dport;
	unsigned long netns;
};

struct flow {
	struct key orig, reply;
	int state;
	int seen[4];
};

#define FLOW_RESET(f)           \
	do {                    \
		(f)->state = 0; \
	} while (0)

static int hits;

static int lookup(const struct key *k, int n)
{
	if (!k)
		return -EFAULT;
	if (n < 0)
		return -EINVAL;
	return (int)(k->saddr ^ k->daddr) + n;
}

static int verdict(int v)
{
	switch (v) {
	case 0:
		return -ENOENT;
	default:
		break;
	}
	return v;
}

static void copy_key(struct key *dst, const struct key *src)
{
	memcpy(dst, src, sizeof(*dst));
}

#ifdef TOE_NO_CAPTURE
static void capture(struct flow *f)
{
	f->seen[2] = 1;
	f->state = 2;
}
#else
static void capture(struct flow *f)
{
	f->seen[1] = 1;
	f->state = 1;
}
#endif

#if 0
static void dead(struct flow *f)
{
	f->state = 0;
}
#endif

int fixture_flow(struct flow *f, const struct key *k, int i)
{
	char name[16] = "x = 0; y[i]"; /* f->state = 0; */
	int err = 0;

	memset(f, 0, sizeof(*f));
	f->orig.saddr = k->saddr;
	f->orig.daddr = k->daddr;
	f->orig.sport = htons(k->sport);
	f->orig.dport = htons(k->dport);
	f->orig.netns = k->netns;
	copy_key(&f->reply, &f->orig);
	err = verdict(lookup(&f->orig, i));
	if (err < 0)
		goto out;
	f->seen[i & 3] = 1;
	hits++;
	f->state = 0;
	if (!name[0]) {
		hits += 1;
		goto out;
	}
	capture(f);
	f->state = f->seen[i & 3] + 1;
out:
	FLOW_RESET(f);
	return err;
}

char *fixture_name(const char *s)
{
	char *p = strdup(s);

	if (!p)
		return NULL; /* out of memory only: no errret */
	p[0] = 'x';
	return p;
}
