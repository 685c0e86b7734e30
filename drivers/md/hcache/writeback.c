// SPDX-License-Identifier: GPL-2.0
/*
 * writeback.c: writing a backing device's dirty data back from the cache:
 * the per-device thread, its pacing by the rate controller (wb_rate.c),
 * the move of the backing superblock from dirty to clean, and a detach
 * that waits for the cache to be emptied.
 *
 * The thread (hcache_wb) scans the device's keys in order from where it
 * stopped (a cursor, wrapping at the end) and collects dirty ones into a
 * batch: at most HC_WB_BATCH_KEYS pieces of at most HC_WB_RUN_BYTES, and
 * about a quarter of a second's worth at the current rate (a whole
 * HC_WB_BATCH_BYTES when the device is idle). Pieces contiguous on the
 * backing device make a run, written by one bio; pieces of a run
 * contiguous in the cache are read by one bio. The rate's share ends a
 * batch only where a run ends (the pacer counts what the batch took), so
 * that pacing never costs the backing device a write more. Each piece
 * collected pins its bucket against overwrites in place (copy_pin), and
 * is not collected while one is in flight there, until step 5 or until
 * the batch is given up: such a write changes no key, so step 5 could not
 * tell its data from the older data read. A batch goes:
 *
 *  1. read every run from the cache, all in flight at once;
 *  2. per run, under one hold of meta_lock for reading: every piece is
 *     still in the tree, mapped as when collected. Its bucket then cannot
 *     have been reused (dirty data is never evicted), so the data read is
 *     the key's. Then, before the lock is let go,
 *     hc_track_writeback_begin(): refused if a foreground write over the
 *     run is in flight (it may have replaced the key and be writing the
 *     backing device); otherwise foreground writes that start later wait
 *     for the run before writing the backing device. Together: older
 *     data never lands over a newer write;
 *  3. write every run to the backing device in ascending order, plugged;
 *  4. flush the backing device: a key may say clean only when the data is
 *     durable there;
 *  5. under meta_lock held for writing, mark each piece clean where the
 *     tree still maps it as collected (compare and swap, piece by piece
 *     of what it finds; the clean keys are journalled like any insert). A
 *     piece overwritten meanwhile stays as the newer write left it.
 *
 * Pacing. Every writeback_rate_update_seconds the controller computes a
 * rate from the device's dirty sectors and its target (writeback_percent
 * of its share of the cache); after each batch the thread sleeps what
 * hc_wb_pace() says. A device with no foreground request for
 * writeback_idle_seconds, or waiting to detach, is written back at full
 * speed.
 *
 * Dirty to clean. When no dirty sector is left, the backing superblock
 * says clean again (after a journal write, so that the clean keys are
 * durable first). A writeback-mode write marks the superblock dirty
 * before its key goes in (write.c), and counts itself in @dirtying from
 * before it looks at the state until its key is in: the move to clean
 * sets the state in memory first, then checks @dirtying and the dirty
 * count, and a write that sees the new state waits on sb_lock.
 *
 * Lifetime. The thread runs while the device is attached: started by
 * hc_backing_attach(), stopped by hc_backing_unlink() (detach, stop, set
 * stop) before the device forgets its set, so it may use b->set and b->id
 * freely.
 */

#include "hcache.h"
#include "debug.h"
#include "trace.h"

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/vmalloc.h>

/* Pieces of keys in a batch at most. */
#define HC_WB_BATCH_KEYS	1024
/* Data in a batch at most, and what an idle device gets per batch. */
#define HC_WB_BATCH_BYTES	(8U << 20)
#define HC_WB_BATCH_SECTORS	(HC_WB_BATCH_BYTES >> SECTOR_SHIFT)
/* A run (one backing write) at most: one bio of BIO_MAX_VECS pages. */
#define HC_WB_RUN_BYTES		(BIO_MAX_VECS * PAGE_SIZE)
#define HC_WB_RUN_SECTORS	(HC_WB_RUN_BYTES >> SECTOR_SHIFT)
/* Pages: the data, and a partial page per run. */
#define HC_WB_BATCH_PAGES	(HC_WB_BATCH_BYTES / PAGE_SIZE + \
				 HC_WB_BATCH_KEYS)
/* Data pages come in physically contiguous blocks of up to 64 KiB. */
#define HC_WB_PAGE_ORDER	get_order(SZ_64K)
/* Leaves scanned per meta_lock hold. */
#define HC_WB_SCAN_LEAVES	8
/* The controller's ceiling: 4 GiB/s. */
#define HC_WB_RATE_MAX		(4ULL << (30 - SECTOR_SHIFT))
/* After a failed batch, wait this long (doubling up to 32 times). */
#define HC_WB_RETRY		HZ
/* A flush waiting for writes' keys to go in looks again this often. */
#define HC_WB_FLUSH_POLL	(HZ / 50)

/**
 * struct hc_wb_run - pieces contiguous on the backing device
 * @batch: the batch it is part of
 * @track: in the device's tree of I/O in flight while written
 * @first: its first piece in hc_wb_batch.keys
 * @nr: pieces
 * @page: its first page in hc_wb_batch.pages
 * @sectors: length
 * @status: the first error reading or writing it
 * @csum_bad: checking the run's data checksums failed (then @status is
 *	set too): a piece did not match, its chunks could not be read again,
 *	or no memory for that; the run is not written, its data stays
 *	dirty, and a device error was reported where it happened
 * @go: passed step 2 and written
 */
struct hc_wb_run {
	struct hc_wb_batch *batch;
	struct hc_track	track;
	u32		first;
	u32		nr;
	u32		page;
	u32		sectors;
	blk_status_t	status;
	bool		csum_bad;
	bool		go;
};

/**
 * struct hc_wb_batch - the thread's work area, allocated once
 * @b: the backing device
 * @keys: the pieces collected, in order: dirty keys as they were, cut to
 *	at most HC_WB_RUN_SECTORS
 * @nr_keys: pieces in @keys
 * @sectors: their total
 * @budget: sectors to collect before the next run would start (the run
 *	being collected is finished first; one piece always fits)
 * @run_end: where the last piece collected ends on the backing device
 * @run_sectors: sectors of the run it ends, as hc_wb_plan() will cut it
 * @full: collection stopped for want of room
 * @pinned: @keys hold copy pins on their buckets (hc_wb_copy_pin())
 * @runs: the runs
 * @nr_runs: runs in @runs
 * @pages: data pages, allocated per batch
 * @nr_pages: pages in @pages
 * @pending: bios in flight, plus one while issuing
 * @done: completed when @pending drops to zero
 */
