// SPDX-License-Identifier: GPL-2.0
/*
 * backing.c: a backing device and the /dev/hcacheN disk that exports it:
 * checking the device against its superblock, starting and stopping the
 * disk, and the passthrough I/O path used while no cache set is attached.
 */

#include "hcache.h"

#include <linux/bio.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/slab.h>

static int hc_major;
static DEFINE_IDA(hc_backing_ida);

/* The largest N in /dev/hcacheN: minors are 20 bits, HC_MINORS each. */
#define HC_MAX_DISKS	((1U << MINORBITS) / HC_MINORS)

/**
 * struct hc_passthrough - a bio cloned onto the backing device
 * @orig: the bio sent to /dev/hcacheN
 * @b: its device
 * @start: when the I/O started, for accounting
 * @clone: the clone; last, as the bio set's front padding ends here
 */
struct hc_passthrough {
	struct bio		*orig;
	struct hc_backing	*b;
	unsigned long		start;
	struct bio		clone;
};

static const char * const hc_state_names[] = {
	[HC_STATE_NONE]		= "none",
	[HC_STATE_CLEAN]	= "clean",
	[HC_STATE_DIRTY]	= "dirty",
	[HC_STATE_STALE]	= "stale",
};

const char *hc_backing_state_name(unsigned int state)
{
	return state < ARRAY_SIZE(hc_state_names) ? hc_state_names[state] : "?";
}

static void hc_passthrough_endio(struct bio *clone)
{
	struct hc_passthrough *pt = container_of(clone, struct hc_passthrough,
						 clone);
	struct bio *orig = pt->orig;
	struct hc_backing *b = pt->b;

	orig->bi_status = clone->bi_status;
	/* Counted before it ends: a flush after it must flush the device. */
	if (!clone->bi_status && op_is_write(bio_op(clone)))
		atomic64_inc(&b->fg_written);
	bio_end_io_acct(orig, pt->start);
	bio_put(clone);
	bio_endio(orig);
	percpu_ref_put(&b->inflight);
}

static void hc_backing_submit_bio(struct bio *bio)
{
	struct hc_backing *b = bio->bi_bdev->bd_disk->private_data;
	struct hc_passthrough *pt;
	struct bio *clone;

	if (hc_request_submit(b, bio))
		return;

	/* From a mempool: GFP_NOIO always succeeds, eventually. */
	clone = bio_alloc_clone(b->bdev, bio, GFP_NOIO, &b->bio_set);
	pt = container_of(clone, struct hc_passthrough, clone);
	pt->orig = bio;
	pt->b = b;
	pt->start = bio_start_io_acct(bio);
	percpu_ref_get(&b->inflight);

	clone->bi_iter.bi_sector += b->data_offset;
	clone->bi_end_io = hc_passthrough_endio;
	submit_bio_noacct(clone);
}

static const struct block_device_operations hc_backing_ops = {
	.owner		= THIS_MODULE,
	.submit_bio	= hc_backing_submit_bio,
};

static void hc_backing_inflight_release(struct percpu_ref *ref)
{
	struct hc_backing *b = container_of(ref, struct hc_backing, inflight);

	complete(&b->inflight_done);
}

static void hc_backing_stop_work(struct work_struct *work)
{
	struct hc_backing *b = container_of(work, struct hc_backing, stop_work);

	mutex_lock(&hc_register_lock);
	hc_backing_stop(b);
	mutex_unlock(&hc_register_lock);
	/* The reference taken when the work was queued. */
	hc_backing_put(b);
}

/**
 * hc_backing_alloc() - a new, unregistered backing device
 *
 * May sleep.
 *
 * Return: the device, or NULL when memory is short.
 */
struct hc_backing *hc_backing_alloc(void)
{
	struct hc_backing *b = kzalloc(sizeof(*b), GFP_KERNEL);

