// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Loss makes good: when events are lost (the datapath's event_dropped
 * counter moved: the toe_events ring was full), what toed derives from
 * them is made to agree with the datapath and the kernel module again,
 * at once after the read of the ring that follows the loss
 * (reconcile_soon), else within RECONCILE_CHECK_MS, + the reconcile itself: the module TIDs toed
 * holds against live flows and toe_tid_held (kmod_reconcile), the module's
 * listeners against toe_listeners (listen_reconcile), the fast path's flows
 * waiting for their conntrack entry against conntrack (ct_wait_sweep: also
 * when toed first sees a datapath).  The datapath's own
 * maps need nothing: it deletes a flow's toe_flows, toe_tid_held and
 * toe_listeners entries itself at close, whether the event gets out or
 * not.  reconcile_now is the one mechanism, callable from anywhere;
 * counted (toectl status, stats, metrics).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/knob.h"
#include "lib/clock.h"
#include "opentoe_stats.h"
#include "kmod.h"
#include "listen.h"
#include "events.h"
#include "reconcile.h"
#include "capture.h"
#include "log.h"
#include "state.h"
#include "nft.h"
#include "ct.h"

#define RECONCILE_CHECK_MS 250 /* how often event_dropped is looked at */
/*
 * How often toed looks for flows still waiting for their conntrack word
 * (ct_wait_sweep) CT_RETRY_AGE_MS after their admission, when the stack
 * forwarded packets of waiting flows since the last look (fwd_ct_wait
 * moved): a walk of toe_fwd at most every CT_RETRY_MS.
 */
#define CT_RETRY_MS 5000
#define CT_RETRY_AGE_MS 1000

/* The loop's own (one thread): no lock. */
/* What a reconcile put right so far, all kinds summed. */
static __u64 fixed_so_far(struct toed *d)
{
	return d->kmod.kst.orphans + d->kmod.kst.lost + d->kmod.kst.adopted +
	       d->lis.lst.reconciled + d->lis.lst.orphans + d->rec.ct_swept;
}

/*
 * The tests' knob TOE_TEST_RECONCILE_DELAY_MS: a pause between the read of
 * the ring and the reconcile's, for closes to fall in between
 * (selftests/kmod/toed_guest.sh); unset, none.
 */
static void test_delay(void)
{
	const char *v = toe_knob("TOE_TEST_RECONCILE_DELAY_MS");
	int ms = v ? atoi(v) : 0;

	if (ms <= 0)
		return;
	logm(LOG_INFO,
	     "reconcile: the ring read, a pause of %d ms (TOE_TEST_RECONCILE_DELAY_MS)",
	     ms);
	usleep(ms * 1000);
}

void reconcile_now(struct toed *d, const char *why)
{
	__u64 before = fixed_so_far(d);

	d->rec.last_ns = toe_now_ns();
	d->rec.runs++;
	/* the events still on the ring first: a close in flight is no leak */
	events_consume(&d->evs);
	d->rec.last_read_ns = toe_now_ns() - d->rec.last_ns;
	test_delay();
	kmod_reconcile(&d->kmod);
	listen_reconcile(&d->lis);
	d->rec.ct_swept += ct_wait_sweep(nft_fwd_path(), 0);
	d->rec.fixed += fixed_so_far(d) - before;
	d->rec.last_took_ns = toe_now_ns() - d->rec.last_ns;
	logm(LOG_INFO,
	     "reconciled (%s): %llu put right in %llu ms (the ring read in %llu)",
	     why, (unsigned long long)(fixed_so_far(d) - before),
	     (unsigned long long)(d->rec.last_took_ns / 1000000),
	     (unsigned long long)(d->rec.last_read_ns / 1000000));
}

/* Counter i of toe_stats summed over the CPUs into *sum; false: unread. */
static bool stat_sum(struct toed *d, __u32 i, __u64 *sum)
{
	static __u64 *v;
	static int ncpu;
	int c;

	if (!v) {
		ncpu = libbpf_num_possible_cpus();
		v = ncpu > 0 ? calloc(ncpu, sizeof(*v)) : NULL;
		if (!v)
			return false;
	}
	if (bpf_map_lookup_elem(d->m.stats, &i, v))
		return false;
	for (c = 0; c < ncpu; c++)
		*sum += v[c];
	return true;
}

/*
 * The datapath's events lost: the ring full, or a tenant's event past its
 * share of it (event_dropped + event_quota_dropped, summed over the CPUs;
 * two lookups, cheap enough for every read of the ring); -1: unread.
 */
static long long event_dropped(struct toed *d)
{
	__u64 sum = 0;

	if (!d->dp.loaded || !stat_sum(d, TOE_S_EVENT_DROPPED, &sum) ||
	    !stat_sum(d, TOE_S_EVENT_QUOTA, &sum))
		return -1;
	return (long long)sum;
}

/*
 * The ring was read: look at event_dropped at the end of this wake-up
 * (reconcile_tick), not RECONCILE_CHECK_MS later, so that a reconcile
 * follows a loss at once.
 */
void reconcile_soon(struct reconcile *rc)
{
	rc->next_check_ns = 0;
}

/*
 * Flows left waiting for their conntrack word: the stack still forwards
 * them (fwd_ct_wait moves), CT_RETRY_AGE_MS after their admission.  Their
 * ctnetlink update failed, or toe_fwd_ctok evicted the word (a burst of
 * admissions larger than it, faster than their next packets): done again.
 */
static void ct_wait_retry(struct toed *d, __u64 now)
{
	__u64 w = 0;

	if (now < d->rcl.next_retry_ns)
		return;
	d->rcl.next_retry_ns = now + CT_RETRY_MS * 1000000ULL;
	if (!stat_sum(d, TOE_S_FWD_CT_WAIT, &w) || w == d->rcl.ct_wait_seen)
		return;
	d->rcl.ct_wait_seen = w;
	events_consume(
		&d->evs); /* admissions toed was late for are not misses */
	d->rec.ct_swept +=
		ct_wait_sweep(nft_fwd_path(), CT_RETRY_AGE_MS * 1000000ULL);
}

/* After every wake-up of the loop: events lost since the last look? */
void reconcile_tick(struct toed *d)
{
	__u64 now = toe_now_ns();
	long long dropped;
	char why[64];

	capture_sweep(
		&d->cap,
		d->pin_dir); /* not a loss: a killed dump's capture (capture.c) */
	if (now < d->rcl.next_check_ns)
		return;
	d->rcl.next_check_ns = now + RECONCILE_CHECK_MS * 1000000ULL;
	dropped = event_dropped(d);
	if (dropped < 0) {
		d->rcl.primed = false; /* a datapath loaded again starts over */
		return;
	}
	if (!d->rcl.primed) {
		/* admissions whose events went before toed read them: the
		 * ring read first, so that only those are left waiting */
		events_consume(&d->evs);
		d->rec.ct_swept += ct_wait_sweep(nft_fwd_path(), 0);
	}
	if (d->rcl.primed && (__u64)dropped > d->rcl.dropped_seen) {
		snprintf(why, sizeof(why), "%llu events lost",
			 (unsigned long long)((__u64)dropped -
					      d->rcl.dropped_seen));
		d->rec.event_loss++;
		reconcile_now(d, why);
	}
	d->rcl.dropped_seen = dropped;
	d->rcl.primed = true;
	ct_wait_retry(d, now);
}

/* epoll_wait's timeout (ms, -1: none) bounded by the next look. */
int reconcile_timeout_ms(int ms)
{
	return ms < 0 || ms > RECONCILE_CHECK_MS ? RECONCILE_CHECK_MS : ms;
}
