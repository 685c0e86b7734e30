// SPDX-License-Identifier: GPL-2.0
/*
 * cache_set.c: the life of a cache set: registering its cache device
 * (reading the journal, the gen/prio chain, the table and the btree, or
 * starting a freshly formatted cache), metadata I/O, the one error path,
 * and stopping.
 */

#include "hcache.h"

#include <linux/bio.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

/* Every registered cache set; hc_register_lock. */
LIST_HEAD(hc_cache_sets);

/**
 * hc_cache_set_error() - report a metadata I/O error or corruption
 * @c: the set
 * @fmt: what happened, printf style
 *
 * Logs at error level (rate-limited) naming the cache device, counts it
 * in sysfs "errors", and against io_error_limit (fail.c). Any context.
 */
void hc_cache_set_error(struct hc_cache_set *c, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	atomic64_inc(&c->errors);
	hc_cache_set_io_error(c);
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_err_ratelimited("%pg: cache set %pU: %pV\n", c->bdev,
			   c->sb.set_uuid, &vaf);
	va_end(args);
}

/**
 * hc_cache_set_meta_fail() - stop writing metadata after a half-done update
 * @c: the set; meta_lock held for writing
 *
 * From then on btree inserts, node writes, refills and journal writes
 * fail with -EIO, so nothing durable ever names what the failed update
 * left behind; the set fails (hc_cache_set_fail()): its backing devices
 * stop or go on without it, it stops, and its next registration recovers
 * the last state on disk.
 */
void hc_cache_set_meta_fail(struct hc_cache_set *c)
{
	lockdep_assert_held_write(&c->meta_lock);
	if (c->meta_failed)
		return;
	c->meta_failed = true;
	hc_cache_set_error(c, "update failed half way; metadata writes stop until re-registration");
	hc_cache_set_fail(c, HC_FAIL_METADATA);
}

/**
 * hc_vmap_before_io() - make a buffer's bytes visible to a device's DMA
 * @opf: the I/O about to be done
 * @buf: kmalloc or vmalloc memory
 * @bytes: how much of it
 *
 * A vmalloc buffer is reached through pages (vmalloc_to_page()) whose
 * kernel mapping is another alias: on architectures with aliasing data
 * caches, what the CPU wrote through the vmalloc address must be flushed
 * before a write. Nothing to do on x86, where the calls are empty.
 */
void hc_vmap_before_io(blk_opf_t opf, void *buf, size_t bytes)
{
	if (op_is_write(opf) && is_vmalloc_addr(buf))
		flush_kernel_vmap_range(buf, bytes);
}

/**
 * hc_vmap_after_io() - make what a read put in a buffer visible to the CPU
 * @opf: the I/O done
 * @buf: kmalloc or vmalloc memory
 * @bytes: how much of it
 *
 * The counterpart of hc_vmap_before_io(): after a read into a vmalloc
 * buffer, stale cache lines of the vmalloc alias are invalidated.
 */
void hc_vmap_after_io(blk_opf_t opf, void *buf, size_t bytes)
{
	if (!op_is_write(opf) && is_vmalloc_addr(buf))
		invalidate_kernel_vmap_range(buf, bytes);
}

/*
 * One bio for as much of [@buf, @buf + @bytes) as it can take (up to
 * BIO_MAX_VECS pages), at @sector; *@done receives how many bytes.
 */
static struct bio *hc_buf_bio(struct hc_cache_set *c, blk_opf_t opf,
			      u64 sector, void *buf, size_t bytes,
			      size_t *done)
{
	unsigned int nr = min_t(size_t, DIV_ROUND_UP(bytes, PAGE_SIZE),
				BIO_MAX_VECS);
	struct bio *bio = bio_alloc(c->bdev, nr, opf, GFP_NOIO);

	*done = 0;
	bio->bi_iter.bi_sector = sector;
	while (*done < bytes && bio->bi_vcnt < nr) {
		void *p = buf + *done;
		size_t len = min_t(size_t, bytes - *done,
				   PAGE_SIZE - offset_in_page(p));
		struct page *page = is_vmalloc_addr(p) ? vmalloc_to_page(p) :
							 virt_to_page(p);

		if (bio_add_page(bio, page, len, offset_in_page(p)) != len)
			break;
		*done += len;
	}
	return bio;
}

/**
 * hc_meta_io() - synchronous metadata I/O on the cache device
 * @c: the set
 * @opf: REQ_OP_READ or REQ_OP_WRITE with flags; PREFLUSH goes with the
 *	first bio only, FUA with every one
 * @sector: where
 * @buf: kmalloc or vmalloc memory, page aligned
 * @bytes: how much, a multiple of 512
 *
 * The bios go one after the other, so that a PREFLUSH comes before all
 * of the write. May sleep.
 *
 * Return: 0 or the device's error (logged).
 */
