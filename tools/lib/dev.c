// SPDX-License-Identifier: GPL-2.0
/*
 * dev.c: size, block size and zoned state of a device or image file.
 */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "dev.h"

/* /sys/dev/block/MAJ:MIN/queue/zoned reads "none" for ordinary devices. */
static bool hc_dev_zoned(dev_t rdev)
{
	char path[128], buf[32] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/zoned",
		 major(rdev), minor(rdev));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strncmp(buf, "none", 4) != 0;
}

int hc_dev_info(int fd, const char *path, struct hc_dev_info *info)
{
	struct stat st;
	int lbs = 0;

	(void)path;
	memset(info, 0, sizeof(*info));
	if (fstat(fd, &st))
		return -errno;

	if (S_ISREG(st.st_mode)) {
		info->size = st.st_size;
		info->logical_block = 512;
		return 0;
	}
	if (!S_ISBLK(st.st_mode))
		return -ENOTBLK;

	info->is_blockdev = true;
	if (ioctl(fd, BLKGETSIZE64, &info->size))
		return -errno;
	if (ioctl(fd, BLKSSZGET, &lbs))
		return -errno;
	info->logical_block = lbs;
	info->zoned = hc_dev_zoned(st.st_rdev);
	return 0;
}
