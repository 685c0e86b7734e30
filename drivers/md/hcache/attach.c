// SPDX-License-Identifier: GPL-2.0
/*
 * attach.c: backing devices in a cache set: the table of attached devices
 * on disk (written copy-on-write, named by the journal), and attaching and
 * detaching a backing device, with the superblock updates that go with
 * them.
 *
 * Order on attach: the table entry is durable (table write, then a
 * journal entry naming it) before the backing superblock names the set;
 * a crash between the two leaves an unused entry, never a device naming
 * a set that does not know it. On detach the other way round: the
 * backing superblock forgets the set before the entry goes.
 */

#include "hcache.h"
#include "debug.h"

#include <linux/ktime.h>

/**
 * hc_table_write() - persist the backing-device table
 * @c: the set; meta_lock held for writing
 *
 * Into a new bucket, then a journal entry names it, then the old bucket
 * is freed. May sleep.
 *
 * Return: 0 or -errno.
 */
int hc_table_write(struct hc_cache_set *c)
{
	u32 bytes = round_up(hc_bdev_table_bytes(c->table), c->block_size);
	u64 old = c->table_bucket, bucket;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	ret = hc_bucket_alloc(c, HC_RESERVE_BTREE, HC_BUCKET_TABLE, &bucket);
	if (ret)
		return ret;
	memset(c->node_buf, 0, bytes);
	c->table->seq++;
	ret = hc_bdev_table_encode(c->table, c->set_magic, c->node_buf, bytes);
	if (WARN_ON_ONCE(ret))
		goto out_free;
	ret = hc_meta_io(c, REQ_OP_WRITE | REQ_META | REQ_FUA,
			 hc_bucket_to_sector(&c->geom, bucket), c->node_buf,
			 bytes);
	if (ret)
		goto out_free;
	c->table_bucket = bucket;
	ret = hc_journal_write(c);
	if (ret) {
		c->table_bucket = old;
		goto out_free;
	}
	if (old)
		hc_bucket_free_meta(c, old);
	return 0;
out_free:
	hc_bucket_free_meta(c, bucket);
	return ret;
}

/**
 * hc_table_read() - read the backing-device table
 * @c: the set; meta_lock held for writing
 * @bucket: where the newest journal entry says it is
 *
 * Return: 0, an I/O error, or -EUCLEAN (logged).
 */
int hc_table_read(struct hc_cache_set *c, u64 bucket)
{
	u32 bytes = c->geom.bucket_sectors << SECTOR_SHIFT;
	const char *why;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	if (bucket < c->geom.first_bucket || bucket >= c->geom.nbuckets) {
		hc_cache_set_error(c, "backing-device table bucket %llu out of range",
				   bucket);
		return -EUCLEAN;
	}
	ret = hc_meta_io(c, REQ_OP_READ | REQ_META,
			 hc_bucket_to_sector(&c->geom, bucket), c->node_buf,
			 bytes);
	if (ret)
		return ret;
	ret = hc_bdev_table_decode(c->node_buf, bytes, c->set_magic, c->table,
				   &why);
	if (ret) {
		hc_cache_set_error(c, "backing-device table in bucket %llu: %s",
				   bucket, why);
		return -EUCLEAN;
	}
	c->table_bucket = bucket;
	c->buckets[bucket].m.type = HC_BUCKET_TABLE;
	return 0;
}

/* Sysfs links both ways: <backing>/hcache/cache_set and <set>/bdevN. */
static void hc_attach_links(struct hc_backing *b, struct hc_cache_set *c)
{
	char name[16];

	snprintf(name, sizeof(name), "bdev%u", b->id);
	if (sysfs_create_link(&b->kobj, &c->kobj, "cache_set") ||
	    sysfs_create_link(&c->kobj, &b->kobj, name))
		pr_warn("%pg: cannot create the sysfs links to its cache set\n",
			b->bdev);
}

/**
 * hc_backing_unlink() - forget the set in memory (the device is stopping)
 * @b: an attached backing device; hc_register_lock must be held
 */