int hc_meta_io(struct hc_cache_set *c, blk_opf_t opf, u64 sector, void *buf,
	       size_t bytes)
{
	void *start = buf;
	size_t len = bytes;
	int ret;

	hc_vmap_before_io(opf, buf, bytes);
	while (bytes) {
		size_t done;
		struct bio *bio = hc_buf_bio(c, opf, sector, buf, bytes, &done);

		ret = submit_bio_wait(bio);
		bio_put(bio);
		if (ret) {
			hc_cache_set_error(c, "metadata %s at sector %llu failed: error %d",
					   op_is_write(opf) ? "write" : "read",
					   sector, ret);
			/* What is durable can no longer follow what is done. */
			if (op_is_write(opf))
				hc_cache_set_fail(c, HC_FAIL_METADATA);
			return ret;
		}
		sector += done >> SECTOR_SHIFT;
		buf += done;
		bytes -= done;
		opf &= ~REQ_PREFLUSH;
	}
	hc_vmap_after_io(opf, start, len);
	return 0;
}

/*
 * Flush every attached backing device, for hc_meta_write(). A flush that
 * fails is logged and passed over: the device is failing, and its writes
 * fail too.
 */
static void hc_meta_flush_backings(struct hc_cache_set *c)
{
	struct hc_backing *b;
	int ret;

	lockdep_assert_held(&c->meta_lock);
	list_for_each_entry(b, &c->backings, set_node) {
		ret = blkdev_issue_flush(b->bdev);
		if (ret)
			pr_err_ratelimited("%pg: flush before a metadata write of cache set %pU failed: error %d\n",
					   b->bdev, c->sb.set_uuid, ret);
	}
}

/**
 * hc_meta_write() - a metadata write that can make keys durable
 * @c: the set; meta_lock held for writing
 * @opf: REQ_OP_WRITE with flags (FUA for a btree node)
 * @sector: where
 * @buf: kmalloc or vmalloc memory, page aligned
 * @bytes: how much, a multiple of 512
 *
 * A key must never be durable before the data it points to: a btree node
 * (or journal entry) that reaches stable media while that data is still in
 * the cache device's volatile write cache would, after a power cut, point
 * at whatever the bucket held before, another block's data. So the write
 * carries PREFLUSH whenever a data write completed since the last flush
 * (most node writes follow a journal write, which flushed everything, and
 * add nothing). Likewise a clean key says the backing device holds its
 * data: if a foreground write reached a backing device since the last
 * such flush (writethrough, a write around the cache, whose data a clean
 * key or a promotion may vouch for), the backing devices are flushed
 * first, or after a power cut the cache would serve data the backing
 * device lost, until it evicted it and the block reverted. May sleep.
 *
 * Return: 0 or the device's error (hc_meta_io()).
 */
int hc_meta_write(struct hc_cache_set *c, blk_opf_t opf, u64 sector,
		  void *buf, size_t bytes)
{
	lockdep_assert_held_write(&c->meta_lock);
	return hc_meta_write_ordered(c, opf, sector, buf, bytes);
}

/**
 * hc_meta_write_ordered() - hc_meta_write(), for the journal's writer
 * @c: the set; meta_lock held for writing, or held for reading by the
 *	task that downgraded it from writing (hc_journal_write_unlock()),
 *	which alone may change @data_flushed and @backing_flushed then
 * @opf: as hc_meta_write()
 * @sector: where
 * @buf: kmalloc or vmalloc memory, page aligned
 * @bytes: how much, a multiple of 512
 *
 * Return: as hc_meta_write().
 */
int hc_meta_write_ordered(struct hc_cache_set *c, blk_opf_t opf, u64 sector,
			  void *buf, size_t bytes)
{
	u64 seen, backing = atomic64_read(&c->backing_written);
	int ret;

	/* For writing, or downgraded by hc_journal_write_unlock(). */
	lockdep_assert(lockdep_is_held_type(&c->meta_lock, 0) ||
		       (lockdep_is_held_type(&c->meta_lock, 1) &&
			READ_ONCE(c->journal.writing)));
	/* The keys' data checksums before the keys (csum.h). */
	ret = hc_csum_flush(c);
	if (ret)
		return ret;
	seen = atomic64_read(&c->data_written);
	if (backing != c->backing_flushed) {
		hc_meta_flush_backings(c);
		c->backing_flushed = backing;
	}
	if (seen != c->data_flushed)
		opf |= REQ_PREFLUSH;
	ret = hc_meta_io(c, opf, sector, buf, bytes);
	if (!ret && (opf & REQ_PREFLUSH))
		c->data_flushed = seen;
	return ret;
}

static void hc_io_batch_endio(struct bio *bio)
{
	struct hc_io_batch *batch = bio->bi_private;

	if (bio->bi_status)
		cmpxchg(&batch->status, BLK_STS_OK, bio->bi_status);
	bio_put(bio);
	if (atomic_dec_and_test(&batch->pending))
		complete(&batch->done);
}

/**
 * hc_io_batch_init() - start a batch of cache device I/O
 * @batch: the batch, which the caller owns until hc_io_batch_wait()
 */
void hc_io_batch_init(struct hc_io_batch *batch)
{
	atomic_set(&batch->pending, 1);
	init_completion(&batch->done);
	batch->status = BLK_STS_OK;
}