	if (!b)
		return NULL;
	/*
	 * Unflushed from the start: writes through an earlier instance of
	 * the device (stopped in passthrough, which does not flush it) may
	 * still be in its volatile cache, and the first flush must cover
	 * them.
	 */
	atomic64_set(&b->fg_written, 1);
	b->sb_buf = alloc_page(GFP_KERNEL);
	if (!b->sb_buf) {
		kfree(b);
		return NULL;
	}
	INIT_LIST_HEAD(&b->list);
	INIT_LIST_HEAD(&b->set_node);
	mutex_init(&b->sb_lock);
	INIT_WORK(&b->stop_work, hc_backing_stop_work);
	init_completion(&b->inflight_done);
	init_completion(&b->io_drained);
	spin_lock_init(&b->hold_lock);
	bio_list_init(&b->io_held);
	spin_lock_init(&b->track_lock);
	b->track_tree = RB_ROOT_CACHED;
	spin_lock_init(&b->seq_lock);
	hc_seq_init(&b->seq);
	b->sequential_cutoff = HC_SEQ_CUTOFF_DEFAULT;
	b->admit = HC_ADMIT_DEFAULT;
	hc_writeback_init(b);
	b->minor_index = -1;
	kobject_init(&b->kobj, &hc_backing_ktype);
	return b;
}

/* Called by the kobject's release, once nothing refers to @b. */
void hc_backing_free(struct hc_backing *b)
{
	__free_page(b->sb_buf);
	kfree(b);
}

void hc_backing_put(struct hc_backing *b)
{
	kobject_put(&b->kobj);
}

/**
 * hc_backing_setup() - check an opened backing device against its superblock
 * @b: with @bdev open and @sb decoded
 *
 * Return: 0, or -errno after logging the device and the reason:
 * -EMEDIUMTYPE for a zoned device, -ENOSPC when the device ends before its
 * data starts, -EINVAL when its data offset or logical block size does not
 * fit, -EOPNOTSUPP for read-only-compatible features this code lacks.
 */
int hc_backing_setup(struct hc_backing *b)
{
	struct block_device *bdev = b->bdev;
	unsigned int lbs = bdev_logical_block_size(bdev);
	sector_t offset = b->sb.backing.data_offset;

	if (bdev_is_zoned(bdev)) {
		pr_err("%pg: zoned devices cannot be hcache backing devices\n",
		       bdev);
		return -EMEDIUMTYPE;
	}
	if (b->sb.read_only) {
		pr_err("%pg: superblock has read-only features this hcache does not know; refusing to use it\n",
		       bdev);
		return -EOPNOTSUPP;
	}
	if (bdev_nr_sectors(bdev) <= offset) {
		pr_err("%pg: device too small: %llu sectors, but its data starts at sector %llu\n",
		       bdev, (unsigned long long)bdev_nr_sectors(bdev),
		       (unsigned long long)offset);
		return -ENOSPC;
	}
	if (lbs > HC_SB_SIZE) {
		pr_err("%pg: logical block size %u is above the %u bytes hcache supports\n",
		       bdev, lbs, HC_SB_SIZE);
		return -EINVAL;
	}
	if ((offset << SECTOR_SHIFT) % lbs) {
		pr_err("%pg: data offset %llu sectors is not a multiple of the logical block size %u\n",
		       bdev, (unsigned long long)offset, lbs);
		return -EINVAL;
	}
	b->data_offset = offset;
	return 0;
}

