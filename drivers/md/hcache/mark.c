// SPDX-License-Identifier: GPL-2.0
/*
 * mark.c: the rules of the mark pass (mark.h): accounting each pointer to
 * its bucket, and the consistency rules the check enforces. Pure code.
 */

#include "mark.h"

static const char * const hc_bucket_type_names[HC_BUCKET_TYPE_NR] = {
	[HC_BUCKET_FREE]	= "free",
	[HC_BUCKET_DATA]	= "data",
	[HC_BUCKET_BTREE]	= "btree",
	[HC_BUCKET_PRIO]	= "prio",
	[HC_BUCKET_TABLE]	= "table",
	[HC_BUCKET_JOURNAL]	= "journal",
	[HC_BUCKET_SB]		= "superblock",
	[HC_BUCKET_CSUM]	= "checksums",
};

/**
 * hc_bucket_type_name() - name of a bucket type, for messages and sysfs
 * @type: enum hc_bucket_type
 *
 * Return: a constant string; "invalid" for an unknown type.
 */
const char *hc_bucket_type_name(unsigned int type)
{
	return type < HC_BUCKET_TYPE_NR ? hc_bucket_type_names[type] :
					  "invalid";
}

/**
 * hc_mark_reset() - start a mark pass
 * @g: the geometry
 * @m: one mark per bucket
 * @nbuckets: entries in @m, @g->nbuckets
 *
 * Buckets before first_bucket are superblock buckets, the journal ring is
 * journal; everything else starts free with no pointer, until the pass
 * finds what points into it.
 */
void hc_mark_reset(const struct hc_geom *g, struct hc_bucket_mark *m,
		   u64 nbuckets)
{
	u64 i;

	for (i = 0; i < nbuckets; i++) {
		memset(&m[i], 0, sizeof(m[i]));
		m[i].type = hc_bucket_fixed_type(g, i);
	}
}

/* The rules every pointer's gen obeys. */
static const char *hc_mark_gen_rules(u8 bucket_gen, u8 ptr_gen)
{
	if (hc_gen_after(ptr_gen, bucket_gen))
		return "pointer gen ahead of its bucket's gen";
	if (hc_gen_distance(bucket_gen, ptr_gen) > HC_GEN_REPLAY_DISTANCE)
		return "bucket gen too far ahead of a pointer into it";
	return NULL;
}

/* Record a pointer's gen into @m, if it obeys the rules. */
static const char *hc_mark_gen(struct hc_bucket_mark *m, u8 bucket_gen,
			       u8 ptr_gen)
{
	const char *err = hc_mark_gen_rules(bucket_gen, ptr_gen);

	if (!err)
		hc_mark_note_gen(m, bucket_gen, ptr_gen);
	return err;
}

/**
 * hc_mark_key_rules() - the rules a leaf key's pointer obeys on its own
 * @g: the geometry
 * @buckets: the buckets, for their gens
 * @k: a valid key (hc_key_invalid()) with a pointer
 *
 * Return: NULL, or the rule @k breaks: its extent outside the data area
 * or across a bucket boundary; its gen ahead of the bucket's, or further
 * behind than HC_GEN_REPLAY_DISTANCE.
 */
const char *hc_mark_key_rules(const struct hc_geom *g,
			      const struct hc_bucket *buckets,
			      const struct hc_key *k)
{
	u64 offset = hc_ptr_offset(k->ptr);
	u64 bucket = hc_sector_to_bucket(g, offset);

	if (bucket >= g->nbuckets)
		return "pointer past the end of the cache device";
	if (hc_sector_to_bucket(g, offset + k->size - 1) != bucket)
		return "extent crosses a bucket boundary";
	return hc_mark_gen_rules(buckets[bucket].gen, hc_ptr_gen(k->ptr));
}

/**
 * hc_mark_leaf_key() - account one leaf key of the btree
 * @g: the geometry
 * @m: the pass's marks, one per bucket
 * @buckets: the buckets, for their gens
 * @k: a valid key (hc_key_invalid()); whiteouts are ignored
 *
 * A live pointer (its gen is its bucket's) adds the key's sectors to the
 * bucket's clean or dirty count and makes it a data bucket; a stale one
 * only takes part in the bucket's oldest gen.
 *
 * Return: NULL, or the rule @k breaks: its extent outside the data area
 * or across a bucket boundary; its gen ahead of the bucket's, or further
 * behind than HC_GEN_REPLAY_DISTANCE; a live pointer into a bucket that
 * holds metadata.
 */
const char *hc_mark_leaf_key(const struct hc_geom *g,
			     struct hc_bucket_mark *m,
			     const struct hc_bucket *buckets,
			     const struct hc_key *k)
{
	struct hc_bucket_mark *bm;
	const char *err;
	u64 bucket;
	u8 gen;

	if (!k->nr_ptrs)
		return NULL;
	err = hc_mark_key_rules(g, buckets, k);
	if (err)
		return err;
	bucket = hc_sector_to_bucket(g, hc_ptr_offset(k->ptr));
	bm = &m[bucket];
	gen = buckets[bucket].gen;
	hc_mark_note_gen(bm, gen, hc_ptr_gen(k->ptr));
	bm->ptrs++;
	if (hc_ptr_stale(gen, hc_ptr_gen(k->ptr)))
		return NULL;
	if (bm->type != HC_BUCKET_FREE && bm->type != HC_BUCKET_DATA)
		return "live pointer into a metadata, journal or superblock bucket";
	bm->type = HC_BUCKET_DATA;
	if (k->flags & HC_KEY_DIRTY)
		bm->dirty += k->size;
	else
		bm->clean += k->size;
	if (bm->clean + bm->dirty > g->bucket_sectors)
		return "more live sectors than the bucket holds";
	return NULL;
}