/**
 * hc_io_batch_add() - submit I/O of a buffer without waiting for it
 * @c: the set
 * @batch: the batch it belongs to
 * @opf: REQ_OP_READ or REQ_OP_WRITE, with flags for every bio
 * @sector: where on the cache device
 * @buf: kmalloc or vmalloc memory, sector aligned
 * @bytes: how much, a multiple of 512
 *
 * For data the caller copies (moving GC): many small pieces in flight at
 * once, merged by the caller's plug where they are adjacent, cost one
 * device latency instead of one each. Nothing orders the bios of a
 * batch. After reads, the caller calls hc_vmap_after_io() on its buffer
 * once the batch is done. May sleep (for a bio).
 */
void hc_io_batch_add(struct hc_cache_set *c, struct hc_io_batch *batch,
		     blk_opf_t opf, u64 sector, void *buf, size_t bytes)
{
	hc_vmap_before_io(opf, buf, bytes);
	while (bytes) {
		size_t done;
		struct bio *bio = hc_buf_bio(c, opf, sector, buf, bytes, &done);

		bio->bi_private = batch;
		bio->bi_end_io = hc_io_batch_endio;
		atomic_inc(&batch->pending);
		submit_bio(bio);
		sector += done >> SECTOR_SHIFT;
		buf += done;
		bytes -= done;
	}
}

/**
 * hc_io_batch_wait() - wait for every bio of a batch
 * @batch: the batch
 *
 * Return: 0, or the first error a bio of the batch met (not logged: the
 * caller knows what the batch was for).
 */
int hc_io_batch_wait(struct hc_io_batch *batch)
{
	if (!atomic_dec_and_test(&batch->pending))
		wait_for_completion_io(&batch->done);
	return blk_status_to_errno(READ_ONCE(batch->status));
}

/**
 * hc_cache_set_free() - free everything a set owns
 * @c: the set; called by its kobject's release
 */
void hc_cache_set_free(struct hc_cache_set *c)
{
	hc_gc_exit(c);
	kvfree(c->mark_bg.load_gen);	/* a pass that did not end */
	hc_btree_exit(c);
	hc_journal_exit(c);
	hc_csum_exit(c);
	hc_alloc_exit(c);
	kvfree(c->table);
	kvfree(c->admit_ghost.slots);
	if (c->sb_buf)
		__free_page(c->sb_buf);
	kfree(c);
}

static void hc_cache_set_stop_work(struct work_struct *work);

/* Set up the in-memory state from the superblock. */
static int hc_cache_set_geometry(struct hc_cache_set *c)
{
	const struct hc_sb_cache *s = &c->sb.cache;
	u32 n;

	c->geom.nbuckets = s->nbuckets;
	c->geom.bucket_sectors = s->bucket_size >> SECTOR_SHIFT;
	c->geom.first_bucket = s->first_bucket;
	c->geom.journal_start = s->journal_start;
	c->geom.journal_buckets = s->journal_buckets;
	c->geom.csum_start = s->csum_start;
	c->geom.csum_buckets = s->csum_buckets;
	c->block_size = c->sb.block_size;
	c->cache_sectors = s->nbuckets * c->geom.bucket_sectors;
	c->set_magic = hc_set_magic(c->sb.set_uuid);
	c->replacement = s->replacement;
	c->discard = s->discard;
	if (s->tunables & HC_CACHE_TUNE_IO_ERROR_LIMIT)
		c->io_error_limit = s->io_error_limit;
	if (s->tunables & HC_CACHE_TUNE_IO_ERROR_HALFLIFE)
		c->io_error_halflife = s->io_error_halflife;

	if (c->cache_sectors > bdev_nr_sectors(c->bdev)) {
		pr_err("%pg: cannot register: the superblock describes %llu sectors, the device has %llu\n",
		       c->bdev, c->cache_sectors,
		       (u64)bdev_nr_sectors(c->bdev));
		return -ENOSPC;
	}
	if (c->block_size < bdev_logical_block_size(c->bdev)) {
		pr_err("%pg: cannot register: block size %u is smaller than the device's logical block size %u\n",
		       c->bdev, c->block_size,
		       bdev_logical_block_size(c->bdev));
		return -EINVAL;
	}
	if (bdev_is_zoned(c->bdev)) {
		pr_err("%pg: cannot register: zoned devices cannot be cache devices\n",
		       c->bdev);
		return -EMEDIUMTYPE;
	}
	if (c->sb.read_only) {
		pr_err("%pg: cannot register: it has features this version may only read, and a cache must be written\n",
		       c->bdev);
		return -EROFS;
	}
	n = hc_admit_ghost_slots(c->cache_sectors);
	c->admit_ghost.slots = kvcalloc(n, sizeof(u32), GFP_KERNEL);
	if (!c->admit_ghost.slots)
		return -ENOMEM;
	c->admit_ghost.mask = n - 1;
	return 0;
}

/*
 * The mark pass before the replay (@marks), or the consistency check
 * after it (@marks NULL), at registration; what they find is logged.
 */
