/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_BSET_H
#define _HCACHE_BSET_H

/*
 * bset.h: a sorted set of keys in memory: lookup, insert with overlap
 * resolution, compare-and-swap insert, merge, consistency check, and
 * conversion to and from struct hc_bset_disk. Pure code: no I/O, no locks,
 * and no allocation: the caller provides the key array and its capacity,
 * and an operation that would overflow it fails with -ENOSPC.
 *
 * INVARIANTS (hc_bset_check())
 *
 * Keys are valid (hc_key_invalid()), sorted by (bdev_id, end) strictly
 * increasing, and never overlap: for two neighbours of the same backing
 * device, the second starts at or after the first's end. Adjacent keys
 * are not merged.
 *
 * WHITEOUTS
 *
 * A key without a pointer (nr_ptrs 0) is an invalidation. Inserting one
 * removes its range from the set. A set with keep_whiteouts also stores it,
 * so that it still hides that range in older sets when the set is merged
 * over them (the sorted sets of one btree node are written one after the
 * other and read back oldest first). A resolved set, the one lookups run
 * on, has keep_whiteouts false and no whiteouts.
 */

#include "bkey.h"

/**
 * struct hc_bset_mem - a sorted set of keys in memory
 * @keys: the keys, caller-provided array of @capacity entries
 * @nr: keys in use, @keys[0] to @keys[nr - 1]
 * @capacity: size of @keys
 * @keep_whiteouts: store inserted whiteouts instead of dropping them
 */
struct hc_bset_mem {
	struct hc_key	*keys;
	size_t		nr;
	size_t		capacity;
	bool		keep_whiteouts;
};

/**
 * struct hc_bset_ops - what an insert tells its caller
 * @sectors_removed: called for each existing key with a pointer that the
 *	insert overwrites: sectors [@start, @end) of @k (the key as it was
 *	before the insert) no longer reference the cache. Lets the cache set
 *	keep per-bucket live-sector counts. Called only once the insert is
 *	sure to succeed, in key order, at most once per existing key; must not
 *	modify the set; whether it may sleep is the caller's business, as the
 *	insert holds nothing. Optional.
 * @priv: passed to @sectors_removed
 */
struct hc_bset_ops {
	void	(*sectors_removed)(void *priv, const struct hc_key *k,
				   u64 start, u64 end);
	void	*priv;
};

/**
 * struct hc_bset_info - header fields of a sorted set on disk
 * @node_seq: the btree node's node_seq when the set was written
 * @journal_seq: newest journal entry whose keys are in the set
 */
struct hc_bset_info {
	u64	node_seq;
	u64	journal_seq;
};

/**
 * hc_bset_init() - make an empty sorted set over an array
 * @set: the set
 * @keys: array of @capacity keys
 * @capacity: entries in @keys
 */
static inline void hc_bset_init(struct hc_bset_mem *set, struct hc_key *keys,
				size_t capacity)
{
	set->keys = keys;
	set->nr = 0;
	set->capacity = capacity;
	set->keep_whiteouts = false;
}

/**
 * hc_bset_bytes() - on-disk size of a sorted set
 * @u64s: its hc_bset_disk.u64s
 *
 * Return: header and keys, in bytes.
 */
static inline size_t hc_bset_bytes(u32 u64s)
{
	return sizeof(struct hc_bset_disk) + (size_t)u64s * sizeof(u64);
}

/* bset.c; each function is documented at its definition. */
size_t hc_bset_lookup(const struct hc_bset_mem *set, u32 bdev_id,
		      u64 sector);
const struct hc_key *hc_bset_find(const struct hc_bset_mem *set, u32 bdev_id,
				  u64 sector);
int hc_bset_insert(struct hc_bset_mem *set, const struct hc_key *new,
		   const struct hc_bset_ops *ops);
int hc_bset_insert_cmpxchg(struct hc_bset_mem *set, const struct hc_key *new,
			   const struct hc_key *expected,
			   const struct hc_bset_ops *ops, u64 *inserted);
int hc_bset_merge(struct hc_bset_mem *dst, const struct hc_bset_mem *older,
		  const struct hc_bset_mem *newer);
const char *hc_bset_check(const struct hc_bset_mem *set);
u32 hc_bset_csum(const struct hc_bset_disk *d);
size_t hc_bset_encode_u64s(const struct hc_bset_mem *set);
int hc_bset_encode(const struct hc_bset_mem *set, u64 set_magic,
		   const struct hc_bset_info *info, void *buf, size_t len);
int hc_bset_decode(const void *buf, size_t len, u64 set_magic,
		   u64 cache_sectors, struct hc_bset_mem *set,
		   struct hc_bset_info *info, const char **why);

#endif /* _HCACHE_BSET_H */
