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
#include <linux/sizes.h>

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

/* Checked in bio completion up to this size; larger reads in a worker. */
#define HC_CSUM_INLINE_SECTORS	64U

struct hc_bad_drop {
	struct hc_cache_set	*c;
	struct hc_key		bad;	/* the bad fragment, as a clean key */
};

/* hc_btree_visit_range()'s callback: whiteouts over the bad mapping. */
static int hc_bad_drop_piece(void *priv, const struct hc_key *k, u64 from,
			     u64 to)
{
	struct hc_bad_drop *x = priv;
	struct hc_key w = {
		.bdev_id = k->bdev_id,
		.end = to,
		.size = to - from,
	};

	if (!hc_key_same_mapping(k, &x->bad))
		return 0;
	return hc_insert(x->c, &w);
}

/*
 * Clean data that failed its checksum leaves the cache: whiteouts over
 * what the tree still maps to its chunks, the fragment's and the rest of
 * the chunks at its ends, and to nothing else, as a write may have put
 * newer data over part of the range meanwhile.
 */
static void hc_read_drop_bad(struct hc_frag *f)
{
	struct hc_request *req = f->req;
	u64 first = round_down(f->iter.bi_sector, HC_CSUM_CHUNK_SECTORS);
	u64 end = round_up(f->iter.bi_sector + f->sectors,
			   HC_CSUM_CHUNK_SECTORS);
	u64 head = f->iter.bi_sector - first;
	struct hc_bad_drop x = {
		.c = req->c,
		.bad = {
			.bdev_id = req->id,
			.end = f->start + f->sectors,
			.size = f->sectors,
			.nr_ptrs = 1,
			.ptr = hc_ptr_make(f->iter.bi_sector,
					   hc_ptr_dev(f->ptr),
					   hc_ptr_gen(f->ptr)),
		},
	};
	unsigned long nomem_deadline = 0;
	int ret;

	do {
		hc_meta_lock_write(x.c);
		ret = x.c->meta_failed ? 0 :
		      hc_btree_visit_range(x.c, req->id,
					   f->start > head ? f->start - head : 0,
					   f->start + f->sectors +
					   (end - f->iter.bi_sector - f->sectors),
					   hc_bad_drop_piece, &x);
		up_write(&x.c->meta_lock);
	} while (ret == -ENOMEM && hc_nomem_retry(&nomem_deadline));
	if (ret)
		hc_cache_set_error(x.c, "cannot drop the bad data of %u:%llu: error %d",
				   req->id, f->start, ret);
}

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
	 * hc_read_done() found stale is stale here too.
	 */
	bool failed = f->bio.bi_status != BLK_STS_OK &&
		      !hc_ptr_stale_now(req->c, f->ptr);

	if (failed && f->csum_bad)
		hc_read_drop_bad(f);
	hc_read_range(req, f->start, f->start + f->sectors, failed, false);
	hc_frag_put(f);
	hc_request_put(req);
}

static void hc_frag_bounce_submit(struct hc_frag *f);

static void hc_frag_bounce_work(struct work_struct *work)
{
	hc_frag_bounce_submit(container_of(work, struct hc_frag, work));
}

/*
 * A cache fragment's read ended; @bad: it did not match its checksums,
 * from cache sector @bad_sector on. Any context.
 */
static void hc_read_done(struct hc_frag *f, bool bad, u64 bad_sector)
{
	struct hc_request *req = f->req;
	struct hc_cache_set *c = req->c;
	blk_status_t status = f->bio.bi_status;
	bool stale;

	/* After the check: the entries read may be a reused bucket's. */
	smp_rmb();
	stale = hc_ptr_stale_now(c, f->ptr);
	if (bad && !stale && !f->bounce) {
		/*
		 * Read into the reader's pages, which it may have written
		 * to meanwhile: read again into our own before calling the
		 * data bad.
		 */
		INIT_WORK(&f->work, hc_frag_bounce_work);
		queue_work(hc_io_wq, &f->work);
		return;
	}
	if (bad && !stale) {
		hc_csum_error(c, bad_sector, req->b, req->id,
			      f->start + (bad_sector > f->iter.bi_sector ?
					  bad_sector - f->iter.bi_sector : 0),
			      f->dirty);
		f->csum_bad = true;
		status = BLK_STS_IOERR;
		f->bio.bi_status = status;
	} else if (status && !stale && status != BLK_STS_RESOURCE) {
		/* Not for want of memory for a bounce: not the device's. */
		hc_cache_set_error(c, "read at cache sector %llu failed: error %d",
				   f->iter.bi_sector,
				   blk_status_to_errno(status));
	}
	if (stale || (status && !f->dirty)) {
		INIT_WORK(&f->work, hc_frag_retry_work);
		queue_work(hc_io_wq, &f->work);
		return;
	}
	hc_request_set_error(req, status);
	hc_frag_put(f);
	hc_request_put(req);
}

/* Check a large fragment read into the reader's pages, in a worker. */
static void hc_read_check_work(struct work_struct *work)
{
	struct hc_frag *f = container_of(work, struct hc_frag, work);
	u64 bad_sector = 0;
	bool bad;

	bad = hc_csum_check_bio(f->req->c, f->iter.bi_sector, &f->bio,
				f->iter, &bad_sector);
	hc_read_done(f, bad, bad_sector);
}

