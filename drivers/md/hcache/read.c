// SPDX-License-Identifier: GPL-2.0
/*
 * read.c: reads of an attached backing device: the lookup that cuts a
 * request into cached and uncached fragments, their reads, a read from a
 * reused bucket looked up again, and a miss read into the promotion's
 * own pages and copied to the reader.
 *
 * Under meta_lock held for reading, the request's range is cut into
 * fragments, each wholly cached (a key) or wholly not (a gap), and each
 * fragment is a clone of the bio, trimmed, sent to the cache or the
 * backing device. A cache fragment checks its bucket's gen when it
 * completes: if the bucket was reused meanwhile, the data read may be
 * another extent's, and the fragment is looked up again. A gap is read
 * from the backing device and, unless bypassed or refused by the
 * admission policy, promoted (promote.c): read into pages of our own,
 * never the reader's (a reader may change its O_DIRECT buffer while the
 * read is in flight, and what the cache stores must be what was on
 * disk), copied to the reader's pages by a worker, and the bio completed.
 * A read over a write acked before its key went in inserts the keys of
 * the writes done first (commit.c).
 */

#include "hcache.h"
#include "request.h"
#include "debug.h"

#include <linux/bio.h>

/*
 * Was the bucket @ptr points into reused since? Read without meta_lock
 * by completing reads; the tree keeps stale keys until overwritten.
 */
static bool hc_ptr_stale_now(struct hc_cache_set *c, u64 ptr)
{
	u64 bucket = hc_sector_to_bucket(&c->geom, hc_ptr_offset(ptr));

	return hc_ptr_stale(READ_ONCE(c->buckets[bucket].gen),
			    hc_ptr_gen(ptr));
}

static u64 hc_read_range(struct hc_request *req, u64 start, u64 end,
			 bool backing_only, bool in_submit);

/* A fragment read from a bucket that was reused, or failed: read it again. */
static void hc_frag_retry_work(struct work_struct *work)
{
	struct hc_frag *f = container_of(work, struct hc_frag, work);
	struct hc_request *req = f->req;
	/*
	 * A failed read of clean data comes from the backing device. A read
	 * of a bucket reused since (failed or not) looks the range up
	 * again: moving GC may have copied dirty data elsewhere, and the
	 * backing device does not hold it. Gens only move forward, so what
	 * hc_read_endio() found stale is stale here too.
	 */
	bool failed = f->bio.bi_status != BLK_STS_OK &&
		      !hc_ptr_stale_now(req->c, f->ptr);

	hc_read_range(req, f->start, f->start + f->sectors, failed, false);
	bio_put(&f->bio);
	hc_request_put(req);
}

static void hc_read_endio(struct bio *bio)
{
	struct hc_frag *f = container_of(bio, struct hc_frag, bio);
	struct hc_request *req = f->req;
	struct hc_cache_set *c = req->c;

	if (f->ptr) {
		bool stale = hc_ptr_stale_now(c, f->ptr);

		if (bio->bi_status && !stale)
			hc_cache_set_error(c, "read at cache sector %llu failed: error %d",
					   hc_ptr_offset(f->ptr),
					   blk_status_to_errno(bio->bi_status));
		if (stale || (bio->bi_status && !f->dirty)) {
			INIT_WORK(&f->work, hc_frag_retry_work);
			queue_work(hc_io_wq, &f->work);
			return;
		}
	}
	hc_request_set_error(req, bio->bi_status);
	bio_put(bio);
	hc_request_put(req);
}

/*
 * A promoted miss was read into our pages: copy it to the reader's, in a
 * worker rather than in bio completion (up to a bucket of it), then let
 * the promotion thread write our copy to the cache.
 */
