/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toe-loader: the pin folder's names and checks (pins.c), and the checks
 * every subcommand makes first.
 */
#ifndef __TOE_PINS_H
#define __TOE_PINS_H

#include <stdbool.h>
#include <linux/types.h>
#include <linux/bpf.h>

int check_root(void);
int check_btf(void);
const char *mode_name(__u32 attach_mode);
/* A per-interface pin name: fmt gets this namespace (cookie) and n. */
int pin_path(char *buf, const char *dir, const char *fmt, __u32 n);
/*
 * Old-style pins of this namespace (n<INODE>, an older toe-loader's)
 * renamed to this one's names (c<COOKIE>), so that a load finds and
 * replaces what the previous version attached here.
 */
void pins_upgrade(const char *dir);
/* A pin name opentoe made, a retired map's included. */
bool is_ours(const char *name);
/* Map id of a sockmap link; the map id of an fd (0 if unknown). */
__u32 sockmap_link_map_id(const struct bpf_link_info *li);
__u32 map_id_of(int fd);
/* The id of a map, link or program fd, or of what path pins; 0 if none. */
__u32 obj_id_of(int fd);
__u32 pinned_id(const char *path);
struct bpf_map;
/* 0, or -EINVAL (message given) if the pin is not this map's layout. */
int check_pin_layout(const struct bpf_map *map, const char *path);

#endif /* __TOE_PINS_H */
