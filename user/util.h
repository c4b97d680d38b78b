/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* opentoe: helpers shared by toe-loader, toed and toectl. */
#ifndef __TOE_UTIL_H
#define __TOE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "toe_maps.h"

extern const char *toe_prog;	/* program name for messages */

/* One line to stderr, "prog: message". */
void toe_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Path helpers. */
int toe_join(char *buf, size_t len, const char *dir, const char *name);
bool toe_is_bpffs(const char *path);
bool toe_is_cgroup2(const char *path);
/* The cgroup v2 mount point from /proc/mounts, or NULL. */
const char *toe_cgroup2_root(void);
/* Find the path of the cgroup v2 folder whose id is id (its inode). */
int toe_cgroup_path(__u64 id, char *buf, size_t len);
/* Format one line into err (if any room); returns -1, for "return errf(...)". */
int toe_errf(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * One pinned map to open into the int at offset off of a struct of fds:
 * TOE_PIN(struct toe_maps, flows, FLOWS).  An optional one that is not
 * pinned (a datapath loaded by an older toe-loader) is left at -1.
 */
struct toe_pin {
	enum toe_map_id id;
	size_t off;
	bool optional;
};
#define TOE_PIN(type, field, id) \
	{ TOE_MAP_ID_##id, offsetof(type, field), false }
#define TOE_PIN_OPT(type, field, id) \
	{ TOE_MAP_ID_##id, offsetof(type, field), true }
/*
 * Open dir's pins of pins[0..n) into the fds of base.  On failure every fd
 * is closed and set to -1, err says which pin is missing, and -1 is returned.
 */
int toe_open_pins(const char *dir, const struct toe_pin *pins, unsigned int n,
		  void *base, char *err, size_t len);
/* Close the fds of pins[0..n) in base that are open, and set them to -1. */
void toe_close_pins(const struct toe_pin *pins, unsigned int n, void *base);
/* Close the fds that are open (>= 0) and set them to -1. */
void toe_close_fds(int *fds, unsigned int n);
/* Mount bpffs on /sys/fs/bpf when nothing is mounted there. */
int toe_ensure_bpffs(const char *pin_dir);

/*
 * The pins of per-interface links (toe-loader): ifindexes are per network
 * namespace, so the name carries the namespace's inode too.
 */
#define TOE_PIN_LINK_XDP	"link_xdp_n%lu_if%u"
#define TOE_PIN_LINK_TC		"link_tc_n%lu_if%u"
/* The same hook without tcx (before Linux 6.6): a classic clsact filter. */
#define TOE_PIN_TC_INGRESS	"tc_ingress_n%lu_if%u"
/*
 * XDP through libxdp's dispatcher (kernels with freplace): toe_xdp's
 * component program, not a link.
 */
#define TOE_PIN_XDP_DISP	"xdpd_n%lu_if%u"
/* The inode of this process's network namespace (0 if unknown). */
unsigned long toe_netns_ino(void);
/*
 * The cookie of this process's network namespace, as the datapath sees it
 * (bpf_get_netns_cookie(), struct toe_flow_key's netns); 0 if unknown.
 */
#define TOE_SO_NETNS_COOKIE	71	/* <asm-generic/socket.h>, Linux 5.14 */
__u64 toe_netns_cookie(void);

/* Minimal streaming JSON writer (valid, one document). */
struct toe_json {
	FILE *f;
	int depth;
	bool first[32];
	bool key;		/* a key was just written */
};

void tj_start(struct toe_json *j, FILE *f);
void tj_obj(struct toe_json *j);	/* { */
void tj_obj_end(struct toe_json *j);	/* } */
void tj_arr(struct toe_json *j);	/* [ */
void tj_arr_end(struct toe_json *j);	/* ] */
void tj_key(struct toe_json *j, const char *k);
void tj_str(struct toe_json *j, const char *s);
void tj_u64(struct toe_json *j, unsigned long long v);
void tj_i64(struct toe_json *j, long long v);
void tj_f64(struct toe_json *j, double v);
void tj_bool(struct toe_json *j, bool v);
void tj_null(struct toe_json *j);
void tj_end(struct toe_json *j);	/* newline */

#define tj_kstr(j, k, v) do { tj_key(j, k); tj_str(j, v); } while (0)
#define tj_ku64(j, k, v) do { tj_key(j, k); tj_u64(j, v); } while (0)

#endif /* __TOE_UTIL_H */
