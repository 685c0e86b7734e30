// SPDX-License-Identifier: GPL-2.0
/*
 * promote.c: a read miss on its way into the cache (struct hc_promote):
 * its pages, its cache write and its key, written and inserted in batches
 * by the set's promote thread once the reader has its data.
 *
 * read.c reads the miss into the promotion's own pages and completes the
 * reader's bio from them; the promotion then waits on the set's
 * promote_todo. The thread takes cache space for it, writes it, and once
 * written (promote_done) inserts its clean key, a batch per hold of
 * meta_lock, unless a write over its range collided it meanwhile
 * (track.c): that write's data is newer, and the promotion is dropped.
 * Short memory or a cache without room only cost the promotion; a failed
 * cache write costs it too, and counts as the cache device's error.
 */

#include "hcache.h"
#include "request.h"
#include "debug.h"

#include <linux/bio.h>
#include <linux/kthread.h>

#include "stats.h"
#include "trace.h"

/* Promotions written or inserted per pass of their work items. */
#define HC_PROMOTE_BATCH	32

void hc_promote_free(struct hc_promote *p)
{
	struct hc_backing *b = p->b;

	if (hc_track_on(&p->track))
		hc_track_end(b, &p->track);
	if (p->bio)
		hc_pages_bio_free(p->bio);
	kfree(p);
	hc_io_put(b);
}

/*
 * Pages for a miss of @sectors, and with data checksums for the rest of
 * its last chunk, which is written as zeroes; NULL when memory is short,
 * which only costs the promotion.
 */
struct hc_promote *hc_promote_alloc(struct hc_request *req, u64 start,
				    u32 sectors)
{
	const gfp_t gfp = GFP_NOIO | __GFP_NORETRY | __GFP_NOWARN;
	u32 padded = round_up(sectors, hc_data_align(req->c));
	struct hc_promote *p;
	struct bio *bio;

	p = kzalloc(sizeof(*p), gfp);
	if (!p)
		return NULL;
	bio = hc_pages_bio(req->b->bdev, padded << SECTOR_SHIFT, REQ_OP_READ,
			   gfp);
	if (!bio) {
		kfree(p);
		return NULL;
	}
	/* The miss alone is read; the pages past it are for the write. */
	bio->bi_iter.bi_size = sectors << SECTOR_SHIFT;
	p->b = req->b;
	p->c = req->c;
	p->bio = bio;
	p->key = (struct hc_key){
		.bdev_id = req->id,
		.end = start + sectors,
		.size = sectors,
		.nr_ptrs = 1,
	};
	hc_track_init(&p->track);
	p->track.start = start;
	p->track.end = start + sectors;
	percpu_ref_get(&req->b->io_ref);
	hc_debug_delay(HC_DELAY_PROMOTE_TRACK);
	/* Collided already if a write raced the request since it started. */
	hc_track_add(req->b, &p->track, false, &req->track);
	return p;
}

static void hc_promote_collided(struct hc_promote *p)
{
	hc_count(p->b, p->c, HC_STAT_MISS_COLLISIONS, 1);
}

/*
 * Insert the keys of promotions written, a few per meta_lock: lookups
 * wait while it is held. A promotion collided by a write is dropped here,
 * under meta_lock, where no write can slip in between the check and the
 * insert.
 */
static void hc_promote_insert_pass(struct hc_cache_set *c)
{
	struct hc_promote *p, *tmp;
	unsigned int n;
	bool inserted;
	LIST_HEAD(done);

	spin_lock_irq(&c->promote_lock);
	list_splice_init(&c->promote_done, &done);
	spin_unlock_irq(&c->promote_lock);

	while (!list_empty(&done)) {
		n = 0;
		hc_meta_lock_write(c);
		list_for_each_entry_safe(p, tmp, &done, done) {
			if (n++ == HC_PROMOTE_BATCH)
				break;
			inserted = false;
			if (hc_track_end(p->b, &p->track))
				hc_promote_collided(p);
			else if (!p->bio->bi_status && !c->meta_failed)
				inserted = !hc_insert_optional(c, &p->key);
			trace_hcache_promote(disk_devt(p->b->disk),
					     hc_key_start(&p->key), p->key.size,
					     inserted);
			hc_bucket_unpin(c, hc_ptr_offset(p->key.ptr));
			list_del(&p->done);
			hc_promote_free(p);
		}
		up_write(&c->meta_lock);
		cond_resched();
	}
}