struct hc_wb_batch {
	struct hc_backing	*b;
	struct hc_key		keys[HC_WB_BATCH_KEYS];
	u32			nr_keys;
	u64			sectors;
	u64			budget;
	u64			run_end;
	u32			run_sectors;
	bool			full;
	bool			pinned;
	struct hc_wb_run	runs[HC_WB_BATCH_KEYS];
	u32			nr_runs;
	struct page		*pages[HC_WB_BATCH_PAGES];
	u32			nr_pages;
	atomic_t		pending;
	struct completion	done;
};

/* The sectors of data buckets: what the devices' shares divide. */
static u64 hc_cache_data_sectors(struct hc_cache_set *c)
{
	return hc_geom_usable_buckets(&c->geom) * c->geom.bucket_sectors;
}

/**
 * hc_writeback_dirty_sectors() - the cache's dirty sectors of a device
 * @b: the backing device; hc_register_lock held, or its writeback thread
 *
 * Return: its live dirty sectors, 0 if not attached.
 */
u64 hc_writeback_dirty_sectors(struct hc_backing *b)
{
	struct hc_cache_set *c = b->set;
	u64 dirty;

	if (!c)
		return 0;
	down_read(&c->meta_lock);
	dirty = hc_dirty_sectors(c, b->id);
	up_read(&c->meta_lock);
	return dirty;
}

/**
 * hc_writeback_wake() - have the thread look at its device again now
 * @b: the backing device
 */
void hc_writeback_wake(struct hc_backing *b)
{
	WRITE_ONCE(b->wb.kick, true);
	wake_up(&b->wb.wait);
}

/**
 * hc_writeback_note_io() - a foreground request: the device is not idle
 * @b: the backing device
 */
void hc_writeback_note_io(struct hc_backing *b)
{
	unsigned long now = jiffies;

	if (READ_ONCE(b->wb.last_io) != now)
		WRITE_ONCE(b->wb.last_io, now);
}

/**
 * hc_writeback_dirty_begin() - a writeback-mode write is about to go dirty
 * @b: the backing device
 *
 * Called before the write looks at the superblock state; until
 * hc_writeback_dirty_end(), the device may not turn clean.
 */
void hc_writeback_dirty_begin(struct hc_backing *b)
{
	atomic_inc(&b->wb.dirtying);
	/* Pairs with the barrier in hc_wb_try_clean(). */
	smp_mb__after_atomic();
}

/**
 * hc_writeback_dirty_end() - its key is in the tree (or it gave up)
 * @b: the backing device
 */
void hc_writeback_dirty_end(struct hc_backing *b)
{
	/*
	 * The key went in (under meta_lock) before the count drops: a
	 * flush that sees the count at 0 then finds the key (hc_wb_idle_dirty()).
	 */
	smp_mb__before_atomic();
	atomic_dec(&b->wb.dirtying);
}

/**
 * hc_writeback_dirty_added() - dirty data went in: wake writeback if due
 * @b: the backing device
 * @dirty: its dirty sectors now
 *
 * A thread sleeping out writeback_delay starts at once when the device
 * is above its target.
 */
void hc_writeback_dirty_added(struct hc_backing *b, u64 dirty)
{
	if (READ_ONCE(b->wb.delaying) && dirty > READ_ONCE(b->wb.target))
		hc_writeback_wake(b);
}

/*
 * Sleep up to @timeout, or until kicked (a tunable changed, a detach, or
 * with @delay, dirty data above the target) or asked to stop. Return:
 * true if kicked.
 */
static bool hc_wb_sleep(struct hc_writeback *wb, long timeout, bool delay)
{
	bool kicked;

	if (delay)
		WRITE_ONCE(wb->delaying, true);
	wait_event_interruptible_timeout(wb->wait, kthread_should_stop() ||
					 READ_ONCE(wb->kick), timeout);
	if (delay)
		WRITE_ONCE(wb->delaying, false);
	kicked = READ_ONCE(wb->kick);
	WRITE_ONCE(wb->kick, false);
	return kicked;
}

static unsigned long hc_wb_idle_jiffies(struct hc_backing *b)
{
	return READ_ONCE(b->wb.idle_seconds) * HZ;
}

/**
 * hc_writeback_idle() - no foreground request for writeback_idle_seconds
 * @b: the backing device
 *
 * Return: true if writeback may run at full speed for want of other I/O.
 */
bool hc_writeback_idle(struct hc_backing *b)
{
	return time_after(jiffies, READ_ONCE(b->wb.last_io) +
			  hc_wb_idle_jiffies(b));
}

/* Jiffies until the device counts as idle if no request comes (at least 1). */
static long hc_wb_until_idle(struct hc_backing *b)
{
	long left = (long)(READ_ONCE(b->wb.last_io) + hc_wb_idle_jiffies(b) +
			   1 - jiffies);

	return max(left, 1L);
}

/*
 * Recompute the rate from the dirty sectors and the target, after @dt_ms;
 * with @paused, only what writeback_rate_debug shows of them.
 */
static void hc_wb_update_rate(struct hc_backing *b, u32 dt_ms, bool paused)
{
	struct hc_writeback *wb = &b->wb;
	struct hc_cache_set *c = b->set;
	u64 dirty = hc_writeback_dirty_sectors(b);
	u64 target = hc_wb_target(hc_cache_data_sectors(c),
				  max(READ_ONCE(c->nr_backings), 1U),
				  READ_ONCE(wb->percent));

	spin_lock(&wb->lock);
	if (!paused)
		hc_wb_rate_update(&wb->rate, &wb->params, dirty, target,
				  dt_ms);
	wb->dirty = dirty;
	WRITE_ONCE(wb->target, target);
	spin_unlock(&wb->lock);
}

/* ---- Collecting a batch -------------------------------------------------- */

/*
 * The one rule for what one backing write covers: a piece of @sectors at
 * @start extends a run of @run_sectors ending at @run_end when it is
 * contiguous with it on the backing device and the run stays within
 * HC_WB_RUN_SECTORS. Collection (to know where a run starts) and planning
 * (to cut the runs) must agree, or a paced batch would end mid-run.
 */
