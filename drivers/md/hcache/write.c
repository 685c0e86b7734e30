// SPDX-License-Identifier: GPL-2.0
/*
 * write.c: writes to an attached backing device, by cache mode: into the
 * cache, over dirty data in place, or around the cache; discards and
 * write-zeroes.
 *
 * writethrough: to both devices, the key inserted clean once both are
 * done; writeback: to the cache only, the key inserted dirty, the backing
 * superblock marked dirty first. Their I/O is not waited for: its last
 * completion hands the request to commit.c, which inserts its keys. A
 * writeback write within one dirty key goes over that key's data in
 * place, with no key of its own, and ends at its completion
 * (hc_write_in_place()). writearound, none and every bypass (a worker
 * waits for their I/O): cached keys over the range are invalidated (a
 * whiteout), then the backing device is written. Discard and
 * write-zeroes invalidate and are passed down. A write waits, before it
 * writes the backing device, for writeback writes in flight over its
 * range (writeback.c), whose data is older.
 */

#include "hcache.h"
#include "request.h"
#include "debug.h"

#include <linux/bio.h>

#include "stats.h"

/*
 * A write's clone completed: a failed cache write counts against the
 * cache device (the request may still succeed: see hc_write_finish()); a
 * failed backing write fails the request.
 */
static void hc_write_frag_status(struct hc_frag *f)
{
	struct hc_request *req = f->req;
	blk_status_t status = f->bio.bi_status;

	if (!status)
		return;
	if (f->ptr) {
		req->cache_failed = true;
		hc_cache_set_error(req->c, "write at cache sector %llu failed: error %d",
				   hc_ptr_offset(f->ptr),
				   blk_status_to_errno(status));
	} else {
		hc_request_set_error(req, status);
	}
}

/*
 * A write on behalf of a user reached the backing device: a clean key
 * may vouch for its data, so metadata writes flush the backing devices
 * first (backing_written), and the user's next flush flushes this one
 * (fg_written, hc_flush()). Called before the user's bio can end.
 */
static void hc_backing_write_done(struct hc_request *req)
{
	atomic64_inc(&req->c->backing_written);
	atomic64_inc(&req->b->fg_written);
}

static void hc_sync_endio(struct bio *bio)
{
	struct hc_frag *f = container_of(bio, struct hc_frag, bio);
	struct hc_request *req = f->req;

	if (!f->ptr && !bio->bi_status && op_is_write(bio_op(bio)))
		hc_backing_write_done(req);
	hc_write_frag_status(f);
	if (atomic_dec_and_test(&req->remaining))
		complete(&req->done);
}

/* Submit @f and count it; the worker waits for all in hc_sync_wait(). */
static void hc_sync_submit(struct hc_frag *f)
{
	atomic_inc(&f->req->remaining);
	f->bio.bi_end_io = hc_sync_endio;
	submit_bio_noacct(&f->bio);
}

static void hc_sync_wait(struct hc_request *req)
{
	if (!atomic_dec_and_test(&req->remaining))
		wait_for_completion_io(&req->done);
	reinit_completion(&req->done);
	atomic_set(&req->remaining, 1);
}

/* Send the request's bio, whole, to the backing device, and wait. */
void hc_to_backing(struct hc_request *req, blk_opf_t strip)
{
	struct hc_frag *f = hc_frag_alloc(req, req->b->bdev,
					  req->track.start,
					  bio_sectors(req->bio));

	f->bio.bi_iter.bi_sector = req->track.start + req->b->data_offset;
	f->bio.bi_opf &= ~strip;
	if (op_is_write(bio_op(req->bio)))
		hc_track_wait_writeback(req->b, &req->track);
	hc_sync_submit(f);
	hc_sync_wait(req);
	hc_frag_put(f);
}

/* A key that drops whatever the cache holds of the request's range. */
struct hc_key hc_request_whiteout(const struct hc_request *req)
{
	return (struct hc_key){
		.bdev_id = req->id,
		.end = req->track.end,
		.size = req->track.end - req->track.start,
	};
}

/*
 * Does the cache hold anything of the request's range: 1, 0 or -errno. A
 * lookup that found no memory for a node is tried again.
 */
