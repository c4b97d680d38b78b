/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Byte patterns for stream checks (bench/loadgen.c, selftests/tools/
 * bypass_check.c).  Byte i of a stream with phase s is tab[(i + s) % P]:
 * a pseudo-random table of prime period P, so that a chunk delivered at the
 * wrong offset, twice, or from another stream (another phase) differs from
 * what is expected there.  Checking is a memcmp against the table, fast
 * enough to check every byte at memory speed.
 */
#ifndef __TOE_PATTERN_H
#define __TOE_PATTERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PAT_PERIOD 65521U /* prime: no write size lines up with it */

struct pat {
	unsigned char
		tab[2 * PAT_PERIOD]; /* twice: any slice <= P is contiguous */
};

static inline void pat_init(struct pat *p)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	unsigned int i;

	for (i = 0; i < PAT_PERIOD; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p->tab[i] = (unsigned char)(x >> 24);
	}
	memcpy(p->tab + PAT_PERIOD, p->tab, PAT_PERIOD);
}

/* Phase of stream number n (connections, directions). */
static inline uint64_t pat_phase(uint64_t n)
{
	return n * 7919U;
}

/* Stream bytes [off, off + len) of phase ph into dst. */
static inline void pat_fill(const struct pat *p, uint64_t ph, uint64_t off,
			    void *dst, size_t len)
{
	unsigned char *d = dst;

	while (len) {
		size_t o = (size_t)((off + ph) % PAT_PERIOD);
		size_t n = len < PAT_PERIOD ? len : PAT_PERIOD;

		memcpy(d, p->tab + o, n);
		d += n;
		off += n;
		len -= n;
	}
}

/* -1 if src holds stream bytes [off, off + len), else the first bad index. */
static inline long pat_check(const struct pat *p, uint64_t ph, uint64_t off,
			     const void *src, size_t len)
{
	const unsigned char *s = src;
	size_t done = 0;

	while (done < len) {
		size_t o = (size_t)((off + done + ph) % PAT_PERIOD);
		size_t n = len - done < PAT_PERIOD ? len - done : PAT_PERIOD;

		if (memcmp(s + done, p->tab + o, n)) {
			size_t i;

			for (i = 0; i < n; i++)
				if (s[done + i] != p->tab[o + i])
					return (long)(done + i);
		}
		done += n;
	}
	return -1;
}

#endif /* __TOE_PATTERN_H */
