/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: a killed toectl dump's capture switched off, every 2 s (capture.c). */
#ifndef __TOED_CAPTURE_H
#define __TOED_CAPTURE_H

struct toed;

void capture_sweep(struct toed *d);

#endif /* __TOED_CAPTURE_H */