static int hc_range_cached(struct hc_request *req)
{
	struct hc_cache_set *c = req->c;
	unsigned long nomem_deadline = 0;
	struct hc_key k;
	u64 gap_end;
	int ret;

	do {
		down_read(&c->meta_lock);
		ret = hc_btree_lookup(c, req->id, req->track.start,
				      req->track.end, &k, &gap_end, false);
		up_read(&c->meta_lock);
	} while (ret == -ENOMEM && hc_nomem_retry(&nomem_deadline));
	if (ret == -ENOENT)
		return gap_end < req->track.end;
	return ret ? ret : 1;
}

struct hc_clean_drop {
	struct hc_cache_set	*c;
	bool			dirty;
};

/* hc_btree_visit_range()'s callback for hc_invalidate_clean(). */
static int hc_clean_drop_piece(void *priv, const struct hc_key *k, u64 from,
			       u64 to)
{
	struct hc_clean_drop *x = priv;
	struct hc_key w = {
		.bdev_id = k->bdev_id,
		.end = to,
		.size = to - from,
	};

	if (k->flags & HC_KEY_DIRTY) {
		x->dirty = true;
		return 0;
	}
	return hc_insert(x->c, &w);
}

/*
 * Whiteouts over the clean keys in the request's range, leaving the dirty
 * ones be. Return: 1 if dirty data is left there, 0 if not, or -errno.
 */
static int hc_invalidate_clean(struct hc_request *req)
{
	struct hc_clean_drop x = { .c = req->c };
	unsigned long nomem_deadline = 0;
	int ret;

	/* A lookup that found no memory for a node goes over it again. */
	do {
		hc_meta_lock_write(req->c);
		ret = hc_btree_visit_range(req->c, req->id, req->track.start,
					   req->track.end, hc_clean_drop_piece,
					   &x);
		up_write(&req->c->meta_lock);
	} while (ret == -ENOMEM && hc_nomem_retry(&nomem_deadline));
	return ret ? ret : x.dirty;
}

/*
 * A write, discard or write-zeroes for the backing device alone: what the
 * cache holds of the range must go, but in an order a crash cannot undo.
 * Clean data goes before the backing device is written, so that it never
 * comes back over newer data there. Dirty data goes only once the new
 * data is durable on the backing device (written, then flushed): until
 * then a crash keeps the dirty data, which was acknowledged, rather than
 * exposing the older data below it. If the backing write fails, the
 * dirty data stays and is written back later, over whatever part of the
 * failed write landed. With @fua, the cache's part is durable before the
 * request completes. The keys of acked writes go in first, as the
 * invalidation must come after them. @written: the backing device has
 * the data already (a writethrough write whose cache half failed, see
 * hc_write_fallback_work()), its status in the request's.
 */
void hc_write_around(struct hc_request *req, bool fua, bool written)
{
	struct hc_cache_set *c = req->c;
	struct hc_key w;
	int ret;

	hc_write_drain(c);
	ret = hc_range_cached(req);
	if (ret > 0)
		ret = hc_invalidate_clean(req);
	if (ret == 1) {
		if (!written)
			hc_to_backing(req, REQ_PREFLUSH);
		if (req->status)
			return;
		ret = blkdev_issue_flush(req->b->bdev);
		if (ret) {
			hc_request_set_error(req, errno_to_blk_status(ret));
			return;
		}
		w = hc_request_whiteout(req);
		hc_meta_lock_write(c);
		ret = hc_insert(c, &w);
		if (!ret && fua)
			ret = hc_journal_write_unlock(c);
		else
			up_write(&c->meta_lock);
		/* The cache may still vouch for older data: an error. */
		if (ret)
			hc_request_set_error(req, BLK_STS_IOERR);
		return;
	}
	if (!ret && fua) {
		/*
		 * A set that failed writes no journal: the whiteouts just
		 * made would not be durable, and the FUA write must not
		 * complete over clean keys that may come back.
		 */
		hc_meta_lock_write(c);
		if (c->meta_failed) {
			ret = -EIO;
			up_write(&c->meta_lock);
		} else if (c->journal.nr) {
			ret = hc_journal_write_unlock(c);
		} else {
			up_write(&c->meta_lock);
		}
	}
	if (ret) {
		hc_request_set_error(req, BLK_STS_IOERR);
		return;
	}
	if (!written)
		hc_to_backing(req, REQ_PREFLUSH);
}

