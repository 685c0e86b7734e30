// SPDX-License-Identifier: GPL-2.0
/*
 * commit.c: the keys of cached writes whose I/O is done, inserted by the
 * set's write_work, and flushes: what makes a completed write's key, and
 * the data behind it, durable.
 *
 * A cached write's last completion queues it on the set's write_done,
 * and hc_write_insert_work() inserts the keys of all that are queued, a
 * batch per hold of meta_lock, before completing them; except that a
 * writeback write without FUA whose I/O went well is acked first, its
 * key inserted later (hc_write_io_done() says how nothing can tell). A
 * write that failed in part keeps its keys out and is finished around
 * the cache (hc_write_fallback_work()). PREFLUSH writes the journal
 * (PREFLUSH + FUA: every key of a completed write, and the data behind
 * it, is durable) and flushes the backing device first; with no key to
 * journal, it flushes the cache device if data was written there since
 * (an overwrite in place). FUA writes the journal before the write
 * completes.
 */

#include "hcache.h"
#include "request.h"
#include "debug.h"

#include <linux/bio.h>

/* Cached writes whose keys are inserted under one hold of meta_lock. */
#define HC_WRITE_BATCH		32

static int hc_write_drain_locked(struct hc_cache_set *c);

/*
 * No key to journal, but data written to the cache since its last flush:
 * overwrites in place (hc_write_in_place()), which change no key. Flush
 * the cache device for them, with meta_lock let go: lookups and inserts
 * go on meanwhile. Return: 0 or the flush's error.
 */
static int hc_flush_cache_data(struct hc_cache_set *c)
{
	u64 seen = atomic64_read(&c->data_written);
	int ret;

	if (seen == READ_ONCE(c->data_flushed))
		return 0;
	/* The debug build can fail it as the device would. */
	ret = hc_debug_fault(HC_FAULT_CACHE_FLUSH) ? -EIO :
	      blkdev_issue_flush(c->bdev);
	if (ret) {
		hc_cache_set_error(c, "flush of the cache device failed: error %d",
				   ret);
		/*
		 * What it held may be gone, while a later flush could go well
		 * and make keys durable over it: as for a metadata write.
		 */
		hc_cache_set_fail(c, HC_FAIL_METADATA);
		return ret;
	}
	hc_meta_lock_write(c);
	/* Only forward: a journal write may have flushed more meanwhile. */
	if ((s64)(seen - c->data_flushed) > 0)
		c->data_flushed = seen;
	up_write(&c->meta_lock);
	return 0;
}

/*
 * A PREFLUSH: make every write completed so far durable. Their keys and
 * invalidations are in the journal's open entry (the acked writes' put
 * there now), or already written; the journal write's PREFLUSH flushes
 * the cache device's data under them. The backing device is flushed
 * first, so that a clean key (writethrough) is never durable before the
 * data it says the backing device holds, and so that writes passed to it
 * are durable; but only if a write to it completed since its last flush
 * that succeeded (fg_written): in writeback mode a flush then costs the
 * cache device's journal write alone, not a flush of a slow disk. A set
 * that can no longer write its metadata, or a key that could not go in,
 * fails the flush: the writes it covers are not durable.
 */
int hc_flush(struct hc_request *req)
{
	struct hc_backing *b = req->b;
	struct hc_cache_set *c = req->c;
	s64 written = atomic64_read(&b->fg_written);
	s64 flushed = atomic64_read(&b->fg_flushed);
	int ret;

	if (written != flushed) {
		ret = blkdev_issue_flush(b->bdev);
		if (ret)
			return ret;
		/* Only forward: a flush that sampled less may end later. */
		while (flushed < written &&
		       !atomic64_try_cmpxchg(&b->fg_flushed, &flushed, written))
			;
	}
	hc_debug_delay(HC_DELAY_FLUSH_BACKING);
	hc_meta_lock_write(c);
	ret = hc_write_drain_locked(c);
	if (!ret && c->meta_failed)
		ret = -EIO;
	if (!ret && c->journal.nr)
		return hc_journal_write_unlock(c);
	up_write(&c->meta_lock);
	if (!ret)
		ret = hc_flush_cache_data(c);
	return ret;
}

