// SPDX-License-Identifier: GPL-2.0
/* v6.5 "block: add a new block_device_operations->open mode type": blk_mode_t. */
#include <linux/blkdev.h>

blk_mode_t hc_probe(void);
blk_mode_t hc_probe(void)
{
	return BLK_OPEN_READ | BLK_OPEN_WRITE;
}
