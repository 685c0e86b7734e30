/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat.h: every difference between the kernels hcache builds against
 * (Debian 12's 6.1 and 6.12) lives here, one wrapper per API.
 *
 * The HC_HAVE_* macros come from compat_generated.h, which compat/probe.sh
 * writes at build time by compiling one snippet per API against the target
 * kernel (compat/probes/NAME.c, each naming the upstream change it detects).
 * Nothing here looks at LINUX_VERSION_CODE: Debian backports APIs into 6.1,
 * so a version number does not say what a kernel has.
 */
#ifndef _HCACHE_COMPAT_H
#define _HCACHE_COMPAT_H

#include <linux/blkdev.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/mmzone.h>
#include <linux/shrinker.h>

#include "compat_generated.h"

/*
 * The largest page allocation order. v6.8 renamed MAX_ORDER to
 * MAX_PAGE_ORDER and made it inclusive (probes/max_page_order.c).
 */
#ifdef HC_HAVE_MAX_PAGE_ORDER
#define HC_MAX_PAGE_ORDER	MAX_PAGE_ORDER
#else
#define HC_MAX_PAGE_ORDER	(MAX_ORDER - 1)
#endif

/**
 * struct hc_bdev_handle - an exclusively opened block device
 * @bdev: the device; valid until hc_bdev_close()
 * @file: the open file behind @bdev (kernels that open devices as files)
 * @mode: the mode @bdev was opened with (kernels that want it back on release)
 *
 * v6.9 opens block devices as files (probes/bdev_file_open_by_path.c);
 * before v6.5 they were opened with an fmode_t that had to be given back on
 * release (probes/blkdev_get_by_path_fmode.c). The handle hides both.
 */
struct hc_bdev_handle {
	struct block_device	*bdev;
#ifdef HC_HAVE_BDEV_FILE_OPEN_BY_PATH
	struct file		*file;
#else
	fmode_t			mode;
#endif
};

/**
 * hc_bdev_open_excl() - open a block device by path, read-write and exclusive
 * @path: the device node
 * @holder: the exclusive holder (another open with a different holder fails
 *	with -EBUSY)
 * @h: filled in on success
 *
 * May sleep.
 *
 * Return: 0 or -errno (-ENOENT, -ENOTBLK, -EBUSY, -EACCES ...).
 */
static inline int hc_bdev_open_excl(const char *path, void *holder,
				    struct hc_bdev_handle *h)
{
#ifdef HC_HAVE_BDEV_FILE_OPEN_BY_PATH
	struct file *f = bdev_file_open_by_path(path,
			BLK_OPEN_READ | BLK_OPEN_WRITE, holder, NULL);

	if (IS_ERR(f))
		return PTR_ERR(f);
	h->file = f;
	h->bdev = file_bdev(f);
	return 0;
#elif defined(HC_HAVE_BLKDEV_GET_BY_PATH_FMODE)
	struct block_device *bdev;

	h->mode = FMODE_READ | FMODE_WRITE | FMODE_EXCL;
	bdev = blkdev_get_by_path(path, h->mode, holder);
	if (IS_ERR(bdev))
		return PTR_ERR(bdev);
	h->bdev = bdev;
	return 0;
#else
#error "hcache: no known way to open a block device on this kernel (see compat/probes)"
#endif
}

/**
 * hc_bdev_close() - release a device opened by hc_bdev_open_excl()
 * @h: the handle; its bdev is invalid afterwards
 *
 * May sleep.
 */
static inline void hc_bdev_close(struct hc_bdev_handle *h)
{
#ifdef HC_HAVE_BDEV_FILE_OPEN_BY_PATH
	bdev_fput(h->file);
	h->file = NULL;
#else
	blkdev_put(h->bdev, h->mode);
#endif
	h->bdev = NULL;
}

/**
 * hc_limits_stack_bdev() - queue limits for a disk that exports @bdev
 *	from sector @offset on
 * @lim: filled in: stacking defaults combined with @bdev's limits
 * @bdev: the device underneath
 * @offset: where the exported data starts on @bdev, in sectors
 *
 * v6.9 added queue_limits_stack_bdev() (probes/queue_limits_stack_bdev.c);
 * before it, blk_stack_limits() was called on the queue's limits directly.
 */
static inline void hc_limits_stack_bdev(struct queue_limits *lim,
					struct block_device *bdev,
					sector_t offset)
{
	blk_set_stacking_limits(lim);
#ifdef HC_HAVE_QUEUE_LIMITS_STACK_BDEV
	queue_limits_stack_bdev(lim, bdev, offset, "hcache");
#else
	if (blk_stack_limits(lim, &bdev_get_queue(bdev)->limits,
			     get_start_sect(bdev) + offset))
		pr_notice("hcache: %pg is misaligned for its data offset\n",
			  bdev);
#endif
}

/**
 * hc_alloc_disk() - allocate a bio-based disk
 * @lim: its queue limits (from hc_limits_stack_bdev())
 * @nonrot: the disk is not rotational
 *
 * The disk always advertises a volatile write cache with FUA, so its users
 * send flushes, and counts its I/O in /sys/block/NAME/stat. v6.9 passes the
 * limits to blk_alloc_disk() (probes/blk_alloc_disk_limits.c) and v6.11
 * moved cache, FUA, rotational and accounting into lim->features
 * (probes/blk_feat_write_cache.c); before them, they were queue flags set
 * after allocation.
 *
 * May sleep.
 *
 * Return: the disk or an ERR_PTR.
 */
static inline struct gendisk *hc_alloc_disk(struct queue_limits *lim,
					    bool nonrot)
{
#if defined(HC_HAVE_BLK_ALLOC_DISK_LIMITS) && defined(HC_HAVE_BLK_FEAT_WRITE_CACHE)
	lim->features |= BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA | BLK_FEAT_IO_STAT;
	if (nonrot)
		lim->features &= ~BLK_FEAT_ROTATIONAL;
	else
		lim->features |= BLK_FEAT_ROTATIONAL;
	return blk_alloc_disk(lim, NUMA_NO_NODE);
#elif !defined(HC_HAVE_BLK_ALLOC_DISK_LIMITS) && !defined(HC_HAVE_BLK_FEAT_WRITE_CACHE)
	struct gendisk *disk = blk_alloc_disk(NUMA_NO_NODE);
	struct request_queue *q;

	if (!disk)
		return ERR_PTR(-ENOMEM);
	q = disk->queue;
	blk_set_stacking_limits(&q->limits);
	blk_stack_limits(&q->limits, lim, 0);
	blk_queue_write_cache(q, true, true);
	blk_queue_flag_set(QUEUE_FLAG_IO_STAT, q);
	if (nonrot)
		blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	return disk;
#else
#error "hcache: unexpected mix of blk_alloc_disk() and queue feature APIs"
#endif
}

/**
 * struct hc_shrinker - a shrinker with a private pointer
 * @s: the registered shrinker, NULL if none
 * @priv: what hc_shrinker_priv() returns in the callbacks
 * @embedded: the shrinker itself, on kernels that embed it
 *
 * v6.7 allocates shrinkers (shrinker_alloc(), ->private_data,
 * probes/shrinker_alloc.c); before, the caller embedded one and called
 * register_shrinker().
 */
struct hc_shrinker {
	struct shrinker		*s;
	void			*priv;
#ifndef HC_HAVE_SHRINKER_ALLOC
	struct shrinker		embedded;
#endif
};

typedef unsigned long (*hc_shrink_fn)(struct shrinker *s,
				      struct shrink_control *sc);

/**
 * hc_shrinker_register() - register a shrinker
 * @hs: the shrinker, zeroed
 * @count: the count_objects callback
 * @scan: the scan_objects callback
 * @priv: what hc_shrinker_priv() gives the callbacks
 * @name: its name in debugfs
 *
 * Return: 0 or -errno.
 */
static inline int hc_shrinker_register(struct hc_shrinker *hs,
				       hc_shrink_fn count, hc_shrink_fn scan,
				       void *priv, const char *name)
{
	hs->priv = priv;
#ifdef HC_HAVE_SHRINKER_ALLOC
	hs->s = shrinker_alloc(0, "%s", name);
	if (!hs->s)
		return -ENOMEM;
	hs->s->count_objects = count;
	hs->s->scan_objects = scan;
	hs->s->private_data = hs;
	shrinker_register(hs->s);
	return 0;
#else
	{
		int ret;

		hs->embedded.count_objects = count;
		hs->embedded.scan_objects = scan;
		hs->embedded.seeks = DEFAULT_SEEKS;
		ret = register_shrinker(&hs->embedded, "%s", name);
		if (!ret)
			hs->s = &hs->embedded;
		return ret;
	}
#endif
}

/* The @priv given to hc_shrinker_register(), from a callback's shrinker. */
static inline void *hc_shrinker_priv(struct shrinker *s)
{
#ifdef HC_HAVE_SHRINKER_ALLOC
	return ((struct hc_shrinker *)s->private_data)->priv;
#else
	return container_of(s, struct hc_shrinker, embedded)->priv;
#endif
}

/* Unregister a shrinker registered with hc_shrinker_register(), if any. */
static inline void hc_shrinker_unregister(struct hc_shrinker *hs)
{
	if (!hs->s)
		return;
#ifdef HC_HAVE_SHRINKER_ALLOC
	shrinker_free(hs->s);
#else
	unregister_shrinker(hs->s);
#endif
	hs->s = NULL;
}

#endif /* _HCACHE_COMPAT_H */
