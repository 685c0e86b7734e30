/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_MARK_H
#define _HCACHE_MARK_H

/*
 * mark.h: the in-memory state of a bucket, the geometry that maps cache
 * sectors to buckets, and the rules of the mark pass: how every pointer in
 * the btree and every metadata bucket is accounted, and what makes the
 * accounting inconsistent. Pure code: the cache set (mark_pass.c) walks
 * the btree and feeds each pointer here; the unit tests feed corrupted
 * state and see each rule fire.
 *
 * A bucket's live sectors are the sectors of leaf keys whose pointer gen
 * equals the bucket's gen, split into clean and dirty. A pointer whose gen
 * differs is stale: it counts for nothing but the bucket's oldest gen,
 * which bounds how far the allocator may bump the gen (bkey.h).
 */

#include "bkey.h"

/* What a bucket holds, as the mark pass sees it. */
enum hc_bucket_type {
	HC_BUCKET_FREE = 0,	/* nothing live: may be invalidated and reused */
	HC_BUCKET_DATA,		/* cached data of leaf keys */
	HC_BUCKET_BTREE,	/* a btree node */
	HC_BUCKET_PRIO,		/* a gen/prio set of the current chain */
	HC_BUCKET_TABLE,	/* the current backing-device table */
	HC_BUCKET_JOURNAL,	/* the journal ring; fixed */
	HC_BUCKET_SB,		/* before first_bucket: the superblock; fixed */
	HC_BUCKET_CSUM,		/* the checksum table; fixed */
	HC_BUCKET_TYPE_NR,
};

/**
 * struct hc_bucket_mark - what the mark pass computes for a bucket
 * @clean: live clean sectors
 * @dirty: live dirty sectors
 * @type: enum hc_bucket_type
 * @ptrs: leaf keys, live or stale, pointing into the bucket
 * @has_ptr: some pointer, live or stale, points into the bucket
 * @oldest_gen: the oldest gen among those pointers, if @has_ptr
 */
struct hc_bucket_mark {
	u32	clean;
	u32	dirty;
	u32	ptrs;
	u8	type;
	u8	has_ptr;
	u8	oldest_gen;
};

/* struct hc_bucket.hinted */
enum hc_hint {
	HC_HINT_NONE = 0,
	HC_HINT_EMPTY,
	HC_HINT_TAKEN,
};

/**
 * struct hc_bucket - one bucket of the cache device in memory
 * @m: live sectors and type, kept up to date by every btree insert
 * @gen: the bucket's generation (bkey.h)
 * @prio: replacement-policy priority: lru raises it on use, ages it down
 * @on_freelist: invalidated (gen bumped) and waiting on a free list
 * @replay_pin: holds data of journal keys not replayed yet: not to be
 *	reused, whatever the tree says of it so far
 * @hinted: while the mark pass runs behind I/O (struct hc_mark_bg),
 *	HC_HINT_EMPTY if the clean stop before this registration found the
 *	bucket empty, with no pointer into it, and it was not handed out
 *	since (the only buckets a refill may take), HC_HINT_TAKEN once
 *	handed out (a metadata bucket freed then may be taken again); else
 *	HC_HINT_NONE
 * @io_pin: writes of data in flight into it whose keys are not in the
 *	tree yet, and overwrites in place of its dirty data in flight
 *	(write.c, hc_write_in_place()): not to be reused
 *	(hc_open_bucket_take()); at most U16_MAX, the open bucket being left
 *	for a new one there (hc_open_carve()), an overwrite for a new place
 * @copy_pin: writeback pieces read or about to be read from it and not
 *	yet marked clean (writeback.c): no overwrite in place may start
 *	meanwhile, or writeback could copy the older data and then mark the
 *	newer clean. Taken only while @inplace_pin is 0, and an overwrite in
 *	place pins only while this is 0, both under alloc_lock and
 *	meta_lock held for reading; dropped under meta_lock held for writing
 *	(no new pin can be taken then)
 * @inplace_pin: overwrites in place in flight into it (also counted in
 *	@io_pin); changed under alloc_lock only, dropped from bio completion
 */