static int hc_cache_set_verify(struct hc_cache_set *c,
			       struct hc_bucket_mark *marks)
{
	struct seq_buf errs;
	char *buf, *line, *next;
	int ret;

	buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	seq_buf_init(&errs, buf, PAGE_SIZE);
	hc_load_set_phase(c, marks ? "mark" : "check", 0);
	ret = marks ? hc_mark_pass(c, marks, &errs, true) : hc_check(c, &errs);
	if (ret && ret != -ESHUTDOWN) {
		hc_cache_set_error(c, "%s%s (error %d)%s",
				   ret == -EUCLEAN ? "the metadata is inconsistent" :
				   "cannot check the metadata",
				   marks ? "" : " after the journal replay", ret,
				   *buf ? ":" : "");
		for (line = buf; line && *line; line = next) {
			next = strchr(line, '\n');
			if (next)
				*next++ = 0;
			pr_err("%pg:   %s\n", c->bdev, line);
		}
	}
	kfree(buf);
	return ret;
}

/*
 * The superblock of a running set: not clean, no empty marks, no newest
 * journal entry named. Logged on failure.
 */
static int hc_cache_set_sb_unclean(struct hc_cache_set *c)
{
	int ret;

	c->sb.cache.clean = false;
	c->sb.incompat &= ~HC_FEAT_INCOMPAT_EMPTY_MARKS;
	c->sb.cache.clean_journal_bucket = 0;
	c->sb.cache.clean_journal_seq = 0;
	c->sb.cache.clean_journal_offset = 0;
	ret = hc_sb_write(c->bdev, &c->sb, c->sb_buf);
	if (ret)
		pr_err("%pg: cannot register cache set %pU: cannot write the superblock (error %d)\n",
		       c->bdev, c->sb.set_uuid, ret);
	return ret;
}

/* Bring the metadata up: a fresh cache, or journal, chain, table, tree. */
static int hc_cache_set_load(struct hc_cache_set *c, bool *fresh)
{
	struct hc_bucket_mark *marks;
	struct hc_jset_info *newest = &c->journal.newest;
	bool found, marked;
	u64 i;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	marked = c->sb.incompat & HC_FEAT_INCOMPAT_EMPTY_MARKS;
	c->load.clean = c->sb.cache.clean;
	c->load.marks = c->load.clean && marked;
	hc_load_set_phase(c, "journal", 0);
	ret = hc_journal_read(c, &found);
	if (ret)
		return ret;
	*fresh = !found;
	hc_load_set_phase(c, "checksums",
			  DIV_ROUND_UP(c->csum.blocks, HC_CSUM_LOAD_BLOCKS));
	ret = hc_csum_load(c);
	if (ret)
		return ret;
	if (marked) {
		/*
		 * Before anything else is written: an entry written after
		 * the one the superblock names would otherwise be missed by
		 * a registration after a crash, which would take the named
		 * one for the newest and write its successors over them.
		 */
		ret = hc_cache_set_sb_unclean(c);
		if (ret)
			return ret;
	}
	if (!found) {
		/* make-hcache writes seq 1; the first registration bumps it. */
		if (c->sb.seq != 1) {
			pr_err("%pg: cannot register: no valid journal entry on a cache set that has been used; refusing rather than losing its data\n",
			       c->bdev);
			return -EUCLEAN;
		}
		ret = hc_alloc_init(c, true);
		if (!ret)
			ret = hc_btree_new_root(c);
		if (!ret)
			ret = hc_prio_write(c);
		return ret;
	}

	ret = hc_alloc_init(c, false);
	if (ret)
		return ret;
	hc_load_set_phase(c, "metadata", 0);
	ret = hc_prio_read(c, newest->prio_bucket);
	if (ret)
		return ret;
	if (newest->bdev_table_bucket) {
		ret = hc_table_read(c, newest->bdev_table_bucket);
		if (ret)
			return ret;
	}
	ret = hc_btree_load_root(c, newest->btree_root, newest->btree_level);
	if (ret)
		return ret;

	/*
	 * After a clean stop that marked its empty buckets, the counting
	 * runs behind I/O (struct hc_mark_bg): the replay's inserts leave
	 * the counts to it, and there is nothing to check them against yet.
	 */
	if (hc_mark_bg_begin(c)) {
		ret = hc_journal_replay(c);
		if (ret)
			return ret;
		/*
		 * A chain without the marks (and the journal entry naming
		 * it) at once: the superblock no longer vouches for them,
		 * and code older than EMPTY_MARKS refuses them.
		 */
		hc_load_set_phase(c, "write", 0);
		return hc_prio_write(c);
	}

	/* Bucket state from the tree on disk, then the journal on top. */
	marks = vmalloc(array_size(c->geom.nbuckets, sizeof(*marks)));
	if (!marks)
		return -ENOMEM;
	ret = hc_cache_set_verify(c, marks);
	if (ret) {
		vfree(marks);
		return ret;
	}
	for (i = 0; i < c->geom.nbuckets; i++)
		c->buckets[i].m = marks[i];
	vfree(marks);
	ret = hc_journal_replay(c);
	if (!ret)
		ret = hc_cache_set_verify(c, NULL);
	if (ret)
		return ret;
	/*
	 * Persist the replayed state's roots, and start a fresh entry; with
	 * a chain without marks if the one read has them.
	 */
	hc_load_set_phase(c, "write", 0);
	return marked ? hc_prio_write(c) : hc_journal_write(c);
}

