/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_JSET_H
#define _HCACHE_JSET_H

/*
 * jset.h: a journal entry (struct hc_jset_disk) in memory, and its
 * conversion to and from the disk form. Pure code: no I/O, no allocation,
 * no locks; the caller provides the key array and the buffer.
 *
 * An entry is a header naming the roots of the cache (btree root and its
 * level, head of the gen/prio chain, backing-device table) as of the
 * entry, and the keys inserted since the previous entry, in insertion
 * order: replay inserts them one by one, so they need not be sorted and
 * may overlap, and whiteouts (no pointer) are kept. The checksum covers
 * the header and the keys only: an entry is written block-aligned, and the
 * padding up to the next block is not part of it.
 */

#include "bkey.h"

/* Levels a btree may have: a root's level is below this. */
#define HC_BTREE_MAX_DEPTH	8

/**
 * struct hc_jset_info - header fields of a journal entry
 * @seq: this entry's sequence number
 * @last_seq: oldest entry still needed for replay; at most @seq
 * @btree_root: pointer to the root node, HC_PTR_* layout (bkey.h)
 * @prio_bucket: bucket number of the head of the gen/prio chain
 * @bdev_table_bucket: bucket number of the backing-device table
 * @btree_level: level of the root node, below HC_BTREE_MAX_DEPTH
 */
struct hc_jset_info {
	u64	seq;
	u64	last_seq;
	u64	btree_root;
	u64	prio_bucket;
	u64	bdev_table_bucket;
	u8	btree_level;
};

/**
 * hc_jset_bytes() - on-disk size of a journal entry
 * @nr_keys_u64s: its hc_jset_disk.u64s
 *
 * Return: header and keys, in bytes; the block padding is not counted.
 */
static inline size_t hc_jset_bytes(size_t nr_keys_u64s)
{
	return sizeof(struct hc_jset_disk) + nr_keys_u64s * sizeof(u64);
}

/* jset.c; each function is documented at its definition. */
u32 hc_jset_csum(const struct hc_jset_disk *d);
int hc_jset_encode(const struct hc_jset_info *info, const struct hc_key *keys,
		   size_t nr, u64 set_magic, void *buf, size_t len,
		   size_t *bytes);
int hc_jset_decode(const void *buf, size_t len, u64 set_magic,
		   u64 cache_sectors, u64 nbuckets, struct hc_jset_info *info,
		   struct hc_key *keys, size_t cap, size_t *nr, size_t *bytes,
		   const char **why);

#endif /* _HCACHE_JSET_H */
