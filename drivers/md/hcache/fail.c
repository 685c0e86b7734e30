// SPDX-License-Identifier: GPL-2.0
/*
 * fail.c: a cache device that keeps failing. Its I/O errors are counted
 * against io_error_limit, half of them forgotten per io_error_halflife;
 * past the limit the set fails: each attached backing device either goes
 * on without it (in passthrough, its superblock marked stale so the
 * cache's copy of its data is dropped when the set returns) or stops,
 * by its dirty data and its stop_when_cache_set_failed; then the set
 * stops and releases the device.
 */

#include "hcache.h"
#include "trace.h"

#include <linux/module.h>
#include <linux/slab.h>

/*
 * The dirty ranges that backing devices stopped by a failed set left in
 * its cache, for /sys/fs/hcache/failed_dirty: one line per range, a page
 * at most; hc_register_lock. Kept until the module is unloaded.
 */
static char *hc_failed_dirty;
static size_t hc_failed_dirty_len;

/* Ranges logged per device; the rest are in failed_dirty only. */
#define HC_FAILED_DIRTY_LOGGED	8U

struct hc_dirty_ranges {
	struct hc_backing	*b;
	u64			start;
	u64			end;	/* 0: no range open */
	u64			nr;
	u64			omitted;
};

static void hc_dirty_range_close(struct hc_dirty_ranges *r)
{
	size_t room = PAGE_SIZE - hc_failed_dirty_len;
	int n;

	if (!r->end)
		return;
	if (r->nr < HC_FAILED_DIRTY_LOGGED)
		pr_crit("%pg:   dirty sectors %llu-%llu\n", r->b->bdev, r->start,
			r->end - 1);
	r->nr++;
	n = hc_failed_dirty ? snprintf(hc_failed_dirty + hc_failed_dirty_len,
				       room, "%pg %pU %llu-%llu\n", r->b->bdev,
				       r->b->sb.dev_uuid, r->start,
				       r->end - 1) : room;
	if (n < room)
		hc_failed_dirty_len += n;
	else
		r->omitted++;
	if (hc_failed_dirty)
		hc_failed_dirty[hc_failed_dirty_len] = 0;
	r->end = 0;
}

static int hc_dirty_range_key(void *priv, const struct hc_key *k)
{
	struct hc_dirty_ranges *r = priv;
	u64 start = k->end - k->size;

	if (!(k->flags & HC_KEY_DIRTY) || !k->nr_ptrs)
		return 0;
	if (r->end && start == r->end) {
		r->end = k->end;
		return 0;
	}
	hc_dirty_range_close(r);
	r->start = start;
	r->end = k->end;
	return 0;
}

/*
 * Log @b's dirty ranges in @c (the first few) and add them all to
 * failed_dirty. Nodes not cached are read; on a failing device the list
 * may end early, which the log says.
 */
static void hc_failed_dirty_note(struct hc_backing *b, struct hc_cache_set *c)
{
	struct hc_dirty_ranges r = { .b = b };
	u64 pos = 0;
	int ret;

	lockdep_assert_held(&hc_register_lock);
	if (!hc_failed_dirty)
		hc_failed_dirty = kzalloc(PAGE_SIZE, GFP_KERNEL);
	down_read(&c->meta_lock);
	do {
		ret = hc_btree_scan(c, b->id, &pos, 64, hc_dirty_range_key, &r);
	} while (ret == 1);
	up_read(&c->meta_lock);
	hc_dirty_range_close(&r);
	if (ret < 0)
		pr_crit("%pg:   (the list ends early: the tree could not be read, error %d)\n",
			b->bdev, ret);
	pr_crit("%pg:   %llu dirty ranges in all (sectors of the hcache device)%s\n",
		b->bdev, r.nr,
		r.omitted ? "; /sys/fs/hcache/failed_dirty is full" :
			    ", listed in /sys/fs/hcache/failed_dirty");
}

/**
 * hc_failed_dirty_show() - the sysfs file /sys/fs/hcache/failed_dirty
 * @buf: a page
 *
 * Return: bytes written.
 */