/*
 * Queue a cached write whose I/O is done on write_done, for write_work to
 * insert its keys. One that waits for that (not acked) has it run now; an
 * acked one lets it gather a batch, up to a jiffy or HC_WRITE_BATCH
 * acked writes: the worker's wake-up and the two context switches around
 * it cost more than the insert, under TCG nearly as much as the write.
 */
void hc_write_queue(struct hc_request *req)
{
	struct hc_cache_set *c = req->c;
	unsigned long flags;

	spin_lock_irqsave(&c->write_lock, flags);
	list_add_tail(&req->inserts, &c->write_done);
	spin_unlock_irqrestore(&c->write_lock, flags);
	if (!req->acked ||
	    atomic_inc_return(&c->write_acked) >= HC_WRITE_BATCH)
		mod_delayed_work(hc_io_wq, &c->write_work, 0);
	else
		queue_delayed_work(hc_io_wq, &c->write_work, 1);
}

/* hc_btree_visit_range()'s callback: is any of the range dirty? */
static int hc_dirty_piece(void *priv, const struct hc_key *k, u64 from,
			  u64 to)
{
	return (k->flags & HC_KEY_DIRTY) ? 1 : 0;
}

/*
 * Under meta_lock held for writing: insert the keys of a cached write
 * whose I/O is done. If any of it failed, none goes in: it is finished
 * around the cache (hc_write_fallback_work()), which drops what the cache
 * holds of the range in an order a crash cannot undo. A writethrough
 * write over dirty data goes in dirty: said clean, its key could be
 * durable (the journal's timer) before the backing device has flushed the
 * data, and a crash then would leave the backing device with neither the
 * new data nor the acknowledged dirty data the key replaced, once the
 * clean key is evicted. A failed lookup of what lies under it sends it
 * around the cache too. Sets req->insert_ret and, for a dirty key,
 * req->dirty.
 */
static void hc_write_insert(struct hc_request *req)
{
	struct hc_cache_set *c = req->c;
	bool dirty = req->mode == HC_MODE_WRITEBACK;
	struct hc_frag *f;
	int ret = 0;

	lockdep_assert_held_write(&c->meta_lock);
	req->fallback = READ_ONCE(req->cache_failed) || req->status;
	if (!dirty && !req->fallback) {
		ret = hc_btree_visit_range(c, req->id, req->track.start,
					   req->track.end, hc_dirty_piece, NULL);
		/*
		 * No telling (a lookup failed): around the cache, as a failed
		 * write. A dirty key here would need the backing superblock
		 * to say dirty first, which only writeback mode sees to.
		 */
		if (ret < 0)
			req->fallback = true;
		dirty = ret > 0;
		ret = 0;
	}
	list_for_each_entry(f, &req->frags, node) {
		struct hc_key k = {
			.bdev_id = req->id,
			.end = f->start + f->sectors,
			.size = f->sectors,
			.ptr = f->ptr,
			.nr_ptrs = 1,
			.flags = dirty ? HC_KEY_DIRTY : 0,
		};

		/* In place, the key that points there stays as it is. */
		if (req->in_place) {
			hc_bucket_unpin_in_place(c, hc_ptr_offset(f->ptr));
			continue;
		}
		if (!ret && !req->fallback)
			ret = hc_insert(c, &k);
		hc_bucket_unpin(c, hc_ptr_offset(f->ptr));
	}
	if (ret) {
		struct hc_key w = hc_request_whiteout(req);

		ret = hc_insert(c, &w);
	}
	req->insert_ret = ret;
	req->dirty = dirty && !req->fallback ? hc_dirty_sectors(c, req->id) : 0;
}

