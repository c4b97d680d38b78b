/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: the control clients (ctl.c), all from the epoll loop, none
 * blocking it.
 */
#ifndef __TOED_CTL_H
#define __TOED_CTL_H

#include <linux/types.h>

void ctl_accept(void);
void ctl_event(__u32 data, __u32 events);
int ctl_timeout_ms(void);
void ctl_expire(void);
void ctl_close_all(void);

#endif /* __TOED_CTL_H */
