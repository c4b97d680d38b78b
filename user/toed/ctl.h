/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: the control clients (ctl.c), all from the epoll loop, none
 * blocking it.
 */
#ifndef __TOED_CTL_H
#define __TOED_CTL_H

struct toed;

#include <linux/types.h>

void ctl_accept(struct toed *d);
void ctl_event(struct toed *d, __u32 data, __u32 events);
int ctl_timeout_ms(struct toed *d);
void ctl_expire(struct toed *d);
void ctl_close_all(struct toed *d);

#endif /* __TOED_CTL_H */