/*
 * Publish a loaded set: sysfs, debugfs, its threads, hc_cache_sets, and
 * the backing devices waiting for it. Undoes its own steps on failure.
 */
static int hc_cache_set_publish(struct hc_cache_set *c, bool fresh)
{
	int ret;

	lockdep_assert_held(&hc_register_lock);
	/* From here a failure of the set is handled as for any other. */
	WRITE_ONCE(c->load.phase, NULL);
	ret = kobject_add(&c->kobj, hc_root_kobj, "%pU", c->sb.set_uuid);
	if (ret)
		return ret;
	kobject_init(&c->internal, &hc_cache_set_internal_ktype);
	kobject_get(&c->kobj);
	ret = kobject_add(&c->internal, &c->kobj, "internal");
	if (ret)
		goto out_del;
	kobject_init(&c->cache_kobj, &hc_cache_dev_ktype);
	kobject_get(&c->kobj);
	ret = kobject_add(&c->cache_kobj, bdev_kobj(c->bdev), "hcache");
	if (ret)
		goto out_del_internal;
	ret = hc_stats_init(&c->io_stats, &c->kobj);
	if (ret)
		goto out_del_cache;
	ret = hc_btree_shrinker_init(c);
	if (ret)
		goto out_del_cache;
	c->promote_thread = kthread_run(hc_promote_thread, c, "hcache_promote");
	if (IS_ERR(c->promote_thread)) {
		ret = PTR_ERR(c->promote_thread);
		hc_btree_shrinker_exit(c);
		goto out_del_cache;
	}
	ret = hc_gc_start(c);
	if (ret) {
		kthread_stop(c->promote_thread);
		hc_btree_shrinker_exit(c);
		goto out_del_cache;
	}
	hc_debugfs_add_set(c);
	list_add_tail(&c->list, &hc_cache_sets);
	kobject_uevent(&c->kobj, KOBJ_ADD);

	if (c->mark_bg.running)
		pr_info("%pg: cache set %pU registered in %u ms: %llu buckets of %u KiB, btree depth %u; counting its keys behind I/O (%llu buckets marked empty)\n",
			c->bdev, c->sb.set_uuid,
			jiffies_to_msecs(jiffies - c->load.start),
			c->geom.nbuckets, c->geom.bucket_sectors >> 1,
			c->root->level, c->mark_bg.marked);
	else
		pr_info("%pg: cache set %pU %s in %u ms: %llu buckets of %u KiB, btree depth %u, %llu keys\n",
			c->bdev, c->sb.set_uuid,
			fresh ? "created" : "registered",
			jiffies_to_msecs(jiffies - c->load.start),
			c->geom.nbuckets, c->geom.bucket_sectors >> 1,
			c->root->level, c->leaf_keys);
	hc_cache_set_attach_pending(c);
	return 0;

out_del_cache:
	hc_stats_exit(&c->io_stats);
	kobject_del(&c->cache_kobj);
out_del_internal:
	kobject_put(&c->cache_kobj);
	kobject_del(&c->internal);
out_del:
	kobject_put(&c->internal);
	kobject_del(&c->kobj);
	return ret;
}

/* Sets whose registration was accepted and whose load runs; hc_register_lock. */
LIST_HEAD(hc_cache_sets_loading);

/* Runs the loads; destroyed (drained) at module unload. */
static struct workqueue_struct *hc_load_wq;

/**
 * hc_load_set_phase() - a registration's load enters a new step
 * @c: the set
 * @phase: its name, a string constant
 * @total: how many steps it has, 0 if not known
 *
 * Outside a registration it does nothing.
 */
void hc_load_set_phase(struct hc_cache_set *c, const char *phase, u64 total)
{
	if (!c->load.phase)
		return;
	WRITE_ONCE(c->load.done, 0);
	WRITE_ONCE(c->load.total, total);
	WRITE_ONCE(c->load.phase, phase);
}

/**
 * hc_load_step() - count one step of a registration's load
 * @c: the set; meta_lock held
 *
 * Called per btree node walked and per journal entry replayed. Outside a
 * registration it does nothing.
 *
 * Return: 0, or -ESHUTDOWN when the machine is going down: the load stops
 * there, leaving the set as it is on disk.
 */
int hc_load_step(struct hc_cache_set *c)
{
	if (!c->load.phase)
		return 0;
	WRITE_ONCE(c->load.done, c->load.done + 1);
	return READ_ONCE(hc_shutting_down) ? -ESHUTDOWN : 0;
}

