/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: lost events made good (reconcile.c): TIDs and listeners reconciled. */
#ifndef __TOE_RECONCILE_H
#define __TOE_RECONCILE_H

struct toed;

void reconcile_now(struct toed *d, const char *why);
void reconcile_tick(struct toed *d);
void reconcile_soon(void);
int reconcile_timeout_ms(int ms);

#endif /* __TOE_RECONCILE_H */