/* writeback: the backing superblock says dirty before a dirty write ends. */
static int hc_backing_mark_dirty(struct hc_backing *b)
{
	int ret = 0;

	if (READ_ONCE(b->sb.backing.state) == HC_STATE_DIRTY)
		return 0;
	mutex_lock(&b->sb_lock);
	if (b->sb.backing.state != HC_STATE_DIRTY) {
		unsigned int old = b->sb.backing.state;

		WRITE_ONCE(b->sb.backing.state, HC_STATE_DIRTY);
		ret = hc_backing_sb_write(b);
		if (ret)
			WRITE_ONCE(b->sb.backing.state, old);
	}
	mutex_unlock(&b->sb_lock);
	return ret;
}

/* Return the space of unwritten fragments: no key will point there. */
void hc_write_frags_free(struct hc_request *req)
{
	struct hc_cache_set *c = req->c;
	struct hc_frag *f, *tmp;

	if (list_empty(&req->frags))
		return;
	hc_meta_lock_write(c);
	list_for_each_entry(f, &req->frags, node) {
		if (req->in_place)
			hc_bucket_unpin_in_place(c, hc_ptr_offset(f->ptr));
		else
			hc_bucket_unpin(c, hc_ptr_offset(f->ptr));
	}
	up_write(&c->meta_lock);
	list_for_each_entry_safe(f, tmp, &req->frags, node) {
		list_del(&f->node);
		hc_frag_put(f);
	}
}

/*
 * Cache space for the whole write, fragment by fragment, going on from
 * the fragments it has already. In submit_bio() (@open not HC_OPEN_ANY)
 * it returns -EAGAIN or another error, keeping what it got, when it
 * cannot have the rest without waiting for I/O. With HC_OPEN_ANY,
 * -ENOSPC (and nothing allocated) when the cache has not enough room, or
 * -ENOMEM when, with data checksums, no memory was found for the copy of
 * the data: the write then goes around the cache.
 */
static int hc_write_alloc(struct hc_request *req, enum hc_open open)
{
	struct hc_cache_set *c = req->c;
	u64 pos = req->track.start, offset;
	u32 got, n, align = hc_data_align(c);
	struct hc_frag *f;
	int ret = 0;
	u8 gen;

	if (!list_empty(&req->frags)) {
		f = list_last_entry(&req->frags, struct hc_frag, node);
		pos = f->start + f->sectors;
	}
	while (pos < req->track.end) {
		u64 want = round_up(req->track.end - pos, align);

		/* A copy is one bio of our pages: BIO_MAX_VECS at most. */
		if (hc_csum_on(c))
			want = min_t(u64, want,
				     BIO_MAX_VECS * (PAGE_SIZE >> SECTOR_SHIFT));
		ret = hc_cache_space(c, want, false, open, &gen, &offset,
				     &got);
		if (ret)
			break;
		/* With checksums, the last chunk's tail is zeroes. */
		n = min_t(u64, got, req->track.end - pos);
		if (hc_csum_on(c)) {
			f = hc_frag_alloc_copy(req, pos, n, got,
					       open == HC_OPEN_ANY ? GFP_NOIO :
								     GFP_NOWAIT);
			if (!f) {
				hc_meta_lock_write(c);
				hc_bucket_unpin(c, offset);
				up_write(&c->meta_lock);
				ret = -ENOMEM;
				break;
			}
			hc_csum_set_bio(c, offset, &f->bio);
		} else {
			f = hc_frag_alloc(req, c->bdev, pos, n);
		}
		f->ptr = hc_ptr_make(offset, 0, gen);
		f->bio.bi_iter.bi_sector = offset;
		f->bio.bi_opf &= ~(REQ_PREFLUSH | REQ_FUA);
		list_add_tail(&f->node, &req->frags);
		pos += n;
	}
	if (ret && open == HC_OPEN_ANY)
		hc_write_frags_free(req);
	return ret;
}