void hc_backing_unlink(struct hc_backing *b)
{
	char name[16];

	lockdep_assert_held(&hc_register_lock);
	hc_writeback_stop(b);
	hc_request_detach(b);
	/*
	 * Clean keys of its writethrough writes and promotions may still be
	 * in the open journal entry; once it leaves c->backings, the
	 * metadata write that makes them durable no longer flushes it
	 * (hc_meta_write()). Flush it now, while nothing more is written.
	 */
	if (blkdev_issue_flush(b->bdev))
		pr_err("%pg: flush as it leaves cache set %pU failed: the cache may vouch for data it lost\n",
		       b->bdev, b->set->sb.set_uuid);
	snprintf(name, sizeof(name), "bdev%u", b->id);
	sysfs_remove_link(&b->set->kobj, name);
	sysfs_remove_link(&b->kobj, "cache_set");
	down_write(&b->set->meta_lock);
	b->set->nr_backings--;
	list_del_init(&b->set_node);
	up_write(&b->set->meta_lock);
	b->set = NULL;
	b->id = 0;
}

/**
 * hc_backing_attach() - attach a backing device to a cache set
 * @b: a registered backing device, not attached
 * @c: a registered set; hc_register_lock must be held
 *
 * Whether first attached now or attached before (its superblock names
 * @c): the table keeps its id if the invalidation generation it was
 * attached with still matches; otherwise (it ran without the cache, or is
 * new) it gets a new id, so keys under an old id are dead. Then its
 * superblock names the set with state clean (unless dirty). May sleep.
 *
 * Return: 0 or -errno (logged).
 */
int hc_backing_attach(struct hc_backing *b, struct hc_cache_set *c)
{
	struct hc_sb_backing *bsb = &b->sb.backing;
	unsigned int lbs = bdev_logical_block_size(b->bdev);
	static const u8 nil[HC_UUID_SIZE];
	u32 id, inval_gen = bsb->inval_gen;
	bool new_id;
	int ret;

	lockdep_assert_held(&hc_register_lock);
	if (b->set == c)
		return 0;
	if (b->set) {
		pr_err("%pg: cannot attach to cache set %pU: attached to cache set %pU; detach it first\n",
		       b->bdev, c->sb.set_uuid, b->set->sb.set_uuid);
		return -EBUSY;
	}
	if (c->block_size > lbs) {
		pr_err("%pg: cannot attach to cache set %pU: the cache's block size %u is larger than this device's logical block size %u\n",
		       b->bdev, c->sb.set_uuid, c->block_size, lbs);
		return -EINVAL;
	}
	if (bsb->state == HC_STATE_DIRTY &&
	    memcmp(b->sb.set_uuid, c->sb.set_uuid, HC_UUID_SIZE)) {
		pr_err("%pg: cannot attach to cache set %pU: it has dirty data in cache set %pU\n",
		       b->bdev, c->sb.set_uuid, b->sb.set_uuid);
		return -EBUSY;
	}
	/*
	 * Moving to another set: an entry the old set still has for it must
	 * never match again, should it come back there.
	 */
	if (memcmp(b->sb.set_uuid, nil, HC_UUID_SIZE) &&
	    memcmp(b->sb.set_uuid, c->sb.set_uuid, HC_UUID_SIZE))
		inval_gen++;

	down_write(&c->meta_lock);
	if (!hc_bdev_table_find(c->table, b->sb.dev_uuid) &&
	    hc_bdev_table_bytes(c->table) + sizeof(struct hc_bdev_entry_disk) >
	    c->geom.bucket_sectors << SECTOR_SHIFT) {
		up_write(&c->meta_lock);
		pr_err("%pg: cannot attach to cache set %pU: its table of backing devices is full\n",
		       b->bdev, c->sb.set_uuid);
		return -ENOSPC;
	}
	ret = hc_bdev_table_attach(c->table, b->sb.dev_uuid, inval_gen,
				   bdev_nr_sectors(b->bdev),
				   ktime_get_real_seconds(), &id, &new_id);
	if (!ret)
		ret = hc_table_write(c);
	up_write(&c->meta_lock);
	if (ret) {
		pr_err("%pg: cannot attach to cache set %pU: cannot update its table (error %d)\n",
		       b->bdev, c->sb.set_uuid, ret);
		return ret;
	}

	mutex_lock(&b->sb_lock);
	memcpy(b->sb.set_uuid, c->sb.set_uuid, HC_UUID_SIZE);
	bsb->inval_gen = inval_gen;
	if (bsb->state != HC_STATE_DIRTY)
		bsb->state = HC_STATE_CLEAN;
	ret = hc_backing_sb_write(b);
	mutex_unlock(&b->sb_lock);
	if (ret)
		return ret;

	b->set = c;
	b->id = id;
	down_write(&c->meta_lock);
	list_add_tail(&b->set_node, &c->backings);
	c->nr_backings++;
	up_write(&c->meta_lock);
	hc_attach_links(b, c);
	hc_request_attach(b);
	hc_writeback_start(b);
	pr_info("%pg: attached to cache set %pU as id %u%s\n", b->bdev,
		c->sb.set_uuid, id, new_id ? " (new id)" : "");
	if (b->disk)
		hc_backing_uevent(b);
	return 0;
}