static bool hc_wb_extends_run(u64 run_end, u64 run_sectors, u64 start,
			      u64 sectors)
{
	return start == run_end && run_sectors + sectors <= HC_WB_RUN_SECTORS;
}

/*
 * Keep overwrites in place out of @bucket while a piece of its dirty data
 * is in the batch (struct hc_bucket.copy_pin): from before the piece is
 * read until it is marked clean, or the batch given up. Not while one is
 * in flight, as its data may land after the read. @c->meta_lock held for
 * reading. Return: whether the piece may be taken.
 */
static bool hc_wb_copy_pin(struct hc_cache_set *c, u64 bucket)
{
	struct hc_bucket *bk = &c->buckets[bucket];
	bool ok;

	lockdep_assert_held(&c->meta_lock);
	spin_lock_irq(&c->alloc_lock);
	ok = !bk->inplace_pin && bk->copy_pin < U16_MAX;
	if (ok)
		bk->copy_pin++;
	spin_unlock_irq(&c->alloc_lock);
	return ok;
}

/* Let go of the batch's pins (hc_wb_copy_pin()); meta_lock held for writing. */
static void hc_wb_copy_unpin_locked(struct hc_wb_batch *wb)
{
	struct hc_cache_set *c = wb->b->set;
	u32 i;

	lockdep_assert_held_write(&c->meta_lock);
	if (!wb->pinned)
		return;
	for (i = 0; i < wb->nr_keys; i++) {
		struct hc_bucket *bk = &c->buckets[hc_sector_to_bucket(&c->geom,
					hc_ptr_offset(wb->keys[i].ptr))];

		if (!WARN_ON_ONCE(!bk->copy_pin))
			bk->copy_pin--;
	}
	wb->pinned = false;
}

/* hc_wb_copy_unpin_locked(), taking meta_lock. */
static void hc_wb_copy_unpin(struct hc_wb_batch *wb)
{
	struct hc_cache_set *c = wb->b->set;

	if (!wb->pinned)
		return;
	hc_meta_lock_write(c);
	hc_wb_copy_unpin_locked(wb);
	up_write(&c->meta_lock);
}

/*
 * hc_btree_scan()'s callback: take a dirty key, cut into pieces of at most
 * a run, while the batch has room. Non-zero stops the scan before the key
 * (so that what is left of it is found again).
 */
static int hc_wb_collect(void *priv, const struct hc_key *k)
{
	struct hc_wb_batch *wb = priv;
	struct hc_cache_set *c = wb->b->set;
	struct hc_key piece = *k;
	u64 bucket;

	if (!k->nr_ptrs || !(k->flags & HC_KEY_DIRTY))
		return 0;
	bucket = hc_sector_to_bucket(&c->geom, hc_ptr_offset(k->ptr));
	if (hc_ptr_stale(c->buckets[bucket].gen, hc_ptr_gen(k->ptr)))
		return 0;	/* Not counted as dirty either. */
	while (piece.size) {
		u64 sectors = min_t(u64, piece.size, HC_WB_RUN_SECTORS);
		bool joins = wb->nr_keys &&
			     hc_wb_extends_run(wb->run_end, wb->run_sectors,
					       hc_key_start(&piece), sectors);
		struct hc_key *p;

		/*
		 * The budget is checked only where a run would start: cut
		 * there, a run would cost the backing device one write more
		 * (one more seek on a disk). The pages bound every batch.
		 */
		if (wb->nr_keys == HC_WB_BATCH_KEYS ||
		    (wb->nr_keys &&
		     (wb->sectors + sectors > HC_WB_BATCH_SECTORS ||
		      (!joins && wb->sectors + sectors > wb->budget)))) {
			wb->full = true;
			return 1;
		}
		/* Overwritten in place now: the rest waits for a later pass. */
		if (!hc_wb_copy_pin(c, bucket))
			return 0;
		wb->pinned = true;
		p = &wb->keys[wb->nr_keys++];
		*p = piece;
		if (p->size > HC_WB_RUN_SECTORS)
			hc_key_cut_back(p, hc_key_start(p) + HC_WB_RUN_SECTORS);
		wb->sectors += p->size;
		wb->run_sectors = joins ? wb->run_sectors + p->size : p->size;
		wb->run_end = p->end;
		hc_key_cut_front(&piece, p->end);
	}
	return 0;
}

/*
 * Fill the batch from the cursor on. Return: 0 or -errno; *@wrapped is
 * set when the scan reached the device's last key (the cursor goes back
 * to 0).
 */
static int hc_wb_fill(struct hc_wb_batch *wb, bool *wrapped)
{
	struct hc_backing *b = wb->b;
	struct hc_cache_set *c = b->set;
	int ret;

	wb->nr_keys = 0;
	wb->sectors = 0;
	wb->full = false;
	*wrapped = false;
	do {
		down_read(&c->meta_lock);
		ret = hc_btree_scan(c, b->id, &b->wb.cursor, HC_WB_SCAN_LEAVES,
				    hc_wb_collect, wb);
		up_read(&c->meta_lock);
		if (!ret) {
			b->wb.cursor = 0;
			*wrapped = true;
		}
		cond_resched();
	} while (ret == 1 && !wb->full && !kthread_should_stop());
	return ret < 0 ? ret : 0;
}

/*
 * Append @n pages to @wb->pages, physically contiguous in blocks of up to
 * HC_WB_PAGE_ORDER where memory allows. bio_add_page() merges contiguous
 * pages into one segment (up to the queue's max_segment_size), so a run
 * reaches the disk as one request; page by page, a 1 MiB run is 256
 * segments, and a queue of 128 (the block layer's default, null_blk's) or
 * 168 (AHCI) segments splits it in two. Each block is split into order-0
 * pages, freed one by one.
 */
static int hc_wb_alloc_pages(struct hc_wb_batch *wb, u32 n)
{
	while (n) {
		unsigned int order = min_t(unsigned int, HC_WB_PAGE_ORDER,
					   ilog2(n));
		struct page *page;
		u32 i;

		/* Larger blocks only if they come easily. */
		while (order &&
		       !(page = alloc_pages(GFP_NOIO | __GFP_NORETRY |
					    __GFP_NOWARN, order)))
			order--;
		if (!order) {
			page = alloc_page(GFP_NOIO);
			if (!page)
				return -ENOMEM;
		} else {
			split_page(page, order);
		}
		for (i = 0; i < (1U << order); i++)
			wb->pages[wb->nr_pages++] = nth_page(page, i);
		n -= 1U << order;
	}
	return 0;
}

