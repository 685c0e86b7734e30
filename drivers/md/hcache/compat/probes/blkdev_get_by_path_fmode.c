// SPDX-License-Identifier: GPL-2.0
/* Before v6.5 "block: use the holder as indication for exclusive opens":
 * blkdev_get_by_path(path, fmode_t, holder) and blkdev_put(bdev, fmode_t).
 */
#include <linux/blkdev.h>

struct block_device *hc_probe(const char *path, void *holder);
struct block_device *hc_probe(const char *path, void *holder)
{
	fmode_t mode = FMODE_READ | FMODE_WRITE | FMODE_EXCL;
	struct block_device *bdev = blkdev_get_by_path(path, mode, holder);

	blkdev_put(bdev, mode);
	return bdev;
}