/* What a load that fails releases before its set is freed. */
static void hc_cache_set_load_release(struct hc_cache_set *c)
{
	if (!c->bdev)
		return;
	cancel_delayed_work_sync(&c->journal.work);
	hc_bdev_close(&c->handle);
	c->bdev = NULL;
}

/*
 * The slow part of registering a cache device: read the journal, the
 * chain, the table and the tree, replay, check; then publish the set
 * under hc_register_lock. Runs on hc_load_wq, so neither the writer of
 * "register_async" (a udev worker) nor other registrations wait for it.
 * A failure releases everything; the set was never visible.
 */
static void hc_cache_set_load_work(struct work_struct *work)
{
	struct hc_cache_set *c = container_of(work, struct hc_cache_set,
					      load_work);
	bool fresh = false;
	int ret;

	down_write(&c->meta_lock);
	ret = hc_cache_set_load(c, &fresh);
	if (!ret)
		hc_avail_update(c);
	up_write(&c->meta_lock);
	if (ret == -ESHUTDOWN)
		pr_info("%pg: registration of cache set %pU stopped: the machine is going down\n",
			c->bdev, c->sb.set_uuid);
	else if (ret)
		pr_err("%pg: cannot register cache set %pU: error %d\n",
		       c->bdev, c->sb.set_uuid, ret);
	if (!ret && !c->load.clean && !fresh)
		pr_notice("%pg: cache set %pU was not shut down cleanly; recovered from the journal\n",
			  c->bdev, c->sb.set_uuid);
	if (!ret) {
		hc_load_set_phase(c, "publish", 0);
		ret = hc_cache_set_sb_unclean(c);
	}

	/*
	 * A failed load releases the device while still on the loading
	 * list, so that registering it again right after cannot find it
	 * registered yet held.
	 */
	if (ret)
		hc_cache_set_load_release(c);
	mutex_lock(&hc_register_lock);
	list_del_init(&c->list);
	if (!ret && hc_shutting_down) {
		ret = -ESHUTDOWN;
		hc_cache_set_load_release(c);
	}
	if (!ret) {
		ret = hc_cache_set_publish(c, fresh);
		if (ret)
			hc_cache_set_load_release(c);
	}
	/*
	 * Completed under the lock: once it is dropped, a published set may
	 * be stopped and freed at any time (its reference is the set's own).
	 */
	c->load_ret = ret;
	complete(&c->loaded);
	mutex_unlock(&hc_register_lock);
	if (!ret)
		return;
	kobject_put(&c->kobj);
	module_put(THIS_MODULE);
}

/* The set with uuid @set_uuid on @list (hc_cache_sets or _loading). */
static struct hc_cache_set *
hc_cache_set_in(struct list_head *list, const u8 *set_uuid)
{
	struct hc_cache_set *c;

	lockdep_assert_held(&hc_register_lock);
	list_for_each_entry(c, list, list)
		if (!memcmp(c->sb.set_uuid, set_uuid, HC_UUID_SIZE))
			return c;
	return NULL;
}

/**
 * hc_cache_set_find() - the registered set with a given uuid
 * @set_uuid: the uuid
 *
 * Sets still loading are not found: backing devices wait for them.
 *
 * Return: the set or NULL. hc_register_lock must be held.
 */
struct hc_cache_set *hc_cache_set_find(const u8 *set_uuid)
{
	return hc_cache_set_in(&hc_cache_sets, set_uuid);
}

/* Is @c's set already registered, or being loaded from another device? */
static int hc_cache_set_unique(struct hc_cache_set *c)
{
	struct hc_cache_set *other;

	other = hc_cache_set_in(&hc_cache_sets, c->sb.set_uuid) ?:
		hc_cache_set_in(&hc_cache_sets_loading, c->sb.set_uuid);
	if (!other)
		return 0;
	pr_err("%pg: cannot register: cache set %pU is already registered, from %s\n",
	       c->bdev, c->sb.set_uuid, other->load.dev);
	return -EEXIST;
}

/**
 * hc_cache_register() - register a cache device, creating its cache set
 * @path: the device node, as written to /sys/fs/hcache/register
 * @devt: its device number
 * @wait: if not NULL, receives the set with a reference held, for
 *	hc_cache_register_wait()
 *
 * Opens the device exclusively and validates the superblock here; the
 * load (hc_cache_set_load()), the publishing in sysfs and debugfs and the
 * attaching of the registered backing devices that name the set run in
 * hc_cache_set_load_work(). hc_register_lock must be held. May sleep.
 *
 * Return: 0 if the load was started, or -errno; every failure is logged
 * naming the device.
 */
int hc_cache_register(const char *path, dev_t devt,
		      struct hc_cache_set **wait)
{
	struct hc_cache_set *c;
	const char *why;
	int ret;