/* Cut the pieces into runs and give each run its pages. */
static int hc_wb_plan(struct hc_wb_batch *wb)
{
	struct hc_wb_run *r = NULL;
	u32 i;

	wb->nr_runs = 0;
	for (i = 0; i < wb->nr_keys; i++) {
		const struct hc_key *k = &wb->keys[i];

		if (!r || !hc_wb_extends_run(r->track.end, r->sectors,
					     hc_key_start(k), k->size)) {
			r = &wb->runs[wb->nr_runs++];
			memset(r, 0, sizeof(*r));
			r->batch = wb;
			hc_track_init(&r->track);
			r->first = i;
			r->track.start = hc_key_start(k);
			r->track.end = hc_key_start(k);
		}
		r->nr++;
		r->sectors += k->size;
		r->track.end = k->end;
	}
	wb->nr_pages = 0;
	for (i = 0; i < wb->nr_runs; i++) {
		int ret;

		wb->runs[i].page = wb->nr_pages;
		ret = hc_wb_alloc_pages(wb, DIV_ROUND_UP(wb->runs[i].sectors <<
							 SECTOR_SHIFT,
							 PAGE_SIZE));
		if (ret)
			return ret;
	}
	return 0;
}

static void hc_wb_free_pages(struct hc_wb_batch *wb)
{
	while (wb->nr_pages)
		__free_page(wb->pages[--wb->nr_pages]);
}

/* ---- I/O --------------------------------------------------------------- */

/*
 * A bio over bytes [@off, @off + @bytes) of run @r's pages, to @sector of
 * @bdev.
 */
static struct bio *hc_wb_bio(struct hc_wb_batch *wb, struct hc_wb_run *r,
			     struct block_device *bdev, blk_opf_t opf,
			     u64 sector, u32 off, u32 bytes)
{
	u32 first = off / PAGE_SIZE;
	u32 last = (off + bytes - 1) / PAGE_SIZE;
	struct bio *bio;

	bio = bio_alloc(bdev, last - first + 1, opf, GFP_NOIO);
	bio->bi_iter.bi_sector = sector;
	while (bytes) {
		u32 in_page = off % PAGE_SIZE;
		u32 len = min_t(u32, bytes, PAGE_SIZE - in_page);

		/*
		 * Merges with the page before when contiguous
		 * (hc_wb_alloc_pages()); cannot fail, the bio has a vector
		 * for every page.
		 */
		if (WARN_ON_ONCE(bio_add_page(bio, wb->pages[r->page +
							     off / PAGE_SIZE],
					      len, in_page) != len)) {
			/* Short: the run fails, its data stays dirty. */
			cmpxchg(&r->status, BLK_STS_OK, BLK_STS_RESOURCE);
			break;
		}
		off += len;
		bytes -= len;
	}
	bio->bi_private = r;
	return bio;
}

static void hc_wb_bio_endio(struct bio *bio)
{
	struct hc_wb_run *r = bio->bi_private;
	struct hc_wb_batch *wb = r->batch;

	if (bio->bi_status)
		cmpxchg(&r->status, BLK_STS_OK, bio->bi_status);
	bio_put(bio);
	if (atomic_dec_and_test(&wb->pending))
		complete(&wb->done);
}

static void hc_wb_submit(struct hc_wb_batch *wb, struct hc_wb_run *r,
			 struct bio *bio)
{
	atomic_inc(&wb->pending);
	bio->bi_end_io = hc_wb_bio_endio;
	submit_bio(bio);
}

static void hc_wb_wait(struct hc_wb_batch *wb)
{
	if (!atomic_dec_and_test(&wb->pending))
		wait_for_completion_io(&wb->done);
	reinit_completion(&wb->done);
	atomic_set(&wb->pending, 1);
}

/* Step 1: read every run, merging pieces contiguous in the cache. */
static void hc_wb_read(struct hc_wb_batch *wb)
{
	struct hc_cache_set *c = wb->b->set;
	struct blk_plug plug;
	u32 i, j;

	blk_start_plug(&plug);
	for (i = 0; i < wb->nr_runs; i++) {
		struct hc_wb_run *r = &wb->runs[i];

		for (j = r->first; j < r->first + r->nr;) {
			const struct hc_key *k = &wb->keys[j];
			u64 cstart = hc_ptr_offset(k->ptr);
			u64 cend = cstart + k->size;
			u32 off = (hc_key_start(k) - r->track.start) <<
				  SECTOR_SHIFT;

			for (j++; j < r->first + r->nr; j++) {
				const struct hc_key *n = &wb->keys[j];

				if (hc_ptr_offset(n->ptr) != cend ||
				    hc_ptr_dev(n->ptr) != hc_ptr_dev(k->ptr))
					break;
				cend += n->size;
			}
			hc_wb_submit(wb, r, hc_wb_bio(wb, r, c->bdev,
						      REQ_OP_READ, cstart, off,
						      (cend - cstart) <<
						      SECTOR_SHIFT));
		}
	}
	blk_finish_plug(&plug);
	hc_wb_wait(wb);
}

/*
 * Is piece @k of run @r what its checksums say? Its whole chunks are read
 * again into a buffer of their own when the piece's ends are not on chunk
 * boundaries (and that copy, checked, replaces what the run read).
 * Return: 0, -EBADMSG (*@bad: the chunk), or -errno.
 */
