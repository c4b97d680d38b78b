/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: the monitor clients, toectl monitor (mon.c). */
#ifndef __TOE_MON_H
#define __TOE_MON_H

#include <stdbool.h>
#include <linux/types.h>

/* One line to every monitor client: its text and JSON versions. */
void mon_send(const char *text, const char *json);
bool mon_any(void);
/* A free slot, or -1: MAX_MON clients already. */
int mon_free_slot(void);
void mon_attach(int slot, int fd, bool json);
void mon_input(int slot, __u32 events);
void mon_close_all(void);

#endif /* __TOE_MON_H */