/**
 * hc_mark_meta() - account a bucket of metadata
 * @g: the geometry
 * @m: the pass's marks
 * @buckets: the buckets, for their gens
 * @bucket: the bucket
 * @type: HC_BUCKET_BTREE, HC_BUCKET_PRIO or HC_BUCKET_TABLE
 * @ptr: for a btree node, the pointer (with gen) its parent or the journal
 *	holds; NULL for the others, which are named by bucket number alone
 *
 * Return: NULL, or the rule broken: the bucket outside the data area; a
 * stale or too old pointer; the bucket already holding live data or other
 * metadata.
 */
const char *hc_mark_meta(const struct hc_geom *g, struct hc_bucket_mark *m,
			 const struct hc_bucket *buckets, u64 bucket,
			 unsigned int type, const u64 *ptr)
{
	struct hc_bucket_mark *bm;
	const char *err;

	if (bucket < g->first_bucket || bucket >= g->nbuckets)
		return "metadata bucket outside the data area";
	bm = &m[bucket];
	if (ptr) {
		err = hc_mark_gen(bm, buckets[bucket].gen, hc_ptr_gen(*ptr));
		if (err)
			return err;
		if (hc_ptr_stale(buckets[bucket].gen, hc_ptr_gen(*ptr)))
			return "stale pointer to a btree node";
	}
	if (bm->type == HC_BUCKET_DATA)
		return "live pointer into a metadata bucket";
	if (bm->type != HC_BUCKET_FREE)
		return "bucket holds two pieces of metadata";
	bm->type = type;
	return NULL;
}

/**
 * hc_mark_compare() - does a bucket's kept state match a fresh pass
 * @fresh: what a mark pass computed just now
 * @kept: what the cache set kept up to date insert by insert
 *
 * The kept counts (live sectors, and leaf keys pointing in) must equal
 * the fresh ones. The kept type may say data
 * where the pass found nothing live (a data bucket still being filled, or
 * whose keys were all overwritten), but metadata types must agree.
 *
 * Return: NULL, or what differs.
 */
const char *hc_mark_compare(const struct hc_bucket_mark *fresh,
			    const struct hc_bucket_mark *kept)
{
	if (fresh->clean != kept->clean)
		return "clean sector count differs from a fresh mark pass";
	if (fresh->dirty != kept->dirty)
		return "dirty sector count differs from a fresh mark pass";
	if (fresh->ptrs != kept->ptrs)
		return "pointer count differs from a fresh mark pass";
	if (fresh->type == HC_BUCKET_DATA || kept->type == HC_BUCKET_DATA) {
		if (fresh->type != kept->type && fresh->type != HC_BUCKET_FREE)
			return "bucket type differs from a fresh mark pass";
		return NULL;
	}
	if (fresh->type != kept->type)
		return "bucket type differs from a fresh mark pass";
	return NULL;
}

/**
 * hc_mark_compare_gen() - is a bucket's kept oldest gen safe to go by
 * @fresh: what a fresh mark pass computed for the bucket
 * @kept: what the set keeps for it
 * @bucket_gen: the bucket's gen
 *
 * The allocator bounds how far it bumps a gen by the kept oldest gen, so
 * that must never be newer than the oldest pointer into the bucket the
 * pass found. Older is fine: the counts kept insert by insert, and
 * garbage collection's, only move it forward when they know.
 *
 * Return: NULL, or the problem: a data or free bucket the pass found a
 * pointer into is kept as having none, or with a newer oldest gen.
 */
const char *hc_mark_compare_gen(const struct hc_bucket_mark *fresh,
				const struct hc_bucket_mark *kept,
				u8 bucket_gen)
{
	if (!fresh->has_ptr ||
	    (fresh->type != HC_BUCKET_DATA && fresh->type != HC_BUCKET_FREE) ||
	    (kept->type != HC_BUCKET_DATA && kept->type != HC_BUCKET_FREE))
		return NULL;
	if (!kept->has_ptr)
		return "kept state misses a pointer into the bucket";
	if (hc_gen_distance(bucket_gen, kept->oldest_gen) <
	    hc_gen_distance(bucket_gen, fresh->oldest_gen))
		return "kept oldest gen newer than a pointer into the bucket";
	return NULL;
}

/**
 * hc_node_range_check() - do a node's keys lie within its range
 * @keys: the node's resolved keys, in order
 * @nr: how many
 * @min_bdev: the node covers positions after (@min_bdev, @min_end) ...
 * @min_end: ...
 * @max_bdev: ... up to and including (@max_bdev, @max_end)
 * @max_end: ...
 *
 * A key covers positions (bdev_id, start + 1) to (bdev_id, end); a node
 * holds only keys wholly inside its range, so a lookup that descends to
 * the node for a position finds every key covering it there.
 *
 * Return: NULL, or the rule broken.
 */
const char *hc_node_range_check(const struct hc_key *keys, size_t nr,
				u32 min_bdev, u64 min_end, u32 max_bdev,
				u64 max_end)
{
	const struct hc_key *first, *last;

	if (!nr)
		return NULL;
	first = &keys[0];
	last = &keys[nr - 1];
	if (first->bdev_id < min_bdev ||
	    (first->bdev_id == min_bdev && hc_key_start(first) < min_end))
		return "key starts before its node's range";
	if (last->bdev_id > max_bdev ||
	    (last->bdev_id == max_bdev && last->end > max_end))
		return "key ends after its node's range";
	return NULL;
}