static int hc_wb_check_piece(struct hc_wb_batch *wb, struct hc_wb_run *r,
			     const struct hc_key *k, u64 *bad)
{
	struct hc_cache_set *c = wb->b->set;
	u64 cstart = hc_ptr_offset(k->ptr);
	u64 first = round_down(cstart, HC_CSUM_CHUNK_SECTORS);
	u64 end = round_up(cstart + k->size, HC_CSUM_CHUNK_SECTORS);
	u32 off = (hc_key_start(k) - r->track.start) << SECTOR_SHIFT;
	u32 bytes = (end - first) << SECTOR_SHIFT, i;
	void *buf;
	int ret;

	if (first == cstart && end == cstart + k->size)
		return hc_csum_check_pages(c, first, wb->pages + r->page, off,
					   bytes, bad);
	buf = kvmalloc(bytes, GFP_NOIO);
	if (!buf)
		return -ENOMEM;
	ret = hc_meta_io(c, REQ_OP_READ, first, buf, bytes);
	if (!ret)
		ret = hc_csum_check_buf(c, first, buf, end - first, bad);
	for (i = 0; !ret && i < k->size << SECTOR_SHIFT; ) {
		u32 at = off + i;
		u32 len = min_t(u32, (k->size << SECTOR_SHIFT) - i,
				PAGE_SIZE - at % PAGE_SIZE);

		memcpy_to_page(wb->pages[r->page + at / PAGE_SIZE],
			       at % PAGE_SIZE,
			       buf + ((cstart - first) << SECTOR_SHIFT) + i,
			       len);
		i += len;
	}
	kvfree(buf);
	return ret;
}

/*
 * Step 1b, with data checksums: check what the runs read. A run with a
 * piece that does not match is not written: its data stays dirty, and
 * the bad chunk is reported.
 */
static void hc_wb_check(struct hc_wb_batch *wb)
{
	struct hc_backing *b = wb->b;
	struct hc_cache_set *c = b->set;
	u32 i, j;

	for (i = 0; i < wb->nr_runs; i++) {
		struct hc_wb_run *r = &wb->runs[i];

		for (j = r->first; j < r->first + r->nr && !r->status; j++) {
			const struct hc_key *k = &wb->keys[j];
			u64 bucket = hc_sector_to_bucket(&c->geom,
							 hc_ptr_offset(k->ptr));
			u64 bad = 0;
			int ret = hc_wb_check_piece(wb, r, k, &bad);

			/* The gen after the entries, as read.c does. */
			smp_rmb();
			if (ret == -EBADMSG &&
			    hc_ptr_stale(READ_ONCE(c->buckets[bucket].gen),
					 hc_ptr_gen(k->ptr))) {
				/* Reused since collected: step 2 skips it. */
				continue;
			}
			if (ret == -EBADMSG)
				hc_csum_error(c, bad, b, b->id,
					      hc_key_start(k) +
					      (bad > hc_ptr_offset(k->ptr) ?
					       bad - hc_ptr_offset(k->ptr) : 0),
					      true);
			if (ret) {
				r->csum_bad = true;
				r->status = ret == -ENOMEM ? BLK_STS_RESOURCE :
							     BLK_STS_IOERR;
			}
		}
	}
}

/*
 * Step 2 for run @r: is every piece still in the tree, mapped as
 * collected? If so, the run goes in the tree of I/O in flight before
 * meta_lock is let go, where every later write finds it: a write around
 * the cache (or writethrough) that starts after the check must wait for
 * the run, and one that started before it is in that tree already and
 * refuses the run (hc_track_writeback_begin()). Checked and registered
 * under two holds, a newer write could start, land and drop the key in
 * between, and the run would then write older data over it. Return:
 * whether the run may be written.
 */
static bool hc_wb_run_begin(struct hc_wb_batch *wb, struct hc_wb_run *r)
{
	struct hc_backing *b = wb->b;
	struct hc_cache_set *c = b->set;
	bool current_ = true;
	u32 i;

	down_read(&c->meta_lock);
	for (i = r->first; i < r->first + r->nr && current_; i++) {
		const struct hc_key *k = &wb->keys[i];
		u64 pos = hc_key_start(k), gap_end;
		struct hc_key cur;

		while (pos < k->end) {
			if (hc_btree_lookup(c, b->id, pos, k->end, &cur,
					    &gap_end, false) ||
			    !hc_key_same_mapping(&cur, k)) {
				current_ = false;
				break;
			}
			pos = cur.end;
		}
	}
	if (current_)
		current_ = hc_track_writeback_begin(b, &r->track);
	up_read(&c->meta_lock);
	return current_;
}

/*
 * Steps 2 to 4. Return: the runs written and flushed (each run's go says
 * whether it was).
 */
static u32 hc_wb_write(struct hc_wb_batch *wb)
{
	struct hc_backing *b = wb->b;
	u64 offset = b->sb.backing.data_offset;
	struct blk_plug plug;
	u32 i, written = 0;
	int ret;

	for (i = 0; i < wb->nr_runs; i++) {
		struct hc_wb_run *r = &wb->runs[i];

		r->go = !r->status && hc_wb_run_begin(wb, r);
		if (r->go)
			hc_debug_delay(HC_DELAY_WB_CHECKED);
	}
	blk_start_plug(&plug);
	for (i = 0; i < wb->nr_runs; i++) {
		struct hc_wb_run *r = &wb->runs[i];

		if (r->go)
			hc_wb_submit(wb, r, hc_wb_bio(wb, r, b->bdev,
						      REQ_OP_WRITE,
						      r->track.start + offset,
						      0, r->sectors <<
						      SECTOR_SHIFT));
	}
	blk_finish_plug(&plug);
	hc_wb_wait(wb);
	for (i = 0; i < wb->nr_runs; i++) {
		struct hc_wb_run *r = &wb->runs[i];

		if (!r->go)
			continue;
		hc_track_writeback_end(b, &r->track);
		atomic64_inc(&b->wb.backing_writes);
		if (r->status) {
			r->go = false;
			pr_err_ratelimited("%pg: writeback of sectors %llu-%llu failed (error %d); the data stays dirty in the cache\n",
					   b->bdev, r->track.start,
					   r->track.end - 1,
					   blk_status_to_errno(r->status));
			continue;
		}
		written++;
	}
	if (!written)
		return 0;
	ret = blkdev_issue_flush(b->bdev);
	if (ret) {
		pr_err_ratelimited("%pg: flush after writeback failed (error %d); the data stays dirty in the cache\n",
				   b->bdev, ret);
		for (i = 0; i < wb->nr_runs; i++)
			wb->runs[i].go = false;
		return 0;
	}
	return written;
}

struct hc_wb_clean {
	struct hc_cache_set	*c;
	const struct hc_key	*k;
	u64			done;
};