/*
 * An overwrite in place: a writeback-mode write that falls within one
 * dirty key is written over that key's data, where the key points
 * already, instead of to a new place under a key of its own. It costs no
 * cache space, no insert and no journal entry, and it leaves nothing for
 * moving GC and writeback to gather again: random overwrites otherwise
 * spread a cache's dirty data thinly over its buckets, and a full cache
 * sends them around. The rules (design.rst, "Overwrites in place"):
 *
 *  - the key stays as it is: dirty, the same pointer, durable or not yet.
 *    The data is durable at the next flush, which flushes the cache
 *    device even when no key changed (hc_flush()). A FUA write takes a
 *    new place: its key would have to be durable at its end too;
 *  - the bucket is not reused meanwhile: the write pins it (io_pin) from
 *    the lookup that found the key current until its I/O completes
 *    (hc_write_in_place_done(), or hc_write_insert() if it failed), as a
 *    write into the open bucket does;
 *  - nothing copies the data elsewhere while it may land: writeback pins
 *    the buckets it collects from (copy_pin) until it has marked them
 *    clean, and moving GC flags the buckets it chose (gc.move); an
 *    overwrite takes neither kind, writeback no bucket an overwrite
 *    pinned (inplace_pin), moving GC none with io_pin. Else either could
 *    read the older data, then vouch for its copy over the newer;
 *  - no other write over the range is in flight: one acked before its
 *    key went in would have that key, and its older data, land over this.
 *
 * @cached_only as for hc_btree_lookup(). Return: true if @req has its one
 * fragment, pinned; false if it takes the usual way.
 */
static bool hc_write_in_place(struct hc_request *req, bool cached_only)
{
	struct hc_cache_set *c = req->c;
	u64 start = req->track.start, end = req->track.end;
	u64 gap_end, bucket = 0, offset = 0;
	struct hc_bucket *bk;
	struct hc_frag *f;
	struct hc_key k;
	bool ok;

	/*
	 * Never with data checksums: a write torn by a power cut would leave
	 * a chunk that matches neither checksum, an unreadable dirty block,
	 * where a cache without them returns a mix of old and new sectors.
	 */
	if (hc_csum_on(c) ||
	    req->mode != HC_MODE_WRITEBACK || bio_op(req->bio) != REQ_OP_WRITE ||
	    (req->bio->bi_opf & REQ_FUA) || !list_empty(&req->frags) ||
	    start >= end || hc_track_write_overlaps(req->b, &req->track, false))
		return false;
	down_read(&c->meta_lock);
	ok = !c->meta_failed &&
	     !hc_btree_lookup(c, req->id, start, end, &k, &gap_end,
			      cached_only) &&
	     k.nr_ptrs == 1 && (k.flags & HC_KEY_DIRTY) && k.end >= end;
	if (ok) {
		offset = hc_ptr_offset(k.ptr) + (start - hc_key_start(&k));
		bucket = hc_sector_to_bucket(&c->geom, hc_ptr_offset(k.ptr));
		ok = bucket < c->geom.nbuckets;
	}
	if (ok) {
		bk = &c->buckets[bucket];
		spin_lock_irq(&c->alloc_lock);
		ok = bk->m.type == HC_BUCKET_DATA &&
		     !hc_ptr_stale(bk->gen, hc_ptr_gen(k.ptr)) &&
		     !bk->copy_pin && bk->io_pin < U16_MAX &&
		     bk->inplace_pin < U16_MAX &&
		     !test_bit(bucket, c->gc.move);
		if (ok) {
			bk->io_pin++;
			bk->inplace_pin++;
		}
		spin_unlock_irq(&c->alloc_lock);
		/* In use as much as a read hit: lru keeps the bucket. */
		if (ok)
			hc_bucket_touch(c, offset);
	}
	up_read(&c->meta_lock);
	if (!ok)
		return false;
	f = hc_frag_alloc(req, c->bdev, start, end - start);
	f->ptr = hc_ptr_make(offset, hc_ptr_dev(k.ptr), hc_ptr_gen(k.ptr));
	f->bio.bi_iter.bi_sector = offset;
	f->bio.bi_opf &= ~(REQ_PREFLUSH | REQ_FUA);
	list_add_tail(&f->node, &req->frags);
	req->in_place = true;
	return true;
}

/*
 * An overwrite in place that went well ends as soon as its I/O does, in
 * whatever context that completed: it has no key to insert, so nothing
 * waits for write_work. Its bucket is unpinned before the bio ends.
 */
