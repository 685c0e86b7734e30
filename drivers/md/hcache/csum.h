/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_CSUM_H
#define _HCACHE_CSUM_H

/*
 * csum.h: the data checksums of a cache set (csum.c), with
 * HC_FEAT_INCOMPAT_DATA_CSUM: a CRC-32C per 4 KiB chunk of the cache
 * device, kept in memory for every chunk and on disk in the checksum
 * table (csum_table.h).
 *
 * The rules:
 *  - data is written in whole chunks, from pages the cache owns, never
 *    from a caller's buffer (which may change while it is written): a
 *    write's data is copied first; the tail of its last chunk is zeroes.
 *    Every writer of cached data (cached writes, promotions, moving GC)
 *    sets its chunks' checksums before it submits the data, and no data
 *    is ever written over in place;
 *  - a key is never durable before its data's checksums: every metadata
 *    write that can make keys durable (hc_meta_write_ordered()) first
 *    writes the table blocks changed since, then flushes;
 *  - every read of cached data is checked against the table before it is
 *    used, and the bucket's gen is checked after that: a chunk's entry is
 *    only meaningful while its bucket holds the data a key points at.
 */

#include <linux/atomic.h>
#include <linux/types.h>
#include <linux/xarray.h>

/**
 * struct hc_csum_bad - a dirty chunk that did not match its checksum
 * @bdev_id: the backing device whose data it holds
 * @bdev_sector: the first of its sectors there that the read covered
 */
struct hc_csum_bad {
	u32	bdev_id;
	u64	bdev_sector;
};

/* Table blocks hc_csum_load() reads per step ("loading" counts them). */
#define HC_CSUM_LOAD_BLOCKS	32U

struct hc_cache_set;
struct hc_backing;
struct bio;
struct page;
struct bvec_iter;

/**
 * struct hc_csum - a set's data checksums
 * @crc: one per chunk of the cache device, NULL without the feature.
 *	A chunk's entry is written by whoever writes its data, before the
 *	data is submitted, with no lock: the chunk is that writer's alone
 *	(its bucket was allocated to it, pinned), and nothing reads the
 *	entry before a key points there. Readers compare without a lock
 * @chunks: entries in @crc
 * @blocks: blocks of the table
 * @start: first sector of the table on the cache device
 * @seq: per block, the seq of its newest copy on disk; its next copy goes
 *	to slot (seq + 1) & 1. Written by hc_csum_flush() alone
 * @dirty: per block, set (set_bit(), after the entries) when an entry
 *	changed since the block was last written; cleared by
 *	hc_csum_flush() before it encodes the block
 * @buf: one block, where hc_csum_flush() encodes; meta_lock held for
 *	writing, or by the journal writer that downgraded it
 * @failed: a write of the table failed: its blocks on disk may be older
 *	than keys made durable after it, so no metadata write may follow
 *	(the set is failing); set under the flush's lock, read by it
 * @blocks_written: statistics
 * @errors: chunks that did not match their checksum (sysfs csum_errors)
 * @bad: the bad dirty chunks found, by chunk number (struct hc_csum_bad),
 *	each counted once, forgotten when the chunk is written again; its
 *	own lock, taken with interrupts off (a check fails in bio
 *	completion)
 * @nr_bad: entries in @bad, so that writers look there only when it
 *	has any
 */
struct hc_csum {
	u32		*crc;
	u64		chunks;
	u64		blocks;
	u64		start;
	u64		*seq;
	unsigned long	*dirty;
	void		*buf;
	bool		failed;
	u64		blocks_written;
	atomic64_t	errors;
	struct xarray	bad;
	atomic_t	nr_bad;
};

/* csum.c; each function is documented at its definition. */
int hc_csum_init(struct hc_cache_set *c);
void hc_csum_exit(struct hc_cache_set *c);
int hc_csum_load(struct hc_cache_set *c);
int hc_csum_flush(struct hc_cache_set *c);
u32 hc_data_align(const struct hc_cache_set *c);
void hc_csum_set_bio(struct hc_cache_set *c, u64 sector, struct bio *bio);
void hc_csum_set_buf(struct hc_cache_set *c, u64 sector, const void *buf,
		     u32 sectors);
void hc_csum_copy(struct hc_cache_set *c, u64 to, u64 from, u32 sectors);
int hc_csum_check_bio(struct hc_cache_set *c, u64 sector, struct bio *bio,
		      struct bvec_iter iter, u64 *bad);
int hc_csum_check_buf(struct hc_cache_set *c, u64 sector, const void *buf,
		      u32 sectors, u64 *bad);
int hc_csum_check_pages(struct hc_cache_set *c, u64 sector,
			struct page **pages, u32 off, u32 bytes, u64 *bad);
void hc_csum_error(struct hc_cache_set *c, u64 sector,
		   const struct hc_backing *b, u32 bdev_id, u64 bdev_sector,
		   bool dirty);
ssize_t hc_csum_bad_show(struct hc_cache_set *c, char *buf);

#endif /* _HCACHE_CSUM_H */