/* hc_btree_visit_range()'s callback for hc_wb_mark_clean(). */
static int hc_wb_clean_piece(void *priv, const struct hc_key *cur, u64 from,
			     u64 to)
{
	struct hc_wb_clean *x = priv;
	struct hc_key clean;
	int ret;

	if (!hc_key_same_mapping(cur, x->k))
		return 0;
	clean = *x->k;
	hc_key_cut_front(&clean, from);
	hc_key_cut_back(&clean, to);
	clean.flags &= ~HC_KEY_DIRTY;
	ret = hc_insert(x->c, &clean);
	if (!ret)
		x->done += clean.size;
	return ret;
}

/*
 * Step 5: mark @k clean where the tree still maps it as collected, piece
 * by piece of what the tree holds. Return: sectors marked, or -errno.
 */
static s64 hc_wb_mark_clean(struct hc_cache_set *c, const struct hc_key *k)
{
	struct hc_wb_clean x = { .c = c, .k = k };
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	ret = hc_btree_visit_range(c, k->bdev_id, hc_key_start(k), k->end,
				   hc_wb_clean_piece, &x);
	return ret ? ret : x.done;
}

/* Run one batch; return: 0, or -errno if it should be retried later. */
static int hc_wb_batch_run(struct hc_wb_batch *wb)
{
	struct hc_backing *b = wb->b;
	struct hc_cache_set *c = b->set;
	u64 sectors = 0, keys = 0;
	u32 i, j;
	s64 ret;

	ret = hc_wb_plan(wb);
	if (ret)
		goto out;
	hc_wb_read(wb);
	if (hc_csum_on(c))
		hc_wb_check(wb);
	for (i = 0; i < wb->nr_runs; i++)
		if (wb->runs[i].status && !wb->runs[i].csum_bad)
			hc_cache_set_error(c,
					   "writeback of %pg: reading dirty sectors %llu-%llu failed: error %d",
					   b->bdev, wb->runs[i].track.start,
					   wb->runs[i].track.end - 1,
					   blk_status_to_errno(wb->runs[i].status));
	if (!hc_wb_write(wb)) {
		ret = -EIO;
		for (i = 0; i < wb->nr_runs; i++)
			if (!wb->runs[i].status)
				ret = 0;	/* only skipped: not an error */
		goto out;
	}
	hc_meta_lock_write(c);
	for (i = 0; i < wb->nr_runs && ret >= 0; i++) {
		struct hc_wb_run *r = &wb->runs[i];

		if (!r->go)
			continue;
		for (j = r->first; j < r->first + r->nr; j++) {
			ret = hc_wb_mark_clean(c, &wb->keys[j]);
			if (ret < 0)
				break;
			sectors += ret;
			keys++;
		}
	}
	hc_wb_copy_unpin_locked(wb);
	up_write(&c->meta_lock);
	atomic64_add(keys, &b->wb.keys_written);
	atomic64_add(sectors, &b->wb.sectors_written);
out:
	trace_hcache_writeback(b->bdev->bd_dev, keys, sectors,
			       ret < 0 ? (int)ret : 0);
	hc_wb_free_pages(wb);
	return ret < 0 ? ret : 0;
}

/* ---- Dirty to clean ------------------------------------------------------ */

/*
 * No dirty data is left: persist state clean. See the opening comment
 * for the race with writes going dirty.
 */
static void hc_wb_try_clean(struct hc_backing *b)
{
	struct hc_cache_set *c = b->set;
	int ret = 0;

	if (READ_ONCE(b->sb.backing.state) != HC_STATE_DIRTY)
		return;
	mutex_lock(&b->sb_lock);
	if (b->sb.backing.state != HC_STATE_DIRTY)
		goto out;
	WRITE_ONCE(b->sb.backing.state, HC_STATE_CLEAN);
	/* Pairs with hc_writeback_dirty_begin(). */
	smp_mb();
	hc_meta_lock_write(c);
	if (atomic_read(&b->wb.dirtying) || hc_dirty_sectors(c, b->id) ||
	    c->meta_failed) {
		ret = -EBUSY;
		up_write(&c->meta_lock);
	} else if (c->journal.nr) {
		ret = hc_journal_write_unlock(c);
	} else {
		up_write(&c->meta_lock);
	}
	if (!ret)
		ret = hc_backing_sb_write(b);
	if (ret) {
		WRITE_ONCE(b->sb.backing.state, HC_STATE_DIRTY);
		goto out;
	}
	pr_info("%pg: all dirty data written back: clean\n", b->bdev);
out:
	mutex_unlock(&b->sb_lock);
}

/*
 * The device's dirty sectors, and in *@going_dirty whether writeback-mode
 * writes are between hc_writeback_dirty_begin() and _end(): acknowledged
 * (or about to be) with their keys not yet in. The count is read first: a
 * write that has left it has its key in the tree (hc_writeback_dirty_end()).
 */
static u64 hc_wb_idle_dirty(struct hc_backing *b, bool *going_dirty)
{
	*going_dirty = atomic_read(&b->wb.dirtying) != 0;
	/* Pairs with hc_writeback_dirty_end(). */
	smp_rmb();
	return hc_writeback_dirty_sectors(b);
}

/*
 * The thread found no dirty data and no write going dirty after reading
 * @seq: every flush requested up to @seq is done.
 */
static void hc_wb_flush_done(struct hc_writeback *wb, u32 seq)
{
	spin_lock(&wb->lock);
	if ((s32)(seq - wb->flush_done) > 0)
		wb->flush_done = seq;
	spin_unlock(&wb->lock);
}

/**
 * hc_writeback_flush() - write back every dirty sector now (writeback_flush)
 * @b: the backing device
 * @start: true to start a flush, false to call off the pending one
 *
 * The thread then runs unpaced and undelayed, even with writeback_running
 * 0, until it finds no dirty sector and no write going dirty; writes
 * acknowledged before this call are then on the backing device.
 *
 * Return: 0; -ENOENT if @b is not attached, -EIO if its set failed or
 * its writeback thread could not start.
 */
int hc_writeback_flush(struct hc_backing *b, bool start)
{
	struct hc_writeback *wb = &b->wb;
	int ret;

	ret = hc_register_lock_listed(&b->list);
	if (ret)
		return ret;
	if (!b->set) {
		ret = -ENOENT;
	} else if (test_bit(HC_SET_FAILED, &b->set->flags) ||
		   READ_ONCE(b->set->meta_failed)) {
		ret = -EIO;
	} else if (!wb->thread) {
		pr_err("%pg: cannot flush: its writeback thread did not start\n",
		       b->bdev);
		ret = -EIO;
	} else {
		spin_lock(&wb->lock);
		if (start)
			wb->flush_seq++;
		else
			wb->flush_done = wb->flush_seq;
		spin_unlock(&wb->lock);
		hc_writeback_wake(b);
	}
	mutex_unlock(&hc_register_lock);
	return ret;
}