	lockdep_assert_held(&hc_register_lock);
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	kobject_init(&c->kobj, &hc_cache_set_ktype);
	INIT_LIST_HEAD(&c->list);
	INIT_LIST_HEAD(&c->backings);
	init_rwsem(&c->meta_lock);
	init_waitqueue_head(&c->mark_bg.done_wait);
	spin_lock_init(&c->alloc_lock);
	spin_lock_init(&c->promote_lock);
	INIT_LIST_HEAD(&c->promote_todo);
	INIT_LIST_HEAD(&c->promote_done);
	init_waitqueue_head(&c->promote_wait);
	spin_lock_init(&c->write_lock);
	INIT_LIST_HEAD(&c->write_done);
	INIT_LIST_HEAD(&c->write_inserted);
	INIT_DELAYED_WORK(&c->write_work, hc_write_insert_work);
	INIT_WORK(&c->stop_work, hc_cache_set_stop_work);
	INIT_WORK(&c->load_work, hc_cache_set_load_work);
	init_completion(&c->loaded);
	INIT_WORK(&c->fail_work, hc_cache_set_fail_work);
	spin_lock_init(&c->io_error_lock);
	c->io_error_limit = HC_IO_ERROR_LIMIT_DEFAULT;
	c->io_error_halflife = HC_IO_ERROR_HALFLIFE_DEFAULT;
	atomic64_set(&c->errors, 0);
	c->sb_buf = alloc_page(GFP_KERNEL);
	c->table = kvzalloc(sizeof(*c->table), GFP_KERNEL);
	if (!c->sb_buf || !c->table) {
		ret = -ENOMEM;
		goto out_put;
	}
	hc_bdev_table_init(c->table);

	ret = hc_bdev_open_excl(path, c, &c->handle);
	if (ret) {
		pr_err("%s: cannot register: cannot open it exclusively (error %d)\n",
		       path, ret);
		goto out_put;
	}
	c->bdev = c->handle.bdev;
	if (c->bdev->bd_dev != devt) {
		pr_err("%pg: cannot register: %s now names another device\n",
		       c->bdev, path);
		ret = -ENODEV;
		goto out_close;
	}
	ret = hc_sb_read_page(c->bdev, c->sb_buf);
	if (ret) {
		pr_err("%pg: cannot register: cannot read the superblock (error %d)\n",
		       c->bdev, ret);
		goto out_close;
	}
	ret = hc_sb_decode(page_address(c->sb_buf), HC_SB_SIZE, &c->sb, &why);
	if (ret || c->sb.kind != HC_KIND_CACHE) {
		pr_err("%pg: cannot register: %s\n", c->bdev,
		       ret ? why : "no longer a cache device");
		ret = ret ?: -EINVAL;
		goto out_close;
	}
	snprintf(c->load.dev, sizeof(c->load.dev), "%pg", c->bdev);
	ret = hc_cache_set_unique(c);
	if (!ret)
		ret = hc_cache_set_geometry(c);
	if (!ret)
		ret = hc_journal_init(c);
	if (!ret)
		ret = hc_csum_init(c);
	if (!ret)
		ret = hc_btree_init(c);
	if (!ret)
		ret = hc_gc_init(c);
	if (ret)
		goto out_close;

	c->load.start = jiffies;
	c->load.phase = "queued";
	list_add_tail(&c->list, &hc_cache_sets_loading);
	__module_get(THIS_MODULE);
	if (wait) {
		kobject_get(&c->kobj);
		*wait = c;
	}
	queue_work(hc_load_wq, &c->load_work);
	return 0;

out_close:
	hc_bdev_close(&c->handle);
out_put:
	kobject_put(&c->kobj);
	return ret;
}

/**
 * hc_cache_register_wait() - wait for a registration's load to end
 * @c: from hc_cache_register()'s @wait; its reference is dropped here
 *
 * Called without hc_register_lock. A fatal signal ends the wait, not the
 * load.
 *
 * Return: the load's result, or -EINTR if interrupted.
 */
int hc_cache_register_wait(struct hc_cache_set *c)
{
	int ret = wait_for_completion_killable(&c->loaded);

	if (!ret)
		ret = c->load_ret;
	kobject_put(&c->kobj);
	return ret;
}

/**
 * hc_cache_set_loading_show() - the sysfs file /sys/fs/hcache/loading
 * @buf: a page
 *
 * One line per set being loaded: cache device, set uuid, step, progress
 * in it ("done/total", or "done" when the total is not known) and seconds
 * since the registration was accepted. Then one per registered set whose
 * mark pass still runs behind I/O: step "background-mark", the leaves
 * counted, and the seconds since it began.
 *
 * Return: bytes written.
 */
ssize_t hc_cache_set_loading_show(char *buf)
{
	struct hc_cache_set *c;
	int n = 0;

	mutex_lock(&hc_register_lock);
	list_for_each_entry(c, &hc_cache_sets_loading, list) {
		const char *phase = READ_ONCE(c->load.phase);
		u64 total = READ_ONCE(c->load.total);

		/* A line is under 128 bytes; a page holds dozens of loads. */
		if (n > PAGE_SIZE - 128)
			break;
		n += sysfs_emit_at(buf, n, "%s %pU %s %llu", c->load.dev,
				   c->sb.set_uuid, phase ?: "publish",
				   READ_ONCE(c->load.done));
		if (total)
			n += sysfs_emit_at(buf, n, "/%llu", total);
		n += sysfs_emit_at(buf, n, " %lu\n",
				   (jiffies - c->load.start) / HZ);
	}
	list_for_each_entry(c, &hc_cache_sets, list) {
		if (!READ_ONCE(c->mark_bg.running) || n > PAGE_SIZE - 128)
			continue;
		n += sysfs_emit_at(buf, n, "%s %pU background-mark %llu %lu\n",
				   c->load.dev, c->sb.set_uuid,
				   READ_ONCE(c->mark_bg.leaves),
				   (jiffies - c->mark_bg.start) / HZ);
	}
	mutex_unlock(&hc_register_lock);
	return n;
}