ssize_t hc_failed_dirty_show(char *buf)
{
	ssize_t n;

	mutex_lock(&hc_register_lock);
	n = sysfs_emit(buf, "%s", hc_failed_dirty ?: "");
	mutex_unlock(&hc_register_lock);
	return n;
}

/* At module unload. */
void hc_failed_dirty_exit(void)
{
	kfree(hc_failed_dirty);
	hc_failed_dirty = NULL;
}

/* Forget half the errors counted for each half-life gone by. */
static void hc_io_errors_decay(struct hc_cache_set *c, unsigned long now)
{
	unsigned long halflife = READ_ONCE(c->io_error_halflife) * HZ;
	unsigned long n;

	lockdep_assert_held(&c->io_error_lock);
	if (!halflife) {
		c->io_error_stamp = now;
		return;
	}
	n = (now - c->io_error_stamp) / halflife;
	if (!n)
		return;
	c->io_error_count = n >= 32 ? 0 : c->io_error_count >> n;
	c->io_error_stamp += n * halflife;
}

/**
 * hc_cache_set_io_errors() - the errors counted now, after decay
 * @c: the set
 *
 * Return: the count that io_error_limit is compared with.
 */
u32 hc_cache_set_io_errors(struct hc_cache_set *c)
{
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&c->io_error_lock, flags);
	hc_io_errors_decay(c, jiffies);
	n = c->io_error_count;
	spin_unlock_irqrestore(&c->io_error_lock, flags);
	return n;
}

/**
 * hc_cache_set_io_error() - count one error against io_error_limit
 * @c: the set
 *
 * Called by hc_cache_set_error() for every I/O error and corruption on
 * the cache device; any context. Errors during the registration's load
 * are not counted: the load fails by itself.
 */
void hc_cache_set_io_error(struct hc_cache_set *c)
{
	u32 limit = READ_ONCE(c->io_error_limit);
	unsigned long flags;
	u32 n;

	if (READ_ONCE(c->load.phase))
		return;
	spin_lock_irqsave(&c->io_error_lock, flags);
	hc_io_errors_decay(c, jiffies);
	n = ++c->io_error_count;
	spin_unlock_irqrestore(&c->io_error_lock, flags);
	/* A device removed (hot-unplugged) fails every I/O from now on. */
	if (!disk_live(c->bdev->bd_disk))
		hc_cache_set_fail(c, HC_FAIL_REMOVED);
	else if (limit && n >= limit)
		hc_cache_set_fail(c, HC_FAIL_ERRORS);
}

/**
 * hc_cache_set_fail() - fail the set: stop using its cache device
 * @c: a registered set; any context
 * @why: the reason, for the log
 *
 * Latches the failure, logs it once, and leaves the rest to
 * hc_cache_set_fail_work(). A set still loading is left alone: its load
 * fails by itself.
 */
void hc_cache_set_fail(struct hc_cache_set *c, enum hc_fail_reason why)
{
	if (READ_ONCE(c->load.phase) ||
	    test_and_set_bit(HC_SET_FAILED, &c->flags))
		return;
	trace_hcache_set_fail(c->bdev->bd_dev, why);
	switch (why) {
	case HC_FAIL_REMOVED:
		pr_crit("%pg: cache set %pU failed: the cache device was removed; going on without it\n",
			c->bdev, c->sb.set_uuid);
		break;
	case HC_FAIL_METADATA:
		pr_crit("%pg: cache set %pU failed: its metadata can no longer be written; going on without the cache device\n",
			c->bdev, c->sb.set_uuid);
		break;
	default:
		pr_crit("%pg: cache set %pU failed: %u I/O errors (io_error_limit %u, io_error_halflife %u s); going on without the cache device\n",
			c->bdev, c->sb.set_uuid, hc_cache_set_io_errors(c),
			READ_ONCE(c->io_error_limit),
			READ_ONCE(c->io_error_halflife));
	}
	kobject_get(&c->kobj);
	if (!queue_work(hc_wq, &c->fail_work))
		kobject_put(&c->kobj);
}