/*
 * A cached write that failed in part (req->fallback), finished around the
 * cache in a worker, as it waits for the backing device: in writeback its
 * data is nowhere yet and goes to the backing device now; in writethrough
 * the backing device has it already (or failed it, and the request fails).
 * Either way, hc_write_around() drops what the cache holds of the range:
 * the clean keys at once, the dirty ones only once the new data is durable
 * on the backing device.
 */
static void hc_write_fallback_work(struct work_struct *work)
{
	struct hc_request *req = container_of(work, struct hc_request, work);
	bool writeback = req->mode == HC_MODE_WRITEBACK;

	hc_debug_delay(HC_DELAY_WRITE_FALLBACK);
	atomic_set(&req->remaining, 1);
	reinit_completion(&req->done);
	/*
	 * A failed overwrite in place may have torn the only copy of older
	 * dirty data, which its key, durable maybe, still vouches for: its
	 * whiteout is journalled before the write ends, as for FUA.
	 */
	hc_write_around(req, (req->bio->bi_opf & REQ_FUA) || req->in_place,
			!writeback);
	if (writeback)
		hc_writeback_dirty_end(req->b);
	hc_request_end(req);
}

/* A cached write's keys are in (or it failed): complete it. */
static void hc_write_finish(struct hc_request *req)
{
	bool writeback = req->mode == HC_MODE_WRITEBACK;
	struct hc_frag *f, *tmp;

	if (req->dirty)
		hc_writeback_dirty_added(req->b, req->dirty);
	list_for_each_entry_safe(f, tmp, &req->frags, node) {
		list_del(&f->node);
		hc_frag_put(f);
	}
	if (req->through)
		hc_frag_put(req->through);
	if (req->fallback) {
		/* A worker: this one must not wait for a backing write. */
		INIT_WORK(&req->work, hc_write_fallback_work);
		queue_work(hc_io_wq, &req->work);
		return;
	}
	/*
	 * An acked write's bio has ended: a failed insert latched the set
	 * as failed, and as the device is dirty until this, the failure
	 * stops it rather than let it read older data (fail.c).
	 */
	if (req->insert_ret && !req->acked)
		hc_request_set_error(req, BLK_STS_IOERR);
	if (writeback)
		hc_writeback_dirty_end(req->b);
	hc_request_end(req);
}

/*
 * Under meta_lock held for writing: take up to @max cached writes whose
 * I/O is done off write_done, oldest first, insert their keys, and move
 * them to @done, for hc_write_finish(). Taking them under meta_lock means
 * that whoever takes it next finds their keys in. *@err (if not NULL)
 * receives the first insert's error, if it had none. *@fua: whether any
 * of them is a FUA write, whose key the caller must then make durable
 * (hc_write_fua_done()) before it completes. Return: how many.
 */
static unsigned int hc_write_insert_done(struct hc_cache_set *c,
					 struct list_head *done,
					 unsigned int max, int *err, bool *fua)
{
	struct hc_request *req, *tmp;
	LIST_HEAD(batch);
	unsigned int n = 0;

	lockdep_assert_held_write(&c->meta_lock);
	*fua = false;
	spin_lock_irq(&c->write_lock);
	list_for_each_entry_safe(req, tmp, &c->write_done, inserts) {
		if (n == max)
			break;
		list_move_tail(&req->inserts, &batch);
		if (req->acked)
			atomic_dec(&c->write_acked);
		n++;
	}
	spin_unlock_irq(&c->write_lock);
	list_for_each_entry(req, &batch, inserts) {
		hc_write_insert(req);
		if (err && req->insert_ret && !*err)
			*err = req->insert_ret;
		if (req->acked)
			hc_track_set_acked(req->b, &req->track, false);
		else if ((req->bio->bi_opf & REQ_FUA) && !req->fallback)
			*fua = true;
	}
	list_splice_tail(&batch, done);
	return n;
}

