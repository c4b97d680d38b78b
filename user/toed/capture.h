/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: a killed toectl dump's capture switched off, every 2 s (capture.c). */
#ifndef __TOED_CAPTURE_H
#define __TOED_CAPTURE_H

void capture_sweep(void);

#endif /* __TOED_CAPTURE_H */
