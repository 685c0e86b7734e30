/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_PSET_H
#define _HCACHE_PSET_H

/*
 * pset.h: a gen/prio set (struct hc_pset_disk), one bucket of the chain
 * that records every bucket's generation and replacement priority, and its
 * conversion to and from the disk form. Pure code: no I/O, no allocation,
 * no locks. The records themselves live in the caller's bucket array,
 * reached through get/set callbacks, so this code never sees it.
 *
 * A set fills one whole bucket: the 48-byte header, nr 4-byte records for
 * buckets [first, first + nr), then zeroes to the end of the bucket; the
 * checksum covers all of it. The newest journal entry names the head of
 * the chain; each set names the next (next_bucket, 0 ends the chain), and
 * each starts where the previous one ended.
 */

#include "pure.h"
#include "hcache_ondisk.h"

/**
 * struct hc_pset_info - header fields of a gen/prio set
 * @seq: journal sequence number when the set was written
 * @first: bucket number of the first record
 * @nr: records in the set
 * @next_bucket: bucket holding the next set of the chain; 0 ends it
 */
struct hc_pset_info {
	u64	seq;
	u64	first;
	u32	nr;
	u64	next_bucket;
};

/**
 * hc_pset_per_bucket() - records that fit in one gen/prio set
 * @bucket_bytes: bucket size in bytes
 *
 * Return: (@bucket_bytes - header) / record size; 0 if the bucket cannot
 * even hold the header.
 */
static inline u32 hc_pset_per_bucket(u32 bucket_bytes)
{
	if (bucket_bytes < sizeof(struct hc_pset_disk))
		return 0;
	return (bucket_bytes - sizeof(struct hc_pset_disk)) /
	       sizeof(struct hc_bucket_disk);
}

/* A bucket's record, read from the caller's state to encode it ... */
typedef void (*hc_pset_get_fn)(void *priv, u64 bucket, u8 *gen, u16 *prio,
			       u8 *flags);
/* ... and handed to it once a set is decoded. */
typedef void (*hc_pset_set_fn)(void *priv, u64 bucket, u8 gen, u16 prio,
			       u8 flags);

/* pset.c; each function is documented at its definition. */
u32 hc_pset_csum(const struct hc_pset_disk *d, u32 bucket_bytes);
int hc_pset_encode(const struct hc_pset_info *info, u64 set_magic,
		   hc_pset_get_fn get, void *priv, void *buf, u32 bucket_bytes, u32 *zero_from);
int hc_pset_decode(const void *buf, u32 bucket_bytes, u64 set_magic,
		   u64 nbuckets, u64 expect_first,
		   hc_pset_set_fn set, void *priv, struct hc_pset_info *info,
		   const char **why);

#endif /* _HCACHE_PSET_H */