static void hc_write_in_place_done(struct hc_request *req)
{
	struct hc_frag *f = list_first_entry(&req->frags, struct hc_frag,
					     node);

	hc_bucket_unpin_in_place(req->c, hc_ptr_offset(f->ptr));
	list_del(&f->node);
	hc_frag_put(f);
	hc_writeback_dirty_end(req->b);
	hc_count(req->b, req->c, HC_STAT_WRITES_IN_PLACE, 1);
	hc_request_end(req);
}

/*
 * The last I/O of a cached write is done. A writeback write that went
 * well and asked for no FUA is acked at once: its bio ends now, before
 * its key is in the tree, which its submitter cannot tell apart, as
 * nothing is durable before a flush anyway. What could tell is kept
 * from seeing it: its track stays in the tree, marked acked, until the
 * key is in; a read over it (hc_read()), a write that goes around the
 * cache (hc_write_around()) and a flush (hc_flush()) insert the
 * keys of every write done first (hc_write_drain()); cached writes
 * insert in the order their I/O completed. It holds its bucket's pin
 * and the device's dirtying count until then, like any cached write.
 * Anything else waits for its key: writethrough (the key says the
 * backing device has the data), FUA (the journal first), a failure.
 */
static void hc_write_io_done(struct hc_request *req)
{
	if (req->in_place && !req->status && !READ_ONCE(req->cache_failed)) {
		hc_write_in_place_done(req);
		return;
	}
	if (req->mode != HC_MODE_WRITEBACK || req->status ||
	    READ_ONCE(req->cache_failed) || (req->bio->bi_opf & REQ_FUA)) {
		hc_write_queue(req);
		return;
	}
	/* Two owners: this, and write_work once the key is in. */
	req->acked = true;
	atomic_set(&req->remaining, 2);
	/* Queued before it is marked, so that a drain finds it. */
	hc_write_queue(req);
	hc_track_set_acked(req->b, &req->track, true);
	hc_request_end_bio(req);
	hc_request_put_acked(req);
}

static void hc_write_endio(struct bio *bio)
{
	struct hc_frag *f = container_of(bio, struct hc_frag, bio);
	struct hc_request *req = f->req;

	/* Counted before the key goes in: metadata then flushes it first. */
	if (!bio->bi_status && f->ptr)
		atomic64_inc(&req->c->data_written);
	else if (!bio->bi_status)
		hc_backing_write_done(req);
	hc_write_frag_status(f);
	if (atomic_dec_and_test(&req->remaining))
		hc_write_io_done(req);
}

static void hc_write_submit_frag(struct hc_frag *f)
{
	atomic_inc(&f->req->remaining);
	f->bio.bi_end_io = hc_write_endio;
	/* The debug build can fail a cache write as the device would. */
	if (f->ptr && hc_debug_fault(HC_FAULT_CACHE_WRITE)) {
		bio_io_error(&f->bio);
		return;
	}
	submit_bio_noacct(&f->bio);
}

/*
 * writethrough and writeback, with the cache space allocated (and for
 * writethrough, no writeback write in flight over the range): write the
 * cache, and the backing device too for writethrough. Nothing waits: the
 * last completion queues the request for hc_write_insert_work().
 */
static void hc_write_cached_submit(struct hc_request *req)
{
	struct hc_frag *f;

	list_for_each_entry(f, &req->frags, node)
		hc_write_submit_frag(f);
	if (req->mode != HC_MODE_WRITEBACK) {
		f = hc_frag_alloc(req, req->b->bdev, req->track.start,
				  bio_sectors(req->bio));
		f->bio.bi_iter.bi_sector = req->track.start +
					   req->b->data_offset;
		f->bio.bi_opf &= ~REQ_PREFLUSH;
		req->through = f;
		hc_write_submit_frag(f);
	}
	if (atomic_dec_and_test(&req->remaining))
		hc_write_io_done(req);
}

/*
 * Return: true if the request goes on without this context (a cached
 * write ends in hc_write_insert_work()); false if it is done.
 */