static void hc_promote_deliver_work(struct work_struct *work)
{
	struct hc_frag *f = container_of(work, struct hc_frag, work);
	struct hc_request *req = f->req;
	struct hc_promote *p = f->promote;
	struct hc_cache_set *c = req->c;
	struct bvec_iter src = { .bi_size = p->key.size << SECTOR_SHIFT };

	bio_copy_data_iter(&f->bio, &f->iter, p->bio, &src);
	spin_lock_irq(&c->promote_lock);
	list_add_tail(&p->done, &c->promote_todo);
	spin_unlock_irq(&c->promote_lock);
	wake_up(&c->promote_wait);
	bio_put(&f->bio);
	hc_request_put(req);
}

static void hc_promote_read_endio(struct bio *bio)
{
	struct hc_frag *f = bio->bi_private;
	struct hc_request *req = f->req;

	if (bio->bi_status) {
		hc_request_set_error(req, bio->bi_status);
		hc_promote_free(f->promote);
		bio_put(&f->bio);
		hc_request_put(req);
		return;
	}
	INIT_WORK(&f->work, hc_promote_deliver_work);
	queue_work(hc_io_wq, &f->work);
}

/*
 * A miss read for promotion: into the promotion's pages, not the reader's
 * (see struct hc_promote), the clone @f kept for where the data goes.
 */
static void hc_promote_read_submit(struct hc_frag *f)
{
	struct hc_promote *p = f->promote;

	atomic_inc(&f->req->remaining);
	f->iter = f->bio.bi_iter;
	/* Charged to the reader's cgroup, not to whoever runs this. */
	bio_clone_blkg_association(p->bio, &f->bio);
	p->bio->bi_iter.bi_sector = f->bio.bi_iter.bi_sector;
	p->bio->bi_opf |= f->bio.bi_opf & (REQ_SYNC | REQ_META | REQ_PRIO);
	p->bio->bi_private = f;
	p->bio->bi_end_io = hc_promote_read_endio;
	submit_bio_noacct(p->bio);
}

static void hc_frag_submit(struct hc_frag *f, bio_end_io_t *endio)
{
	struct hc_request *req = f->req;

	atomic_inc(&req->remaining);
	f->bio.bi_end_io = endio;
	f->iter = f->bio.bi_iter;
	submit_bio_noacct(&f->bio);
}

/* Whether the backing device's admission policy promotes a missed range. */
static bool hc_read_admit(struct hc_request *req,
			  const struct hc_admit_policy *admit,
			  u64 start, u32 n)
{
	struct hc_admit_in in = {
		.ghost = &req->c->admit_ghost,
		.bdev_id = req->id,
		.sector = start,
		.sectors = n,
		.free_percent = READ_ONCE(req->c->free_percent),
	};

	return admit->admit(&in);
}

/*
 * Sectors [start, end) of a read request, fragment by fragment. In the
 * submitter's context (@in_submit), which may not wait for bios it
 * submits, a node that is not cached stops it: the return value is where
 * it stopped, for a worker to go on from. Otherwise it returns @end.
 */
