/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_BKEY_H
#define _HCACHE_BKEY_H

/*
 * bkey.h: a key (a cached extent of a backing device) in memory, its
 * pointer into the cache, bucket generation arithmetic, and conversion to
 * and from struct hc_key_disk. Pure code: no I/O, no allocation, no locks.
 *
 * KEYS
 *
 * A key covers backing-device sectors [end - size, end) of the backing
 * device bdev_id. Keys sort by (bdev_id, end). A stored key has size > 0.
 * A key with one pointer says where those sectors are cached: the first
 * sector of the extent is at cache sector hc_ptr_offset(ptr), the others
 * follow contiguously. A key with no pointer is a whiteout: it says "not
 * cached" and hides older keys (see bset.h); its ptr and flags are 0.
 * The disk format has room for more pointers, but a cache set has one
 * cache device, so more than one pointer is rejected in memory.
 *
 * GENERATIONS
 *
 * Every bucket has an 8-bit gen, bumped each time the bucket is reused. A
 * pointer carries the gen its bucket had when the data was written, and is
 * valid only while the two are equal (hc_ptr_stale()). Gens wrap around, so
 * "newer" is decided by the signed 8-bit difference (hc_gen_after()).
 *
 * The rule that keeps this sound: a bucket's gen may never get more than
 * HC_GEN_MAX_DISTANCE ahead of the gen of the oldest pointer still stored
 * into it (hc_gen_distance()). Before bumping a gen past that distance,
 * garbage collection must first rewrite the btree nodes holding the old
 * pointers, dropping them. As HC_GEN_MAX_DISTANCE is well below 128, the
 * signed difference between a bucket and any pointer into it is always in
 * [0, HC_GEN_MAX_DISTANCE], hc_gen_after() is meaningful for them, and the
 * gen can never wrap all the way around (256 bumps) to make a stale
 * pointer look valid again. A key replayed from the journal after GC
 * dropped it may be up to HC_GEN_REPLAY_DISTANCE behind, still below 128.
 */

#include "pure.h"
#include "hcache_ondisk.h"

#define HC_PTR_DEV_MASK		0xffULL
#define HC_PTR_GEN_MASK		0xffULL

/* How far a bucket's gen may run ahead of the oldest pointer into it. */
#define HC_GEN_MAX_DISTANCE	96U

/*
 * How far it can be after a journal replay: a stale key that garbage
 * collection dropped from the tree may come back from a journal entry
 * still in the replay window, and a bucket's gen is bumped at most once
 * per entry, in a window of fewer than 128 entries (journal.c). Still
 * below 128, so such a pointer is stale and known to be older.
 */
#define HC_GEN_REPLAY_DISTANCE	127U

/* Key flags this code knows (hcache_ondisk.h, HC_KEY_*). */
#define HC_KEY_FLAGS_KNOWN	HC_KEY_DIRTY

/* Key with its pointer, host-endian; see the comment at the top. */
struct hc_key {
	u64	end;		/* backing sector after the extent */
	u64	ptr;		/* HC_PTR_* bit layout; 0 if nr_ptrs is 0 */
	u32	bdev_id;
	u32	size;		/* sectors */
	u8	nr_ptrs;	/* 0 (whiteout) or 1 */
	u8	flags;		/* HC_KEY_* */
};

/**
 * hc_ptr_offset() - cache sector a pointer points at
 * @ptr: the pointer
 *
 * Return: bits 0-47, the cache sector of the extent's first sector.
 */
static inline u64 hc_ptr_offset(u64 ptr)
{
	return ptr & HC_PTR_OFFSET_MAX;
}

/**
 * hc_ptr_dev() - cache device index of a pointer
 * @ptr: the pointer
 *
 * Return: bits 48-55.
 */
static inline u8 hc_ptr_dev(u64 ptr)
{
	return (ptr >> HC_PTR_DEV_SHIFT) & HC_PTR_DEV_MASK;
}

/**
 * hc_ptr_gen() - bucket gen recorded in a pointer
 * @ptr: the pointer
 *
 * Return: bits 56-63.
 */
static inline u8 hc_ptr_gen(u64 ptr)
{
	return (ptr >> HC_PTR_GEN_SHIFT) & HC_PTR_GEN_MASK;
}

/**
 * hc_ptr_make() - build a pointer
 * @offset: cache sector; bits above 47 are dropped
 * @dev: cache device index
 * @gen: gen of the bucket holding @offset
 *
 * Return: the pointer.
 */
static inline u64 hc_ptr_make(u64 offset, u8 dev, u8 gen)
{
	return (offset & HC_PTR_OFFSET_MAX) | (u64)dev << HC_PTR_DEV_SHIFT |
	       (u64)gen << HC_PTR_GEN_SHIFT;
}

/**
 * hc_gen_after() - is one gen newer than another
 * @a: a gen
 * @b: another
 *
 * Across the 8-bit wrap-around: true if (s8)(@a - @b) > 0, so 3 is after
 * 250. Meaningful only for gens less than 128 apart, which the rule in the
 * comment at the top of bkey.h guarantees.
 *
 * Return: true if @a is newer than @b.
 */
static inline bool hc_gen_after(u8 a, u8 b)
{
	return (__s8)(u8)(a - b) > 0;
}

/**
 * hc_gen_distance() - how far a bucket's gen is ahead of a pointer's
 * @bucket_gen: the bucket's current gen
 * @ptr_gen: the gen recorded in a pointer into it
 *
 * Return: (@bucket_gen - @ptr_gen) modulo 256; must stay at or below
 * HC_GEN_MAX_DISTANCE for every stored pointer.
 */
static inline u8 hc_gen_distance(u8 bucket_gen, u8 ptr_gen)
{
	return (u8)(bucket_gen - ptr_gen);
}

/**
 * hc_ptr_stale() - has a pointer's bucket been reused
 * @bucket_gen: the bucket's current gen
 * @ptr_gen: the gen recorded in the pointer
 *
 * Return: true if the gens differ: the data pointed at is gone.
 */
static inline bool hc_ptr_stale(u8 bucket_gen, u8 ptr_gen)
{
	return bucket_gen != ptr_gen;
}

/**
 * hc_key_start() - first backing sector of a key
 * @k: the key
 *
 * Return: @k->end - @k->size.
 */
static inline u64 hc_key_start(const struct hc_key *k)
{
	return k->end - k->size;
}

/* Size of a key on disk, in u64s. */
static inline unsigned int hc_key_disk_u64s(unsigned int nr_ptrs)
{
	return sizeof(struct hc_key_disk) / sizeof(u64) + nr_ptrs;
}

/* bkey.c; each function is documented at its definition. */
void hc_key_cut_front(struct hc_key *k, u64 new_start);
void hc_key_cut_back(struct hc_key *k, u64 new_end);
bool hc_key_same_mapping(const struct hc_key *a, const struct hc_key *b);
const char *hc_key_invalid(const struct hc_key *k);
unsigned int hc_key_encode(const struct hc_key *k, struct hc_key_disk *d);
int hc_key_decode(const void *buf, size_t len, u64 cache_sectors,
		  struct hc_key *k, size_t *used, const char **why);

#endif /* _HCACHE_BKEY_H */
