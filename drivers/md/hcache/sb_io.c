// SPDX-License-Identifier: GPL-2.0
/*
 * sb_io.c: reading and writing superblocks on a device. What a superblock
 * means, and whether it is valid, is sb.c's business; this file only moves
 * the 4 KiB at byte HC_SB_OFFSET between a device and memory.
 */

#include "hcache.h"

#include <linux/bio.h>

static int hc_sb_io(struct block_device *bdev, struct page *page,
		    blk_opf_t opf)
{
	struct bio_vec bvec;
	struct bio bio;
	int ret;

	bio_init(&bio, bdev, &bvec, 1, opf);
	bio.bi_iter.bi_sector = HC_SB_SECTOR;
	__bio_add_page(&bio, page, HC_SB_SIZE, 0);
	ret = submit_bio_wait(&bio);
	bio_uninit(&bio);
	return ret;
}

/**
 * hc_sb_read_page() - read the superblock area of @bdev into @page
 * @bdev: the device
 * @page: receives HC_SB_SIZE bytes at offset 0
 *
 * The read goes to the device, not through its page cache. May sleep.
 *
 * Return: 0 or -errno from the device.
 */
int hc_sb_read_page(struct block_device *bdev, struct page *page)
{
	return hc_sb_io(bdev, page, REQ_OP_READ | REQ_META | REQ_SYNC);
}

/**
 * hc_sb_write() - persist a superblock
 * @bdev: the device it belongs to
 * @sb: the superblock; its seq is bumped
 * @buf: a page to encode it into
 *
 * Bumps the sequence number, encodes the superblock with its checksum and
 * writes it with PREFLUSH and FUA, so it is durable, and everything written
 * before it too, when this returns. The write bypasses the device's page
 * cache, so the clean pages there are dropped afterwards: else a tool or
 * blkid reading through it would see the old superblock. On failure the
 * in-memory copy keeps the new values; the caller decides whether to roll
 * back. The caller serialises writes of one superblock. May sleep.
 *
 * Return: 0 or -errno from the device.
 */
int hc_sb_write(struct block_device *bdev, struct hc_sb *sb, struct page *buf)
{
	int ret;

	sb->seq++;
	hc_sb_encode(sb, page_address(buf));
	ret = hc_sb_io(bdev, buf, REQ_OP_WRITE | REQ_META | REQ_SYNC |
		       REQ_PREFLUSH | REQ_FUA);
	if (ret) {
		pr_err("%pg: cannot write the superblock: error %d\n",
		       bdev, ret);
		return ret;
	}
	invalidate_bdev(bdev);
	return 0;
}

/**
 * hc_backing_sb_write() - persist @b's superblock
 * @b: the backing device; its sb_lock must be held
 *
 * As hc_sb_write(). May sleep.
 *
 * Return: 0 or -errno from the device.
 */
int hc_backing_sb_write(struct hc_backing *b)
{
	lockdep_assert_held(&b->sb_lock);
	return hc_sb_write(b->bdev, &b->sb, b->sb_buf);
}