bool hc_write(struct hc_request *req)
{
	struct hc_backing *b = req->b;
	struct bio *bio = req->bio;
	unsigned int mode = req->mode;
	bool fua = bio->bi_opf & REQ_FUA;
	int ret;

	/* Tracked already if hc_write_try_submit() gave up half way. */
	if (!hc_track_on(&req->track))
		hc_track_add(b, &req->track, true, NULL);
	if (bio->bi_opf & REQ_PREFLUSH) {
		ret = hc_flush(req);
		if (ret) {
			hc_request_set_error(req, errno_to_blk_status(ret));
			return false;
		}
	}
	if (!bio_sectors(bio))
		return false;

	if (bio_op(bio) != REQ_OP_WRITE) {
		/* Discard, write-zeroes: drop the cached copy, pass it on. */
		hc_write_around(req, fua, false);
		return false;
	}
	/*
	 * writeback: a sequential overwrite of what is cached stays in the
	 * cache (a file system rewriting its tables, a database its log),
	 * where it costs a cache write instead of an invalidation and a
	 * backing write.
	 */
	if (req->reason == HC_BYPASS_SEQUENTIAL &&
	    mode == HC_MODE_WRITEBACK && hc_range_cached(req) == 1)
		req->reason = HC_BYPASS_NONE;
	/* An overwrite in place needs no room. */
	if ((req->reason == HC_BYPASS_NONE || req->reason == HC_BYPASS_FULL) &&
	    hc_write_in_place(req, false))
		req->reason = HC_BYPASS_NONE;
	if (req->reason == HC_BYPASS_NONE && hc_write_alloc(req, HC_OPEN_ANY))
		req->reason = HC_BYPASS_FULL;
	if (req->reason == HC_BYPASS_NONE && mode == HC_MODE_WRITEBACK) {
		/* Until its keys are in, the device may not turn clean. */
		hc_writeback_dirty_begin(b);
		ret = hc_backing_mark_dirty(b);
		if (ret) {
			hc_writeback_dirty_end(b);
			hc_write_frags_free(req);
			req->reason = HC_BYPASS_FULL;
		}
	}
	if (req->reason != HC_BYPASS_NONE) {
		hc_write_around(req, fua, false);
		return false;
	}
	if (mode != HC_MODE_WRITEBACK)
		hc_track_wait_writeback(b, &req->track);
	hc_write_cached_submit(req);
	return true;
}

/*
 * A cached write in the submitter's context, when it needs no waiting
 * but for meta_lock: in writeback the backing superblock says dirty
 * already; in writethrough, no writeback write is in flight over its
 * range. This saves the worker's wake-up and two context switches per
 * write. Where the open bucket has not room enough, this opens the next
 * (meta_lock held for writing; the submitter may sleep, the disk takes no
 * REQ_NOWAIT bios), unless that needs a refill's metadata I/O, which
 * would wait forever here: submit_bio() queues what it is called under
 * until it returns. Left to a worker, every write submitted until the
 * worker has opened the next bucket would find it full too and follow it
 * there: an eighth of all writes with 64 KiB buckets and 4 KiB random
 * writes (make bench's c). Otherwise hc_write() goes on in a worker from
 * where this stopped: it may refill, write the superblock, bypass a full
 * cache, or wait. Return: true if the write was submitted.
 */
bool hc_write_try_submit(struct hc_request *req)
{
	struct hc_backing *b = req->b;
	struct bio *bio = req->bio;

	if (bio_op(bio) != REQ_OP_WRITE || (bio->bi_opf & REQ_PREFLUSH) ||
	    !bio_sectors(bio) ||
	    (req->reason != HC_BYPASS_NONE && req->reason != HC_BYPASS_FULL) ||
	    (req->mode != HC_MODE_WRITEBACK &&
	     req->mode != HC_MODE_WRITETHROUGH))
		return false;
	hc_track_add(b, &req->track, true, NULL);
	/* An overwrite in place needs no room, even in a full cache. */
	if (hc_write_in_place(req, true))
		req->reason = HC_BYPASS_NONE;
	else if (req->reason != HC_BYPASS_NONE ||
		 hc_write_alloc(req, HC_OPEN_NOIO))
		return false;
	if (req->mode == HC_MODE_WRITEBACK) {
		hc_writeback_dirty_begin(b);
		if (READ_ONCE(b->sb.backing.state) != HC_STATE_DIRTY) {
			hc_writeback_dirty_end(b);
			return false;
		}
	} else if (hc_track_write_overlaps(b, &req->track, true)) {
		return false;
	}
	hc_write_cached_submit(req);
	return true;
}
