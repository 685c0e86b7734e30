// SPDX-License-Identifier: GPL-2.0
/* v6.9 "block: add a queue_limits_stack_bdev helper". */
#include <linux/blkdev.h>

void hc_probe(struct queue_limits *lim, struct block_device *bdev);
void hc_probe(struct queue_limits *lim, struct block_device *bdev)
{
	queue_limits_stack_bdev(lim, bdev, 0, "hcache");
}