/* hc_backing_sb_mark_stale() under @b's sb_lock. */
static int hc_backing_mark_stale(struct hc_backing *b)
{
	int ret;

	mutex_lock(&b->sb_lock);
	ret = hc_backing_sb_mark_stale(b);
	mutex_unlock(&b->sb_lock);
	return ret;
}

/*
 * @b keeps running without its failed set: in passthrough, stale.
 * The superblock is written first: were the machine to crash after the
 * first write here reached the backing device, the set must not come back
 * trusting keys that the write made stale. Return: 0 or -errno.
 */
static int hc_backing_go_on_alone(struct hc_backing *b)
{
	int ret;

	lockdep_assert_held(&hc_register_lock);
	/* Until then its requests fail (meta_failed): none reaches it. */
	ret = hc_backing_mark_stale(b);
	if (ret)
		return ret;
	hc_request_detach(b);
	hc_backing_unlink(b);
	if (b->disk)
		hc_backing_uevent(b);
	return 0;
}

/* Stop @b, or let it go on alone, as its policy and dirty data say. */
static void hc_backing_cache_failed(struct hc_backing *b, struct hc_cache_set *c)
{
	u64 kib = hc_writeback_dirty_sectors(b) >> 1;
	bool dirty;
	int ret;

	lockdep_assert_held(&hc_register_lock);
	/*
	 * Writeback turning the device clean writes the state clean before
	 * it checks for dirty sectors, and puts dirty back if it finds some:
	 * either says dirty.
	 */
	mutex_lock(&b->sb_lock);
	dirty = b->sb.backing.state == HC_STATE_DIRTY;
	mutex_unlock(&b->sb_lock);
	dirty |= kib != 0;
	if (dirty) {
		pr_crit("%pg: stopping: its failed cache set %pU holds %llu KiB of its data not yet written back, lost unless the cache device is registered again\n",
			b->bdev, c->sb.set_uuid, kib);
		hc_failed_dirty_note(b, c);
		hc_backing_stop(b);
		return;
	}
	if (b->stop_when_cache_set_failed == HC_STOP_ALWAYS) {
		pr_err("%pg: stopping: its cache set %pU failed (stop_when_cache_set_failed is always); it holds no dirty data\n",
		       b->bdev, c->sb.set_uuid);
		/* Whatever reached it last must not be shadowed on return. */
		if (hc_backing_mark_stale(b))
			pr_err("%pg: cannot mark it stale\n", b->bdev);
		hc_backing_stop(b);
		return;
	}
	ret = hc_backing_go_on_alone(b);
	if (ret) {
		pr_err("%pg: stopping: its cache set %pU failed, and its superblock cannot be marked stale (error %d)\n",
		       b->bdev, c->sb.set_uuid, ret);
		hc_backing_stop(b);
		return;
	}
	pr_warn("%pg: its cache set %pU failed; going on without it, in passthrough (state stale: the cache's copy of its data is dropped when the set returns)\n",
		b->bdev, c->sb.set_uuid);
}

/**
 * hc_cache_set_fail_work() - what a failed set does to its devices
 * @work: the set's fail_work
 *
 * Metadata writes stop at once (if not already: HC_FAIL_METADATA); every
 * attached backing device stops or
 * goes on alone (hc_backing_cache_failed()); then the set stops.
 */
void hc_cache_set_fail_work(struct work_struct *work)
{
	struct hc_cache_set *c = container_of(work, struct hc_cache_set,
					      fail_work);
	struct hc_backing *b, *tmp;

	mutex_lock(&hc_register_lock);
	/* Published (not loading) and not stopped meanwhile. */
	if (!list_empty(&c->list) && !c->load.phase) {
		down_write(&c->meta_lock);
		c->meta_failed = true;
		up_write(&c->meta_lock);
		list_for_each_entry_safe(b, tmp, &c->backings, set_node)
			hc_backing_cache_failed(b, c);
		hc_cache_set_stop(c, false);
	}
	mutex_unlock(&hc_register_lock);
	kobject_put(&c->kobj);
}
