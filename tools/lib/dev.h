/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_TOOLS_DEV_H
#define _HCACHE_TOOLS_DEV_H

/*
 * dev.h: what the tools learn about a device (block device or regular
 * file) before formatting it.
 */

#include <stdbool.h>

#include "util.h"

struct hc_dev_info {
	u64	size;			/* bytes */
	u32	logical_block;		/* bytes; 512 for regular files */
	u64	optimal_io;		/* bytes; 0 when not reported */
	bool	is_blockdev;
	bool	zoned;
};

/* Size, logical block size and zoned state of the open @fd. 0 or -errno. */
int hc_dev_info(int fd, const char *path, struct hc_dev_info *info);

#endif /* _HCACHE_TOOLS_DEV_H */