/**
 * hc_cache_set_loads_flush() - wait for every load in progress to end
 *
 * Called without hc_register_lock, after hc_shutting_down is set: each
 * load then stops at its next step and releases its set.
 */
void hc_cache_set_loads_flush(void)
{
	flush_workqueue(hc_load_wq);
}

int hc_cache_set_load_init(void)
{
	hc_load_wq = alloc_workqueue("hcache_load", WQ_UNBOUND, 0);
	return hc_load_wq ? 0 : -ENOMEM;
}

void hc_cache_set_load_exit(void)
{
	destroy_workqueue(hc_load_wq);
}

/**
 * hc_cache_set_stop() - stop a cache set
 * @c: a registered set; hc_register_lock must be held
 * @detach: unregister: detach its backing devices first; else stop them
 *
 * Writes every dirty btree node, the gens and prios and a last journal
 * entry, marks the superblock clean when no error was seen, and releases
 * the device. Stopping twice is harmless. May sleep.
 */
void hc_cache_set_stop(struct hc_cache_set *c, bool detach)
{
	struct hc_backing *b, *tmp;
	int ret;

	lockdep_assert_held(&hc_register_lock);
	if (list_empty(&c->list))
		return;
	hc_debugfs_remove_set(c);
	list_for_each_entry_safe(b, tmp, &c->backings, set_node) {
		if (detach && !hc_backing_detach(b))
			continue;
		hc_backing_stop(b);
	}
	/*
	 * No backing device is attached: no promotion or write is queued
	 * any more, but the last write's work may still be returning.
	 */
	flush_delayed_work(&c->write_work);
	kthread_stop(c->promote_thread);
	hc_gc_stop(c);
	cancel_delayed_work_sync(&c->journal.work);

	down_write(&c->meta_lock);
	ret = hc_btree_flush(c);
	/*
	 * The last chain marks the empty buckets, so that the next
	 * registration can serve I/O before it has counted the rest; not if
	 * the counts are incomplete (the pass behind I/O did not end).
	 */
	c->empty_marks = !c->mark_bg.running && !c->meta_failed;
	if (!ret)
		ret = hc_prio_write(c);
	if (!ret)
		ret = hc_journal_write(c);
	up_write(&c->meta_lock);
	if (!ret && !atomic64_read(&c->errors)) {
		c->sb.cache.clean = true;
		if (c->empty_marks) {
			c->sb.incompat |= HC_FEAT_INCOMPAT_EMPTY_MARKS;
			c->sb.cache.clean_journal_bucket =
				c->journal.written_ring;
			c->sb.cache.clean_journal_seq = c->journal.seq - 1;
			c->sb.cache.clean_journal_offset =
				c->journal.written_offset;
		}
		ret = hc_sb_write(c->bdev, &c->sb, c->sb_buf);
	}
	pr_info("%pg: cache set %pU stopped%s\n", c->bdev, c->sb.set_uuid,
		ret || atomic64_read(&c->errors) ?
		" after errors; the next registration replays the journal" :
		" cleanly");

	hc_btree_shrinker_exit(c);
	list_del_init(&c->list);
	hc_stats_exit(&c->io_stats);
	kobject_del(&c->cache_kobj);
	kobject_put(&c->cache_kobj);
	kobject_del(&c->internal);
	kobject_put(&c->internal);
	kobject_uevent(&c->kobj, KOBJ_REMOVE);
	kobject_del(&c->kobj);
	hc_bdev_close(&c->handle);
	kobject_put(&c->kobj);
	module_put(THIS_MODULE);
}

static void hc_cache_set_stop_work(struct work_struct *work)
{
	struct hc_cache_set *c = container_of(work, struct hc_cache_set,
					      stop_work);

	mutex_lock(&hc_register_lock);
	hc_cache_set_stop(c, c->stop_detach);
	mutex_unlock(&hc_register_lock);
	kobject_put(&c->kobj);
}

/**
 * hc_cache_set_stop_async() - stop a set from a work item
 * @c: a registered set
 * @detach: as for hc_cache_set_stop()
 *
 * For sysfs, whose files cannot remove their own directory.
 */
void hc_cache_set_stop_async(struct hc_cache_set *c, bool detach)
{
	c->stop_detach |= detach;	/* unregister wins over stop */
	kobject_get(&c->kobj);
	if (!queue_work(hc_wq, &c->stop_work))
		kobject_put(&c->kobj);
}