/*
 * The FUA writes among @batch (taken by hc_write_insert_done()) end with
 * @ret, the journal write that made their keys durable, if it failed. A
 * set that failed meanwhile (another insert of the batch, say) writes no
 * journal: its FUA writes are not durable, and say so (-EIO).
 */
static void hc_write_fua_done(struct list_head *batch, int ret)
{
	struct hc_request *req;

	if (!ret)
		return;
	list_for_each_entry(req, batch, inserts)
		if (!req->acked && !req->fallback &&
		    (req->bio->bi_opf & REQ_FUA) && !req->insert_ret)
			req->insert_ret = ret;
}

/*
 * Under meta_lock held for writing: insert the keys of every cached write
 * whose I/O is done, so that what the caller does next sees them (above
 * all, the acked writes'); write_work completes them. Return: 0, or the
 * first insert's error (the set is failing then).
 */
static int hc_write_drain_locked(struct hc_cache_set *c)
{
	LIST_HEAD(done);
	bool fua;
	int err = 0;

	if (!hc_write_insert_done(c, &done, UINT_MAX, &err, &fua))
		return 0;
	if (fua)
		hc_write_fua_done(&done, c->meta_failed ? -EIO :
				  hc_journal_write(c));
	spin_lock_irq(&c->write_lock);
	list_splice_tail(&done, &c->write_inserted);
	spin_unlock_irq(&c->write_lock);
	mod_delayed_work(hc_io_wq, &c->write_work, 0);
	return err;
}

/**
 * hc_write_drain() - insert the keys of every cached write whose I/O is done
 * @c: the set
 *
 * hc_write_drain_locked(), taking meta_lock. Writes write_work has taken
 * are inserted under its hold of meta_lock: a caller that takes meta_lock
 * next finds them in, so only write_done needs looking at. May sleep.
 */
void hc_write_drain(struct hc_cache_set *c)
{
	bool empty;

	spin_lock_irq(&c->write_lock);
	empty = list_empty(&c->write_done);
	spin_unlock_irq(&c->write_lock);
	if (empty)
		return;
	hc_meta_lock_write(c);
	hc_write_drain_locked(c);
	up_write(&c->meta_lock);
}

/**
 * hc_write_insert_work() - insert the keys of cached writes whose I/O is done
 * @work: the set's write_work
 *
 * Takes meta_lock once per HC_WRITE_BATCH writes, as lookups wait while it
 * is held, and writes the journal once per batch for the FUA writes in it,
 * then completes them, and the writes hc_write_drain() inserted. The
 * set's stop flushes it, after its last backing device has drained its
 * requests.
 */
void hc_write_insert_work(struct work_struct *work)
{
	struct hc_cache_set *c = container_of(to_delayed_work(work),
					      struct hc_cache_set, write_work);
	struct hc_request *req, *tmp;
	LIST_HEAD(done);
	bool more, fua;
	int ret;

	hc_debug_delay(HC_DELAY_WRITE_INSERT);
	do {
		spin_lock_irq(&c->write_lock);
		more = !list_empty(&c->write_done);
		spin_unlock_irq(&c->write_lock);
		if (more) {
			hc_meta_lock_write(c);
			hc_write_insert_done(c, &done, HC_WRITE_BATCH, NULL,
					     &fua);
			/* @done holds this batch alone: it was empty. */
			if (fua && !c->meta_failed) {
				ret = hc_journal_write_unlock(c);
			} else {
				ret = fua ? -EIO : 0;
				up_write(&c->meta_lock);
			}
			hc_write_fua_done(&done, ret);
		}
		spin_lock_irq(&c->write_lock);
		list_splice_tail_init(&c->write_inserted, &done);
		spin_unlock_irq(&c->write_lock);
		list_for_each_entry_safe(req, tmp, &done, inserts) {
			list_del_init(&req->inserts);
			hc_write_finish(req);
		}
		cond_resched();
	} while (more);
}
