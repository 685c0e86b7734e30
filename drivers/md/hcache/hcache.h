/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_H
#define _HCACHE_H

/*
 * hcache: a block cache that puts a fast device in front of a slow one.
 *
 * This comment is the design. It says what exists today and, under "Plan",
 * what the open issues will add; it changes in the same commit as the
 * behaviour it describes.
 *
 * OBJECTS AND LIFETIMES
 *
 * The module (module.c) owns one kobject, /sys/fs/hcache, created at load
 * and removed at unload. Everything else hangs off it:
 *
 * Plan:
 *  - A backing device (struct hc_bdev_dev) is a slow device with an hcache
 *    superblock, registered through /sys/fs/hcache/register. It is exposed
 *    as /dev/hcacheN and lives from registration until it is stopped.
 *  - A cache set (struct hc_cache_set) is one cache device (struct hc_cache)
 *    with its buckets, journal and btree, named by its set uuid under
 *    /sys/fs/hcache/<set-uuid>/. Backing devices attach to it; it outlives
 *    none of them while they hold dirty data in it.
 *
 * ON DISK
 *
 * Plan: one header, hcache_ondisk.h, defines every on-disk structure for the
 * module and the tools alike: little-endian fixed-width fields, a magic and
 * a checksum per structure, a version with compat / ro_compat / incompat
 * feature masks. Both kinds of device carry a superblock at byte 4096.
 *
 * Buckets, generations and pointers (plan): the cache device is cut into
 * buckets; each has an 8-bit generation. A btree pointer carries the gen of
 * its bucket when it was written and is valid only while the two are equal,
 * so reusing a bucket (gen + 1) invalidates every pointer into it without
 * touching the btree.
 *
 * LOCK ORDER
 *
 * No locks yet. When locks are added, their order is written here, once,
 * and each lock is documented at the fields it protects.
 *
 * CRASH CONSISTENCY
 *
 * Nothing is written to disk yet. Plan: a journal makes btree updates
 * durable; on registration the journal is replayed and a mark pass rebuilds
 * bucket state, so a crash at any point recovers to the last flushed state.
 *
 * KERNEL VERSIONS
 *
 * compat.h holds every difference between the kernels we build for, driven
 * by build-time probes; no other file tests a kernel version.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kobject.h>

#include "compat.h"

/* module.c */
extern struct kobject *hc_root_kobj;

#endif /* _HCACHE_H */