/**
 * hc_writeback_flush_pending() - a writeback_flush is not done yet
 * @b: the backing device
 *
 * Return: true from a request until the thread found the device clean
 * after it, or the flush was called off.
 */
bool hc_writeback_flush_pending(struct hc_backing *b)
{
	struct hc_writeback *wb = &b->wb;
	bool pending;

	spin_lock(&wb->lock);
	pending = wb->flush_seq != wb->flush_done;
	spin_unlock(&wb->lock);
	return pending;
}

/* ---- The thread ---------------------------------------------------------- */

static int hc_writeback_thread(void *arg)
{
	struct hc_backing *b = arg;
	struct hc_writeback *wb = &b->wb;
	struct hc_cache_set *c = b->set;
	struct hc_wb_batch *batch = wb->batch;
	unsigned long last_update = jiffies, retry = HC_WB_RETRY;
	struct hc_wb_pace pace = { 0 };
	bool was_clean = true, paused = false, paced, wrapped, urgent;
	bool going_dirty;
	u64 dirty, rate;
	u32 flush_seq;
	int ret;

	hc_wb_update_rate(b, 0, false);
	while (!kthread_should_stop()) {
		unsigned long period = READ_ONCE(wb->update_seconds) * HZ;

		/* A detach or a flush writes back at full speed, always. */
		spin_lock(&wb->lock);
		flush_seq = wb->flush_seq;
		urgent = flush_seq != wb->flush_done;
		spin_unlock(&wb->lock);
		urgent |= READ_ONCE(wb->detaching);
		/*
		 * Behind the mark pass behind I/O too: until it ends, no
		 * device reads clean, and a scan for dirty keys would read
		 * the whole tree at foreground priority, as the pass does.
		 */
		if (READ_ONCE(c->meta_failed) || READ_ONCE(c->mark_bg.running) ||
		    (!READ_ONCE(wb->running) && !urgent)) {
			/*
			 * A pause is no error to integrate, and what dirty
			 * data did meanwhile no slope: start afresh after.
			 */
			hc_wb_update_rate(b, 0, true);
			hc_wb_sleep(wb, period, false);
			last_update = jiffies;
			paused = true;
			continue;
		}
		if (paused) {
			spin_lock(&wb->lock);
			hc_wb_rate_resume(&wb->rate);
			spin_unlock(&wb->lock);
			hc_wb_update_rate(b, 0, false);
			paused = false;
		}
		if (time_after_eq(jiffies, last_update + period)) {
			hc_wb_update_rate(b, jiffies_to_msecs(jiffies -
							      last_update),
					  false);
			last_update = jiffies;
		}
		dirty = hc_wb_idle_dirty(b, &going_dirty);
		if (!dirty) {
			was_clean = true;
			if (!going_dirty) {
				hc_wb_try_clean(b);
				/*
				 * Not if the set failed meanwhile: a write
				 * whose insert failed left dirtying with a
				 * whiteout, not its key, and is on neither
				 * device. The flush stays pending until the
				 * device stops (which calls it off).
				 */
				if (!READ_ONCE(c->meta_failed) &&
				    !test_bit(HC_SET_FAILED, &c->flags))
					hc_wb_flush_done(wb, flush_seq);
			} else if (urgent) {
				/*
				 * Writes acknowledged, or about to be, whose
				 * keys are not in yet: a flush must write
				 * them back too. Look again shortly.
				 */
				hc_wb_sleep(wb, HC_WB_FLUSH_POLL, false);
				continue;
			}
			hc_wb_sleep(wb, period, false);
			continue;
		}
		if (was_clean && !urgent && dirty <= READ_ONCE(wb->target)) {
			/* New dirty data: let it gather (writeback_delay). */
			was_clean = false;
			if (hc_wb_sleep(wb, READ_ONCE(wb->delay) * HZ, true) ||
			    kthread_should_stop())
				continue;
		}
		was_clean = false;

		paced = !hc_writeback_idle(b) && !urgent;
		spin_lock(&wb->lock);
		rate = wb->rate.rate;
		spin_unlock(&wb->lock);
		if (paced) {
			u64 ns = hc_wb_pace(&pace, ktime_get_ns(), 0, rate);

			/*
			 * Wait out the last batch's time at the rate, but
			 * look again when the device may have turned idle.
			 */
			if (ns) {
				hc_wb_sleep(wb, min(nsecs_to_jiffies(ns),
						    hc_wb_until_idle(b)),
					    false);
				continue;
			}
			batch->budget = clamp_t(u64, rate / 4, 8,
						HC_WB_BATCH_SECTORS);
		} else {
			batch->budget = HC_WB_BATCH_SECTORS;
		}
		ret = hc_wb_fill(batch, &wrapped);
		if (!ret && batch->nr_keys)
			ret = hc_wb_batch_run(batch);
		hc_wb_copy_unpin(batch);
		if (ret) {
			hc_wb_sleep(wb, retry, false);
			retry = min(retry * 2, 32UL * HC_WB_RETRY);
			continue;
		}
		retry = HC_WB_RETRY;
		if (!batch->nr_keys) {
			/*
			 * Dirty data the scan could not take (stale keys of
			 * a failed set, or a cursor just wrapped): look
			 * again a little later.
			 */
			if (wrapped)
				hc_wb_sleep(wb, HZ / 10, false);
			continue;
		}
		if (paced)
			hc_wb_pace(&pace, ktime_get_ns(), batch->sectors, rate);
		cond_resched();
	}
	return 0;
}

/* ---- The module parameter ------------------------------------------------ */

/*
 * writeback_idle_seconds of a device when it registers: no foreground
 * request for this long, and writeback runs at full speed. Long enough
 * that a pause between bursts of writes (a database between checkpoints,
 * a benchmark between runs) does not write back the blocks the next burst
 * overwrites again; bcache waits about as long (six rate updates of 5 s).
 */
static unsigned int hc_wb_idle_seconds_default = 30;