static void hc_promote_write_endio(struct bio *bio)
{
	struct hc_promote *p = bio->bi_private;
	struct hc_cache_set *c = p->c;
	unsigned long flags;

	if (bio->bi_status)
		hc_cache_set_error(c, "promotion write at cache sector %llu failed: error %d",
				   hc_ptr_offset(p->key.ptr),
				   blk_status_to_errno(bio->bi_status));
	else
		atomic64_inc(&c->data_written);
	spin_lock_irqsave(&c->promote_lock, flags);
	list_add_tail(&p->done, &c->promote_done);
	spin_unlock_irqrestore(&c->promote_lock, flags);
	wake_up(&c->promote_wait);
}

/*
 * Point the promotion's bio, done with, at @bdev for @opf again, over the
 * same pages, all of them: bio_reset() keeps the vector table but forgets
 * its length.
 */
static void hc_promote_bio_reset(struct hc_promote *p,
				 struct block_device *bdev, blk_opf_t opf)
{
	struct bio *bio = p->bio;
	unsigned short i, n = bio->bi_vcnt;
	struct bio_vec *bv = bio->bi_io_vec;

	bio_reset(bio, bdev, opf);
	for (i = 0; i < n; i++)
		__bio_add_page(bio, bv[i].bv_page, bv[i].bv_len,
			       bv[i].bv_offset);
}

/* A miss's data is in our pages: find it room in the cache and write it. */
static void hc_promote_write(struct hc_promote *p)
{
	struct hc_cache_set *c = p->c;
	u32 padded = round_up(p->key.size, hc_data_align(c));
	u64 offset;
	u32 got;
	u8 gen;

	if (hc_track_collided(p->b, &p->track)) {
		hc_promote_collided(p);
		hc_promote_free(p);
		return;
	}
	if (hc_cache_space(c, padded, true, HC_OPEN_ANY, &gen, &offset,
			   &got)) {
		hc_promote_free(p);	/* No room: the data stays uncached. */
		return;
	}
	p->key.ptr = hc_ptr_make(offset, 0, gen);
	hc_promote_bio_reset(p, c->bdev, REQ_OP_WRITE);
	/* What is written past the miss, to the end of its space: zeroes. */
	if (padded != p->key.size)
		hc_bio_zero_from(p->bio, p->key.size << SECTOR_SHIFT);
	if (hc_csum_on(c))
		hc_csum_set_bio(c, offset, p->bio);
	p->bio->bi_iter.bi_sector = offset;
	p->bio->bi_private = p;
	p->bio->bi_end_io = hc_promote_write_endio;
	submit_bio_noacct(p->bio);
}

/* Write the misses read so far, under one plug. */
static void hc_promote_write_pass(struct hc_cache_set *c)
{
	struct hc_promote *p, *tmp;
	struct blk_plug plug;
	LIST_HEAD(todo);

	spin_lock_irq(&c->promote_lock);
	list_splice_init(&c->promote_todo, &todo);
	spin_unlock_irq(&c->promote_lock);
	blk_start_plug(&plug);
	list_for_each_entry_safe(p, tmp, &todo, done) {
		list_del(&p->done);
		hc_promote_write(p);
	}
	blk_finish_plug(&plug);
}

static bool hc_promote_pending(struct hc_cache_set *c)
{
	bool pending;

	spin_lock_irq(&c->promote_lock);
	pending = !list_empty(&c->promote_todo) ||
		  !list_empty(&c->promote_done);
	spin_unlock_irq(&c->promote_lock);
	return pending;
}

/**
 * hc_promote_thread() - writes and inserts a cache set's promotions
 * @arg: the cache set
 *
 * Promotions are work nobody waits for: this thread runs them at the
 * lowest priority, in passes over every one that is ready, so that they
 * take the CPU time reads and writes leave over rather than delay them.
 * Stopped (kthread_stop()) once no backing device is attached; it finishes
 * what is queued first.
 *
 * Return: 0.
 */
int hc_promote_thread(void *arg)
{
	struct hc_cache_set *c = arg;

	set_user_nice(current, MAX_NICE);
	for (;;) {
		wait_event_interruptible(c->promote_wait,
					 kthread_should_stop() ||
					 hc_promote_pending(c));
		if (kthread_should_stop() && !hc_promote_pending(c))
			return 0;
		hc_promote_write_pass(c);
		hc_promote_insert_pass(c);
	}
}
