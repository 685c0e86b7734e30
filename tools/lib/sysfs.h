/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_TOOLS_SYSFS_H
#define _HCACHE_TOOLS_SYSFS_H

/*
 * sysfs.h: the registered hcache objects as the kernel shows them in
 * sysfs, for the hcache command: cache sets (/sys/fs/hcache/<set-uuid>/),
 * their cache devices and the backing devices (<disk>/hcache/, see
 * Documentation/ABI/testing/), found from a name the user gives.
 */

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "util.h"

enum hc_obj_kind {
	HC_OBJ_SET,		/* a cache set: its directory in /sys/fs/hcache */
	HC_OBJ_CACHE,		/* a cache device: <disk>/hcache with set_uuid */
	HC_OBJ_BACKING,		/* a backing device: <disk>/hcache with state */
};

struct hc_obj {
	enum hc_obj_kind kind;
	char	name[NAME_MAX + 1];	/* kernel name, or the set's uuid */
	char	dir[PATH_MAX];		/* its hcache directory in sysfs */
	char	disk[NAME_MAX + 1];	/* a backing device's hcacheN, or "" */
	char	set_uuid[37];		/* the set it belongs to, or "" */
};

/* The module's directory: $HCACHE_SYSFS (for tests), else /sys/fs/hcache. */
const char *hc_sysfs_root(void);

/* Does hc_sysfs_root() exist, that is, is the module loaded? */
bool hc_sysfs_loaded(void);

/*
 * Read @dir/@attr into @buf, without its trailing newline. Returns 0 or
 * -errno.
 */
int hc_sysfs_read(const char *dir, const char *attr, char *buf, size_t len);

/* Read @dir/@attr as an unsigned decimal number. Returns 0 or -errno. */
int hc_sysfs_u64(const char *dir, const char *attr, u64 *v);

/*
 * Write @val to @dir/@attr in one write(2). Returns 0, or -errno: what
 * the kernel's store function returned.
 */
int hc_sysfs_write(const char *dir, const char *attr, const char *val);

/*
 * The bracketed choice of a list attribute such as cache_mode
 * ("writethrough [writeback] writearound none") into @buf; the text as
 * it is if it holds no brackets.
 */
void hc_sysfs_choice(const char *text, char *buf, size_t len);

/* The size in bytes of the disk or partition @name; 0 if unknown. */
u64 hc_disk_bytes(const char *name);

/*
 * Find the hcache object @arg names: a set's uuid, a device path
 * (/dev/sdb, /dev/hcache0, a /dev/disk/by-* link), or a kernel name
 * (sdb, hcache0). /dev/hcacheN names its backing device. Returns 0, or
 * -ENOENT (no such device or set), -ENODEV (a device hcache has not
 * registered), with @why saying what was looked at.
 */
int hc_obj_find(const char *arg, struct hc_obj *o, char *why, size_t why_len);

/*
 * Every registered object, sets first, then cache devices, then backing
 * devices, each group sorted by name. *@objs is malloc'd; the caller
 * frees it. Returns 0 or -errno.
 */
int hc_obj_list(struct hc_obj **objs, size_t *n);

#endif /* _HCACHE_TOOLS_SYSFS_H */