static int hc_backing_add_disk(struct hc_backing *b)
{
	struct queue_limits lim;
	struct gendisk *disk;
	int idx, ret;

	idx = ida_alloc_max(&hc_backing_ida, HC_MAX_DISKS - 1, GFP_KERNEL);
	if (idx < 0)
		return idx;

	ret = bioset_init(&b->bio_set, 4,
			  offsetof(struct hc_passthrough, clone),
			  BIOSET_NEED_RESCUER);
	if (ret)
		goto out_ida;

	ret = percpu_ref_init(&b->inflight, hc_backing_inflight_release, 0,
			      GFP_KERNEL);
	if (ret)
		goto out_bioset;
	ret = hc_request_init_backing(b);
	if (ret)
		goto out_percpu;

	hc_limits_stack_bdev(&lim, b->bdev, b->data_offset);
	/* Never smaller blocks than the device was formatted for. */
	lim.logical_block_size = max(lim.logical_block_size,
				     b->sb.block_size);
	lim.physical_block_size = max(lim.physical_block_size,
				      lim.logical_block_size);
	lim.io_min = max(lim.io_min, lim.physical_block_size);
	disk = hc_alloc_disk(&lim, bdev_nonrot(b->bdev));
	if (IS_ERR(disk)) {
		ret = PTR_ERR(disk);
		goto out_ref;
	}

	disk->major = hc_major;
	disk->first_minor = idx * HC_MINORS;
	disk->minors = HC_MINORS;
	disk->fops = &hc_backing_ops;
	disk->private_data = b;
	snprintf(disk->disk_name, DISK_NAME_LEN, "hcache%d", idx);
	set_capacity(disk, bdev_nr_sectors(b->bdev) - b->data_offset);

	ret = add_disk(disk);
	if (ret)
		goto out_put_disk;
	b->disk = disk;
	b->minor_index = idx;
	hc_request_attach(b);

	/* Failures below leave a working disk; they only cost convenience. */
	if (bd_link_disk_holder(b->bdev, disk))
		pr_warn("%s: cannot link holder %pg in sysfs\n",
			disk->disk_name, b->bdev);
	if (sysfs_create_link(&disk_to_dev(disk)->kobj, &b->kobj, "hcache"))
		pr_warn("%s: cannot link its hcache directory in sysfs\n",
			disk->disk_name);
	hc_backing_uevent(b);
	return 0;

out_put_disk:
	put_disk(disk);
out_ref:
	hc_request_exit_backing(b);
out_percpu:
	percpu_ref_exit(&b->inflight);
out_bioset:
	bioset_exit(&b->bio_set);
out_ida:
	ida_free(&hc_backing_ida, idx);
	return ret;
}

/**
 * hc_backing_sb_mark_stale() - persist state stale and a new invalidation
 *	generation
 * @b: a registered backing device; its sb_lock held
 *
 * For a device that runs without its cache set: when the set returns, the
 * device attaches under a new id, so the cache's keys for it are dead and
 * never read or written back. On failure the superblock in memory is left
 * as it was.
 *
 * Return: 0 or the error writing the superblock.
 */
int hc_backing_sb_mark_stale(struct hc_backing *b)
{
	struct hc_sb old = b->sb;
	int ret;

	lockdep_assert_held(&b->sb_lock);
	b->sb.backing.state = HC_STATE_STALE;
	b->sb.backing.inval_gen++;
	ret = hc_backing_sb_write(b);
	if (ret)
		b->sb = old;
	return ret;
}

/**
 * hc_backing_start() - export @b as /dev/hcacheN
 * @b: a registered, pending device; hc_register_lock must be held
 * @force: run even though the cache holds dirty data for @b
 *
 * A device whose superblock says clean or dirty belongs with a cache set;
 * starting it without one first persists state stale and a new
 * invalidation generation, so the cache's copy of its data is dropped
 * (never written back) when the cache set returns. Dirty needs @force,
 * which loses the cache's dirty data and says so. May sleep.
 *
 * Return: 0; -EBUSY for dirty without @force; -errno from the superblock
 * write or the disk's creation.
 */