static int hc_wb_idle_param_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret = kstrtouint(val, 10, &v);

	if (ret)
		return ret;
	if (v < 1 || v > HC_WB_IDLE_SECONDS_MAX)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

static const struct kernel_param_ops hc_wb_idle_param_ops = {
	.set	= hc_wb_idle_param_set,
	.get	= param_get_uint,
};
module_param_cb(writeback_idle_seconds, &hc_wb_idle_param_ops,
		&hc_wb_idle_seconds_default, 0644);
MODULE_PARM_DESC(writeback_idle_seconds,
		 "writeback_idle_seconds of each backing device that registers after (1 to 3600, default 30)");

/* ---- Detach ------------------------------------------------------------- */

/* Waits for writeback to empty the cache, then detaches (a detach_store). */
static void hc_writeback_detach_work(struct work_struct *work)
{
	struct hc_backing *b = container_of(work, struct hc_backing,
					    wb.detach_work);

	for (;;) {
		mutex_lock(&hc_register_lock);
		if (!b->set || !READ_ONCE(b->wb.detaching) ||
		    READ_ONCE(b->set->meta_failed)) {
			mutex_unlock(&hc_register_lock);
			break;
		}
		if (READ_ONCE(b->sb.backing.state) != HC_STATE_DIRTY &&
		    !hc_writeback_dirty_sectors(b) && !hc_backing_detach(b)) {
			mutex_unlock(&hc_register_lock);
			break;
		}
		mutex_unlock(&hc_register_lock);
		msleep_interruptible(100);
	}
	WRITE_ONCE(b->wb.detaching, false);
	hc_backing_put(b);
}

/**
 * hc_writeback_detach() - detach, once writeback has emptied the cache
 * @b: an attached backing device; hc_register_lock held
 *
 * A device with dirty data is written back at full speed, taking no new
 * dirty data (writeback-mode writes go writethrough), and detached by a
 * work item once clean; one without detaches now.
 *
 * Return: 0 (detached, or detaching), -EBUSY if a detach already waits,
 * or -errno from hc_backing_detach().
 */
int hc_writeback_detach(struct hc_backing *b)
{
	lockdep_assert_held(&hc_register_lock);
	if (!b->set)
		return -ENOENT;
	if (READ_ONCE(b->wb.detaching))
		return -EBUSY;
	if (b->sb.backing.state != HC_STATE_DIRTY &&
	    !hc_writeback_dirty_sectors(b))
		return hc_backing_detach(b);
	if (!b->wb.thread || READ_ONCE(b->set->meta_failed)) {
		pr_err("%pg: cannot detach: the cache holds dirty data for it and cannot write it back\n",
		       b->bdev);
		return -EBUSY;
	}
	pr_info("%pg: detaching once %llu dirty sectors are written back\n",
		b->bdev, hc_writeback_dirty_sectors(b));
	WRITE_ONCE(b->wb.detaching, true);
	hc_writeback_wake(b);
	kobject_get(&b->kobj);
	if (!queue_work(hc_wq, &b->wb.detach_work))
		hc_backing_put(b);
	return 0;
}

/**
 * hc_writeback_init() - defaults, for a new backing device
 * @b: the backing device
 */
void hc_writeback_init(struct hc_backing *b)
{
	struct hc_writeback *wb = &b->wb;

	init_waitqueue_head(&wb->wait);
	init_waitqueue_head(&wb->track_wait);
	spin_lock_init(&wb->lock);
	atomic_set(&wb->dirtying, 0);
	wb->running = true;
	wb->percent = HC_WRITEBACK_PERCENT_DEFAULT;
	wb->delay = 30;
	wb->idle_seconds = READ_ONCE(hc_wb_idle_seconds_default);
	wb->update_seconds = HC_WB_UPDATE_SECONDS_DEFAULT;
	wb->params.p_term_inverse = HC_WB_P_TERM_INVERSE_DEFAULT;
	wb->params.i_term_inverse = HC_WB_I_TERM_INVERSE_DEFAULT;
	wb->params.d_term = HC_WB_D_TERM_DEFAULT;
	wb->params.minimum = HC_WB_RATE_MINIMUM_DEFAULT;
	wb->params.maximum = HC_WB_RATE_MAX;
	hc_wb_rate_init(&wb->rate, &wb->params);
	INIT_WORK(&wb->detach_work, hc_writeback_detach_work);
}

/**
 * hc_writeback_start() - start writing back a device that just attached
 * @b: the backing device; hc_register_lock held, @b->set set
 *
 * Return: 0 or -errno (logged); the device then stays attached, its
 * dirty data kept, but nothing is written back.
 */
int hc_writeback_start(struct hc_backing *b)
{
	struct hc_writeback *wb = &b->wb;
	struct task_struct *t;

	lockdep_assert_held(&hc_register_lock);
	if (wb->thread)
		return 0;
	wb->batch = kvzalloc(sizeof(*wb->batch), GFP_KERNEL);
	if (!wb->batch)
		goto fail;
	wb->batch->b = b;
	atomic_set(&wb->batch->pending, 1);
	init_completion(&wb->batch->done);
	wb->cursor = 0;
	wb->last_io = jiffies;
	t = kthread_run(hc_writeback_thread, b, "hcache_wb/%pg", b->bdev);
	if (IS_ERR(t)) {
		kvfree(wb->batch);
		wb->batch = NULL;
		goto fail;
	}
	wb->thread = t;
	return 0;
fail:
	pr_err("%pg: cannot start writeback: out of memory; dirty data stays in the cache\n",
	       b->bdev);
	return -ENOMEM;
}

/**
 * hc_writeback_stop() - stop writing back (detach, stop)
 * @b: the backing device; hc_register_lock held
 *
 * Waits for the batch in flight. Dirty data stays in the cache.
 */
void hc_writeback_stop(struct hc_backing *b)
{
	struct hc_writeback *wb = &b->wb;

	lockdep_assert_held(&hc_register_lock);
	if (!wb->thread)
		return;
	kthread_stop(wb->thread);
	wb->thread = NULL;
	kvfree(wb->batch);
	wb->batch = NULL;
	/* A flush pending now is called off; none carries over to a new set. */
	spin_lock(&wb->lock);
	wb->flush_done = wb->flush_seq;
	spin_unlock(&wb->lock);
}
