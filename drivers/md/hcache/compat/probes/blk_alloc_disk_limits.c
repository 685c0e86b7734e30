// SPDX-License-Identifier: GPL-2.0
/* v6.9 "block: pass a queue_limits argument to blk_alloc_disk":
 * blk_alloc_disk(&lim, node) returning an ERR_PTR.
 */
#include <linux/blkdev.h>

struct gendisk *hc_probe(void);
struct gendisk *hc_probe(void)
{
	struct queue_limits lim = { .logical_block_size = 512 };

	return blk_alloc_disk(&lim, NUMA_NO_NODE);
}
