/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: which datapath it serves (datapath.c): a reload or unload noticed
 * by the ids behind the pins, and the datapath opened again.
 */
#ifndef __TOE_DATAPATH_H
#define __TOE_DATAPATH_H

struct toed;

#include <stdbool.h>

bool dp_check(struct toed *d);
void dp_detach(struct toed *d);

#endif /* __TOE_DATAPATH_H */