static u64 hc_read_range(struct hc_request *req, u64 start, u64 end,
			 bool backing_only, bool in_submit)
{
	struct hc_backing *b = req->b;
	struct hc_cache_set *c = req->c;
	const struct hc_admit_policy *admit =
		&hc_admit_policies[READ_ONCE(b->admit)];
	unsigned long nomem_deadline = 0;
	bool promote, tracked = false;
	struct hc_frag *f;
	struct hc_key k;
	u64 gap_end;
	u32 n;
	int ret;

	while (start < end) {
		if (backing_only) {
			ret = -ENOENT;
			gap_end = end;
		} else {
			down_read(&c->meta_lock);
			ret = hc_btree_lookup(c, req->id, start, end, &k,
					      &gap_end, in_submit);
			if (!ret && hc_ptr_stale_now(c, k.ptr)) {
				/* Evicted: a miss, which replaces the key. */
				ret = -ENOENT;
				gap_end = min(k.end, end);
			} else if (!ret) {
				hc_bucket_touch(c, hc_ptr_offset(k.ptr));
			}
			up_read(&c->meta_lock);
		}
		if (ret == -EAGAIN && in_submit)
			return start;
		/* No memory for the node to read: not the cache's fault. */
		if (ret == -ENOMEM && hc_nomem_retry(&nomem_deadline))
			continue;
		if (ret == -ENOMEM) {
			hc_request_set_error(req, BLK_STS_RESOURCE);
			return end;
		}
		if (ret && ret != -ENOENT) {
			hc_cache_set_error(c, "lookup of %u:%llu failed: error %d",
					   req->id, start, ret);
			hc_request_set_error(req, BLK_STS_IOERR);
			return end;
		}
		if (!ret) {
			n = min(k.end, end) - start;
			f = hc_frag_alloc(req, c->bdev, start, n);
			f->ptr = k.ptr;
			f->dirty = k.flags & HC_KEY_DIRTY;
			f->bio.bi_iter.bi_sector = hc_ptr_offset(k.ptr) +
						   start - hc_key_start(&k);
			f->bio.bi_opf &= ~(REQ_PREFLUSH | REQ_FUA);
		} else {
			n = gap_end - start;
			promote = req->reason == HC_BYPASS_NONE && !backing_only;
			/*
			 * This pass's first miss that may be promoted puts the
			 * request in the tree (if no other pass over it did),
			 * so that a write over it from now on collides it, and
			 * looks the range up again: a write that ended before
			 * the request was in the tree may have put its key
			 * there after this lookup.
			 */
			if (promote && !tracked) {
				hc_debug_delay(HC_DELAY_READ_TRACK);
				tracked = true;
				if (hc_track_read_join(b, &req->track)) {
					if (in_submit)
						return start;
					hc_write_drain(c);
				}
				continue;
			}
			if (promote)
				n = min(n, c->geom.bucket_sectors);
			if (promote && !hc_read_admit(req, admit, start, n)) {
				req->reason = HC_BYPASS_POLICY;
				promote = false;
			}
			req->missed = true;
			f = hc_frag_alloc(req, b->bdev, start, n);
			f->bio.bi_iter.bi_sector = start + b->data_offset;
			if (promote)
				f->promote = hc_promote_alloc(req, start, n);
		}
		if (f->promote)
			hc_promote_read_submit(f);
		else
			hc_frag_submit(f, hc_read_endio);
		start += n;
	}
	return end;
}

/*
 * A read that met a node not cached in submit_bio(), or an acked write
 * whose key may not be in yet: go on from there.
 */
static void hc_read_resume_work(struct work_struct *work)
{
	struct hc_request *req = container_of(work, struct hc_request, work);

	if (hc_track_acked(req->b, &req->track))
		hc_write_drain(req->c);
	hc_read_range(req, req->resume, req->track.end, false, false);
	hc_request_put(req);
}

/*
 * Reads are run in the submitter's context: a lookup needs no I/O when
 * the nodes it visits are cached, as they nearly always are, and the
 * clones it submits are dispatched when submit_bio() returns. That saves
 * a worker's wake-up per read, which is most of what a miss costs us.
 * A read goes in the tree of I/O in flight only at its first miss
 * (hc_read_range()): what a hit reads is never inserted, so no write
 * need collide it, and hits pay no track_lock but to look for an acked
 * write, and that only while there is one.
 */
void hc_read(struct hc_request *req, bool in_submit)
{
	struct hc_backing *b = req->b;
	bool acked = hc_track_acked(b, &req->track);

	/*
	 * A write over the range was acked before its key went in: insert
	 * it first (a worker, as that waits), or the lookup would miss data
	 * its submitter was told is written.
	 */
	if (acked && !in_submit)
		hc_write_drain(req->c);
	req->resume = req->track.start;
	if (!acked || !in_submit)
		req->resume = hc_read_range(req, req->track.start,
					    req->track.end, false, in_submit);
	if (req->resume < req->track.end) {
		INIT_WORK(&req->work, hc_read_resume_work);
		queue_work(hc_io_wq, &req->work);
		return;
	}
	hc_request_put(req);
}
