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
 * and removed at unload, with the files register, register_quiet and
 * pendings_cleanup (register.c). Everything else hangs off it.
 *
 * A backing device (struct hc_backing, backing.c) is a slow device with an
 * hcache superblock. Registering it opens it exclusively (holder: the
 * hc_backing), reads and validates its superblock (sb.c, sb_io.c), puts it on
 * hc_backings and creates <backing>/hcache/ in sysfs (backing_sysfs.c). The
 * kobject there owns the struct: its release frees it. Each registered
 * device holds a module reference, so the module cannot be unloaded while
 * one exists.
 *
 * A backing device is either pending or running. Running means it is
 * exported as /dev/hcacheN (a bio-based disk of HC_MINORS minors, so
 * partitions work), N from hc_backing_ida. By its superblock state:
 *  - none (never had a cache) and stale (ran without its cache once): runs
 *    at once, in passthrough;
 *  - clean: pending, waiting for its cache set; writing 1 to "running"
 *    starts it without the cache, after persisting state stale and a new
 *    invalidation generation, so the cache's keys for it are dropped, never
 *    written back, when the cache set returns;
 *  - dirty: pending; "running" refuses 1 and takes only "force", which logs
 *    at critical level that the cache's dirty data is being thrown away, and
 *    then does as for clean.
 *
 * Stopping (sysfs "stop", pendings_cleanup, the reboot notifier) removes the
 * disk, waits for every bio in flight (b->inflight, a percpu_ref), releases
 * the device and drops the kobject. "stop" works from a work item on
 * hc_wq, as a sysfs file cannot remove its own directory; module unload
 * flushes hc_wq.
 *
 * Plan (Documentation/hcache/design.rst has it in full): a cache set
 * (struct hc_cache_set) is one cache device with its buckets, journal,
 * btree and table of attached backing devices, named by its set uuid under
 * /sys/fs/hcache/<set-uuid>/. Backing devices attach to it whichever
 * registers first; it outlives none of them while they hold dirty data in
 * it.
 *
 * THE I/O PATH (passthrough)
 *
 * Until a cache set exists, /dev/hcacheN is the backing device shifted by
 * the superblock's data offset. Each bio is cloned from b->bio_set (a
 * mempool-backed bio set, so the path makes progress under memory pressure
 * and swap on /dev/hcacheN cannot deadlock), remapped and submitted; the
 * clone's completion ends the I/O accounting and the original bio. Queue
 * limits are stacked from the backing device; /dev/hcacheN always
 * advertises a volatile write cache with FUA, since a writeback cache needs
 * its users' flushes even when the backing device has no cache of its own.
 *
 * ON DISK
 *
 * hcache_ondisk.h defines every on-disk structure for the module and the
 * tools alike (little-endian, fixed-width, a magic and a CRC-32C checksum
 * each, a version with compat / ro_compat / incompat feature masks); its
 * opening comment and Documentation/hcache/ondisk-format.rst describe them.
 * Both kinds of device carry a 4 KiB superblock at byte 4096. The module
 * rewrites a backing superblock (sb_io.c: seq + 1, written with PREFLUSH and
 * FUA) whenever its label, cache mode or state changes.
 *
 * Buckets, generations and pointers (plan): the cache device is cut into
 * buckets; each has an 8-bit generation. A btree pointer carries the gen of
 * its bucket when it was written and is valid only while the two are equal,
 * so reusing a bucket (gen + 1) invalidates every pointer into it without
 * touching the btree. A bucket's gen never runs more than a fixed distance
 * ahead of the oldest pointer into it, so wrap-around cannot make a stale
 * pointer look valid; new gens are persisted before a bucket takes new data.
 *
 * What exists of it: the pure layer, built into the module and the unit
 * tests alike. bkey.c: the in-memory key (struct hc_key, host-endian, one
 * pointer at most), its disk conversion and validation, cutting, and the
 * gen arithmetic with HC_GEN_MAX_DISTANCE. bset.c: a sorted, overlap-free
 * set of keys over a caller's array: lookup (binary search), insert that
 * resolves overlaps and reports the sectors it overwrote, compare-and-swap
 * insert, merge (newer wins), check, and on-disk encode and decode.
 *
 * LOCK ORDER
 *
 *   hc_register_lock  (register.c: hc_backings, registration, run, stop)
 *     hc_backing.sb_lock  (the in-memory superblock and its writes)
 *
 * Plan, with the cache set: btree node locks (parent before child) come
 * between the two; the journal lock and then the bucket lock nest inside
 * sb_lock's level (design.rst, "Locks").
 *
 * No lock is taken in the I/O path: a running device's data offset and
 * bdev never change, and the disk is removed before the device is freed.
 *
 * CRASH CONSISTENCY
 *
 * A superblock is written whole, with PREFLUSH and FUA, and checksummed: a
 * torn write fails validation rather than being half-believed. The state
 * change to stale is persisted before a device runs without its cache, so
 * a crash right after it cannot bring the old cached data back. Plan: a
 * journal makes btree updates durable; on registration the journal is
 * replayed and a mark pass rebuilds bucket state, so a crash at any point
 * recovers to the last flushed state; design.rst lists the five ordering
 * rules this rests on.
 *
 * KERNEL VERSIONS
 *
 * compat.h holds every difference between the kernels we build for, driven
 * by build-time probes; no other file tests a kernel version.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/completion.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu-refcount.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "sb.h"

