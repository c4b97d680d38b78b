/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toe-loader: the packet capture's maps at a load (capture_maps.c):
 * --capture-ring; their sizes before the load (0, or -EINVAL after a
 * message); after it, whether these programs capture
 * (toe_cap_conf.no_capture).
 */
#ifndef __TOE_CAPTURE_MAPS_H
#define __TOE_CAPTURE_MAPS_H

struct opts;
struct opentoe;

int set_capture_ring(struct opts *o, const char *arg);
int capture_sizes(const struct opts *o, struct opentoe *skel);
void capture_mark(struct opentoe *skel);

#endif /* __TOE_CAPTURE_MAPS_H */
