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
 * hc_backing_sb_write() - persist @b's superblock
 * @b: the backing device; its sb_lock must be held
 *
 * Bumps the sequence number, encodes the superblock with its checksum and
 * writes it with PREFLUSH and FUA, so it is durable, and everything written
 * before it too, when this returns. The write bypasses the device's page
 * cache, so the clean pages there are dropped afterwards: else a tool or
 * blkid reading through it would see the old superblock. On failure the
 * in-memory copy keeps the new values; the caller decides whether to roll
 * back. May sleep.
 *
 * Return: 0 or -errno from the device.
 */
int hc_backing_sb_write(struct hc_backing *b)
{
	int ret;

	lockdep_assert_held(&b->sb_lock);
	b->sb.seq++;
	hc_sb_encode(&b->sb, page_address(b->sb_buf));
	ret = hc_sb_io(b->bdev, b->sb_buf, REQ_OP_WRITE | REQ_META | REQ_SYNC |
		       REQ_PREFLUSH | REQ_FUA);
	if (ret) {
		pr_err("%pg: cannot write the superblock: error %d\n",
		       b->bdev, ret);
		return ret;
	}
	invalidate_bdev(b->bdev);
	return 0;
}