int hc_backing_start(struct hc_backing *b, bool force)
{
	struct hc_sb_backing *bsb = &b->sb.backing;
	int ret = 0;

	lockdep_assert_held(&hc_register_lock);
	if (b->disk)
		return 0;

	mutex_lock(&b->sb_lock);
	if (b->set) {
		/* Attached: the cache set is here, nothing to give up. */
	} else if (bsb->state == HC_STATE_DIRTY && !force) {
		pr_err("%pg: the cache holds dirty data for this device: write \"force\" to running to run without it and lose that data\n",
		       b->bdev);
		ret = -EBUSY;
	} else if (bsb->state == HC_STATE_CLEAN ||
		   bsb->state == HC_STATE_DIRTY) {
		if (bsb->state == HC_STATE_DIRTY)
			pr_crit("%pg: running without its cache set: the dirty data in the cache is LOST and the device may hold old data\n",
				b->bdev);
		else
			pr_notice("%pg: running without its cache set; its cached data will be dropped when the set returns\n",
				  b->bdev);
		ret = hc_backing_sb_mark_stale(b);
	}
	mutex_unlock(&b->sb_lock);
	if (ret)
		return ret;

	ret = hc_backing_add_disk(b);
	if (ret) {
		pr_err("%pg: cannot create its hcache disk: error %d\n",
		       b->bdev, ret);
		return ret;
	}
	if (b->set)
		pr_info("%pg: running as %s, attached to cache set %pU as id %u\n",
			b->bdev, b->disk->disk_name, b->sb.set_uuid, b->id);
	else
		pr_info("%pg: running as %s (state %s, no cache set: passthrough)\n",
			b->bdev, b->disk->disk_name,
			hc_backing_state_name(bsb->state));
	return 0;
}

static void hc_backing_del_disk(struct hc_backing *b)
{
	struct gendisk *disk = b->disk;

	sysfs_remove_link(&disk_to_dev(disk)->kobj, "hcache");
	bd_unlink_disk_holder(b->bdev, disk);
	del_gendisk(disk);
	/* No new bio can reach us now; wait for those in flight. */
	hc_request_detach(b);
	percpu_ref_kill(&b->inflight);
	wait_for_completion(&b->inflight_done);
	percpu_ref_exit(&b->inflight);
	put_disk(disk);
	hc_request_exit_backing(b);
	bioset_exit(&b->bio_set);
	ida_free(&hc_backing_ida, b->minor_index);
	b->disk = NULL;
	b->minor_index = -1;
}

/**
 * hc_backing_stop() - unregister @b: remove its disk, release the device
 * @b: a registered device; hc_register_lock must be held
 *
 * Drops the registration's reference to @b; the caller must hold another
 * one if it uses @b afterwards. Stopping twice is harmless. May sleep.
 */
void hc_backing_stop(struct hc_backing *b)
{
	lockdep_assert_held(&hc_register_lock);
	if (list_empty(&b->list))
		return;
	if (b->disk) {
		pr_info("%pg: stopping %s\n", b->bdev, b->disk->disk_name);
		hc_backing_del_disk(b);
	} else {
		pr_info("%pg: unregistered\n", b->bdev);
	}
	if (b->set)
		hc_backing_unlink(b);
	list_del_init(&b->list);
	hc_stats_exit(&b->stats);
	kobject_del(&b->kobj);
	hc_bdev_close(&b->handle);
	b->bdev = NULL;
	hc_backing_put(b);
	module_put(THIS_MODULE);
}

/**
 * hc_backing_stop_async() - stop @b from a work item
 * @b: a registered device
 *
 * For sysfs files of @b itself, which cannot remove their own directory.
 */
void hc_backing_stop_async(struct hc_backing *b)
{
	kobject_get(&b->kobj);
	if (!queue_work(hc_wq, &b->stop_work))
		hc_backing_put(b);
}

int hc_backing_major_init(void)
{
	hc_major = register_blkdev(0, "hcache");
	return hc_major < 0 ? hc_major : 0;
}

void hc_backing_major_exit(void)
{
	unregister_blkdev(hc_major, "hcache");
	ida_destroy(&hc_backing_ida);
}
