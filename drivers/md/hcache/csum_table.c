// SPDX-License-Identifier: GPL-2.0
/*
 * csum_table.c: blocks of the checksum table (csum_table.h): conversion
 * between struct hc_csum_block_disk and the caller's per-chunk checksums,
 * validating on the way in. Pure code, shared by the module and the
 * tools.
 */

#include "csum_table.h"

/**
 * hc_csum_block_csum() - the checksum a table block should carry
 * @d: the block
 *
 * Return: CRC-32C of its HC_CSUM_BLOCK_BYTES, the csum field read as zero.
 */
u32 hc_csum_block_csum(const struct hc_csum_block_disk *d)
{
	return hc_csum_skip(d, sizeof(*d),
			    offsetof(struct hc_csum_block_disk, csum));
}

/* Chunks of the device whose checksums block @block holds. */
static u32 hc_csum_block_nr(u64 block, u64 chunks)
{
	u64 first;

	/* A block past the table, however large: no wrap-around below. */
	if (block >= hc_csum_table_blocks(chunks))
		return 0;
	first = block * HC_CSUM_PER_BLOCK;
	return chunks - first < HC_CSUM_PER_BLOCK ? chunks - first :
						    HC_CSUM_PER_BLOCK;
}

/**
 * hc_csum_block_encode() - the disk form of a table block
 * @set_magic: the cache set's magic (hc_set_magic())
 * @block: the block's number
 * @seq: the copy's seq: one more than the newest copy on disk
 * @crc: the checksums of every chunk of the device, indexed by chunk
 * @chunks: chunks on the device; entries for chunks past it are 0
 * @d: receives the block
 */
void hc_csum_block_encode(u64 set_magic, u64 block, u64 seq, const u32 *crc,
			  u64 chunks, struct hc_csum_block_disk *d)
{
	u32 i, nr = hc_csum_block_nr(block, chunks);
	const u32 *src = crc + block * HC_CSUM_PER_BLOCK;

	d->magic = cpu_to_le64(set_magic ^ HC_CSUM_MAGIC);
	d->csum = 0;
	d->nr = cpu_to_le32(HC_CSUM_PER_BLOCK);
	d->seq = cpu_to_le64(seq);
	d->block = cpu_to_le64(block);
	for (i = 0; i < nr; i++)
		d->crc[i] = cpu_to_le32(src[i]);
	for (; i < HC_CSUM_PER_BLOCK; i++)
		d->crc[i] = 0;
	d->csum = cpu_to_le32(hc_csum_block_csum(d));
}

/**
 * hc_csum_block_decode() - validate a copy of a table block and take its
 *	checksums
 * @d: the copy as read
 * @set_magic: the cache set's magic
 * @block: the block's number, which the copy must name
 * @chunks: chunks on the device
 * @seq: receives the copy's seq
 * @crc: if not NULL, and the copy is valid, its checksums go to
 *	@crc[@block * HC_CSUM_PER_BLOCK ...], up to the device's last chunk
 * @why: if not NULL, receives NULL or a constant string naming the first
 *	 rule broken
 *
 * The caller chooses between a block's two copies: the valid one with the
 * higher seq, whose parity must match its slot.
 *
 * Return: 0; -ENODATA if the magic is wrong (a slot never written, or
 * written by another set); -EBADMSG on a checksum mismatch; -EUCLEAN if
 * the copy checksums right but breaks a rule.
 */
int hc_csum_block_decode(const struct hc_csum_block_disk *d, u64 set_magic,
			 u64 block, u64 chunks, u64 *seq, u32 *crc,
			 const char **why)
{
	u32 i, nr = hc_csum_block_nr(block, chunks);
	const char *err;
	int ret;

	ret = -ENODATA;
	err = "checksum block magic mismatch";
	if (le64_to_cpu(d->magic) != (set_magic ^ HC_CSUM_MAGIC))
		goto err;
	ret = -EBADMSG;
	err = "checksum block checksum mismatch";
	if (le32_to_cpu(d->csum) != hc_csum_block_csum(d))
		goto err;
	ret = -EUCLEAN;
	err = "checksum block holds another block's number";
	if (le64_to_cpu(d->block) != block)
		goto err;
	err = "checksum block count not 1016";
	if (le32_to_cpu(d->nr) != HC_CSUM_PER_BLOCK)
		goto err;
	err = "checksum block of no chunk of the device";
	if (!nr)
		goto err;
	err = "checksum of a chunk past the device's end not zero";
	for (i = nr; i < HC_CSUM_PER_BLOCK; i++)
		if (d->crc[i])
			goto err;
	*seq = le64_to_cpu(d->seq);
	if (crc)
		for (i = 0; i < nr; i++)
			crc[block * HC_CSUM_PER_BLOCK + i] =
				le32_to_cpu(d->crc[i]);
	if (why)
		*why = NULL;
	return 0;
err:
	if (why)
		*why = err;
	return ret;
}
