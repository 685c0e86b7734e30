// SPDX-License-Identifier: GPL-2.0
/* v6.5 "block: pass a gendisk to ->open": ->open(disk, mode), ->release(disk). */
#include <linux/blkdev.h>

static int hc_open(struct gendisk *disk, blk_mode_t mode)
{
	return 0;
}

static void hc_release(struct gendisk *disk)
{
}

const struct block_device_operations hc_probe_ops = {
	.open = hc_open,
	.release = hc_release,
};