/* Minors per /dev/hcacheN: the whole disk and 15 partitions. */
#define HC_MINORS		16

/**
 * struct hc_backing - a registered backing device
 * @list: on hc_backings; hc_register_lock
 * @kobj: <backing>/hcache/ in sysfs; its release frees the struct
 * @handle: the backing device, opened exclusively at registration
 * @bdev: @handle.bdev
 * @sb_lock: protects @sb and superblock writes
 * @sb: the superblock as last written (or read)
 * @sb_buf: a page to encode @sb into for writing; @sb_lock
 * @disk: /dev/hcacheN while running, else NULL; hc_register_lock
 * @minor_index: N of /dev/hcacheN while running
 * @data_offset: @sb's data offset in sectors, fixed while running
 * @bio_set: clones of the bios sent to @disk
 * @inflight: a reference per bio in flight while running
 * @inflight_done: completed when @inflight drops to zero after being killed
 * @stop_work: runs a stop asked for through sysfs
 */
struct hc_backing {
	struct list_head	list;
	struct kobject		kobj;
	struct hc_bdev_handle	handle;
	struct block_device	*bdev;

	struct mutex		sb_lock;	/* protects sb, sb_buf */
	struct hc_sb		sb;
	struct page		*sb_buf;

	struct gendisk		*disk;
	int			minor_index;
	sector_t		data_offset;

	struct bio_set		bio_set;
	struct percpu_ref	inflight;
	struct completion	inflight_done;
	struct work_struct	stop_work;
};

/* module.c */
extern struct kobject *hc_root_kobj;
extern struct workqueue_struct *hc_wq;

/* register.c */
extern struct mutex hc_register_lock;
int hc_register_init(void);
void hc_register_exit(void);

/* backing.c */
int hc_backing_major_init(void);
void hc_backing_major_exit(void);
struct hc_backing *hc_backing_alloc(void);
int hc_backing_setup(struct hc_backing *b);
int hc_backing_start(struct hc_backing *b, bool force);
void hc_backing_stop(struct hc_backing *b);
void hc_backing_stop_async(struct hc_backing *b);
void hc_backing_put(struct hc_backing *b);
void hc_backing_free(struct hc_backing *b);
const char *hc_backing_state_name(unsigned int state);

/* backing_sysfs.c */
extern const struct kobj_type hc_backing_ktype;
void hc_backing_uevent(struct hc_backing *b);

/* sb_io.c */
int hc_sb_read_page(struct block_device *bdev, struct page *page);
int hc_backing_sb_write(struct hc_backing *b);

#endif /* _HCACHE_H */