static void hc_read_endio(struct bio *bio)
{
	struct hc_frag *f = container_of(bio, struct hc_frag, bio);
	struct hc_request *req = f->req;
	struct hc_cache_set *c = req->c;
	u64 bad_sector = 0;
	bool bad = false;

	if (!f->ptr) {
		hc_request_set_error(req, bio->bi_status);
		hc_frag_put(f);
		hc_request_put(req);
		return;
	}
	if (!bio->bi_status && hc_csum_on(c)) {
		if (f->sectors > HC_CSUM_INLINE_SECTORS) {
			INIT_WORK(&f->work, hc_read_check_work);
			queue_work(hc_io_wq, &f->work);
			return;
		}
		bad = hc_csum_check_bio(c, f->iter.bi_sector, bio, f->iter,
					&bad_sector);
	}
	hc_read_done(f, bad, bad_sector);
}

/* The first and the end sector of a fragment's whole chunks. */
static u64 hc_frag_chunks(const struct hc_frag *f, u64 *end)
{
	*end = round_up(f->iter.bi_sector + f->sectors, HC_CSUM_CHUNK_SECTORS);
	return round_down(f->iter.bi_sector, HC_CSUM_CHUNK_SECTORS);
}

/*
 * A bounce read is in: check its chunks, and copy the fragment's part of
 * them to the reader. In a worker.
 */
static void hc_frag_bounce_done_work(struct work_struct *work)
{
	struct hc_frag *f = container_of(work, struct hc_frag, work);
	struct hc_cache_set *c = f->req->c;
	struct bio *bounce = f->bounce;
	struct bvec_iter dst = f->iter, src = { 0 };
	u64 end, first = hc_frag_chunks(f, &end);
	u64 bad_sector = 0;
	bool bad = false;

	/* Its bi_iter is spent: over all of its pages again. */
	src.bi_size = (end - first) << SECTOR_SHIFT;
	f->bio.bi_status = bounce->bi_status;
	if (!bounce->bi_status) {
		bad = hc_csum_check_bio(c, first, bounce, src, &bad_sector);
		if (!bad) {
			bio_advance_iter(bounce, &src,
					 (f->iter.bi_sector - first) <<
					 SECTOR_SHIFT);
			src.bi_size = f->sectors << SECTOR_SHIFT;
			bio_copy_data_iter(&f->bio, &dst, bounce, &src);
		}
	}
	hc_read_done(f, bad, bad_sector);
}

/*
 * @f->work may still be on its way out of hc_frag_bounce_work(), which
 * touches nothing of @f after its submit: reusing it is safe.
 */
static void hc_frag_bounce_endio(struct bio *bio)
{
	struct hc_frag *f = bio->bi_private;

	INIT_WORK(&f->work, hc_frag_bounce_done_work);
	queue_work(hc_io_wq, &f->work);
}

/*
 * Read a cache fragment's whole chunks into pages of our own, to check
 * them: its ends are not on chunk boundaries, or its read into the
 * reader's pages did not match. @f->iter says where the data goes, and
 * the fragment is counted in the request already. May sleep (GFP_NOIO).
 */
static void hc_frag_bounce_submit(struct hc_frag *f)
{
	struct hc_cache_set *c = f->req->c;
	u64 end, first = hc_frag_chunks(f, &end);
	struct bio *bounce;

	if (f->bounce)
		hc_pages_bio_free(f->bounce);
	bounce = hc_pages_bio(c->bdev, (end - first) << SECTOR_SHIFT,
			      REQ_OP_READ | (f->bio.bi_opf & (REQ_SYNC |
							      REQ_META |
							      REQ_PRIO)),
			      GFP_NOIO);
	f->bounce = bounce;
	if (!bounce) {
		/* As a failed read: clean data comes from the backing dev. */
		f->bio.bi_status = BLK_STS_RESOURCE;
		hc_read_done(f, false, 0);
		return;
	}
	bio_clone_blkg_association(bounce, &f->bio);
	bounce->bi_iter.bi_sector = first;
	bounce->bi_private = f;
	bounce->bi_end_io = hc_frag_bounce_endio;
	submit_bio_noacct(bounce);
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
	hc_frag_put(f);
	hc_request_put(req);
}

static void hc_promote_read_endio(struct bio *bio)
{
	struct hc_frag *f = bio->bi_private;
	struct hc_request *req = f->req;

	if (bio->bi_status) {
		hc_request_set_error(req, bio->bi_status);
		hc_promote_free(f->promote);
		hc_frag_put(f);
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

/*
 * A cache fragment that does not cover whole chunks cannot be checked in
 * the reader's pages: read its chunks into our own.
 */
static void hc_read_bounce_first(struct hc_frag *f)
{
	atomic_inc(&f->req->remaining);
	f->iter = f->bio.bi_iter;
	hc_frag_bounce_submit(f);
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
			/* A bounce read is one bio of our pages: 1 MiB. */
			if (hc_csum_on(c))
				n = min_t(u32, n, SZ_1M >> SECTOR_SHIFT);
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
		else if (f->ptr && hc_csum_on(c) &&
			 (f->bio.bi_iter.bi_sector % HC_CSUM_CHUNK_SECTORS ||
			  n % HC_CSUM_CHUNK_SECTORS))
			hc_read_bounce_first(f);
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
