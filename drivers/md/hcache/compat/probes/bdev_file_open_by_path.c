// SPDX-License-Identifier: GPL-2.0
/* v6.9 "bdev: open block device as files": bdev_file_open_by_path(). */
#include <linux/blkdev.h>
#include <linux/fs.h>

struct file *hc_probe(const char *path, void *holder);
struct file *hc_probe(const char *path, void *holder)
{
	struct file *f = bdev_file_open_by_path(path, BLK_OPEN_READ | BLK_OPEN_WRITE,
						holder, NULL);
	struct block_device *bdev = file_bdev(f);

	(void)bdev;
	bdev_fput(f);
	return f;
}
