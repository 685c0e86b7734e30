// SPDX-License-Identifier: GPL-2.0
/* v6.11 "block: move cache control settings out of queue->flags":
 * write cache, FUA and rotational are queue_limits.features.
 */
#include <linux/blkdev.h>

blk_features_t hc_probe(void);
blk_features_t hc_probe(void)
{
	struct queue_limits lim = {
		.features = BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA | BLK_FEAT_ROTATIONAL,
	};

	return lim.features;
}