struct hc_bucket {
	struct hc_bucket_mark	m;
	u16			prio;
	u8			gen;
	u8			on_freelist;
	u8			replay_pin;
	u8			hinted;
	u16			io_pin;
	u16			copy_pin;
	u16			inplace_pin;
};

/**
 * struct hc_geom - layout of a cache device, from its superblock
 * @nbuckets: buckets on the device
 * @bucket_sectors: sectors per bucket, a power of two
 * @first_bucket: first bucket past the superblock
 * @journal_start: first journal bucket
 * @journal_buckets: journal buckets, contiguous from @journal_start
 * @csum_start: first bucket of the checksum table
 * @csum_buckets: its buckets, contiguous from @csum_start; 0 without one
 */
struct hc_geom {
	u64	nbuckets;
	u32	bucket_sectors;
	u64	first_bucket;
	u64	journal_start;
	u32	journal_buckets;
	u64	csum_start;
	u32	csum_buckets;
};

/* Buckets that may hold data or metadata: all but the fixed ones. */
static inline u64 hc_geom_usable_buckets(const struct hc_geom *g)
{
	return g->nbuckets - g->first_bucket - g->journal_buckets -
	       g->csum_buckets;
}

static inline u64 hc_sector_to_bucket(const struct hc_geom *g, u64 sector)
{
	return sector / g->bucket_sectors;
}

static inline u64 hc_bucket_to_sector(const struct hc_geom *g, u64 bucket)
{
	return bucket * g->bucket_sectors;
}

/*
 * The type a bucket has by position alone: superblock, journal, checksum
 * table or free.
 */
static inline u8 hc_bucket_fixed_type(const struct hc_geom *g, u64 bucket)
{
	if (bucket < g->first_bucket)
		return HC_BUCKET_SB;
	if (bucket >= g->journal_start &&
	    bucket - g->journal_start < g->journal_buckets)
		return HC_BUCKET_JOURNAL;
	if (bucket >= g->csum_start &&
	    bucket - g->csum_start < g->csum_buckets)
		return HC_BUCKET_CSUM;
	return HC_BUCKET_FREE;
}

/**
 * hc_mark_note_gen() - a pointer, live or stale, points into a bucket
 * @m: the bucket's mark
 * @bucket_gen: the bucket's gen
 * @ptr_gen: the pointer's gen
 *
 * Keeps @m->oldest_gen the gen furthest behind @bucket_gen.
 */
static inline void hc_mark_note_gen(struct hc_bucket_mark *m, u8 bucket_gen,
				    u8 ptr_gen)
{
	if (!m->has_ptr ||
	    hc_gen_distance(bucket_gen, ptr_gen) >
	    hc_gen_distance(bucket_gen, m->oldest_gen))
		m->oldest_gen = ptr_gen;
	m->has_ptr = 1;
}

/* mark.c; each function is documented at its definition. */
const char *hc_bucket_type_name(unsigned int type);
void hc_mark_reset(const struct hc_geom *g, struct hc_bucket_mark *m,
		   u64 nbuckets);
const char *hc_mark_key_rules(const struct hc_geom *g,
			      const struct hc_bucket *buckets,
			      const struct hc_key *k);
const char *hc_mark_leaf_key(const struct hc_geom *g,
			     struct hc_bucket_mark *m,
			     const struct hc_bucket *buckets,
			     const struct hc_key *k);
const char *hc_mark_meta(const struct hc_geom *g, struct hc_bucket_mark *m,
			 const struct hc_bucket *buckets, u64 bucket,
			 unsigned int type, const u64 *ptr);
const char *hc_mark_compare(const struct hc_bucket_mark *fresh,
			    const struct hc_bucket_mark *kept);
const char *hc_mark_compare_gen(const struct hc_bucket_mark *fresh,
				const struct hc_bucket_mark *kept,
				u8 bucket_gen);
const char *hc_node_range_check(const struct hc_key *keys, size_t nr,
				u32 min_bdev, u64 min_end, u32 max_bdev,
				u64 max_end);

#endif /* _HCACHE_MARK_H */
