/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_CSUM_TABLE_H
#define _HCACHE_CSUM_TABLE_H

/*
 * csum_table.h: the checksum table of a cache device with
 * HC_FEAT_INCOMPAT_DATA_CSUM: its size, where each copy of each of its
 * blocks lives, and the conversion of a block (struct hc_csum_block_disk)
 * to and from the chunks' checksums. Pure code: no I/O, no allocation, no
 * locks; the checksums themselves live in the caller's array of u32, one
 * per chunk of the device, indexed by chunk number.
 *
 * A chunk is HC_CSUM_CHUNK bytes of the cache device, aligned on its own
 * size; its checksum is hc_csum() of those bytes. A block holds the
 * checksums of HC_CSUM_PER_BLOCK consecutive chunks and has two slots on
 * disk; each write of it goes to the slot that does not hold its newest
 * copy, with a seq one higher, so slot = seq & 1.
 */

#include "pure.h"
#include "hcache_ondisk.h"

/**
 * hc_csum_table_chunks() - chunks on a cache device
 * @nbuckets: buckets on the device
 * @bucket_size: bytes per bucket, a power of two of at least HC_BUCKET_MIN
 *
 * Return: @nbuckets * @bucket_size / HC_CSUM_CHUNK.
 */
static inline u64 hc_csum_table_chunks(u64 nbuckets, u32 bucket_size)
{
	return nbuckets * (bucket_size / HC_CSUM_CHUNK);
}

/**
 * hc_csum_table_blocks() - blocks of the checksum table
 * @chunks: chunks on the device (hc_csum_table_chunks())
 *
 * Return: how many blocks hold one checksum per chunk.
 */
static inline u64 hc_csum_table_blocks(u64 chunks)
{
	return (chunks + HC_CSUM_PER_BLOCK - 1) / HC_CSUM_PER_BLOCK;
}

/**
 * hc_csum_table_buckets() - buckets the checksum table takes
 * @nbuckets: buckets on the device, at most 2^48 sectors in all
 * @bucket_size: bytes per bucket, a power of two of at least HC_BUCKET_MIN
 *
 * Two slots of HC_CSUM_BLOCK_BYTES per block, rounded up to whole
 * buckets: about 0.2% of the device.
 *
 * Return: the number of buckets, exactly what csum_buckets must hold.
 */
static inline u64 hc_csum_table_buckets(u64 nbuckets, u32 bucket_size)
{
	u64 blocks = hc_csum_table_blocks(hc_csum_table_chunks(nbuckets,
							       bucket_size));

	return (blocks * 2 * HC_CSUM_BLOCK_BYTES + bucket_size - 1) /
	       bucket_size;
}

/**
 * hc_csum_slot_byte() - where a copy of a block lives
 * @block: the block's number
 * @slot: 0 or 1
 *
 * Return: its byte offset from the table's first byte (csum_start's).
 */
static inline u64 hc_csum_slot_byte(u64 block, unsigned int slot)
{
	return (2 * block + (slot & 1)) * (u64)HC_CSUM_BLOCK_BYTES;
}

/**
 * hc_chunk_csum() - the checksum of one chunk's bytes
 * @data: HC_CSUM_CHUNK bytes
 *
 * Return: what the table holds for them.
 */
static inline u32 hc_chunk_csum(const void *data)
{
	return hc_csum(data, HC_CSUM_CHUNK);
}

/* csum_table.c; each function is documented at its definition. */
u32 hc_csum_block_csum(const struct hc_csum_block_disk *d);
void hc_csum_block_encode(u64 set_magic, u64 block, u64 seq, const u32 *crc,
			  u64 chunks, struct hc_csum_block_disk *d);
int hc_csum_block_decode(const struct hc_csum_block_disk *d, u64 set_magic,
			 u64 block, u64 chunks, u64 *seq, u32 *crc,
			 const char **why);

#endif /* _HCACHE_CSUM_TABLE_H */
