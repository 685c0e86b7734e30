/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_BDEV_TABLE_H
#define _HCACHE_BDEV_TABLE_H

/*
 * bdev_table.h: the table of backing devices attached to a cache set
 * (struct hc_bdev_table_disk) in memory: lookup, attach and detach, and
 * conversion to and from the disk form. Pure code: no I/O, no allocation,
 * no locks; the caller serialises changes and writes the table.
 *
 * IDS
 *
 * Keys name their backing device by a 32-bit id (hc_key.bdev_id), not by
 * uuid. Ids are handed out from next_id, which only grows: an id is never
 * reused, not after a detach, not after a reformat of the backing device.
 * Id 0 is never handed out.
 *
 * INVALIDATION
 *
 * An entry keeps the inval_gen the backing device's superblock had when it
 * last ran with this cache. A backing device is written without its cache
 * (hcache not loaded, forced detach) only after bumping its inval_gen, so
 * on attach a different inval_gen means the cache's keys for the device
 * may be stale. The device then gets a new id: the old id leaves the
 * table, so keys under it are never returned again and garbage collection
 * drops them (a key whose bdev_id is not in the table is dead).
 */

#include "pure.h"
#include "hcache_ondisk.h"

/* Entries a table may hold. */
#define HC_BDEV_TABLE_MAX	256

/* Entry flags this code knows (hcache_ondisk.h, HC_BDEV_ENTRY_*). */
#define HC_BDEV_ENTRY_FLAGS_KNOWN	HC_BDEV_ENTRY_DETACHED

/**
 * struct hc_bdev_entry - one backing device of the cache set
 * @uuid: the backing device's dev_uuid; never nil
 * @id: its id in keys; never 0, below the table's next_id, unique
 * @inval_gen: the backing superblock's inval_gen when last attached
 * @flags: HC_BDEV_ENTRY_*
 * @sectors: backing device size when last attached
 * @last_attach: when it was last attached, seconds since the epoch
 * @dirty_sectors: in memory only: live dirty sectors under @id, kept by
 *	the cache set (alloc.c) and recomputed by the mark pass
 */
struct hc_bdev_entry {
	u8	uuid[HC_UUID_SIZE];
	u32	id;
	u32	inval_gen;
	u32	flags;
	u64	sectors;
	u64	last_attach;
	u64	dirty_sectors;
};

/**
 * struct hc_bdev_table - the backing-device table in memory
 * @seq: bumped by the caller on every write of the table
 * @next_id: the id the next new entry gets; never 0
 * @nr: entries in use, @d[0] to @d[nr - 1]
 * @d: the entries, in the order they were added
 */
struct hc_bdev_table {
	u64	seq;
	u32	next_id;
	u32	nr;
	struct hc_bdev_entry d[HC_BDEV_TABLE_MAX];
};

/* bdev_table.c; each function is documented at its definition. */
void hc_bdev_table_init(struct hc_bdev_table *t);
size_t hc_bdev_table_bytes(const struct hc_bdev_table *t);
u32 hc_bdev_table_csum(const struct hc_bdev_table_disk *d);
int hc_bdev_table_encode(const struct hc_bdev_table *t, u64 set_magic,
			 void *buf, size_t len);
int hc_bdev_table_decode(const void *buf, size_t len, u64 set_magic,
			 struct hc_bdev_table *t, const char **why);
struct hc_bdev_entry *hc_bdev_table_find(struct hc_bdev_table *t,
					 const u8 *uuid);
struct hc_bdev_entry *hc_bdev_table_find_id(struct hc_bdev_table *t, u32 id);
int hc_bdev_table_attach(struct hc_bdev_table *t, const u8 *uuid,
			 u32 inval_gen, u64 sectors, u64 now, u32 *id,
			 bool *new_id);
int hc_bdev_table_detach(struct hc_bdev_table *t, u32 id);

#endif /* _HCACHE_BDEV_TABLE_H */