/**
 * hc_backing_detach() - detach a backing device from its cache set
 * @b: an attached backing device; hc_register_lock must be held
 *
 * Refused while the cache holds dirty data for it: hc_writeback_detach()
 * writes it back first, then calls this. Its superblock forgets the
 * set first, then the table entry goes, so its keys are dead. The device
 * keeps running, in passthrough. May sleep.
 *
 * Return: 0 or -errno (logged).
 */
int hc_backing_detach(struct hc_backing *b)
{
	struct hc_cache_set *c = b->set;
	u32 id = b->id;
	struct hc_sb old;
	int ret;

	lockdep_assert_held(&hc_register_lock);
	if (!c)
		return -ENOENT;
	/*
	 * No write in flight may make it dirty once it is found clean; and
	 * until it is known whether the detach goes, bios wait (rather than
	 * land on the backing device under keys the cache may keep).
	 */
	hc_request_hold(b);
	hc_request_detach(b);
	hc_debug_delay(HC_DELAY_DETACH_DRAINED);
	mutex_lock(&b->sb_lock);
	if (b->sb.backing.state == HC_STATE_DIRTY) {
		mutex_unlock(&b->sb_lock);
		pr_err("%pg: cannot detach: the cache holds dirty data for it\n",
		       b->bdev);
		ret = -EBUSY;
		goto out_attach;
	}
	old = b->sb;
	memset(b->sb.set_uuid, 0, HC_UUID_SIZE);
	b->sb.backing.state = HC_STATE_NONE;
	/* Were the entry to survive a crash, it must not match any more. */
	b->sb.backing.inval_gen++;
	ret = hc_debug_fault(HC_FAULT_DETACH_SB) ? -EIO : hc_backing_sb_write(b);
	if (ret)
		b->sb = old;
	mutex_unlock(&b->sb_lock);
	if (ret)
		goto out_attach;
	/*
	 * The detach goes: nothing reads the set's keys for the device any
	 * more (no dirty data, and the superblock forgets the set), so the
	 * bios held meanwhile pass through now, rather than wait for the
	 * unlinking below, which allocates (a swap device on hcacheN could
	 * not be written meanwhile).
	 */
	hc_request_release(b);

	hc_backing_unlink(b);
	down_write(&c->meta_lock);
	ret = hc_bdev_table_detach(c->table, id);
	if (!ret)
		ret = hc_table_write(c);
	up_write(&c->meta_lock);
	if (ret)
		hc_cache_set_error(c, "id %u stays in the table (error %d)",
				   id, ret);
	pr_info("%pg: detached from cache set %pU (id %u)\n", b->bdev,
		c->sb.set_uuid, id);
	if (b->disk)
		hc_backing_uevent(b);
	return 0;

out_attach:
	hc_request_attach(b);
	hc_request_release(b);
	return ret;
}
