/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* toed: its run (loop.c): start-up, the epoll loop, the one teardown. */
#ifndef __TOE_LOOP_H
#define __TOE_LOOP_H

struct toed;

/* Run the daemon until SIGTERM or SIGINT; the exit status. */
int daemon_run(struct toed *d);

#endif /* __TOE_LOOP_H */
